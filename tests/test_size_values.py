"""`convert --check` reads the size-derived values themselves, not only the sized-for record.

For each kind with literals (TF PS + chief, MPI v2beta1's ConfigMap hostfile, XGBoost's WORKER_ADDRS,
PyTorch's WORLD_SIZE x nprocPerNode, Paddle's one-pod replicatedJob): editing the replicas and the
annotation alone is caught; deleting both kf2jobset.dev size annotations does not remove the guard; the
conversion at the new size (values and annotation edited together) passes, also without the
annotations; a Paddle worker resize passes; a renamed replicatedJob is said to be one. Hypothesis: the
conversion at size n edited to m is listed iff it has a literal and m != n.
"""
from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from kf2jobset import exitcodes
from kf2jobset.api import convert_yaml
from kf2jobset.checks.staleness import SIZE_LITERALS_ANNOTATION, SIZED_FOR_ANNOTATION, resized_jobsets

from .conftest import FIXTURES
from .jobset_edits import convert_cli, converted_in_place, set_replicas

# (fixture, flags, v1 replica type resized, its replicatedJob, the value the message must name)
CASES = [
    ("tfjob/chief-ps-workers", [], "Worker", "worker", "TF_CONFIG lists 3 worker pods, the JobSet runs 5"),
    ("mpijob-v2beta1/openmpi", ["--accept-mpi-ssh"], "Worker", "worker", "/etc/mpi/hostfile lists 2 worker pods, the JobSet runs 5"),
    ("xgboostjob/master-workers", [], "Worker", "worker", "WORKER_ADDRS lists 3 worker pods, the JobSet runs 5"),
    ("pytorchjob/nproc-per-node", [], "Worker", "worker", "WORLD_SIZE is 16 (2 pods x PET_NPROC_PER_NODE 8), the JobSet runs 6 pods (48)"),
    ("paddlejob/master-worker", [], "Master", "master", "the master replicatedJob's layout is for one pod"),
]
NEW = 5


def v1_with(case: str, rtype: str, count: int) -> str:
    """The fixture's v1 job with `rtype`'s replicas set to `count`."""
    text = (FIXTURES / case / "input.yaml").read_text()
    pattern = re.compile(rf"(\n\s*{rtype}:\n\s*replicas: )\d+")
    assert pattern.search(text), (case, rtype)
    return pattern.sub(lambda m: m.group(1) + str(count), text, count=1)


def record_sizes(text: str, rjob: str, count: int) -> str:
    """The sized-for annotation edited to say `rjob=count` (the edit the old message invited)."""
    return re.sub(rf"(kf2jobset.dev/sized-for: [^\n]*\b{rjob}=)\d+", lambda m: m.group(1) + str(count), text, count=1)


def without_size_record(text: str) -> str:
    return re.sub(rf"\n\s*({SIZED_FOR_ANNOTATION}|{SIZE_LITERALS_ANNOTATION}):[^\n]*", "", text)


def check(work, flags):
    res = convert_cli("--check", *flags, work)
    return res, res.stdout.splitlines()


@pytest.mark.parametrize("case,flags,rtype,rjob,said", CASES, ids=[c[0] for c in CASES])
def test_the_annotation_edited_alone_is_caught(tmp_path, case, flags, rtype, rjob, said):
    work, text = converted_in_place(tmp_path, (FIXTURES / case / "input.yaml").read_text(), *flags)
    edited = record_sizes(set_replicas(text, rjob, NEW), rjob, NEW)
    assert f"{rjob}={NEW}" in edited
    (work / "job.yaml").write_text(edited)
    res, lines = check(work, flags)
    assert res.exit_code == exitcodes.FINDINGS, res.stdout + res.stderr
    (line,) = lines
    assert ": resized: " in line and said in line and "changed since conversion" not in line, line


@pytest.mark.parametrize("case,flags,rtype,rjob,said", CASES, ids=[c[0] for c in CASES])
def test_deleting_the_size_record_keeps_the_guard(tmp_path, case, flags, rtype, rjob, said):
    work, text = converted_in_place(tmp_path, (FIXTURES / case / "input.yaml").read_text(), *flags)
    edited = without_size_record(set_replicas(text, rjob, NEW))
    assert SIZED_FOR_ANNOTATION not in edited and "kf2jobset.dev/source" in edited
    (work / "job.yaml").write_text(edited)
    res, lines = check(work, flags)
    assert res.exit_code == exitcodes.FINDINGS and len(lines) == 1 and said in lines[0], res.stdout + res.stderr


