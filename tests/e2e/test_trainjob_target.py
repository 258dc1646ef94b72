"""`--target trainjob` on the real Kubeflow Trainer v2.3.0 controller (stack flavour `trainer`: etcd,
kube-apiserver, the Job controller, JobSet v0.12.0 and Trainer with their webhooks).

For every fixture job the TrainingRuntime, the companions and the TrainJob kf2jobset writes are created;
the JobSet Trainer builds must be exactly the JobSet `--target jobset` writes for the same job, as the
same API server (with the JobSet webhooks) stores it. That JobSet is the one the differential, framework
and lifecycle tests hold against the v1 operators; so the v1 pod contract holds under the TrainJob too.
One converted PyTorchJob then runs to `Complete` on the node agent (DDP over the JobSet's addresses),
and mutations show the comparison bites. On the built-in runtimes: converted PyTorchJobs run real torch on
torch-distributed, converted JAXJobs and XGBoostJobs run the real JAX and XGBoost programs of
tests/e2e/programs on jax-distributed and xgboost-distributed, also after their TrainJob's numNodes was
edited (v1's ranks and addresses at the new size). On kf2jobset's bundle (installed as `kf2jobset runtimes`
prints it): a TFJob, fixtures/targets/trainjob/pytorch-bundle and an Open MPI MPIJob run to `Complete` with
v1's tasks, ranks and launcher command.

Knobs: ``KF2JOBSET_TJ_ONLY=REGEX`` (fixture paths, e.g. ``jaxjob|xgboost``) narrows the fixture-wide test;
``KF2JOBSET_TJ_PARALLEL`` (default 4) is how many of its cases are sent at a time.
"""
from __future__ import annotations

import os
import re
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import yaml
from click.testing import CliRunner

from kf2jobset.cli.main import main
from kf2jobset.checks.staleness import SIZE_LITERALS_ANNOTATION

from .ddp_probe import DDP_PROBE, RANK_PROBE, check_ddp
from .trainer_harness import PY, jobset_of, wait_complete
from .trainer_harness import agent_for, core, custom, tapi, tns, trainer_stack  # noqa: F401 (the fixtures)
from .trainjob_harness import (DMLC_ORDER, LAGGED, REFUSED_BY_DEFAULT, REPO_FIXTURES, convert_case, create_object,
                               create_trainjob_after_its_runtime, differences, named_in, on_its_gang_flavour,
                               planned_objects, v1_jax_or_xgboost_job, v1_pytorchjob, v1_tfjob)
from .trainjob_harness import MPI_PROBE, bundle  # noqa: F401 (the fixture)

CASES = (sorted(p.parent for p in REPO_FIXTURES.glob("*/*/input.yaml"))
         + sorted(p.parent for p in (REPO_FIXTURES / "targets").glob("*/*/input.yaml")))
ONLY = os.environ.get("KF2JOBSET_TJ_ONLY")
if ONLY:  # a regex over fixture paths, for local runs
    CASES = [c for c in CASES if re.search(ONLY, str(c.relative_to(REPO_FIXTURES)))]
PARALLEL = int(os.environ.get("KF2JOBSET_TJ_PARALLEL", "4"))  # cases sent at a time
RUNTIME_PATHS = {"auto": 0, "generated": 0}  # TrainJobs sent per --trainer-runtime, for the summary


