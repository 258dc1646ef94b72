"""Jobs built in Python reach `kf2jobset.convert_job` the ways code builds them: kubeflow-training SDK models
(a launcher library's elastic PyTorchJob and MPIJob, KFP's PyTorch launcher on the SDK's template helpers, a
notebook's TFJob from a training function), an older SDK's models that only have `swagger_types`, a deployer's
dict holding kubernetes `V1ObjectMeta`/`V1PodTemplateSpec` objects, and `to_dict()` output (refused, with the
fix). Each is held to the same job written as a camelCase dict, converted to both targets."""
from __future__ import annotations

import copy

import pytest
from kubeflow.training import models as sdk
from kubeflow.training.utils import utils as sdk_utils
from kubernetes import client as k8s

import kf2jobset
from kf2jobset.api.job_input import SNAKE_RULE, job_document

TARGETS = ("jobset", "trainjob")


def _pod(container: str, image: str, **container_fields) -> k8s.V1PodTemplateSpec:
    return k8s.V1PodTemplateSpec(spec=k8s.V1PodSpec(containers=[k8s.V1Container(name=container, image=image, **container_fields)]))


def _pod_dict(container: str, image: str, **container_fields) -> dict:
    return {"spec": {"containers": [{"name": container, "image": image, **container_fields}]}}


def _same_outcome(built, written, **options) -> kf2jobset.Converted | None:
    """The model and the dict convert alike: the same objects, or the same refusal."""
    try:
        expected = kf2jobset.convert_job(written, **options)
    except kf2jobset.Kf2JobSetError as err:
        with pytest.raises(type(err)) as got:
            kf2jobset.convert_job(built, **options)
        assert str(got.value) == str(err)
        return None
    result = kf2jobset.convert_job(built, **options)
    assert result.objects == expected.objects
    assert [n.code for n in result.notes] == [n.code for n in expected.notes]
    return result


# ----------------------------------------------------------------------------------------- SDK models, every kind

