"""numNodes as the size knob, on every shared ClusterTrainingRuntime a converted job lands on: a
TrainJob converted from a v1 job of 2 nodes, its `spec.trainer.numNodes` edited to 3 by hand as a platform user
would, runs on the real Trainer v2.3.0 (stack flavour `trainer`, kf2jobset's bundle installed as `kf2jobset
runtimes` prints it; the node agent runs the pods) with what v1 gives a job of 3.

On these runtimes some values cannot follow numNodes (no downward-API field carries it): torch's WORLD_SIZE, the
bundle's PET_NNODES, TF_CONFIG's host lists, the MPI hostfile. kf2jobset writes them for the converted size and
records them on the TrainJob (`kf2jobset.dev/sized-for`, `kf2jobset.dev/size-literals`). So, per runtime:

1. numNodes alone edited: `kf2jobset convert --check` fails, naming the old and new size and each recorded value
   (TJ017 on a built-in runtime, TJ028 on the bundle);
2. the record applied (the listed values and sized-for taken from converting the v1 job at the new size): the
   edited TrainJob and its companions equal that conversion exactly, so nothing unrecorded depends on the size,
   and `--check` passes;
3. that TrainJob runs on Trainer at the new size: every pod's v1 variables (ranks, world size, addresses,
   TF_CONFIG) and the MPI launcher's hostfile are what the v1 operator gives a job of 3 (its model,
   kf2jobset/runtime/operator_view.py, held against the real operators by the differential), addresses
   compared as the pods they reach; a difference is allowed only where the report of that conversion explains
   it; and the probes reach every address they were given (rank 0 gets every peer, TF_CONFIG's and the
   hostfile's names resolve to the pods of those tasks).

(jax-distributed and xgboost-distributed are run at an edited size with the real frameworks in
tests/e2e/test_trainjob_target.py.)

Knob: ``KF2JOBSET_SIZES_ONLY=REGEX`` (runtime names, e.g. ``tensorflow|mpi-v1``).
"""
from __future__ import annotations

import copy
import json
import os
import re
import time

import pytest
import yaml
from click.testing import CliRunner

from kf2jobset.cli.main import main
from kf2jobset.options import ConvertOptions
from kf2jobset.checks.staleness import SIZE_LITERALS_ANNOTATION

from .ddp_probe import DDP_PROBE, last_json
from .trainer_harness import PY, jobset_of, wait_complete
from .trainer_harness import agent_for, core, custom, tapi, tns, trainer_stack  # noqa: F401 (the fixtures)
from .trainjob_harness import bundle  # noqa: F401 (the fixture)
from .trainjob_harness import MPI_PROBE, create_trainjob_after_its_runtime, named_in

SIZED_FOR = "kf2jobset.dev/sized-for"
OPTIONS = ConvertOptions(target="trainjob", accept_mpi_ssh=True)
SMALL, LARGE = 2, 3  # numNodes as converted, and as edited


def _pod(container: str, image: str, **fields) -> dict:
    return {"spec": {"containers": [{"name": container, "image": image, **fields}]}}


def pytorchjob(name: str, nodes: int, master_address: bool = False) -> dict:
    """A master and nodes-1 workers; an init method naming the master's pod keeps it off torch-distributed (whose
    pods are named by Trainer's `node` Job): the bundle's kf2jobset-pytorch points it at node 0."""
    pod = _pod("pytorch", "kf2jobset.test/torch-probe:1", command=["python", "train.py"])
    if master_address:
        pod["spec"]["containers"][0]["env"] = [{"name": "INIT_METHOD", "value": f"tcp://{name}-master-0:23456"}]
    spec: dict = {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": copy.deepcopy(pod)},
                                          "Worker": {"replicas": nodes - 1, "template": copy.deepcopy(pod)}}}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": name}, "spec": spec}


def tfjob(name: str, workers: int, others: tuple = (), restart: str = "Never") -> dict:
    """`workers` workers, one pod of each role in `others` (Chief, PS)."""
    def spec(n):
        return {"replicas": n, "restartPolicy": restart,
                "template": _pod("tensorflow", "kf2jobset.test/tf-probe:1", command=["python", "task.py"])}
    specs = {role: spec(1) for role in others}
    specs["Worker"] = spec(workers)
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": name}, "spec": {"tfReplicaSpecs": specs}}


