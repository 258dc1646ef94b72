"""A seeded slice of tools/validator_vs_apiserver.py: kf2jobset's JobSet validator and the real
admission chain (API server + JobSet CRD + the JobSet controller's webhooks, then the child Jobs'
batch/v1 validation) give the same verdict on every generated JobSet, both ways.

The full run (10,000 JobSets, docs/hardening.md) is `python tools/validator_vs_apiserver.py`.
Needs the JobSet controller built by tools/install-ground-truth.sh (CI builds it before the suite).
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from ..tool_errors import ToolUnavailable
from .conftest import _unavailable

pytestmark = pytest.mark.apiserver

COUNT, SEED = 250, 21


@pytest.fixture(scope="module")
def admission_server():
    from tests.e2e.stack import ADMISSION_COMPONENTS
    from tests.e2e.stack_binaries import locate_binaries
    from tools.validator_vs_apiserver import server_for, start_admission_stack

    try:
        locate_binaries(build=False, components=ADMISSION_COMPONENTS)
    except ToolUnavailable as e:
        _unavailable(f"the JobSet admission stack needs the Go-built components: {e}")
    workdir = Path(tempfile.mkdtemp(prefix="kf2jobset-vvs-"))
    stack = start_admission_stack(workdir)
    try:
        yield server_for(stack)
    finally:
        stack.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def test_validator_and_api_server_agree_on_generated_jobsets(admission_server):
    from tools.validator_vs_apiserver import disagreements, generate, run, summary

    cases = generate(COUNT, SEED, hypothesis_n=60, fuzz_n=40)
    run(cases, admission_server, workers=4)
    figures = summary(cases)
    bad = disagreements(cases)
    assert not bad, "\n".join(
        f"#{c.id} {c.mutations}: kf2jobset {c.ours[:2] or 'accepts'}; server {(c.server or 'accepts')[:400]} [{c.server_stage}]"
        for c in bad[:20])
    # the slice exercises both verdicts and both halves of the server's (JobSet, then child Jobs)
    assert figures["both_accept"] >= COUNT // 5 and figures["both_reject"] >= COUNT // 5, figures
    assert figures["rejected_at_child_job"] >= 5, figures