def _kind_cases():
    """(SDK job, the same job as a dict, options) for each kind the SDK has a model of."""
    run = sdk.KubeflowOrgV1RunPolicy(clean_pod_policy="None", backoff_limit=3)
    run_dict = {"cleanPodPolicy": "None", "backoffLimit": 3}

    def replica(n, container, image, **fields):
        return sdk.KubeflowOrgV1ReplicaSpec(replicas=n, restart_policy="OnFailure", template=_pod(container, image, **fields))

    def replica_dict(n, container, image, **fields):
        return {"replicas": n, "restartPolicy": "OnFailure", "template": _pod_dict(container, image, **fields)}

    def job(model, spec_model, kind, name, **spec):
        return model(api_version="kubeflow.org/v1", kind=kind, metadata=k8s.V1ObjectMeta(name=name, namespace="ml"),
                     spec=spec_model(run_policy=run, **spec))

    def written(kind, name, **spec):
        return {"apiVersion": "kubeflow.org/v1", "kind": kind, "metadata": {"name": name, "namespace": "ml"},
                "spec": {"runPolicy": dict(run_dict), **spec}}

    yield "TFJob", job(sdk.KubeflowOrgV1TFJob, sdk.KubeflowOrgV1TFJobSpec, "TFJob", "mnist", tf_replica_specs={
        "Chief": replica(1, "tensorflow", "tf:2"), "Worker": replica(2, "tensorflow", "tf:2")}), written(
        "TFJob", "mnist", tfReplicaSpecs={"Chief": replica_dict(1, "tensorflow", "tf:2"),
                                          "Worker": replica_dict(2, "tensorflow", "tf:2")}), {}
    yield "PyTorchJob", job(sdk.KubeflowOrgV1PyTorchJob, sdk.KubeflowOrgV1PyTorchJobSpec, "PyTorchJob", "ddp", nproc_per_node="2",
                            pytorch_replica_specs={"Master": replica(1, "pytorch", "pt:2", args=["--epochs", "3"]),
                                                   "Worker": replica(3, "pytorch", "pt:2", args=["--epochs", "3"])}), written(
        "PyTorchJob", "ddp", nprocPerNode="2", pytorchReplicaSpecs={
            "Master": replica_dict(1, "pytorch", "pt:2", args=["--epochs", "3"]),
            "Worker": replica_dict(3, "pytorch", "pt:2", args=["--epochs", "3"])}), {}
    yield "XGBoostJob", job(sdk.KubeflowOrgV1XGBoostJob, sdk.KubeflowOrgV1XGBoostJobSpec, "XGBoostJob", "xgb", xgb_replica_specs={
        "Master": replica(1, "xgboost", "xgb:1"), "Worker": replica(2, "xgboost", "xgb:1")}), written(
        "XGBoostJob", "xgb", xgbReplicaSpecs={"Master": replica_dict(1, "xgboost", "xgb:1"),
                                              "Worker": replica_dict(2, "xgboost", "xgb:1")}), {}
    yield "PaddleJob", job(sdk.KubeflowOrgV1PaddleJob, sdk.KubeflowOrgV1PaddleJobSpec, "PaddleJob", "paddle", paddle_replica_specs={
        "Worker": replica(2, "paddle", "paddle:2", ports=[k8s.V1ContainerPort(name="master", container_port=37777)])}), written(
        "PaddleJob", "paddle", paddleReplicaSpecs={"Worker": replica_dict(
            2, "paddle", "paddle:2", ports=[{"name": "master", "containerPort": 37777}])}), {}
    yield "JAXJob", job(sdk.KubeflowOrgV1JAXJob, sdk.KubeflowOrgV1JAXJobSpec, "JAXJob", "jax", jax_replica_specs={
        "Worker": replica(2, "jax", "jax:1")}), written("JAXJob", "jax", jaxReplicaSpecs={"Worker": replica_dict(2, "jax", "jax:1")}), {}
    # a launcher library's MPIJob: the v1 operator ran mpirun through kubectl exec, so the switch is the caller's call
    yield "MPIJob", job(sdk.KubeflowOrgV1MPIJob, sdk.KubeflowOrgV1MPIJobSpec, "MPIJob", "hvd", slots_per_worker=1, mpi_replica_specs={
        "Launcher": replica(1, "mpi", "hvd:1", command=["mpirun", "python", "train.py"]),
        "Worker": replica(2, "mpi", "hvd:1")}), written("MPIJob", "hvd", slotsPerWorker=1, mpiReplicaSpecs={
            "Launcher": replica_dict(1, "mpi", "hvd:1", command=["mpirun", "python", "train.py"]),
            "Worker": replica_dict(2, "mpi", "hvd:1")}), {"accept_mpi_ssh": True}


KIND_CASES = list(_kind_cases())


@pytest.mark.parametrize("kind,built,written,options", KIND_CASES, ids=[c[0] for c in KIND_CASES])
def test_an_sdk_model_is_the_job_its_json_is(kind, built, written, options):
    before = built.to_dict()
    assert job_document(built) == written
    kinds = []
    # a TrainJob on a shared runtime where one fits the job, else on a runtime of its own (the refusal's way out)
    for target in ({"target": "jobset"}, {"target": "trainjob"}, {"target": "trainjob", "trainer_runtime": "per-job"}):
        result = _same_outcome(built, written, **target, **options)
        kinds.append(result.primary["kind"] if result else None)
    assert built.to_dict() == before, "the caller's model was modified"
    assert kinds[0] == "JobSet" and kinds[2] == "TrainJob" and kinds[1] in ("TrainJob", None), kinds