@pytest.mark.parametrize("runtime", ["auto", "generated"])
def test_trainer_builds_exactly_the_jobset_kf2jobset_plans_for_every_fixture(custom, core, tns, runtime, bundle):
    """Every fixture job, on the path `--trainer-runtime` picks: the JobSet Trainer builds must be exactly
    the one kf2jobset planned (per-job runtime: `--target jobset`'s JobSet; a built-in or bundle runtime: the
    predicted one), as the same API server (with the JobSet webhooks) stores it."""
    from kubernetes import client

    t0 = time.monotonic()
    # converted one after another (the CLI runner swaps sys.stdout), then sent PARALLEL at a time: each case has a
    # namespace of its own, and most of its time is spent waiting for Trainer to build the JobSet
    plans, shared = [], {}  # shared: TrainJobs per ClusterTrainingRuntime (built-in or bundle)
    for i, case in enumerate(CASES):
        planned = planned_objects(case, runtime)
        trainjobs = [o for o in (planned or ([], []))[0] if o.get("kind") == "TrainJob"]
        if not trainjobs:
            continue
        for t in trainjobs:
            if t["spec"]["runtimeRef"]["kind"] == "ClusterTrainingRuntime":
                shared[t["spec"]["runtimeRef"]["name"]] = shared.get(t["spec"]["runtimeRef"]["name"], 0) + 1
            on_its_gang_flavour(custom, t)  # after the count: the runtime's name, not the flavour's stand-in
        plans.append((i, case, planned))

    def send(item) -> tuple[int, list[str]]:
        i, case, (trainjob_out, jobsets) = item
        label, sent, problems = case.relative_to(REPO_FIXTURES), 0, []
        trainjobs = [o for o in trainjob_out if o.get("kind") == "TrainJob"]
        ns = f"{tns}-{runtime[0]}{i}"[:63]
        core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))
        # the JobSet as this API server (JobSet's defaulting webhook) would store it
        expected = [create_object(custom, core, named_in(js, ns), ns, dry_run="All") for js in jobsets]
        for obj in trainjob_out:
            # (a companion PodGroup is not created: the JobSet does not wait for it)
            if obj.get("kind") in ("TrainingRuntime", "ConfigMap", "Secret", "TrainJob"):
                try:
                    create_trainjob_after_its_runtime(custom, core, named_in(obj, ns), ns)
                except Exception as e:  # noqa: BLE001 - the server's words
                    problems.append(f"{label}: {obj['kind']} refused: {getattr(e, 'body', e)}")
        for want, tj in zip(expected, trainjobs, strict=False):
            name = named_in(tj, ns)["metadata"]["name"]
            try:
                built = jobset_of(custom, ns, name, timeout=60)
            except Exception as e:  # noqa: BLE001
                problems.append(f"{label}: no JobSet for TrainJob {name}: {e}")
                continue
            sent += 1
            owners = [o["kind"] for o in built["metadata"].get("ownerReferences") or []]
            if owners != ["TrainJob"]:
                problems.append(f"{label}: JobSet owners {owners}")
            problems += [f"{label}: {d}" for d in differences(want, built)]
        return sent, problems

    sent, problems = 0, []
    with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        for n, found in pool.map(send, plans):
            sent += n
            problems += found
    shown = ", ".join(f"{n} on {r}" for r, n in sorted(shared.items()))
    on_bundle = sum(n for r, n in shared.items() if r in bundle)
    print(f"\n[trainjob target, --trainer-runtime {runtime}] {sent} TrainJobs built into JobSets "
          f"({shown or 'none on a shared runtime'}; {on_bundle} on kf2jobset's bundle; {len(REFUSED_BY_DEFAULT)} fixtures "
          f"refused by default, run with per-job) in {time.monotonic() - t0:.1f} s; "
          f"{len(set(LAGGED))} refused once while Trainer's runtime cache caught up; DMLC_* {DMLC_ORDER or '-'}")
    assert not problems, "\n".join(p[:600] for p in problems[:60])
    if runtime == "generated":
        assert not shared
    elif not ONLY:
        assert sent >= 60
        assert shared.get("torch-distributed", 0) >= 14 and shared.get("jax-distributed", 0) >= 3
        assert shared.get("xgboost-distributed", 0) >= 4 and on_bundle >= 12


