"""The kubectl plugin's pure parts: kinds, live-object cleaning, state, Secret references, error mapping.

No API server needed; the end-to-end behaviour is in test_plugin.py.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from kf2jobset import exitcodes
from kf2jobset.errors import UsageError
from kf2jobset.live import apierrors
from kf2jobset.live.kinds import KINDS, resolve_kind, split_kind_name
from kf2jobset.live.objects import clean, job_state, replica_counts, secret_refs, worst_note
from kf2jobset.live.flags import hoist_flags, parse_timeout
from kf2jobset.mappings import all_mappings
from kf2jobset.notes import Note


def test_kind_table_matches_the_mappings():
    """Every (kind, version) the converter maps is read from clusters, and nothing else."""
    live = {(k.kind, f"{k.group}/{v}") for k in KINDS for v in k.versions}
    mapped = {(m.kind, v) for m in all_mappings() for v in m.api_versions}
    assert live == mapped


@pytest.mark.parametrize("text", ["tfjob", "TFJob", "tfjobs", "tfjobs.kubeflow.org", "tfjob.kubeflow.org", "tfjobs.v1.kubeflow.org"])
def test_resolve_kind_accepts_kubectl_spellings(text):
    assert resolve_kind(text).kind == "TFJob"


def test_every_mapped_kind_is_named_in_the_help_and_resolvable():
    from kf2jobset.live.get_command import _GET_HELP

    for k in KINDS:
        assert k.kind.lower() in _GET_HELP
        assert resolve_kind(k.plural).kind == k.kind == resolve_kind(f"{k.plural}.kubeflow.org").kind
    assert resolve_kind("mxjob").versions == ("v1",)


def test_resolve_kind_rejects_others():
    with pytest.raises(UsageError, match="unknown kind 'pods'"):
        resolve_kind("pods")


def test_split_kind_name():
    assert split_kind_name("tfjob/mnist", None) == ("tfjob", "mnist")
    assert split_kind_name("tfjob", "mnist") == ("tfjob", "mnist")
    with pytest.raises(UsageError):
        split_kind_name("tfjob/mnist", "other")


def _live_job() -> dict:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {
            "name": "pt",
            "namespace": "ml",
            "uid": "u-1",
            "resourceVersion": "42",
            "generation": 3,
            "creationTimestamp": "2024-01-01T00:00:00Z",
            "managedFields": [{"manager": "kubectl"}],
            "ownerReferences": [{"apiVersion": "kubeflow.org/v1beta1", "kind": "Trial", "name": "t-1", "uid": "x"}],
            "labels": {"team": "a"},
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
        },
        "spec": {"pytorchReplicaSpecs": {"Master": {"template": {}}, "Worker": {"replicas": 3, "template": {}}}},
        "status": {"conditions": [{"type": "Created", "status": "True"}]},
    }


def test_clean_strips_server_fields_and_reports_owners():
    job = _live_job()
    doc, owners = clean(job)
    assert owners == ["Trial/t-1"]
    assert "status" not in doc
    assert doc["metadata"] == {"name": "pt", "namespace": "ml", "labels": {"team": "a"}}
    assert job["metadata"]["uid"] == "u-1"  # the input is not changed


def test_replica_counts_use_operator_default():
    assert replica_counts(_live_job()) == {"Master": 1, "Worker": 3}


@pytest.mark.parametrize(
    "conditions, suspend, expected",
    [
        ([], False, "-"),
        ([], True, "Suspended"),
        ([("Created", "True", "1"), ("Running", "True", "2")], False, "Running"),
        ([("Created", "True", "1"), ("Running", "False", "2")], False, "Created"),
        ([("Running", "True", "3"), ("Succeeded", "True", "2")], False, "Succeeded"),
        ([("Restarting", "True", "2"), ("Running", "True", "1")], False, "Restarting"),
    ],
)
def test_job_state(conditions, suspend, expected):
    job = _live_job()
    job["spec"]["runPolicy"] = {"suspend": suspend}
    job["status"] = {"conditions": [{"type": t, "status": s, "lastTransitionTime": f"2024-01-01T00:00:0{ts}Z"}
                                    for t, s, ts in conditions]}
    assert job_state(job) == expected


def test_worst_note():
    notes = [Note("A", "rewritten", "a"), Note("B", "dropped", "b"), Note("C", "approximated", "c"), Note("D", "dropped", "d")]
    assert worst_note(notes).code == "B"
    assert worst_note([]) is None


def test_secret_refs_skip_optional_ones():
    pod = {
        "volumes": [
            {"name": "ssh", "secret": {"secretName": "job-ssh"}},
            {"name": "opt", "secret": {"secretName": "maybe", "optional": True}},
            {"name": "p", "projected": {"sources": [{"secret": {"name": "proj"}}]}},
        ],
        "containers": [{
            "name": "c",
            "env": [{"name": "T", "valueFrom": {"secretKeyRef": {"name": "token", "key": "t"}}}],
            "envFrom": [{"secretRef": {"name": "bulk"}}, {"secretRef": {"name": "soft", "optional": True}}],
        }],
    }
    jobset = {"kind": "JobSet", "spec": {"replicatedJobs": [{"template": {"spec": {"template": {"spec": pod}}}}]}}
    assert secret_refs([jobset, {"kind": "ConfigMap"}]) == ["bulk", "job-ssh", "proj", "token"]


@pytest.mark.parametrize("text, seconds", [("0", None), ("30", 30.0), ("30s", 30.0), ("1m30s", 90.0), ("500ms", 0.5)])
def test_parse_timeout(text, seconds):
    assert parse_timeout(text) == seconds


def test_parse_timeout_rejects_garbage():
    with pytest.raises(UsageError):
        parse_timeout("soon")


class _FakeApiException(Exception):
    pass


@pytest.mark.parametrize(
    "status, cls, code",
    [
        (401, apierrors.Unauthorized, exitcodes.CLUSTER_AUTH),
        (403, apierrors.Forbidden, exitcodes.CLUSTER_AUTH),
        (404, apierrors.NotFound, exitcodes.NOT_FOUND),
        (409, apierrors.Conflict, exitcodes.UNSUPPORTED),
        (422, apierrors.Invalid, exitcodes.UNSUPPORTED),
        (500, apierrors.ServerError, exitcodes.CLUSTER_UNREACHABLE),
        (429, apierrors.ServerError, exitcodes.CLUSTER_UNREACHABLE),
    ],
)
def test_translate_maps_status_codes_once(status, cls, code):
    from kubernetes.client.exceptions import ApiException

    exc = ApiException(status=status, reason="R")
    exc.body = json.dumps({"kind": "Status", "reason": "SomeReason", "message": "the message"})
    err = apierrors.translate(exc, "list tfjobs.kubeflow.org in namespace ml")
    assert type(err) is cls
    assert err.status == status
    assert exitcodes.for_error(err) == code
    assert str(err.problems[0].message) == "cannot list tfjobs.kubeflow.org in namespace ml: SomeReason: the message"


def test_translate_connection_and_tls_errors():
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import MaxRetryError, NewConnectionError

    refused = MaxRetryError(None, "/apis", NewConnectionError(None, "Failed to establish a new connection: [Errno 111] Connection refused"))
    err = apierrors.translate(refused, "discover kubeflow.org/v1", "https://127.0.0.1:1")
    assert isinstance(err, apierrors.Unreachable)
    assert exitcodes.for_error(err) == exitcodes.CLUSTER_UNREACHABLE
    assert "cannot reach https://127.0.0.1:1" in err.problems[0].message
    tls = apierrors.translate(ApiException(status=0, reason="SSLError\ncertificate verify failed"), "discover x")
    assert isinstance(tls, apierrors.Unreachable)
    assert "certificate verify failed" in tls.problems[0].message


def test_translate_leaves_bugs_alone():
    with pytest.raises(KeyError):
        apierrors.translate(KeyError("x"), "do something")


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["-n", "ml", "scan", "-A"], ["scan", "-n", "ml", "-A"]),
        (["--kubeconfig=k", "-A", "get", "tfjob"], ["get", "--kubeconfig=k", "-A", "tfjob"]),
        (["scan", "-n", "ml"], ["scan", "-n", "ml"]),
        (["--help"], ["--help"]),
        (["--bogus", "scan"], ["--bogus", "scan"]),
    ],
)
def test_standard_flags_may_precede_the_command(argv, expected):
    assert hoist_flags(argv, {"get": 1, "scan": 1, "apply": 1}) == expected


def test_kubernetes_is_imported_only_when_a_plugin_command_runs():
    import subprocess
    import sys

    code = ("import sys, kf2jobset.cli.main, kf2jobset.live.plugin, kf2jobset.live.cluster; "
            "assert 'kubernetes' not in sys.modules, 'kubernetes imported at module level'")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def _fixture_jobs() -> list[tuple[str, dict]]:
    """Every golden-fixture input as the API server would list it: plain JSON-like dicts."""
    import json

    from kf2jobset.text.yamlio import parse_documents

    out = []
    for path in sorted((Path(__file__).resolve().parents[2] / "fixtures").glob("*/*/input.yaml")):
        for doc in parse_documents(path.read_text(), str(path)):
            data = doc.data
            if doc.error is None and isinstance(data, dict) and str(data.get("apiVersion", "")).startswith("kubeflow.org/"):
                out.append((f"{path.parent.parent.name}/{path.parent.name}#{doc.index}", json.loads(json.dumps(data, default=str))))
    return out


def test_clean_and_convert_leave_the_listed_object_unchanged():
    """clean() shares spec with the listed object: that is only safe while the converter never
    modifies its input. Checked over every fixture job, including those that fail to convert."""
    import copy

    from kf2jobset.core.convert import convert_job
    from kf2jobset.errors import Kf2JobSetError
    from kf2jobset.options import ConvertOptions

    jobs = _fixture_jobs()
    assert len(jobs) > 50
    for name, job in jobs:
        job.setdefault("metadata", {}).setdefault("annotations", {})[
            "kubectl.kubernetes.io/last-applied-configuration"] = "{}"
        job["status"] = {"conditions": [{"type": "Created", "status": "True"}]}
        before = copy.deepcopy(job)
        doc, _owners = clean(job)
        try:
            conv = convert_job(doc, ConvertOptions(accept_mpi_ssh=True))
        except Kf2JobSetError:
            conv = None
        assert job == before, name
        if conv is not None:  # the JobSet shares nothing the caller could change under the source
            conv.jobset["metadata"].setdefault("labels", {})["x"] = "y"
            assert job == before, name


# ---------------------------------------------------------------------------------------------
# scan's workers and read-ahead


def test_scan_rows_in_workers_equal_rows_in_process():
    """Forked workers (chunks of CHUNK, bounded in flight) give the same rows as converting here,
    errors included (a job with no replica specs, one with a bad name)."""
    from kf2jobset.live.scanning import CHUNK, scan_rows
    from kf2jobset.options import ConvertOptions

    jobs = [job for _name, job in _fixture_jobs()] * 2  # (names repeat: rows are not keyed)
    broken = [{"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "empty", "namespace": "z"}, "spec": {}},
              {**jobs[0], "metadata": {"name": "Bad_Name", "namespace": "z"}}]
    jobs += broken
    pages = [jobs[i:i + 7] for i in range(0, len(jobs), 7)]  # pages that do not line up with chunks
    assert len(jobs) > 3 * CHUNK
    options = ConvertOptions(accept_mpi_ssh=True)

    def key(row):
        return json.dumps(row, sort_keys=True)

    here = sorted(scan_rows(iter(pages), options, 1), key=key)
    forked = sorted(scan_rows(iter(pages), options, 2), key=key)
    assert len(here) == len(jobs)
    assert forked == here
    errors = [r for r in here if r["namespace"] == "z"]
    assert len(errors) == 2 and all(r["error"] and r["error"]["kind"] for r in errors), errors


def test_read_ahead_keeps_order_and_raises_where_the_source_failed():
    from kf2jobset.live.readahead import read_ahead

    def source():
        yield from range(5)
        raise ValueError("page 6 failed")

    got = []
    with pytest.raises(ValueError, match="page 6 failed"):
        for item in read_ahead(source(), depth=2):
            got.append(item)
    assert got == [0, 1, 2, 3, 4]


def test_read_ahead_stops_its_thread_when_the_consumer_leaves():
    import threading
    import time

    from kf2jobset.live.readahead import read_ahead

    produced = []

    def endless():
        n = 0
        while True:
            produced.append(n)
            yield n
            n += 1

    stream = read_ahead(endless(), depth=2)
    assert next(stream) == 0
    stream.close()  # the consumer stops early (an error, a broken pipe)
    deadline = time.monotonic() + 5
    while any(t.name == "kf2jobset-read-ahead" for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(t.name == "kf2jobset-read-ahead" for t in threading.enumerate())
    assert len(produced) <= 5  # bounded: depth 2 queued, one in hand, one being offered
