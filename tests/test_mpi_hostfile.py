"""The MPI hostfile follows the size: `--mpi-hostfile generated` writes /etc/mpi/hostfile and
discover_hosts.sh at start from the launcher's pod count (kf2jobset/frameworks/mpi_hostfile.py).

For every flavour (Open MPI `slots=N`, Intel MPI and MPICH `host:N`, runLauncherAsWorker and a v1 GPU
launcher listed first, MPIJob v1's bare names, elastic Horovod's discovery script), the JobSet converted
for the job as written is edited to 1..8 workers, never re-converted: the files its init container
writes (the model, `written_files`) name, line by line, the pods the operator's files named for the v1
job edited alike, with its slots. The script itself, run by /bin/sh with the env the kubelet gives it,
writes exactly what the model says (the real launchers run it too: tests/launchers/test_mpi.py). A
JobSet release without the pod count label (< v0.7) and ConfigMap mode keep the literal lists (SZ002).
"""
from __future__ import annotations

import copy
import re
import subprocess

import pytest
import yaml

from kf2jobset.core.convert import convert_job
from kf2jobset.frameworks.base import OperatorSide
from kf2jobset.frameworks.mpi_hostfile import HOSTFILE_INIT, MPI_DIR, mpi_hosts, written_files
from kf2jobset.options import ConvertOptions, parse_version
from kf2jobset.report.build import _jobset_files, _operator_files
from kf2jobset.runtime.jobset_view import jobset_world
from kf2jobset.runtime.operator_view import operator_world
from kf2jobset.runtime.pods import expand
from kf2jobset.runtime.structure import compare_files

from .conftest import FIXTURES

FLAVOURS = ["mpijob-v2beta1/generated-hostfile", "mpijob-v2beta1/intel", "mpijob-v2beta1/mpich",
            "mpijob-v2beta1/launcher-as-worker", "mpijob-v2beta1/elastic-horovod", "mpijob-v1/accepted",
            "mpijob-v1/gpu-launcher", "mpijob-v1/elastic"]
GENERATED = ConvertOptions(accept_mpi_ssh=True, mpi_hostfile="generated")


def source(case: str) -> dict:
    return next(d for d in yaml.safe_load_all((FIXTURES / case / "input.yaml").read_text())
                if isinstance(d, dict) and d.get("kind") == "MPIJob")


