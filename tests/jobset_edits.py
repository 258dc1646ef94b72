"""Editing a converted tree as its user would after the migration: converting it with the CLI, changing a
JobSet's replicas by hand."""
from __future__ import annotations

import re

from click.testing import CliRunner

from kf2jobset.cli import main


def convert_cli(*args):
    """`kf2jobset convert ARGS` in-process."""
    return CliRunner().invoke(main, ["convert", *map(str, args)])


def set_replicas(text: str, rjob: str, new: int) -> str:
    """The replicas line right after `- name: <rjob>` in the JobSet's replicatedJobs, edited by hand."""
    pattern = re.compile(rf"(\n(\s*)- name: {re.escape(rjob)}\n\2  replicas: )(\d+)")
    assert pattern.search(text), f"no replicatedJob {rjob} in the JobSet"
    return pattern.sub(lambda m: m.group(1) + str(new), text, count=1)
