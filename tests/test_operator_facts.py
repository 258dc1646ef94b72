"""The operator model against facts of the v1 operator (github.com/kubeflow/training-operator@v1.9.4
pkg/controller.v1/<framework>), typed by hand.

The property tests prove the JobSet reproduces the operator model; these prove the model itself
says what the v1 operator did.
"""
from __future__ import annotations

import json

from kf2jobset.mappings import mapping_for
from kf2jobset.core.parse import parse_job
from kf2jobset.runtime.operator_view import operator_world


def pod_env(doc, role, index, container=0):
    job = parse_job(doc, mapping_for(doc["apiVersion"], doc["kind"]))
    world = operator_world(job)
    pod = next(p for p in world.pods if p.key == (role, index))
    return pod.env(pod.containers()[container]), pod


def c(name):
    return {"template": {"spec": {"containers": [{"name": name, "image": "img"}]}}}


def test_pytorch_worker_env_matches_reference_example():
    doc = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "pt"},
           "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1, **c("pytorch")}, "Worker": {"replicas": 2, **c("pytorch")}}}}
    env, pod = pod_env(doc, "worker", 1)
    assert env == [("PYTHONUNBUFFERED", "1"), ("MASTER_PORT", "23456"), ("PET_MASTER_PORT", "23456"),
                   ("MASTER_ADDR", "pt-master-0"), ("PET_MASTER_ADDR", "pt-master-0"), ("WORLD_SIZE", "3"),
                   ("RANK", "2"), ("PET_NODE_RANK", "2"), ("PET_NPROC_PER_NODE", "auto"), ("PET_NNODES", "3")]
    assert [i["name"] for i in pod.containers(init=True)] == ["init-pytorch"]
    assert pod.spec["restartPolicy"] == "OnFailure"


def test_pytorch_nproc_multiplies_world_size():
    doc = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "pt"},
           "spec": {"nprocPerNode": "4", "pytorchReplicaSpecs": {"Master": {**c("pytorch")}, "Worker": {"replicas": 2, **c("pytorch")}}}}
    env = dict(pod_env(doc, "master", 0)[0])
    assert (env["WORLD_SIZE"], env["PET_NPROC_PER_NODE"], env["RANK"]) == ("12", "4", "0")


def test_tf_config_format():
    doc = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "mnist", "namespace": "ns"},
           "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 2, **c("tensorflow")}, "PS": {"replicas": 1, **c("tensorflow")}}}}
    env = dict(pod_env(doc, "worker", 1)[0])
    assert env["TF_CONFIG"] == (
        '{"cluster":{"ps":["mnist-ps-0.ns.svc:2222"],"worker":["mnist-worker-0.ns.svc:2222","mnist-worker-1.ns.svc:2222"]},'
        '"task":{"type":"worker","index":1},"environment":"cloud"}'
    )
    assert json.loads(env["TF_CONFIG"])["task"] == {"type": "worker", "index": 1}


def test_tf_single_replica_has_no_tf_config():
    doc = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "one"},
           "spec": {"tfReplicaSpecs": {"Worker": {**c("tensorflow")}}}}
    assert pod_env(doc, "worker", 0)[0] == []


def test_xgboost_env_order_and_worker_addrs():
    doc = {"apiVersion": "kubeflow.org/v1", "kind": "XGBoostJob", "metadata": {"name": "x"},
           "spec": {"xgbReplicaSpecs": {"Master": {"replicas": 1, **c("xgboost")}, "Worker": {"replicas": 2, **c("xgboost")}}}}
    env = pod_env(doc, "worker", 0)[0]
    assert env == [("MASTER_PORT", "9999"), ("MASTER_ADDR", "x-master-0"), ("WORLD_SIZE", "3"), ("RANK", "1"),
                   ("PYTHONUNBUFFERED", "1"), ("WORKER_PORT", "9999"), ("WORKER_ADDRS", "x-worker-0,x-worker-1")]


def test_jax_env():
    doc = {"apiVersion": "kubeflow.org/v1", "kind": "JAXJob", "metadata": {"name": "j"},
           "spec": {"jaxReplicaSpecs": {"Worker": {"replicas": 3, **c("jax")}}}}
    assert pod_env(doc, "worker", 2)[0] == [("PYTHONUNBUFFERED", "1"), ("COORDINATOR_PORT", "6666"),
                                             ("COORDINATOR_ADDRESS", "j-worker-0"), ("NUM_PROCESSES", "3"), ("PROCESS_ID", "2")]


def test_paddle_first_pod_uses_its_ip():
    doc = {"apiVersion": "kubeflow.org/v1", "kind": "PaddleJob", "metadata": {"name": "p"},
           "spec": {"paddleReplicaSpecs": {"Worker": {"replicas": 2, **c("paddle")}}}}
    first, pod0 = pod_env(doc, "worker", 0)
    second, _ = pod_env(doc, "worker", 1)
    assert first == [("PYTHONUNBUFFERED", "1"), ("PADDLE_JOB_ID", "p"), ("PADDLE_NNODES", "2"),
                     ("POD_IP_DUMMY", pod0.ip), ("PADDLE_MASTER", f"{pod0.ip}:36543")]
    assert second[-1] == ("PADDLE_MASTER", "p-worker-0:36543")


def test_mpi_v1_launcher_env_and_kubectl_delivery():
    doc = {"apiVersion": "kubeflow.org/v1", "kind": "MPIJob", "metadata": {"name": "m"},
           "spec": {"mpiReplicaSpecs": {"Launcher": {"replicas": 1, **c("mpi")}, "Worker": {"replicas": 2, **c("mpi")}}}}
    env, pod = pod_env(doc, "launcher", 0)
    assert [n for n, _ in env] == ["OMPI_MCA_plm_rsh_agent", "OMPI_MCA_orte_default_hostfile", "NVIDIA_VISIBLE_DEVICES",
                                   "NVIDIA_DRIVER_CAPABILITIES", "I_MPI_HYDRA_BOOTSTRAP", "I_MPI_HYDRA_BOOTSTRAP_EXEC"]
    assert [i["name"] for i in pod.containers(init=True)] == ["kubectl-delivery"]
    _, worker = pod_env(doc, "worker", 0)
    c0 = worker.containers()[0]  # the real v1.9.4 operator: command sleep, args 365d (tests/e2e/test_differential.py)
    assert (c0["command"], c0["args"]) == (["sleep"], ["365d"])


def test_mpi_v2_launcher_env_per_implementation():
    base = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "m"},
            "spec": {"slotsPerWorker": 4, "mpiReplicaSpecs": {"Launcher": {"replicas": 1, **c("l")}, "Worker": {"replicas": 1, **c("w")}}}}
    env = dict(pod_env(base, "launcher", 0)[0])
    assert env["OMPI_MCA_orte_set_default_slots"] == "4" and env["K_MPI_JOB_ROLE"] == "launcher"
    base["spec"]["mpiImplementation"] = "Intel"
    env = dict(pod_env(base, "launcher", 0)[0])
    assert env["I_MPI_PERHOST"] == "4" and "OMPI_MCA_orte_set_default_slots" not in env