def mpijob(name: str, workers: int, version: str = "v2beta1", mpiuser: bool = False) -> dict:
    """An Open MPI job: the launcher's mpirun, workers running the image's sshd (mpi-operator's non-root base
    image with `mpiuser`); `version` v1 is the training-operator's MPIJob."""
    image = "kf2jobset.test/mpi-probe:1"
    name_of = {"v2beta1": ("launcher", "worker"), "v1": ("mpi", "mpi")}[version]
    launcher = _pod(name_of[0], image, command=["mpirun", "-np", "2", "python", "/ring.py"])
    worker = _pod(name_of[1], image)
    spec: dict = {"slotsPerWorker": 1, "mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": launcher},
                                                           "Worker": {"replicas": workers, "template": worker}}}
    if mpiuser:
        spec["sshAuthMountPath"] = "/home/mpiuser/.ssh"
        worker["spec"]["containers"][0].update(command=["/usr/sbin/sshd"], args=["-De", "-f", "/home/mpiuser/.sshd_config"])
    return {"apiVersion": f"kubeflow.org/{version}", "kind": "MPIJob", "metadata": {"name": name}, "spec": spec}


# runtime -> the v1 job of `nodes` nodes (numNodes counts the master on torch, the workers on TF and MPI)
JOBS = {
    "torch-distributed": lambda n: pytorchjob("tdist", n),
    "kf2jobset-pytorch": lambda n: pytorchjob("tbundle", n, master_address=True),
    "kf2jobset-tensorflow": lambda n: tfjob("tfw", n),
    "kf2jobset-tensorflow-onfailure": lambda n: tfjob("tfo", n, restart="OnFailure"),
    "kf2jobset-tensorflow-ps": lambda n: tfjob("tfps", n, ("PS",)),
    "kf2jobset-tensorflow-chief-ps": lambda n: tfjob("tfc", n, ("Chief", "PS")),
    "kf2jobset-mpi": lambda n: mpijob("mpi", n),
    "kf2jobset-mpi-mpiuser": lambda n: mpijob("mpiu", n, mpiuser=True),
    "kf2jobset-mpi-v1": lambda n: mpijob("mpiv1", n, version="v1"),
}
ONLY = os.environ.get("KF2JOBSET_SIZES_ONLY")
RUNTIMES = [r for r in JOBS if not ONLY or re.search(ONLY, r)]

# Each probe stays up a while after its report: a finished pod's name no longer resolves for the others.
TORCH_PROBE = DDP_PROBE + "\nimport time\ntime.sleep(20)\n"

TF_PROBE = r"""
import json, os, socket, time
cfg = json.loads(os.environ["TF_CONFIG"])
deadline, seen = time.time() + 120, {}
for kind, addrs in cfg["cluster"].items():
    for i, addr in enumerate(addrs):
        while True:
            try:
                seen[addr] = socket.gethostbyname(addr.rsplit(":", 1)[0])
                break
            except socket.gaierror:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)
print(json.dumps({"task": cfg["task"], "seen": seen}), flush=True)
time.sleep(300 if cfg["task"]["type"] == "ps" else 25)
"""

def converted(job: dict):
    """(objects `convert --target trainjob` writes, the conversion, its job report) for a v1 job."""
    from kf2jobset.files.pipeline import convert_text
    from kf2jobset.report.build import build_report

    result = convert_text(yaml.safe_dump(job, sort_keys=False), "job.yaml", OPTIONS)
    assert not result.errors, result.errors
    (conv,) = [c for r in result.results for c in r.conversions]
    (jr,) = build_report([result], OPTIONS).files[0].jobs
    return [d for d in yaml.safe_load_all(result.new_text) if isinstance(d, dict)], conv, jr


def trainjob_in(objects: list[dict]) -> dict:
    (tj,) = [o for o in objects if o["kind"] == "TrainJob"]
    return tj


def check(objects: list[dict], tmp_path, name: str):
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return CliRunner().invoke(main, ["convert", "--check", str(path)], catch_exceptions=False)


def recorded(trainjob: dict) -> list[str]:
    """The values the TrainJob records as written for its size: env names, or files (/etc/mpi/hostfile)."""
    text = (trainjob["metadata"].get("annotations") or {}).get(SIZE_LITERALS_ANNOTATION) or ""
    return [re.sub(r" \(.*\)$", "", part) for part in text.split(", ") if part]


