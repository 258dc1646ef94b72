"""What kf2jobset adds beyond v1 never overrides what the user wrote, and names the
operator gave its pods stay usable (class 2).

v1's own variables came after the user's and won (envmerge, JS061). A name v1 never set for a role
(PRTE_MCA_* for Open MPI 5, the SSH-model names on an MPIJob v1, kf2jobset's KF2JOBSET_* helpers) was
the user's alone under v1: the JobSet must keep the user's entry in force.
"""
from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kf2jobset.core.convert import convert_job
from kf2jobset.core.envmerge import SHADOW_PREFIX
from kf2jobset.errors import InvalidJobError
from kf2jobset.frameworks import profile as get_profile
from kf2jobset.frameworks.base import HELPER_VARS, OperatorSide
from kf2jobset.options import ConvertOptions
from kf2jobset.runtime.compare import effective
from kf2jobset.runtime.pods import Pod, resolve_env

from .conftest import FIXTURES
from .jobs import pytorchjob
from .templates import render

OPTIONS = ConvertOptions(accept_mpi_ssh=True)


def _inputs() -> list[Path]:
    return sorted(p for p in FIXTURES.glob("*/*/input.yaml") if (p.parent / "expected.yaml").exists()
                  and p.parent.parent.name != "katib")


def _job_docs(path: Path) -> list[dict]:
    text = path.read_text()
    if (path.parent / "render").exists():  # a Go text/template or Jinja file: as its program renders it
        text = render(text, path.parent)
    docs = [d for d in yaml.safe_load_all(text) if isinstance(d, dict)]
    # jobs as documents (a Katib Experiment and job text inside strings are covered by their own tests)
    return [d for d in docs if str(d.get("apiVersion", "")).startswith("kubeflow.org/") and d.get("kind") != "Experiment"]


def _rjob_containers(conv, rtype: str) -> list[dict]:
    name = conv.plan.rjob_names[rtype]
    (rj,) = [r for r in conv.jobset["spec"]["replicatedJobs"] if r["name"] == name]
    return rj["template"]["spec"]["template"]["spec"]["containers"]


def _pod_env(entries: list[dict]) -> dict:
    pod = Pod(role="r", index=0, name="p", namespace="ns", ip="10.0.0.1",
              labels={"jobset.sigs.k8s.io/jobset-name": "js", "jobset.sigs.k8s.io/job-index": "0",
                      "jobset.sigs.k8s.io/job-global-index": "0"})
    return dict(effective(resolve_env(entries, pod)))


def _readdressed(conv, rtype: str, index: int, name: str) -> str | None:
    """The value JS065 gave an entry that named a v1 pod (kf2jobset/core/addresses.py: the same pod, JobSet hostname)."""
    for n in conv.notes:
        if n.code == "JS065" and n.replica_type == rtype and (n.source_path or "").endswith(f".containers[{index}].env[{name}]"):
            return n.claims[0].value
    return None


