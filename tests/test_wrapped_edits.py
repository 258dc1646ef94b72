"""The edit checks read JobSets an AppWrapper wraps as they read top-level ones (kf2jobset/checks/edit_checks.py).

A JobSet kf2jobset wrote into an AppWrapper component is edited by hand like any other: its literals (the MPI
hostfile ConfigMap, itself a component) go stale with its replicas, its name-bound values with its name. And
the component's podSets, which kf2jobset wrote from the JobSet, must keep describing its pods: the AppWrapper
webhook checks a JobSet's podSets against those it infers (replicas x pods per Job) and Kueue reserves what
they say. No false alarm on anything kf2jobset wrote.
"""
from __future__ import annotations

import re

import pytest

from kf2jobset import exitcodes
from kf2jobset.checks.edit_checks import edited_objects

from .conftest import FIXTURES
from .jobset_edits import convert_cli, converted_in_place, set_replicas

MPI = FIXTURES / "appwrapper/mpi-hostfile/input.yaml"


def _podset_replicas(text: str, index: int, new: int) -> str:
    """The replicas of the index-th podSet (in the component that holds the JobSet), edited by hand."""
    matches = list(re.finditer(r"(\n\s*- replicas: )(\d+)(\n\s*path: template\.spec\.replicatedJobs)", text))
    m = matches[index]
    return text[:m.start()] + m.group(1) + str(new) + m.group(3) + text[m.end():]


@pytest.mark.parametrize("golden", sorted(FIXTURES.rglob("expected.yaml")), ids=lambda p: str(p.parent.relative_to(FIXTURES)))
def test_nothing_kf2jobset_wrote_is_listed(golden):
    assert edited_objects(golden.read_text()) == []


def test_a_wrapped_jobset_resized_by_hand_is_listed_for_its_hostfile_and_its_podsets(tmp_path):
    work, text = converted_in_place(tmp_path, MPI.read_text())
    assert convert_cli("--check", work).exit_code == 0
    (work / "job.yaml").write_text(set_replicas(text, "worker", 3))
    res = convert_cli("--check", work)
    assert res.exit_code == exitcodes.FINDINGS, res.stdout + res.stderr
    lines = res.stdout.splitlines()
    assert len(lines) == 2, lines
    hostfile, podsets = sorted(lines, key=lambda ln: "podSets" in ln)
    assert ": resized: " in hostfile and "worker 2 -> 3" in hostfile and "/etc/mpi/hostfile" in hostfile, hostfile
    assert "in AppWrapper component 0: resized: podSets[0] says 2 pods for replicatedJob worker, the JobSet runs 3" in podsets
    # each at its own line: the wrapped JobSet's replicas, the component's podSets
    edited = (work / "job.yaml").read_text().splitlines()
    assert "replicas: 3" in edited[int(hostfile.split(":")[1]) - 1]
    assert "podSets" in edited[int(podsets.split(":")[1]) - 1]


def test_with_a_generated_hostfile_only_the_podsets_must_follow(tmp_path):
    work, text = converted_in_place(tmp_path, MPI.read_text(), "--mpi-hostfile", "generated")
    resized = set_replicas(text, "worker", 3)
    (work / "job.yaml").write_text(resized)
    res = convert_cli("--check", "--mpi-hostfile", "generated", work)
    assert res.exit_code == exitcodes.FINDINGS and res.stdout.count("\n") == 1 and "podSets[0]" in res.stdout, res.stdout
    (work / "job.yaml").write_text(_podset_replicas(resized, 0, 3))
    res = convert_cli("--check", "--mpi-hostfile", "generated", work)
    assert res.exit_code == 0 and res.stdout == "", res.stdout + res.stderr


def test_a_wrapped_jobset_renamed_by_hand_is_listed_renamed(tmp_path):
    work, text = converted_in_place(tmp_path, MPI.read_text())
    (work / "job.yaml").write_text(re.sub(r"(\n\s+kind: JobSet\n\s+metadata:\n\s+name: )osu-bench\n", r"\1osu-bench-2\n", text, count=1))
    res = convert_cli("--check", work)
    assert res.exit_code == exitcodes.FINDINGS, res.stdout + res.stderr
    assert ": renamed: " in res.stdout and "osu-bench-2" in res.stdout, res.stdout
