"""`--target trainjob`, bundle path: the v1 values that do not by themselves keep a job off a shared runtime
of the bundle (kf2jobset/targets/bundle_fit.py, docs/trainjob.md): a retry limit is the runtime's (TJ033,
but a limit of 0 stays refused), and every role runs the sized role's resources (TJ034, but a role that
asked for more stays refused). Trainer v2.3.0's build of these TrainJobs is held in
tests/e2e/test_trainjob_target.py (every fixture); every claim and difference of their reports in
tests/test_target_torch_distributed.py."""
from __future__ import annotations

import dataclasses

from kf2jobset.options import ConvertOptions
from kf2jobset.files.pipeline import convert_text
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
    found, changes, ports = bundle_fit.shape_fit(_with_limits(pytorch, {"node": 3}), runtimes)
    assert found is pytorch and changes == [bundle_fit.RetryChange("node", "node", 3, MAX)] and ports == []
    mpi = next(r for r in runtimes if r.name == "kf2jobset-mpi")  # the launcher's limit: mpi-operator's 6
    found, changes, _ = bundle_fit.shape_fit(_with_limits(mpi, {"launcher": 20}), runtimes)
    assert found is mpi and [(c.rjob, c.v1, c.runtime) for c in changes] == [("launcher", 20, 6)]


def test_a_retry_limit_of_zero_is_a_rule_and_stays_refused():
    runtimes = bundle_catalog.catalog()
    onfailure = next(r for r in runtimes if r.name == "kf2jobset-tensorflow-onfailure")
    never = _with_limits(onfailure, {"worker": 0})
    assert bundle_fit.shape_fit(never, runtimes) == (None, [], [])
    assert bundle_fit.never_retried(never, runtimes) == ["kf2jobset-tensorflow-onfailure"]
    mpi = next(r for r in runtimes if r.name == "kf2jobset-mpi")  # workers never retried: 0 -> 3 is no fit either
    assert bundle_fit.shape_fit(_with_limits(mpi, {"worker": 3}), runtimes) == (None, [], [])


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


def test_a_launcher_retry_limit_above_the_runtimes_gives_fewer_retries():
    conv = _convert("mpijob-v2beta1/backoff-limit")
    assert [o for o in conv.output if o["kind"] == "TrainJob"][0]["spec"]["runtimeRef"]["name"] == "kf2jobset-mpi"
    (note,) = _notes(conv, "TJ033")
    assert "fewer retries" in note.message and "retry limit 6" in note.message and "v1's was 20" in note.message


# ---------------------------------------------------------------------------------------------
# declared ports (TJ035)


def _with_port(runtime, rjob: str, ports: list) -> dict:
    spec = runtime.spec
    for rj in spec["template"]["spec"]["replicatedJobs"]:
        if rj["name"] == rjob:
            rj["template"]["spec"]["template"]["spec"]["containers"][0]["ports"] = ports
    return spec


def test_declared_ports_are_the_runtimes_within_the_jobs_framework():
    runtimes = bundle_catalog.catalog()
    pytorch = next(r for r in runtimes if r.name == "kf2jobset-pytorch")
    own = [{"name": "pytorchjob-port", "containerPort": 29500}]
    found, _, ports = bundle_fit.shape_fit(_with_port(pytorch, "node", own), runtimes, "torch")
    assert found is pytorch and [(p.rjob, p.v1) for p in ports] == [("node", tuple(own))]
    assert bundle_fit.shape_fit(_with_port(pytorch, "node", own), runtimes, "jax") == (None, [], [])
    bound = [{"name": "pytorchjob-port", "containerPort": 29500, "hostPort": 29500}]
    assert bundle_fit.shape_fit(_with_port(pytorch, "node", bound), runtimes, "torch") == (None, [], [])