def apply_record(edited: list[dict], fresh: list[dict]) -> list[dict]:
    """What `--check` asks for: the recorded values (and sized-for) edited with numNodes, here taken from the
    conversion at the new size; a recorded file is a key of the ConfigMap kf2jobset wrote beside the TrainJob."""
    out = copy.deepcopy(edited)
    tj, new = trainjob_in(out), trainjob_in(fresh)
    names = recorded(tj)
    tj["metadata"]["annotations"][SIZED_FOR] = new["metadata"]["annotations"][SIZED_FOR]
    values = {e["name"]: e for e in new["spec"]["trainer"].get("env") or []}
    tj["spec"]["trainer"]["env"] = [copy.deepcopy(values[e["name"]]) if e["name"] in names else e
                                    for e in tj["spec"]["trainer"].get("env") or []]
    keys = {n.rsplit("/", 1)[1] for n in names if n.startswith("/")}
    for obj, twin in zip(out, fresh, strict=False):
        if obj["kind"] == "ConfigMap" and keys & set(obj.get("data") or {}):
            obj["data"].update({k: twin["data"][k] for k in keys})
    return out


def program(launch):
    """What the node agent runs for each container: the probe of its kind; for MPI the container's own command
    (the runtime's `sh`), the launcher's `mpirun` replaced by the probe and the workers' sshd by a sleep."""
    argv = list(launch.command)
    if launch.image.startswith("kf2jobset.test/torch"):
        return [PY, "-c", TORCH_PROBE]
    if launch.image.startswith("kf2jobset.test/tf"):
        return [PY, "-c", TF_PROBE]
    if argv[:4] == ["/bin/sh", "-c", 'exec "$@"', "--"]:
        return argv[:4] + [PY, "-c", MPI_PROBE] + argv[5:]
    assert argv[:2] == ["/bin/sh", "-c"] and "sshd" in argv[2], argv
    return ["/bin/sh", "-c", "exec sleep 600"]


def secrets_named(objects: list[dict]) -> set[str]:
    return set(re.findall(r'"secretName": "([^"]+)"', json.dumps(objects)))