@pytest.mark.parametrize("path", _inputs(), ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_user_values_of_names_v1_never_set_stay_in_force(path):
    """Every fixture: for each user env entry whose name v1 did not inject, the JobSet resolves the
    name to the user's value."""
    for doc in _job_docs(path):
        try:
            conv = convert_job(doc, OPTIONS)
        except InvalidJobError:
            continue
        prof = get_profile(conv.job.mapping.profile)
        for rtype in conv.job.replicas:
            first = conv.plan.rjobs[[r.rtype for r in conv.plan.rjobs].index(rtype)].first_index
            op_names = {e["name"] for e in prof.env(conv.job, rtype, OperatorSide(conv.job, conv.job.name or "job",
                                                                                    "ns", rtype, first))}
            containers = _rjob_containers(conv, rtype)
            for i, c in enumerate(conv.job.replicas[rtype].containers):
                user = {e["name"]: e for e in c.get("env") or [] if "value" in e}
                written = {e["name"]: e for e in containers[i].get("env") or []}
                for name, entry in user.items():
                    if name in op_names:
                        continue
                    # the user's own entry, as written (a $(NAME) it reads may point at a kept shadow)
                    value = str(written[name].get("value")).replace(SHADOW_PREFIX, "")
                    want = _readdressed(conv, rtype, i, name) or str(entry["value"])
                    assert value == want, (rtype, name)


ADDED_BY_KF2JOBSET = ["PRTE_MCA_plm_ssh_args", "PRTE_MCA_prte_default_hostfile", *HELPER_VARS]


def _mpijob(user_env: list[dict], api: str = "kubeflow.org/v2beta1") -> dict:
    c = {"name": "launcher", "image": "registry.example.com/mpi:5", "command": ["mpirun", "-np", "2", "hostname"],
         "env": user_env}
    return {"apiVersion": api, "kind": "MPIJob", "metadata": {"name": "m", "namespace": "ns"},
            "spec": {"slotsPerWorker": 1, "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": {"spec": {"containers": [c]}}},
                "Worker": {"replicas": 2, "template": {"spec": {"containers": [
                    {"name": "worker", "image": "registry.example.com/mpi:5"}]}}}}}}


@settings(max_examples=60, deadline=None)
@given(names=st.lists(st.sampled_from(ADDED_BY_KF2JOBSET), min_size=1, max_size=4, unique=True),
       value=st.text(alphabet="-abcp 0123456789=", min_size=1, max_size=12),
       api=st.sampled_from(["kubeflow.org/v2beta1", "kubeflow.org/v1"]))
def test_a_name_kf2jobset_adds_gives_way_to_the_users(names, value, api):
    doc = _mpijob([{"name": n, "value": value} for n in names], api)
    conv = convert_job(copy.deepcopy(doc), OPTIONS)
    launcher = _rjob_containers(conv, "Launcher")[0]
    env = launcher["env"]
    assert len({e["name"] for e in env}) == len(env), "one entry per name"
    got = _pod_env(env)
    for n in names:
        assert got[n] == value, n
    # kf2jobset's own addresses still resolve: the hostfile path and the workers' names do not read the
    # user's helper-named variables
    for e in env:
        if e["name"] == "OMPI_MCA_orte_default_hostfile":
            assert got[e["name"]] == "/etc/mpi/hostfile"
    if any(n.startswith("PRTE_") for n in names):  # kf2jobset sets these on every Open MPI launcher
        assert "JS062" in {n.code for n in conv.notes}


def test_open_mpi_5_keeps_the_users_ssh_port():
    conv = convert_job(_mpijob([{"name": "PRTE_MCA_plm_ssh_args", "value": "-p 2222"}]), OPTIONS)
    got = _pod_env(_rjob_containers(conv, "Launcher")[0]["env"])
    assert got["PRTE_MCA_plm_ssh_args"] == "-p 2222"
    assert got["PRTE_MCA_prte_default_hostfile"] == "/etc/mpi/hostfile"  # the one the user did not set is added
    (mpi009,) = [n for n in conv.notes if n.code == "MPI009"]
    assert "plm_ssh_args" not in mpi009.message


def test_the_operators_own_variable_still_wins_as_under_v1():
    conv = convert_job(_mpijob([{"name": "OMPI_MCA_plm_rsh_args", "value": "-p 2222"}]), OPTIONS)
    got = _pod_env(_rjob_containers(conv, "Launcher")[0]["env"])
    assert got["OMPI_MCA_plm_rsh_args"] == "-o ConnectionAttempts=10"  # mpi-operator appended it after the user's
    assert "JS061" in {n.code for n in conv.notes}