def test_a_launcher_librarys_elastic_pytorchjob():
    job = sdk.KubeflowOrgV1PyTorchJob(
        api_version="kubeflow.org/v1", kind="PyTorchJob", metadata=k8s.V1ObjectMeta(name="elastic", namespace="ml"),
        spec=sdk.KubeflowOrgV1PyTorchJobSpec(
            elastic_policy=sdk.KubeflowOrgV1ElasticPolicy(min_replicas=2, max_replicas=4, rdzv_backend="c10d", max_restarts=3),
            run_policy=sdk.KubeflowOrgV1RunPolicy(),
            pytorch_replica_specs={"Worker": sdk.KubeflowOrgV1ReplicaSpec(
                replicas=2, restart_policy="OnFailure", template=_pod("pytorch", "pt:2", command=["torchrun", "train.py"]))}))
    doc = job_document(job)
    assert doc["spec"]["elasticPolicy"] == {"minReplicas": 2, "maxReplicas": 4, "rdzvBackend": "c10d", "maxRestarts": 3}
    jobset = kf2jobset.convert_job(job).primary
    env = {e["name"]: e.get("value") for e in
           jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["PET_NNODES"] == "2:4" and env["PET_RDZV_BACKEND"] == "c10d" and env["PET_MAX_RESTARTS"] == "3"
    # Trainer has no elastic training: the decision is named, in the keyword that makes it
    with pytest.raises(kf2jobset.UnsupportedError, match="trainer_runtime='per-job'"):
        kf2jobset.convert_job(job, target="trainjob")
    assert kf2jobset.convert_job(job, target="trainjob", trainer_runtime="per-job").primary["kind"] == "TrainJob"


def test_kfps_pytorch_launcher_on_the_sdks_template_helpers():
    container = sdk_utils.get_container_spec(name="pytorch", base_image="public.ecr.aws/pytorch-samples/pytorch_dist_mnist:latest",
                                             resources={"cpu": "2000m", "memory": "4Gi"}, args=["--backend", "gloo"])
    spec = sdk_utils.get_pod_template_spec(containers=[container])
    job = sdk_utils.get_pytorchjob_template(name="mnist-train", namespace="kubeflow", num_workers=3,
                                            worker_pod_template_spec=spec, master_pod_template_spec=spec)
    doc = job_document(job)
    assert doc["spec"]["runPolicy"] == {}  # clean_pod_policy=None: unset, as the client sends it
    worker = doc["spec"]["pytorchReplicaSpecs"]["Worker"]
    assert worker["replicas"] == 2 and worker["template"]["metadata"] == {"annotations": {"sidecar.istio.io/inject": "false"}}
    assert worker["template"]["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "2000m", "memory": "4Gi"}, "requests": {"cpu": "2000m", "memory": "4Gi"}}
    for target in TARGETS:
        result = kf2jobset.convert_job(job, target=target)
        assert result.primary["kind"] == {"jobset": "JobSet", "trainjob": "TrainJob"}[target]
        meta = result.primary["metadata"]
        assert (meta["name"], meta["namespace"]) == ("mnist-train", "kubeflow")


def _train(parameters):  # the notebook's training function: the SDK ships its source in the container's command
    print("training with", parameters)


def test_a_notebooks_tfjob_from_a_training_function():
    command, args = sdk_utils.get_command_using_train_func(_train, "python -u", {"lr": 0.1}, ["tensorflow-datasets"])
    container = sdk_utils.get_container_spec(name="tensorflow", base_image="tensorflow/tensorflow:2.15.0",
                                             command=command, args=args)
    job = sdk_utils.get_tfjob_template(name="nb-train", namespace="user", num_workers=2, num_ps_replicas=1,
                                       pod_template_spec=sdk_utils.get_pod_template_spec(containers=[container]))
    for target in TARGETS:
        written = job_document(job)
        result = _same_outcome(job, written, target=target)
        if target == "jobset":
            names = [rj["name"] for rj in result.primary["spec"]["replicatedJobs"]]
            assert names == ["ps", "worker"]
            pod = result.primary["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]
            assert pod["containers"][0]["args"] == args  # the function's source travels untouched


class _OldSDKModel:
    """The shape of models generated before `openapi_types` (kubeflow's old pytorchjob SDK): `swagger_types`."""

    swagger_types = {"api_version": "str", "kind": "str", "metadata": "V1ObjectMeta", "spec": "object"}
    attribute_map = {"api_version": "apiVersion", "kind": "kind", "metadata": "metadata", "spec": "spec"}

    def __init__(self, **fields):
        for name in self.swagger_types:
            setattr(self, name, fields.get(name))


def test_models_of_older_generators_and_of_the_kubernetes_client_serialize_as_the_client_does():
    pod = _pod("pytorch", "pt:2", image_pull_policy="Always", env=[k8s.V1EnvVar(name="LR", value="0.1")])
    # kubernetes' own models: what ApiClient sends is what convert_job reads
    assert job_document({"t": pod})["t"] == k8s.ApiClient().sanitize_for_serialization(pod)
    old = _OldSDKModel(api_version="kubeflow.org/v1", kind="PyTorchJob", metadata=k8s.V1ObjectMeta(name="legacy"),
                       spec={"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": pod}}})
    assert job_document(old) == {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "legacy"},
                                 "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": {"spec": {"containers": [
                                     {"name": "pytorch", "image": "pt:2", "imagePullPolicy": "Always",
                                      "env": [{"name": "LR", "value": "0.1"}]}]}}}}}}
    assert kf2jobset.convert_job(old).primary["kind"] == "JobSet"