def test_a_pytorchjob_on_torchs_port_declares_the_runtimes():
    conv = _convert("targets/trainjob/pytorch-port-29500")
    (tj,) = [o for o in conv.output if o["kind"] == "TrainJob"]
    assert tj["spec"]["runtimeRef"]["name"] == "kf2jobset-pytorch"
    node = _rjob(conv, "node")["template"]["spec"]["template"]["spec"]["containers"][0]
    assert node["ports"] == [{"name": "pytorchjob-port", "containerPort": 23456}]
    env = {e["name"]: e.get("value") for e in node["env"]}
    assert env["MASTER_PORT"] == "29500"  # the process listens where v1's did
    (note,) = _notes(conv, "TJ035")
    assert note.category == "approximated" and "29500" in note.message and "23456" in note.message


# ---------------------------------------------------------------------------------------------
# resources (TJ034)


def test_a_role_that_asked_for_less_runs_the_sized_roles_resources():
    worker = {"requests": {"cpu": "8", "memory": "32Gi"}, "limits": {"nvidia.com/gpu": 1}}
    why, over = bundle_fit.resources_fit(("worker", worker), [("launcher", {"requests": {"cpu": "500m", "memory": "1Gi"}})])
    assert why == []
    (o,) = over
    assert o.rjob == "launcher" and ("requests", "cpu", "500m", "8") in o.extra
    assert ("requests", "nvidia.com/gpu", "none", "1") in o.extra and ("limits", "nvidia.com/gpu", "none", "1") in o.extra
    why, over = bundle_fit.resources_fit(("worker", worker), [("launcher", None)])  # asked for nothing
    assert why == [] and over[0].v1 == {}


def test_a_role_that_asked_for_more_of_anything_stays_refused():
    worker = {"requests": {"cpu": "8", "memory": "16Gi"}}
    for theirs, word in (({"requests": {"memory": "64Gi"}}, "memory"),
                         ({"limits": {"nvidia.com/gpu": 1}}, "nvidia.com/gpu"),  # the limit is also its request
                         ({"requests": {"cpu": "9"}}, "cpu")):
        why, over = bundle_fit.resources_fit(("worker", worker), [("ps", theirs)])
        assert over == [] and why and f"asks for more {word}" in why[0]
    # a higher limit on what the sized role limits: the role would be throttled or killed sooner
    why, _ = bundle_fit.resources_fit(("worker", {"limits": {"memory": "4Gi"}}), [("ps", {"requests": {"memory": "1Gi"},
                                                                                          "limits": {"memory": "8Gi"}})])
    assert why and "memory" in why[0]


def test_an_mpi_launcher_beside_gpu_workers_runs_with_the_workers_resources():
    conv = _convert("targets/trainjob/mpi-small-launcher")
    (tj,) = [o for o in conv.output if o["kind"] == "TrainJob"]
    assert tj["spec"]["runtimeRef"]["name"] == "kf2jobset-mpi"
    worker = {"requests": {"cpu": "8", "memory": "32Gi"}, "limits": {"nvidia.com/gpu": 1}}
    assert tj["spec"]["trainer"]["resourcesPerNode"] == worker
    for name in ("launcher", "worker"):  # Trainer merges resourcesPerNode into every trainer role's node
        assert _rjob(conv, name)["template"]["spec"]["template"]["spec"]["containers"][0]["resources"] == worker
    launcher_env = {e["name"]: e.get("value") for e in
                    _rjob(conv, "launcher")["template"]["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert launcher_env["NVIDIA_VISIBLE_DEVICES"] == ""  # mpi-operator's: the launcher does not see the GPU it holds
    (note,) = _notes(conv, "TJ034")
    assert note.category == "approximated" and "cpu 500m -> 8" in note.message and "nvidia.com/gpu none -> 1" in note.message


def test_per_job_keeps_each_roles_own_resources():
    options = dataclasses.replace(fixture_options(FIXTURES / "targets/trainjob/mpi-small-launcher"), target="trainjob",
                                  trainer_runtime="per-job")
    result = convert_text((FIXTURES / "targets/trainjob/mpi-small-launcher/input.yaml").read_text(), "input.yaml", options)
    (conv,) = result.conversions
    assert _rjob(conv, "launcher")["template"]["spec"]["template"]["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "500m", "memory": "1Gi"}}
    assert not _notes(conv, "TJ034")
    assert ConvertOptions().trainer_runtime != "per-job"