def test_the_comparison_bites(custom, core, tns):
    """A runtime template that moves rank 0 (RANK read from another label) or loses an env var gives a
    JobSet that differs from kf2jobset's: the check above would see it."""
    case = REPO_FIXTURES / "pytorchjob" / "master-workers"
    out = convert_case(case, "--target", "trainjob", "--trainer-runtime", "generated")
    (js,) = [o for o in convert_case(case) if o["kind"] == "JobSet"]
    expected = create_object(custom, core, named_in(js, tns), tns, dry_run="All")
    runtime = next(o for o in out if o["kind"] == "TrainingRuntime")
    trainjob = next(o for o in out if o["kind"] == "TrainJob")
    env = runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["env"]
    rank = next(e for e in env if e["name"] == "RANK")
    rank["valueFrom"]["fieldRef"]["fieldPath"] = "metadata.labels['jobset.sigs.k8s.io/job-index']"
    runtime["metadata"]["name"] = trainjob["spec"]["runtimeRef"]["name"] = "mutated"
    create_object(custom, core, named_in(runtime, tns), tns)
    create_trainjob_after_its_runtime(custom, core, named_in(trainjob, tns), tns)
    built = jobset_of(custom, tns, trainjob["metadata"]["name"])
    assert any("job-index" in d for d in differences(expected, built))
    # and a TrainJob naming a runtime that does not exist is refused by Trainer's webhook
    from kubernetes.client.exceptions import ApiException

    missing = named_in(trainjob, tns)
    missing["metadata"]["name"] = "no-runtime"
    missing["spec"]["runtimeRef"]["name"] = "not-there"
    with pytest.raises(ApiException) as info:
        create_object(custom, core, missing, tns)
    assert "must be created before the TrainJob" in str(info.value.body)


def test_a_converted_pytorchjob_runs_to_complete_as_a_trainjob(custom, core, tns, agent_for):
    case = REPO_FIXTURES / "pytorchjob" / "master-workers"
    out = convert_case(case, "--target", "trainjob", "--trainer-runtime", "generated")
    agent = agent_for({"registry.example.com/vision/resnet": [PY, "-c", DDP_PROBE]})
    for obj in out:
        create_trainjob_after_its_runtime(custom, core, named_in(obj, tns), tns)
    trainjob = next(o for o in out if o["kind"] == "TrainJob")
    name = trainjob["metadata"]["name"]
    final = wait_complete(custom, tns, name, agent=agent)
    master = f"{name}-master-0-0"
    m = check_ddp(agent, tns, master, [f"{name}-worker-{i}-0" for i in range(3)])
    assert m["master_addr"] == f"{master}.{name}"  # v1's MASTER_ADDR reaches the master pod
    jobs = {s["name"]: s for s in final["status"]["jobsStatus"]}
    assert sorted(jobs) == ["master", "worker"] and jobs["master"]["succeeded"] == 1


# ---------------------------------------------------------------------------------------------
# the built-in torch-distributed path


def test_a_pytorchjob_on_torch_distributed_keeps_its_ranks_and_runs_to_complete(custom, core, tns, agent_for):
    """The built-in path's v1 contract on the real Trainer: completion index i is v1's rank i, RANK and
    WORLD_SIZE are v1's, MASTER_ADDR:MASTER_PORT reaches node 0, Trainer's PET_* sit beside them."""
    import json

    case = REPO_FIXTURES / "pytorchjob" / "master-workers"
    out = convert_case(case, "--target", "trainjob")
    (trainjob,) = out
    assert trainjob["spec"]["runtimeRef"]["name"] == "torch-distributed"
    agent = agent_for({"registry.example.com/vision/resnet": [PY, "-c", RANK_PROBE]})
    create_trainjob_after_its_runtime(custom, core, named_in(trainjob, tns), tns)
    name = trainjob["metadata"]["name"]
    wait_complete(custom, tns, name, agent=agent)
    runs = {x.hostname: x for x in agent.launches(tns) if x.container == "node"}
    assert sorted(runs) == [f"{name}-node-0-{i}" for i in range(4)]
    seen = {}
    for host, run in runs.items():
        lines = [line for line in agent.log(tns, run.pod, "node").splitlines() if line.startswith("{")]
        me = json.loads(lines[-1])
        seen[me["rank"]] = (host, run.pod_ip, me)
    assert sorted(seen) == [0, 1, 2, 3]
    master_ip = seen[0][1]
    for rank, (host, _ip, me) in seen.items():
        assert host == f"{name}-node-0-{rank}"  # rank = completion index = v1's rank order
        assert me["world"] == 4 and me["master_ip"] == master_ip
        assert me["pet"]["PET_NODE_RANK"] == str(rank) and me["pet"]["PET_NNODES"] == "4"
        assert me["pet"]["PET_MASTER_PORT"] == "29500"
        assert me["pet"]["PET_MASTER_ADDR"] == f"{name}-node-0-0.{name}"
    assert {int(r): peer["peer_ip"] for r, peer in seen[0][2]["peers"].items()} == {r: seen[r][1] for r in (1, 2, 3)}


