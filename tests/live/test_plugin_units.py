"""The kubectl plugin's pure parts: kinds, live-object cleaning, state, Secret references, error mapping.

No API server needed; the end-to-end behaviour is in test_plugin.py.
"""
from __future__ import annotations

import json

import pytest

from kf2jobset import exitcodes
from kf2jobset.errors import UsageError
from kf2jobset.live import apierrors
from kf2jobset.live.kinds import KINDS, resolve_kind, split_kind_name
from kf2jobset.live.objects import clean, job_state, replica_counts, secret_refs, worst_note
from kf2jobset.live.plugin import hoist_flags, parse_timeout
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

    code = ("import sys, kf2jobset.cli, kf2jobset.live.plugin, kf2jobset.live.cluster; "
            "assert 'kubernetes' not in sys.modules, 'kubernetes imported at module level'")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
