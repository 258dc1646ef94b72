"""`--target trainjob`, bundle path: the v1 values that do not by themselves keep a job off a shared runtime
of the bundle (kf2jobset/targets/bundle_fit.py, docs/trainjob.md): a retry limit is the runtime's (TJ033,
but a limit of 0 stays refused). Trainer v2.3.0's build of these TrainJobs is held in
tests/e2e/test_trainjob_target.py (every fixture); every claim and difference of their reports in
tests/test_target_torch_distributed.py."""
from __future__ import annotations

import dataclasses

from kf2jobset.pipeline import convert_text
from kf2jobset.targets import bundle_catalog, bundle_fit

from .conftest import FIXTURES
from .fixture_cases import fixture_options

MAX = bundle_fit.MAX_INT32


def _convert(case):
    options = dataclasses.replace(fixture_options(FIXTURES / case), target="trainjob")
    result = convert_text((FIXTURES / case / "input.yaml").read_text(), "input.yaml", options)
    assert not result.errors, result.errors
    (conv,) = result.conversions
    return conv


def _rjob(conv, name):
    return next(r for r in conv.jobset["spec"]["replicatedJobs"] if r["name"] == name)


def _notes(conv, code):
    return [n for n in conv.notes if n.code == code]


def _with_limits(runtime, limits: dict) -> dict:
    spec = runtime.spec
    for rj in spec["template"]["spec"]["replicatedJobs"]:
        if rj["name"] in limits:
            rj["template"]["spec"]["backoffLimit"] = limits[rj["name"]]
    return spec


# ---------------------------------------------------------------------------------------------
# retry limits (TJ033)


def test_a_retry_limit_alone_lands_on_the_runtime_of_its_shape():
    runtimes = bundle_catalog.catalog()
    pytorch = next(r for r in runtimes if r.name == "kf2jobset-pytorch")
    found, changes = bundle_fit.retry_fit(_with_limits(pytorch, {"node": 3}), runtimes)
    assert found is pytorch and changes == [bundle_fit.RetryChange("node", "node", 3, MAX)]
    mpi = next(r for r in runtimes if r.name == "kf2jobset-mpi")  # the launcher's limit: mpi-operator's 6
    found, changes = bundle_fit.retry_fit(_with_limits(mpi, {"launcher": 20}), runtimes)
    assert found is mpi and [(c.rjob, c.v1, c.runtime) for c in changes] == [("launcher", 20, 6)]


def test_a_retry_limit_of_zero_is_a_rule_and_stays_refused():
    runtimes = bundle_catalog.catalog()
    onfailure = next(r for r in runtimes if r.name == "kf2jobset-tensorflow-onfailure")
    never = _with_limits(onfailure, {"worker": 0})
    assert bundle_fit.retry_fit(never, runtimes) == (None, [])
    assert bundle_fit.never_retried(never, runtimes) == ["kf2jobset-tensorflow-onfailure"]
    mpi = next(r for r in runtimes if r.name == "kf2jobset-mpi")  # workers never retried: 0 -> 3 is no fit either
    assert bundle_fit.retry_fit(_with_limits(mpi, {"worker": 3}), runtimes) == (None, [])


def test_a_pytorchjob_with_its_own_retry_limit_runs_on_the_bundle_with_the_runtimes():
    conv = _convert("targets/trainjob/pytorch-retry-limit")
    (tj,) = [o for o in conv.output if o["kind"] == "TrainJob"]
    assert tj["spec"]["runtimeRef"]["name"] == "kf2jobset-pytorch"
    assert _rjob(conv, "node")["template"]["spec"]["backoffLimit"] == MAX  # the JobSet Trainer builds
    assert conv.planned_jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["backoffLimit"] == 4
    (note,) = _notes(conv, "TJ033")
    assert note.category == "approximated" and "v1's was 4" in note.message and "more retries" in note.message
    assert "--trainer-runtime per-job" in note.action
    assert not _notes(conv, "JS034")  # v1's limit on the Job: no longer what the JobSet says
    assert _notes(conv, "TJ031")  # the TTL: no TrainJob carries it
