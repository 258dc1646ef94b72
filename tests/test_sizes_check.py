"""`convert --check` guards the size-derived literals of converted JobSets after the migration.

No false alarm: every JobSet kf2jobset wrote (every golden, every fixture converted now) passes. A
JobSet of every kind with literals whose replicas are edited (smaller and larger) is listed as
`resized`, naming the stale values, with exit 1, also when no v1 job is left in the tree; editing a
JobSet whose values all follow the size is not.
"""
from __future__ import annotations

import re

import pytest

from kf2jobset import exitcodes
from kf2jobset.checks.staleness import SIZE_LITERALS_ANNOTATION, SIZED_FOR_ANNOTATION, resized_jobsets

from .conftest import FIXTURES
from .jobset_edits import convert_cli, converted_in_place, set_replicas


GOLDENS = sorted(p for p in FIXTURES.rglob("expected.yaml"))
# (fixture, flags, replicatedJob to edit, the literal the message must name)
LITERAL_CASES = [
    ("tfjob/chief-ps-workers", [], "worker", "TF_CONFIG"),
    ("xgboostjob/master-workers", [], "worker", "WORKER_ADDRS"),
    ("mpijob-v2beta1/openmpi", ["--accept-mpi-ssh"], "worker", "/etc/mpi/hostfile"),
    ("mpijob-v1/accepted", ["--accept-mpi-ssh"], "worker", "/etc/mpi/hostfile"),
    ("mxjob/dist-sync", [], "worker", "DMLC_NUM_WORKER"),
    ("pytorchjob/nproc-per-node", [], "worker", "WORLD_SIZE"),
]


@pytest.mark.parametrize("golden", GOLDENS, ids=lambda p: str(p.parent.relative_to(FIXTURES)))
def test_no_false_alarm_on_anything_kf2jobset_wrote(golden):
    assert resized_jobsets(golden.read_text()) == []


def _converted(tmp_path, case, flags):
    src = FIXTURES / case / "input.yaml"
    assert src.exists(), case
    work, text = converted_in_place(tmp_path, src.read_text(), *flags)
    assert SIZED_FOR_ANNOTATION in text and SIZE_LITERALS_ANNOTATION in text
    checked = convert_cli("--check", *flags, work)
    assert checked.exit_code == 0 and "resized" not in checked.stdout, checked.stdout + checked.stderr
    return work, text


@pytest.mark.parametrize("case,flags,rjob,literal", LITERAL_CASES, ids=[c[0] for c in LITERAL_CASES])
@pytest.mark.parametrize("delta", [-1, +2])
def test_a_resized_jobset_with_literals_fails_check_naming_them(tmp_path, case, flags, rjob, literal, delta):
    work, text = _converted(tmp_path, case, flags)
    was = int(re.search(rf"\n(\s*)- name: {re.escape(rjob)}\n\1  replicas: (\d+)", text).group(2))
    new = was + delta if was + delta >= 1 else was + 1  # one worker cannot shrink: it grows by one
    (work / "job.yaml").write_text(set_replicas(text, rjob, new))
    res = convert_cli("--check", *flags, work)
    assert res.exit_code == exitcodes.FINDINGS, res.stdout + res.stderr
    (line,) = res.stdout.splitlines()
    assert ": resized: " in line and f"{rjob} {was} -> {new}" in line and literal in line, line
    assert "1 left: 1 resized" in res.stderr
    # converting does not regenerate the values: it warns on every run and writes nothing
    before = (work / "job.yaml").read_bytes()
    again = convert_cli("--in-place", *flags, work)
    assert again.exit_code == 0 and (work / "job.yaml").read_bytes() == before
    assert "resized: replicas changed since conversion" in again.stderr


def test_a_jobset_whose_values_follow_the_size_may_be_resized(tmp_path):
    work, text = converted_in_place(tmp_path, (FIXTURES / "pytorchjob/master-workers/input.yaml").read_text())
    assert SIZED_FOR_ANNOTATION not in text
    (work / "job.yaml").write_text(set_replicas(text, "worker", 7))
    res = convert_cli("--check", work)
    assert res.exit_code == 0 and res.stdout == "", res.stdout + res.stderr


def test_a_volcano_gang_of_every_pod_is_a_literal_too(tmp_path):
    """schedulingPolicy without minAvailable: the operator gave the PodGroup every pod; so does the
    companion, a count no label carries."""
    job = (FIXTURES / "pytorchjob/master-workers/input.yaml").read_text().replace(
        "spec:\n  pytorchReplicaSpecs:", "spec:\n  runPolicy:\n    schedulingPolicy:\n      queue: research\n"
        "  pytorchReplicaSpecs:", 1)
    assert "schedulingPolicy" in job
    work, text = converted_in_place(tmp_path, job, "--scheduler", "volcano")
    assert "minMember: 4" in text and "kf2jobset.dev/size-literals: PodGroup resnet-ddp minMember" in text
    (work / "job.yaml").write_text(set_replicas(text, "worker", 5))
    res = convert_cli("--check", "--scheduler", "volcano", work)
    assert res.exit_code == exitcodes.FINDINGS and "PodGroup resnet-ddp minMember" in res.stdout, res.stdout