def test_a_katib_trial_as_a_trainjob_builds_the_planned_jobset_and_its_primary_pod_is_rank_0(custom, core, tns, agent_for):
    """`--katib --target trainjob`: the Experiment's trialSpec, made into a trial as Katib makes it (named
    <experiment>-<8 characters>, parameters substituted), builds on the real Trainer exactly the JobSet
    kf2jobset planned, runs to Complete, and the trial template's primaryPodLabels select the rank-0 pod
    (where Katib's metrics collector reads the objective)."""
    import json

    from kf2jobset.runtime.jobset_view import stand_in_name
    from kf2jobset.text.yamlio import to_plain

    case = REPO_FIXTURES / "targets" / "trainjob" / "katib-torch-trials"
    planned = planned_objects(case)
    assert planned is None  # (the fixture-wide tests leave Katib Experiments out)
    from kf2jobset.options import ConvertOptions
    from kf2jobset.files.pipeline import convert_text

    result = convert_text((case / "input.yaml").read_text(), "input.yaml", ConvertOptions(katib=True, target="trainjob"))
    (conv,) = [c for r in result.results for c in r.conversions]
    (experiment,) = [d for d in yaml.safe_load_all(result.new_text) if isinstance(d, dict)]
    template = experiment["spec"]["trialTemplate"]
    trial_name = "lr-sweep-k2x9q7wd"

    def as_trial(obj):
        text = json.dumps(obj).replace("${trialParameters.learningRate}", "0.01")
        return json.loads(text.replace(stand_in_name(obj["metadata"]), trial_name))

    trial = as_trial(template["trialSpec"])
    trial["metadata"]["name"] = trial_name
    expected = as_trial(to_plain(conv.jobset))
    expected["metadata"]["name"] = trial_name
    want = create_object(custom, core, named_in(expected, tns), tns, dry_run="All")
    agent = agent_for({"registry.example.com/mnist-ddp": [PY, "-c", RANK_PROBE]})
    create_trainjob_after_its_runtime(custom, core, named_in(trial, tns), tns)
    built = jobset_of(custom, tns, trial_name)
    assert differences(want, built) == []
    wait_complete(custom, tns, trial_name, agent=agent)
    selector = ",".join(f"{k}={v}" for k, v in template["primaryPodLabels"].items())
    pods = core.list_namespaced_pod(tns, label_selector=selector).items
    assert len(pods) == 1, [p.metadata.name for p in pods]
    primary = [x for x in agent.launches(tns) if x.pod == pods[0].metadata.name and x.container == template["primaryContainerName"]]
    assert primary and dict(primary[0].env)["RANK"] == "0"


V1_DDP_SCRIPT = r"""
import json, os, socket
import torch
import torch.distributed as dist
dist.init_process_group("gloo")  # env://: MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE as v1 set them (or torchrun)
t = torch.tensor([float(dist.get_rank() + 1)])
dist.all_reduce(t)
names = [None] * dist.get_world_size()
dist.all_gather_object(names, socket.gethostname())
print("KF2JS-V1DDP " + json.dumps({"rank": dist.get_rank(), "world": dist.get_world_size(), "sum": t.item(),
      "hosts": names, "local_rank": int(os.environ.get("LOCAL_RANK", 0))}), flush=True)
dist.destroy_process_group()
"""


