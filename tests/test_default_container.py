"""A replica type with no container of the kind's default name, per kind, as the audit at the
operators' tags found it (docs/ground-truth.md, "No container of the default name"): refused as
inherited where no release made a pod, converted with JS060/JS080 saying what the releases that made
pods did, and nothing reported for MPIJob v1 (container 0 in every release)."""
from __future__ import annotations

import pytest

from kf2jobset.core.convert import convert_job
from kf2jobset.errors import InvalidJobError
from kf2jobset.options import ConvertOptions
from kf2jobset.runtime.lifecycle import operator_lifecycle

FIELD = {"PyTorchJob": "pytorchReplicaSpecs", "TFJob": "tfReplicaSpecs", "XGBoostJob": "xgbReplicaSpecs",
         "PaddleJob": "paddleReplicaSpecs", "JAXJob": "jaxReplicaSpecs", "MXJob": "mxReplicaSpecs",
         "MPIJob": "mpiReplicaSpecs"}


def _c(name, **extra):
    return {"name": name, "image": "img:1", **extra}


def job(kind, specs, **spec):
    doc = {"apiVersion": "kubeflow.org/v1", "kind": kind, "metadata": {"name": "j", "namespace": "ns"},
           "spec": {**spec, FIELD[kind]: {t: {"replicas": n, "template": {"spec": {"containers": cs}}, **extra}
                                          for t, (n, cs, extra) in specs.items()}}}
    if kind == "MXJob":
        doc["spec"]["jobMode"] = "MXTrain"
    return doc


def codes(conv):
    return {n.code for n in conv.notes}


def pod_spec(conv, rjob):
    return next(r for r in conv.jobset["spec"]["replicatedJobs"] if r["name"] == rjob)["template"]["spec"]


@pytest.mark.parametrize("doc, rtype", [
    (job("PyTorchJob", {"Master": (1, [_c("trainer")], {}), "Worker": (2, [_c("pytorch")], {})}), "Master"),
    (job("PyTorchJob", {"Master": (1, [_c("pytorch")], {}), "Worker": (2, [_c("trainer")], {})},
         elasticPolicy={"rdzvBackend": "c10d"}), "Worker"),
    (job("XGBoostJob", {"Master": (1, [_c("xgboostjob")], {}), "Worker": (2, [_c("xgboost")], {})}), "Master"),
    (job("XGBoostJob", {"Master": (1, [_c("xgboost")], {}), "Worker": (2, [_c("xgboostjob")], {})}), "Worker"),
    (job("JAXJob", {"Worker": (2, [_c("trainer")], {})}), "Worker"),
    (job("MXJob", {"Scheduler": (1, [_c("mxnet")], {}), "Worker": (2, [_c("main")], {})}), "Worker"),
], ids=["pytorch-master", "pytorch-elastic-worker", "xgboost-master", "xgboost-worker", "jax", "mxnet"])
def test_no_release_made_a_pod_so_it_is_refused_as_inherited(doc, rtype):
    with pytest.raises(InvalidJobError) as err:
        convert_job(doc, ConvertOptions())
    text = str(err.value)
    assert f"{rtype} has no container named" in text and "[default-container]" in text and "inherited" in text


def test_an_elastic_worker_with_its_own_rdzv_port_never_read_the_container():
    conv = convert_job(job("PyTorchJob", {"Master": (1, [_c("pytorch")], {}), "Worker": (2, [_c("trainer")], {})},
                           elasticPolicy={"rdzvBackend": "c10d", "rdzvPort": 29400}), ConvertOptions())
    assert {"JS060", "JS080"} <= codes(conv)


def test_a_pytorch_worker_converts_as_v1_5_made_its_pods():
    conv = convert_job(job("PyTorchJob", {"Master": (1, [_c("pytorch")], {}),
                                          "Worker": (2, [_c("trainer"), _c("sidecar")], {})}), ConvertOptions())
    js060 = next(n for n in conv.notes if n.code == "JS060")
    assert "v1.6-v1.7 refused" in js060.message and "never this type's Services" in js060.message
    containers = pod_spec(conv, "worker")["template"]["spec"]["containers"]
    assert all("MASTER_ADDR" in {e["name"] for e in c["env"]} for c in containers)  # every container, as setPodEnv
    assert containers[0]["ports"] == [{"name": "pytorchjob-port", "containerPort": 23456}]  # defaulting: container 0
    js080 = next(n for n in conv.notes if n.code == "JS080")
    assert "before v1.8" not in js080.message and "v1.6-v1.7 refused it too" in js080.message


def test_a_tf_type_without_tensorflow_gets_no_tf_config_and_is_addressed_on_the_default_port():
    conv = convert_job(job("TFJob", {"PS": (1, [_c("ps", ports=[{"name": "tfjob-port", "containerPort": 2223}])], {}),
                                     "Worker": (2, [_c("tensorflow")], {})}), ConvertOptions())
    assert "JS060" in codes(conv)
    ps = pod_spec(conv, "ps")["template"]["spec"]["containers"][0]
    assert "TF_CONFIG" not in {e["name"] for e in ps.get("env") or []}
    worker = pod_spec(conv, "worker")["template"]["spec"]["containers"][0]
    tf_config = next(e["value"] for e in worker["env"] if e["name"] == "TF_CONFIG")
    assert ".svc:2222" in tf_config.split('"ps":')[1].split("]")[0]  # GetPortFromTFJob's fallback, not 2223


def test_a_paddle_master_without_paddle_is_read_on_the_default_port():
    conv = convert_job(job("PaddleJob", {"Master": (1, [_c("pd", ports=[{"name": "master", "containerPort": 40000}])], {}),
                                         "Worker": (2, [_c("paddle")], {})}), ConvertOptions())
    assert {"JS060", "JS080"} <= codes(conv)
    env = pod_spec(conv, "worker")["template"]["spec"]["containers"][0]["env"]
    assert any(e["name"] == "PADDLE_MASTER" and e.get("value", "").endswith(":36543") for e in env), env


def test_exit_code_without_the_default_container_retries_every_failure_as_v1_did():
    conv = convert_job(job("TFJob", {"PS": (1, [_c("ps")], {"restartPolicy": "ExitCode"}),
                                     "Worker": (2, [_c("tensorflow")], {"restartPolicy": "ExitCode"})}), ConvertOptions())
    ps, worker = pod_spec(conv, "ps"), pod_spec(conv, "worker")
    assert "podFailurePolicy" not in ps and ps["backoffLimit"] == 2147483647
    assert worker["podFailurePolicy"]["rules"][0]["onExitCodes"]["containerName"] == "tensorflow"
    roles = operator_lifecycle(conv.job).roles
    assert (roles["ps"]["failure"], roles["worker"]["failure"]) == ("recreate", "exit-code")


def test_mpijob_v1_used_container_0_in_every_release_so_nothing_is_reported():
    doc = job("MPIJob", {"Launcher": (1, [_c("launcher")], {}), "Worker": (2, [_c("worker")], {})})
    conv = convert_job(doc, ConvertOptions(accept_mpi_ssh=True))
    assert "JS060" not in codes(conv) and "JS080" not in codes(conv)