def resized(conv, doc: dict, workers: int):
    """(the v1 job with `workers` workers, as kf2jobset reads it; the ORIGINAL JobSet edited alike)."""
    v1 = copy.deepcopy(doc)
    v1["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] = workers
    jobset = copy.deepcopy(conv.jobset)
    (name, _, _), = conv.plan.segments["Worker"]
    next(r for r in jobset["spec"]["replicatedJobs"] if r["name"] == name)["replicas"] = workers
    return convert_job(v1, GENERATED).job, jobset


def launcher_init(js):
    launcher = next(p for p in js.pods if p.key[0] == "launcher")
    return launcher, next(c for c in launcher.containers(init=True) if c["name"] == HOSTFILE_INIT)


def listed(script: str) -> str:
    return re.search(r"^for host in (.*); do$", script, re.M).group(1)


@pytest.mark.parametrize("case", FLAVOURS)
def test_the_files_follow_a_replica_edit(case):
    doc = source(case)
    conv = convert_job(copy.deepcopy(doc), GENERATED)
    codes = {n.code for n in conv.notes}
    assert "SZ001" in codes and "SZ002" not in codes, codes
    assert "kf2jobset.dev/sized-for" not in (conv.jobset["metadata"].get("annotations") or {})
    for workers in range(1, 9):
        job, jobset = resized(conv, doc, workers)
        op, js = operator_world(job), jobset_world(jobset, roles=conv.plan.pod_roles)
        ours = _jobset_files(job, js, conv.companions)
        theirs = _operator_files(job, op, GENERATED)
        diffs, same = compare_files(theirs, ours, op, js)
        diffs = [d for d in diffs if d.subject != "kubexec.sh"]  # MPIJob v1's kubectl exec: MPI001
        assert diffs == [] and [s.subject for s in same] == ["hostfile"], (case, workers, diffs, ours["hostfile"])
        assert ours["hostfile"].count("\n") == len(mpi_hosts(job, OperatorSide(job, op.name, op.namespace, "Launcher", 0)))
        side = OperatorSide(job, op.name, op.namespace, "Launcher", 0)
        assert js.resolver.normalise(listed(ours["discover_hosts.sh"])) == op.resolver.normalise(" ".join(mpi_hosts(job, side)))


@pytest.mark.parametrize("case", FLAVOURS)
def test_the_script_writes_what_the_model_says(tmp_path, case):
    """/bin/sh runs the init container's command (its $(VAR)s expanded as the kubelet does, /etc/mpi moved
    to a temporary directory) for 1, 2 and 5 workers."""
    doc = source(case)
    conv = convert_job(copy.deepcopy(doc), GENERATED)
    for workers in (1, 2, 5):
        _, jobset = resized(conv, doc, workers)
        pod, init = launcher_init(jobset_world(jobset, roles=conv.plan.pod_roles))
        env = dict(pod.env(init))
        out = tmp_path / f"etc-mpi-{workers}"
        out.mkdir()
        command = [expand(w, env) for w in init["command"]]
        assert command[:2] == ["/bin/sh", "-c"]
        res = subprocess.run(["/bin/sh", "-c", command[2].replace(MPI_DIR, str(out))], env=env,
                             capture_output=True, text=True, timeout=30)
        assert res.returncode == 0, res.stderr
        assert {f.name: f.read_text() for f in out.iterdir()} == written_files(env)
        assert oct((out / "discover_hosts.sh").stat().st_mode & 0o777) == "0o555"


def test_without_the_pod_count_label_the_script_fails_loudly(tmp_path):
    conv = convert_job(source("mpijob-v1/accepted"), GENERATED)
    pod, init = launcher_init(jobset_world(conv.jobset, roles=conv.plan.pod_roles))
    env = {k: v for k, v in pod.env(init) if k != "KF2JOBSET_POD_COUNT"}
    res = subprocess.run(["/bin/sh", "-c", expand(init["command"][2], env).replace(MPI_DIR, str(tmp_path))], env=env,
                         capture_output=True, text=True, timeout=30)
    assert res.returncode != 0 and "global-replicas" in res.stderr
    assert written_files({**env, "KF2JOBSET_POD_COUNT": ""}) == {}


@pytest.mark.parametrize("options", [ConvertOptions(accept_mpi_ssh=True, mpi_hostfile="configmap"),
                                     ConvertOptions(accept_mpi_ssh=True, mpi_hostfile="generated",
                                                    jobset_version=parse_version("v0.6"))],
                         ids=["configmap", "jobset-v0.6"])
def test_literal_lists_stay_recorded(options):
    conv = convert_job(source("mpijob-v1/accepted"), options)
    codes = {n.code for n in conv.notes}
    assert "SZ002" in codes and "SZ001" not in codes, codes
    ann = conv.jobset["metadata"]["annotations"]
    assert ann["kf2jobset.dev/size-literals"] == "/etc/mpi/hostfile, /etc/mpi/discover_hosts.sh"


def test_mutation_a_literal_worker_count_is_caught():
    """The model bites: an init container that writes the count it was converted with differs once edited."""
    doc = source("mpijob-v2beta1/generated-hostfile")
    conv = convert_job(copy.deepcopy(doc), GENERATED)
    job, jobset = resized(conv, doc, 4)
    _, init = launcher_init(jobset_world(jobset, roles=conv.plan.pod_roles))
    for rj in jobset["spec"]["replicatedJobs"]:
        for c in rj["template"]["spec"]["template"]["spec"].get("initContainers") or []:
            if c["name"] == HOSTFILE_INIT:
                c["env"] = [e if e["name"] != "KF2JOBSET_POD_COUNT" else {"name": e["name"], "value": "3"} for e in c["env"]]
    op, js = operator_world(job), jobset_world(jobset, roles=conv.plan.pod_roles)
    diffs, _ = compare_files(_operator_files(job, op, GENERATED), _jobset_files(job, js, conv.companions), op, js)
    assert [d.aspect for d in diffs] == ["hostfile"]