def v1_pods(conv, name: str, ns: str):
    """The v1 operator's pods for the job at the new size: (key -> [(env name, value)], hostfile, resolver)."""
    from kf2jobset.frameworks.base import OperatorSide
    from kf2jobset.runtime.operator_view import operator_world

    from .differential_compare import _visible

    op = operator_world(conv.job, name=name, namespace=ns)
    env = {p.key: _visible(p.env(p.containers()[0])) for p in op.pods}
    hostfile = None
    if conv.job.kind == "MPIJob":
        from kf2jobset.frameworks.mpi import PROFILE

        hostfile = PROFILE.hostfile(conv.job, OperatorSide(conv.job, name, ns, "Launcher", 0, None))
    return env, hostfile, op.resolver


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_an_edited_numnodes_runs_at_the_new_size_with_v1s_ranks_and_addresses(custom, core, tns, agent_for, bundle,
                                                                               tmp_path, runtime):
    from kf2jobset.runtime.jobset_view import jobset_world
    from kf2jobset.runtime.structure import Difference

    from .differential_compare import _visible, explain_real, jobset_pod_key

    make = JOBS[runtime]
    small, _, _ = converted(make(SMALL))
    fresh, conv, jr = converted(make(LARGE))  # the v1 job at the new size, converted
    tj = trainjob_in(small)
    name = tj["metadata"]["name"]
    assert tj["spec"]["runtimeRef"]["name"] == runtime and tj["spec"]["trainer"]["numNodes"] == SMALL
    assert trainjob_in(fresh)["spec"]["trainer"]["numNodes"] == LARGE
    edited = copy.deepcopy(small)
    trainjob_in(edited)["spec"]["trainer"]["numNodes"] = LARGE  # the size knob, edited by hand

    # 1. numNodes alone: --check names what still describes the old size
    names = recorded(tj)
    assert names, f"{runtime}: no value recorded as written for numNodes"
    result = check(edited, tmp_path, "edited")
    assert result.exit_code == 1, result.output
    assert f"numNodes {SMALL} -> {LARGE}" in result.output and all(n in result.output for n in names), result.output
    # 2. the record applied: exactly the conversion at the new size, and --check is content
    applied = apply_record(edited, fresh)
    assert applied == fresh, f"{runtime}: a size-dependent value the record does not list"
    result = check(applied, tmp_path, "applied")
    assert result.exit_code == 0, result.output

    # 3. on Trainer, at the new size
    from kubernetes import client

    for secret in secrets_named(applied):  # the SSH Secret an MPIJob mounts (the agent only mounts it)
        core.create_namespaced_secret(tns, client.V1Secret(metadata=client.V1ObjectMeta(name=secret), type="kubernetes.io/ssh-auth",
                                                           string_data={"ssh-privatekey": "-", "ssh-publickey": "-"}))
    agent = agent_for({trainjob_in(applied)["spec"]["trainer"]["image"]: program})
    t0 = time.monotonic()
    for obj in applied:
        create_trainjob_after_its_runtime(custom, core, named_in(obj, tns), tns)
    built = jobset_of(custom, tns, name, timeout=60)
    wait_complete(custom, tns, name, timeout=420, agent=agent)
    seconds = time.monotonic() - t0

    key_of = jobset_pod_key(conv.pods.pod_roles)
    real = {}
    for x in agent.launches(tns):
        if not x.init and x.container == "node" and x.restart == 0:
            real[key_of(x.labels)] = x
    want_env, want_hostfile, v1_resolver = v1_pods(conv, name, tns)
    assert sorted(real) == sorted(want_env), f"{runtime}: pods {sorted(real)}, v1 has {sorted(want_env)}"
    resolver = jobset_world(built, name=name, namespace=tns, roles=conv.pods.pod_roles).resolver

    def norm(world, value):
        return world.normalise(str(value)).replace(tns, "<ns>")

    compared, unexplained, explained = 0, [], set()
    for key, env in want_env.items():
        have = dict(_visible(real[key].env))
        for var, value in env:
            compared += 1
            if var in have and norm(v1_resolver, value) == norm(resolver, have[var]):
                continue
            d = Difference("env", var, "missing" if var not in have else "changed", value, have.get(var),
                           role=key[0], pod=key, container=real[key].container)
            why = explain_real(d, conv.notes, jr.findings)
            (explained.add(f"{var} {why}") if why else unexplained.append(f"{key}: {var} v1 {value!r}, here {have.get(var)!r}"))
    assert not unexplained, f"{runtime}: differences no finding of the report explains:\n" + "\n".join(unexplained)

    ips = {key: x.pod_ip for key, x in real.items()}
    if conv.job.kind == "PyTorchJob":  # rank 0 at MASTER_ADDR got every other rank
        reports = {key: last_json(agent.log(tns, x.pod, "node")) for key, x in real.items()}
        master = next(r for r in reports.values() if r["rank"] == 0)
        assert master["master_ip"] == ips[("master", 0)] and len(master["peers"]) == LARGE - 1
        assert sorted(int(r) for r in master["peers"]) == list(range(1, LARGE))
    elif conv.job.kind == "TFJob":  # every TF_CONFIG address reaches the pod of that task
        for key, x in real.items():
            report = last_json(agent.log(tns, x.pod, "node"))
            assert (report["task"]["type"], report["task"]["index"]) == key
            assert {a: ips[resolver.addresses_in(a)[0]] for a in report["seen"]} == report["seen"]
    else:  # the launcher got v1's command, its hostfile is v1's, every host in it reaches that worker
        launcher = real[("launcher", 0)]
        (line,) = [ln for ln in agent.log(tns, launcher.pod, "node").splitlines() if ln.startswith("KF2JS-MPI ")]
        report = json.loads(line.split(" ", 1)[1])
        assert report["argv"] == trainjob_in(applied)["spec"]["trainer"]["args"][1:]
        with open(os.path.join(launcher.mounts["/etc/mpi"], "hostfile")) as f:
            hostfile = f.read()
        assert norm(resolver, hostfile) == norm(v1_resolver, want_hostfile), (hostfile, want_hostfile)
        assert {h: ips[resolver.addresses_in(h)[0]] for h in report["hosts"]} == report["hosts"]
        assert len(report["hosts"]) == LARGE
    print(f"\n[{runtime}] numNodes {SMALL} -> {LARGE}: --check named {', '.join(names)}; Complete in {seconds:.1f} s "
          f"with {len(real)} pods; {compared} v1 variables compared, explained differences: {sorted(explained) or 'none'}")