@pytest.mark.parametrize("launcher", ["python", "torchrun"])
def test_real_torch_runs_a_converted_pytorchjob_on_torch_distributed(custom, core, tns, agent_for, tmp_path, launcher):
    """Real torch (the frameworks venv) on the built-in path: a v1 script that reads MASTER_ADDR, RANK and
    WORLD_SIZE (`python train.py`), and a `torchrun train.py` job with nprocPerNode 2 (Trainer's PET_*),
    each converted from a PyTorchJob: every rank joins, all_reduce sums over the whole world, and the
    global rank order follows v1's (master first, then the workers)."""
    import json

    from .frameworks_harness import framework_pythons

    py = framework_pythons()["torch"]
    if not py.exists():
        pytest.fail(f"{py} missing: run `bash tools/install-frameworks.sh` (or KF2JOBSET_SKIP_E2E=1)", pytrace=False)
    script = tmp_path / "train.py"
    script.write_text(V1_DDP_SCRIPT)
    name, image, workers = f"v1-{launcher}", f"kf2jobset.test/v1-{launcher}:1", 2
    nproc = "2" if launcher == "torchrun" else None
    job = v1_pytorchjob(name, image, workers, ["torchrun", "train.py"] if nproc else ["python", "train.py"], nproc)
    result = CliRunner().invoke(main, ["convert", "-", "--target", "trainjob"], input=yaml.safe_dump(job),
                                catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    (trainjob,) = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert trainjob["spec"]["runtimeRef"]["name"] == "torch-distributed"
    argv = [str(py), "-m", "torch.distributed.run", str(script)] if nproc else [str(py), str(script)]
    agent = agent_for({image: argv})
    create_trainjob_after_its_runtime(custom, core, named_in(trainjob, tns), tns)
    wait_complete(custom, tns, name, timeout=300, agent=agent)
    runs = {x.hostname: x for x in agent.launches(tns) if x.container == "node"}
    nodes = 1 + workers
    assert sorted(runs) == [f"{name}-node-0-{i}" for i in range(nodes)]
    per_node = int(nproc or 1)
    world = nodes * per_node
    reports = []
    for host, run in runs.items():
        # torchrun's processes share one stdout: a report can land on another's line, so find each whole one
        lines = re.findall(r"KF2JS-V1DDP (\{[^{}]*\})", agent.log(tns, run.pod, "node"))
        assert len(lines) == per_node, agent.log(tns, run.pod, "node")[-3000:]
        node = int(host.rsplit("-", 1)[1])
        for r in map(json.loads, lines):
            assert r["rank"] == node * per_node + r["local_rank"]  # v1's rank order: master (node 0) first
            reports.append(r)
        if not nproc:
            assert dict(run.env)["RANK"] == str(node) and dict(run.env)["WORLD_SIZE"] == str(nodes)
    assert sorted(r["rank"] for r in reports) == list(range(world))
    assert all(r["world"] == world and r["sum"] == world * (world + 1) / 2 for r in reports)


# ---------------------------------------------------------------------------------------------
# the built-in jax-distributed and xgboost-distributed paths: real programs, numNodes as the size

PROGRAMS = REPO_FIXTURES.parent / "tests" / "e2e" / "programs"


@pytest.mark.parametrize("kind, pods, nodes", [("JAX", 2, 2), ("JAX", 2, 3), ("XGBoost", 2, 2), ("XGBoost", 2, 3)],
                         ids=["jax", "jax-numNodes-edited", "xgboost", "xgboost-numNodes-edited"])
def test_real_jax_and_xgboost_run_a_converted_job_on_their_built_in_runtime(custom, core, tns, agent_for, kind, pods, nodes):
    """The v1 programs of tests/e2e/programs (jax_prog.py: jax.distributed.initialize from COORDINATOR_ADDRESS,
    COORDINATOR_PORT, NUM_PROCESSES, PROCESS_ID; xgb_prog.py: the Rabit tracker on rank 0 at MASTER_PORT,
    every rank joining MASTER_ADDR with RANK and WORLD_SIZE) run on jax-distributed and xgboost-distributed
    from a converted job, with nothing but v1's names, and complete: every process has v1's rank (node
    index i = v1's rank i), the world is numNodes, and every rank reached every other. With the TrainJob's
    numNodes edited before it is created (2 -> 3), the job runs at the new size with the same rules: JAX's
    NUM_PROCESSES follows numNodes (TJ016); XGBoost's WORLD_SIZE and WORKER_ADDRS are written for numNodes
    (TJ017), so they are edited with it, as the TrainJob's record lists them (`kf2jobset convert --check`
    fails on a TrainJob whose numNodes was edited alone: tests/test_target_builtins.py)."""
    import json

    from .frameworks_harness import framework_pythons
    from .frameworks_harness import parse_verdicts

    py = framework_pythons()[kind.lower()]
    if not py.exists():
        pytest.fail(f"{py} missing: run `bash tools/install-frameworks.sh` (or KF2JOBSET_SKIP_E2E=1)", pytrace=False)
    name, image = f"v1-{kind.lower()}-{nodes}", f"kf2jobset.test/v1-{kind.lower()}:1"
    job = v1_jax_or_xgboost_job(kind, name, image, pods)
    result = CliRunner().invoke(main, ["convert", "-", "--target", "trainjob"], input=yaml.safe_dump(job),
                                catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    (trainjob,) = [d for d in yaml.safe_load_all(result.stdout) if d]
    runtime = {"JAX": "jax-distributed", "XGBoost": "xgboost-distributed"}[kind]
    assert trainjob["spec"]["runtimeRef"]["name"] == runtime and trainjob["spec"]["trainer"]["numNodes"] == pods
    trainjob["spec"]["trainer"]["numNodes"] = nodes  # the size knob, edited by hand
    literals = (trainjob["metadata"].get("annotations") or {}).get(SIZE_LITERALS_ANNOTATION)
    if kind == "XGBoost":  # with the values the record lists, as TJ017 says
        assert literals == "WORLD_SIZE, WORKER_ADDRS"
        new = {"WORLD_SIZE": str(nodes),
               "WORKER_ADDRS": ",".join(f"$(KF2JOBSET_JOBSET_NAME)-node-0-{w}.$(KF2JOBSET_JOBSET_NAME)" for w in range(1, nodes))}
        for e in trainjob["spec"]["trainer"]["env"]:
            e["value"] = new.get(e["name"], e.get("value"))
            if e["value"] is None:
                e.pop("value")
    else:
        assert literals is None  # everything follows numNodes
    program = PROGRAMS / {"JAX": "jax_prog.py", "XGBoost": "xgb_prog.py"}[kind]
    agent = agent_for({image: [str(py), str(program), "--role", "node", "--index", "0", "--timeout", "150"]})
    t0 = time.monotonic()
    create_trainjob_after_its_runtime(custom, core, named_in(trainjob, tns), tns)
    wait_complete(custom, tns, name, timeout=420, agent=agent)
    runs = {x.hostname: x for x in agent.launches(tns) if x.container == "node"}
    hosts = [f"{name}-node-0-{i}" for i in range(nodes)]
    assert sorted(runs) == hosts
    seen = {}
    for host, run in runs.items():
        (v,) = parse_verdicts(agent.log(tns, run.pod, "node"))
        assert v["ok"], v
        i = int(host.rsplit("-", 1)[1])
        env = dict(run.env)
        assert v["rank"] == i and v["world"] == nodes and v["host"] == host  # v1's rank order, at numNodes
        assert v["peers"] == hosts  # every rank reached every other, in rank order
        if kind == "JAX":
            assert env["COORDINATOR_ADDRESS"] == f"{name}-node-0-0.{name}" and env["COORDINATOR_PORT"] == "6666"
            assert env["NUM_PROCESSES"] == env["JAX_NUM_PROCESSES"] == str(nodes) and env["PROCESS_ID"] == str(i)
        else:
            assert env["MASTER_ADDR"] == f"{name}-node-0-0.{name}" and env["RANK"] == str(i)
            assert env["WORLD_SIZE"] == env["DMLC_NUM_WORKER"] == str(nodes) and env["DMLC_TASK_ID"] == str(i)
            assert env["WORKER_ADDRS"] == ",".join(f"{name}-node-0-{w}.{name}" for w in range(1, nodes))
        seen[i] = v
    print(f"\n[{runtime}] {name}: {nodes} nodes Complete in {time.monotonic() - t0:.1f} s; "
          + json.dumps({i: {k: seen[i][k] for k in ("rank", "world")} for i in sorted(seen)}))


# kf2jobset's bundle: shared ClusterTrainingRuntimes, the job in spec.trainer

TF_PROBE = r"""
import json, os, socket, sys, time
cfg = json.loads(os.environ["TF_CONFIG"])
task, host = cfg["task"], socket.gethostname()
deadline, seen = time.time() + 90, {}
for kind, addrs in cfg["cluster"].items():
    for i, addr in enumerate(addrs):
        name = addr.rsplit(":", 1)[0]
        while True:
            try:
                seen[f"{kind}/{i}"] = socket.gethostbyname(name)
                break
            except socket.gaierror:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)
me = socket.gethostbyname(host)
print("KF2JS-TF " + json.dumps({"host": host, "task": task, "ip": me, "seen": seen}), flush=True)
# the chief decides success (the others are stopped then): each other task listens on its own TF_CONFIG port once
# it has reported, and the chief ends only when it has reached every one of them
if task["type"] != "chief":
    own = cfg["cluster"][task["type"]][task["index"]].rsplit(":", 1)[1]
    server = socket.create_server(("", int(own)))
    while True:
        server.accept()[0].close()
for kind, addrs in cfg["cluster"].items():
    for addr in addrs if kind != "chief" else ():
        name, port = addr.rsplit(":", 1)
        while True:
            try:
                socket.create_connection((name, int(port)), timeout=2).close()
                break
            except OSError:
                if time.time() > deadline + 120:
                    raise
                time.sleep(0.2)
"""


def test_a_tfjob_on_the_bundle_gives_every_pod_its_task_and_runs_to_complete(custom, core, tns, agent_for, bundle):
    """A chief + PS + 3 workers TFJob on kf2jobset-tensorflow-chief-ps: one TrainJob, no namespaced runtime;
    every pod's TF_CONFIG names its own role and index (the role from $(KF2JOBSET_REPLICA_TYPE), the index
    from the completion index), every address in it reaches the pod of that task, and the chief's success
    completes the TrainJob."""
    import json

    name, image = "tf-bundle", "kf2jobset.test/tf-probe:1"
    result = CliRunner().invoke(main, ["convert", "-", "--target", "trainjob"], input=yaml.safe_dump(v1_tfjob(name, image, 3)),
                                catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    (trainjob,) = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert trainjob["spec"]["runtimeRef"]["name"] == "kf2jobset-tensorflow-chief-ps" and trainjob["spec"]["trainer"]["numNodes"] == 3
    agent = agent_for({image: [PY, "-c", TF_PROBE]})
    create_trainjob_after_its_runtime(custom, core, named_in(trainjob, tns), tns)
    wait_complete(custom, tns, name, timeout=240, agent=agent)
    reports = {}
    for run in agent.launches(tns):
        lines = [ln.split("KF2JS-TF ", 1)[1] for ln in agent.log(tns, run.pod, "node").splitlines() if "KF2JS-TF " in ln]
        assert lines, agent.log(tns, run.pod, "node")[-2000:]
        r = json.loads(lines[-1])
        reports[f"{r['task']['type']}/{r['task']['index']}"] = r
    assert sorted(reports) == ["chief/0", "ps/0", "worker/0", "worker/1", "worker/2"]
    for task, r in reports.items():
        kind, i = task.split("/")
        assert r["host"] == f"{name}-{kind}-0-{i}"  # the task is the pod's own
    ips = {task: r["ip"] for task, r in reports.items()}
    assert all(r["seen"] == ips for r in reports.values())  # every address reaches the pod of that task


def test_a_pytorchjob_on_the_bundle_keeps_ranks_and_the_masters_success_rule(custom, core, tns, agent_for, bundle):
    """fixtures/targets/trainjob/pytorch-bundle (its init method names the master's pod: off torch-distributed) on
    kf2jobset-pytorch: ranks are completion indexes in v1's order, RANK/WORLD_SIZE/MASTER_ADDR are v1's, and
    the TrainJob completes when the master (index 0) has succeeded."""
    import json

    case = REPO_FIXTURES / "targets" / "trainjob" / "pytorch-bundle"
    (trainjob,) = convert_case(case)
    assert trainjob["spec"]["runtimeRef"]["name"] == "kf2jobset-pytorch"
    agent = agent_for({"registry.example.com/nlp/bert-finetune": [PY, "-c", RANK_PROBE]})
    create_trainjob_after_its_runtime(custom, core, named_in(trainjob, tns), tns)
    name = trainjob["metadata"]["name"]
    final = wait_complete(custom, tns, name, timeout=240, agent=agent)
    runs = {x.hostname: x for x in agent.launches(tns) if x.container == "node"}
    assert sorted(runs) == [f"{name}-node-0-{i}" for i in range(4)]
    seen = {}
    for host, run in runs.items():
        me = json.loads([ln for ln in agent.log(tns, run.pod, "node").splitlines() if ln.startswith("{")][-1])
        seen[me["rank"]] = (host, run.pod_ip, me)
        assert dict(run.env)["NCCL_DEBUG"] == "INFO"
    assert sorted(seen) == [0, 1, 2, 3]
    for rank, (host, _ip, me) in seen.items():
        assert host == f"{name}-node-0-{rank}" and me["world"] == 4 and me["master_ip"] == seen[0][1]
    js = jobset_of(custom, tns, name)
    assert js["spec"]["replicatedJobs"][0]["template"]["spec"]["successPolicy"] == {"rules": [{"succeededIndexes": "0"}]}
    assert [s["name"] for s in final["status"]["jobsStatus"]] == ["node"]


def test_an_mpijob_on_the_bundle_runs_its_launcher_command_against_its_workers(custom, core, tns, agent_for, bundle, tmp_path):
    """fixtures/mpijob-v2beta1/openmpi on kf2jobset-mpi: the launcher's v1 command rides in spec.trainer.args and
    its runtime command (`sh -c 'exec "$@"' --`) runs it with the args exactly as written; the workers' sshd
    command is the runtime's (`sh -c 'exec /usr/sbin/sshd -De'`, which leaves the TrainJob's args aside); the
    launcher starts once the workers are Ready, its hostfile (kf2jobset's ConfigMap) names the worker pods of
    Trainer's layout, and its success completes the TrainJob. The real `sh` runs both commands here, with
    `mpirun` and `sshd` standing in as a probe and a sleep."""
    import json

    from kubernetes import client

    case = REPO_FIXTURES / "mpijob-v2beta1" / "openmpi"
    out = convert_case(case, "--target", "trainjob")
    trainjob = next(o for o in out if o["kind"] == "TrainJob")
    assert trainjob["spec"]["runtimeRef"]["name"] == "kf2jobset-mpi" and trainjob["spec"]["trainer"]["numNodes"] == 2
    probe = tmp_path / "mpirun"
    probe.write_text("#!" + PY + "\n" + MPI_PROBE)
    probe.chmod(0o755)

    def program(launch):  # the container's own command, mpirun and sshd standing in
        argv = list(launch.command)
        if argv[:4] == ["/bin/sh", "-c", 'exec "$@"', "--"]:
            return argv[:4] + [str(probe)] + argv[5:]
        assert argv[:2] == ["/bin/sh", "-c"] and argv[2] == "exec /usr/sbin/sshd -De", argv
        return ["/bin/sh", "-c", "exec sleep 600", *argv[3:]]

    agent = agent_for({"registry.example.com/mpi-pi": program})
    core.create_namespaced_secret(tns, client.V1Secret(
        metadata=client.V1ObjectMeta(name="pi-ssh"), type="kubernetes.io/ssh-auth",
        string_data={"ssh-privatekey": "not a key", "ssh-publickey": "not a key"}))
    for obj in out:
        create_trainjob_after_its_runtime(custom, core, named_in(obj, tns), tns)
    wait_complete(custom, tns, "pi", timeout=240, agent=agent)
    launches = agent.launches(tns)
    (launcher,) = [x for x in launches if x.hostname == "pi-launcher-0-0"]
    (line,) = [ln.split("KF2JS-MPI ", 1)[1] for ln in agent.log(tns, launcher.pod, "node").splitlines() if "KF2JS-MPI " in ln]
    report = json.loads(line)
    assert report["argv"] == ["-n", "4", "/home/mpiuser/pi"]  # v1's launcher args, exactly
    workers = {x.hostname: x.pod_ip for x in launches if x.hostname.startswith("pi-worker-")}
    assert sorted(workers) == ["pi-worker-0-0", "pi-worker-0-1"]
    assert report["hosts"] == {"pi-worker-0-0.pi": workers["pi-worker-0-0"], "pi-worker-0-1.pi": workers["pi-worker-0-1"]}