def test_a_user_helper_name_renames_kf2jobsets_helper_and_addresses_still_resolve():
    doc = pytorchjob("pt", workers=1, image="i", restart_policy=None,
                     container={"env": [{"name": "KF2JOBSET_JOBSET_NAME", "value": "mine"}]})
    conv = convert_job(doc, OPTIONS)
    got = _pod_env(_rjob_containers(conv, "Worker")[0]["env"])
    assert got["KF2JOBSET_JOBSET_NAME"] == "mine"
    assert got["MASTER_ADDR"] == "js-master-0-0.js"


# ---- class 2: names the operator gave its pods, and specs it ignored

def _with_init_mounts(doc: dict) -> dict:
    launcher = doc["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]
    launcher["initContainers"] = [{"name": "peek", "image": "busybox", "command": ["cat", "/etc/mpi/hostfile"],
                                   "volumeMounts": [{"name": "mpi-job-config", "mountPath": "/etc/mpi"},
                                                    {"name": "ssh-auth", "mountPath": "/root/.ssh"}]}]
    return doc


def test_init_containers_may_mount_the_volumes_mpi_operator_adds():
    conv = convert_job(_with_init_mounts(_mpijob([])), OPTIONS)
    name = conv.plan.rjob_names["Launcher"]
    (rj,) = [r for r in conv.jobset["spec"]["replicatedJobs"] if r["name"] == name]
    spec = rj["template"]["spec"]["template"]["spec"]
    assert {"mpi-job-config", "ssh-auth"} <= {v["name"] for v in spec["volumes"]}


def test_a_volume_mount_naming_nothing_is_still_refused_as_inherited():
    doc = _with_init_mounts(_mpijob([]))
    doc["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["initContainers"][0]["volumeMounts"].append(
        {"name": "nowhere", "mountPath": "/x"})
    with pytest.raises(InvalidJobError) as e:
        convert_job(doc, OPTIONS)
    (p,) = e.value.problems
    assert "'nowhere'" in p.message and "inherited" in p.message


def test_mpi_operator_ignores_other_replica_specs():
    doc = _mpijob([])
    doc["spec"]["mpiReplicaSpecs"]["Master"] = {"replicas": 1, "template": {"spec": {"containers": [
        {"name": "m", "image": "i", "volumeMounts": [{"name": "nowhere", "mountPath": "/x"}]}]}}}
    conv = convert_job(doc, OPTIONS)
    assert sorted(conv.job.replicas) == ["Launcher", "Worker"]
    assert len(conv.jobset["spec"]["replicatedJobs"]) == 2
    (note,) = [n for n in conv.notes if n.code == "JS071"]
    assert note.source_path == "spec.mpiReplicaSpecs.Master"


def test_host_network_pods_resolve_cluster_names_as_mpi_operator_gave_them():
    doc = _mpijob([])
    for rs in doc["spec"]["mpiReplicaSpecs"].values():
        rs["template"]["spec"]["hostNetwork"] = True
    conv = convert_job(doc, OPTIONS)
    for rj in conv.jobset["spec"]["replicatedJobs"]:
        assert rj["template"]["spec"]["template"]["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet"


def test_the_operators_port_entry_gives_way_to_the_users_for_the_same_port():
    doc = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "pt"},
           "spec": {"pytorchReplicaSpecs": {
               "Master": {"replicas": 1, "template": {"spec": {"containers": [
                   {"name": "pytorch", "image": "i", "ports": [{"containerPort": 23456, "name": "master-port"}]}]}}},
               "Worker": {"replicas": 1, "template": {"spec": {"containers": [{"name": "pytorch", "image": "i"}]}}}}}}
    conv = convert_job(doc, OPTIONS)
    ports = _rjob_containers(conv, "Master")[0]["ports"]
    assert ports == [{"containerPort": 23456, "name": "master-port"}]
    got = _pod_env(_rjob_containers(conv, "Worker")[0]["env"])
    assert got["MASTER_PORT"] == "23456"
    # a different number is a different port: both stay
    doc["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = 8080
    conv = convert_job(doc, OPTIONS)
    assert len(_rjob_containers(conv, "Master")[0]["ports"]) == 2