def test_a_deployers_dict_holding_kubernetes_models():
    template = _pod("tensorflow", "tf:2", resources=k8s.V1ResourceRequirements(limits={"nvidia.com/gpu": "1"}))
    built = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
             "metadata": k8s.V1ObjectMeta(name="fairing-job", generate_name=None, labels={"fairing-id": "a1"}),
             "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 2, "template": template}}}}
    written = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "fairing-job", "labels": {"fairing-id": "a1"}},
               "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 2, "template": _pod_dict(
                   "tensorflow", "tf:2", resources={"limits": {"nvidia.com/gpu": "1"}})}}}}
    kept = copy.deepcopy(written)
    assert job_document(built) == written
    for target in TARGETS:
        assert _same_outcome(built, written, target=target) is not None
    assert written == kept


# ----------------------------------------------------------------------------------------- what is refused

def test_to_dict_output_is_refused_with_the_fix():
    job = KIND_CASES[1][1]
    with pytest.raises(kf2jobset.InputError) as err:
        kf2jobset.convert_job(job.to_dict())
    (problem,) = err.value.problems
    assert problem.rule == SNAKE_RULE and "api_version (apiVersion)" in problem.message
    assert problem.hint and "convert_job(model)" in problem.hint


def test_a_part_written_with_to_dict_is_named_where_it_sits():
    built = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "half"},
             "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1, "template": _pod(
                 "tensorflow", "tf:2", image_pull_policy="Always").to_dict()}}}}
    with pytest.raises(kf2jobset.InputError) as err:
        kf2jobset.convert_job(built)
    paths = [p.path for p in err.value.problems]
    assert ("spec", "tfReplicaSpecs", "Worker", "template", "spec", "containers", 0) in paths
    assert all(p.rule == SNAKE_RULE for p in err.value.problems)
    assert any("image_pull_policy (imagePullPolicy)" in p.message for p in err.value.problems)


def test_snake_case_keys_of_the_users_own_maps_are_kept():
    job = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
           "metadata": {"name": "maps", "labels": {"team_name": "vision"}, "annotations": {"run_id": "7"}},
           "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1, "template": {
               "metadata": {"labels": {"model_family": "resnet"}},
               "spec": {"nodeSelector": {"pool_name": "gpu"}, "containers": [{"name": "tensorflow", "image": "tf:2",
                                                                               "env": [{"name": "batch_size", "value": "64"}]}]}}}}}}
    jobset = kf2jobset.convert_job(job).primary
    assert jobset["metadata"]["labels"]["team_name"] == "vision"
    pod = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert pod["metadata"]["labels"]["model_family"] == "resnet" and pod["spec"]["nodeSelector"] == {"pool_name": "gpu"}


def test_what_no_client_could_send_is_refused_with_its_path():
    with pytest.raises(kf2jobset.InputError) as err:
        kf2jobset.convert_job({"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
                               "metadata": {"name": "s", "labels": {"tags": {"a", "b"}}}, "spec": {}})
    assert err.value.problems[0].path == ("metadata", "labels", "tags")
    with pytest.raises(TypeError, match="convert_yaml"):
        kf2jobset.convert_job("apiVersion: kubeflow.org/v1\nkind: TFJob\n")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="mapping or an OpenAPI model"):
        kf2jobset.convert_job([KIND_CASES[0][2]])  # type: ignore[arg-type]