@pytest.mark.parametrize("record", [True, False], ids=["with-record", "record-deleted"])
@pytest.mark.parametrize("case,flags,rtype,rjob,said", CASES, ids=[c[0] for c in CASES])
def test_the_conversion_at_the_new_size_passes(tmp_path, case, flags, rtype, rjob, said, record):
    """Values and annotation edited together are what converting at the new size writes."""
    work, text = converted_in_place(tmp_path, v1_with(case, rtype, 2 if case.startswith("paddle") else NEW), *flags)
    (work / "job.yaml").write_text(text if record else without_size_record(text))
    res, lines = check(work, flags)
    assert res.exit_code == 0 and lines == [], res.stdout + res.stderr


def test_a_paddle_worker_resize_is_the_conversion_at_that_size(tmp_path):
    """The layout depends on the first type's pods alone: 4 workers beside 1 master need no other edit."""
    case = "paddlejob/master-worker"
    work, text = converted_in_place(tmp_path, (FIXTURES / case / "input.yaml").read_text())
    fresh = convert_yaml(v1_with(case, "Worker", 4))
    edited = set_replicas(text, "worker", 4)
    assert record_sizes(edited, "worker", 4) == fresh  # the hand edit is the conversion but for the record
    (work / "job.yaml").write_text(edited)
    res, lines = check(work, [])
    assert res.exit_code == 0 and lines == [], res.stdout


@pytest.mark.parametrize("case,old,new,value", [
    ("xgboostjob/master-workers", "worker", "workers", "WORKER_ADDRS names 3 pods of replicatedJob worker"),
    ("tfjob/chief-ps-workers", "ps", "params", "TF_CONFIG names 2 pods of replicatedJob ps"),
])
def test_a_renamed_replicated_job_is_named_as_a_rename(tmp_path, case, old, new, value):
    work, text = converted_in_place(tmp_path, (FIXTURES / case / "input.yaml").read_text())
    renamed = text.replace(f"    - name: {old}\n", f"    - name: {new}\n", 1)
    assert renamed != text
    (work / "job.yaml").write_text(renamed)
    res, lines = check(work, [])
    assert res.exit_code == exitcodes.FINDINGS, res.stdout
    (line,) = lines
    assert f"replicatedJob {old} is now {new}, but {value}" in line, line  # the record says which it became
    assert "which the JobSet no longer has" in line and "rename the replicatedJob back" in line, line
    assert "changed since conversion" not in line and "to resize" not in line, line
    (work / "job.yaml").write_text(without_size_record(renamed))  # without the record: still named, as a lost name
    _, (line,) = check(work, [])
    assert value in line and "which the JobSet no longer has" in line and " is now " not in line, line


def test_the_fix_names_both_routes_and_where_the_v1_job_is(tmp_path):
    work, text = converted_in_place(tmp_path, (FIXTURES / "tfjob/chief-ps-workers/input.yaml").read_text())
    (work / "job.yaml").write_text(set_replicas(text, "worker", NEW))
    _, (line,) = check(work, [])
    assert "worker 3 -> 5" in line and "TF_CONFIG lists 3 worker pods, the JobSet runs 5" in line
    assert "convert the v1 job (kubeflow.org/v1/TFJob wide-deep; after convert --in-place it is in git history " \
           "before the conversion) again at the new size, or edit every value listed" in line, line


def test_a_value_read_from_a_label_is_never_stale(tmp_path):
    """PyTorch's DDP job: WORLD_SIZE and PET_NNODES follow global-replicas; nothing to read, nothing to list."""
    work, text = converted_in_place(tmp_path, (FIXTURES / "pytorchjob/master-workers/input.yaml").read_text())
    assert "global-replicas" in text
    (work / "job.yaml").write_text(without_size_record(set_replicas(text, "worker", 9)))
    res, lines = check(work, [])
    assert res.exit_code == 0 and lines == [], res.stdout


# (fixture, options, v1 type, replicatedJob, whether the conversion writes a size literal)
SIZED = [
    ("tfjob/chief-ps-workers", {}, "Worker", "worker", True),
    ("xgboostjob/master-workers", {}, "Worker", "worker", True),
    ("mpijob-v2beta1/openmpi", {"accept_mpi_ssh": True}, "Worker", "worker", True),
    ("pytorchjob/nproc-per-node", {}, "Worker", "worker", True),
    ("pytorchjob/master-workers", {}, "Worker", "worker", False),
    ("paddlejob/master-worker", {}, "Worker", "worker", False),  # the layout is the master's alone
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(SIZED), st.integers(1, 6), st.integers(1, 7), st.booleans())
def test_caught_iff_a_literal_exists_and_the_size_moved(sized, n, m, record):
    case, options, rtype, rjob, literal = sized
    converted = convert_yaml(v1_with(case, rtype, n), **options)
    edited = set_replicas(converted, rjob, m)
    if not record:
        edited = without_size_record(edited)
    found = resized_jobsets(edited)
    assert bool(found) == (literal and m != n), (case, n, m, [r.message() for r in found])
    if found:
        assert f"the JobSet runs {m}" in found[0].message() or f"the JobSet runs {m + 1} pods" in found[0].message()
