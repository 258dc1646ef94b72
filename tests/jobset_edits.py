"""Editing a converted tree as its user would after the migration: converting it with the CLI, changing a
JobSet's replicas by hand."""
from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from kf2jobset.cli.main import main


def convert_cli(*args):
    """`kf2jobset convert ARGS` in-process."""
    return CliRunner().invoke(main, ["convert", *map(str, args)])


def converted_in_place(tmp_path: Path, job_text: str, *flags) -> tuple[Path, str]:
    """A repo (``tmp_path``/repo) whose job.yaml holds ``job_text``, converted in place with ``flags``:
    (the repo, its converted job.yaml)."""
    work = tmp_path / "repo"
    work.mkdir()
    (work / "job.yaml").write_text(job_text)
    res = convert_cli("--in-place", *flags, work)
    assert res.exit_code == 0, res.stdout + res.stderr
    return work, (work / "job.yaml").read_text()


def set_replicas(text: str, rjob: str, new: int) -> str:
    """The replicas line right after `- name: <rjob>` in the JobSet's replicatedJobs, edited by hand."""
    pattern = re.compile(rf"(\n(\s*)- name: {re.escape(rjob)}\n\2  replicas: )(\d+)")
    assert pattern.search(text), f"no replicatedJob {rjob} in the JobSet"
    return pattern.sub(lambda m: m.group(1) + str(new), text, count=1)
