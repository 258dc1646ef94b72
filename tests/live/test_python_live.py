"""`kf2jobset.live` from Python against the real test API server with the real JobSet, Training Operator and
Trainer v2.3.0 CRDs: a v1 job created the way SDK users create it (CustomObjectsApi), read back by kind and
name, converted, applied under a server dry run, then created, in the order `kubectl kf2jobset apply` uses;
the caller's ApiClient or the kubeconfig lookup; cluster errors as typed exceptions worded for Python."""
from __future__ import annotations

import pytest
from kubeflow.training import models as sdk
from kubernetes import client as k8s

import kf2jobset
from kf2jobset import live
from kf2jobset.api.job_input import job_document

from .. import upstream
from ..conftest import REPO
from ..python_blocks import python_blocks, run_block

pytestmark = pytest.mark.apiserver

JOBSETS = ("jobset.x-k8s.io", "v1alpha2", "jobsets")
TRAINER = ("trainer.kubeflow.org", "v1alpha1")


@pytest.fixture(scope="module")
def api_client(apiserver):
    apiserver.install_crds([str(upstream.jobset_crd()), *map(str, upstream.training_operator_crds()),
                            *map(str, upstream.trainer_crds())])
    with apiserver.api_client() as api:
        yield api


def _pod(container: str, image: str, **fields) -> k8s.V1PodTemplateSpec:
    return k8s.V1PodTemplateSpec(spec=k8s.V1PodSpec(containers=[k8s.V1Container(name=container, image=image, **fields)]))


def _mpijob(name: str) -> sdk.KubeflowOrgV1MPIJob:
    """A launcher library's MPIJob, built from the SDK's models."""
    replica = sdk.KubeflowOrgV1ReplicaSpec
    launcher = replica(replicas=1, template=_pod("mpi", "hvd:1", command=["mpirun", "python", "t.py"]))
    return sdk.KubeflowOrgV1MPIJob(
        api_version="kubeflow.org/v1", kind="MPIJob", metadata=k8s.V1ObjectMeta(name=name),
        spec=sdk.KubeflowOrgV1MPIJobSpec(slots_per_worker=1, run_policy=sdk.KubeflowOrgV1RunPolicy(clean_pod_policy="Running"),
                                         mpi_replica_specs={"Launcher": launcher,
                                                            "Worker": replica(replicas=2, template=_pod("mpi", "hvd:1"))}))


def _create(api_client, namespace: str, job) -> dict:
    body = job_document(job)
    plural = body["kind"].lower() + "s"
    return k8s.CustomObjectsApi(api_client).create_namespaced_custom_object("kubeflow.org", "v1", namespace, plural, body)


def _list(api_client, namespace: str, group: str, version: str, plural: str) -> list[dict]:
    return k8s.CustomObjectsApi(api_client).list_namespaced_custom_object(group, version, namespace, plural)["items"]


def test_a_live_job_is_read_converted_dry_run_then_created(api_client, namespace):
    created = _create(api_client, namespace, _mpijob("hvd"))
    result = live.convert("mpijob", "hvd", namespace, cluster=api_client, accept_mpi_ssh=True)
    assert isinstance(result, kf2jobset.Converted) and result.source is not None
    assert result.source.obj["metadata"]["uid"] == created["metadata"]["uid"]
    assert result.primary["metadata"] == {**result.primary["metadata"], "name": "hvd", "namespace": namespace}
    assert "uid" not in result.primary["metadata"]
    assert [o["kind"] for o in result.objects] == ["JobSet", "ConfigMap"]

    checked = live.apply(result, cluster=api_client, dry_run=True)
    assert [o["kind"] for o in checked.objects] == ["JobSet", "ConfigMap"] and checked.dry_run
    assert all(o["metadata"].get("uid") for o in checked.objects)  # the server answered for each
    assert _list(api_client, namespace, *JOBSETS) == []  # a dry run persists nothing
    assert any("Secret 'hvd-ssh' not found" in w for w in checked.warnings)
    assert any("is not suspended" in w and "suspend_source=True" in w for w in checked.warnings)

    applied = live.apply(result, cluster=api_client, suspend_source=True)
    jobset = k8s.CustomObjectsApi(api_client).get_namespaced_custom_object(*JOBSETS[:2], namespace, JOBSETS[2], "hvd")
    assert jobset["metadata"]["uid"] == applied.objects[0]["metadata"]["uid"]
    hostfile = k8s.CoreV1Api(api_client).read_namespaced_config_map(result.companions[0]["metadata"]["name"], namespace)
    assert [(r.kind, r.uid) for r in hostfile.metadata.owner_references] == [("JobSet", jobset["metadata"]["uid"])]
    source = k8s.CustomObjectsApi(api_client).get_namespaced_custom_object("kubeflow.org", "v1", namespace, "mpijobs", "hvd")
    assert source["spec"]["runPolicy"]["suspend"] is True
    assert not any("is not suspended" in w for w in applied.warnings)

    # the JobSet exists now: the server refuses a second one, before anything is created
    with pytest.raises(kf2jobset.RejectedJobSetError) as err:
        live.apply(result, cluster=api_client)
    assert "AlreadyExists" in str(err.value) and "name=..." in (err.value.problems[0].hint or "")
    assert "--" not in str(err.value)


def test_a_conversion_of_code_is_applied_through_the_kubeconfig_lookup(apiserver, api_client, namespace, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", apiserver.kubeconfig)
    job = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "ddp", "namespace": namespace},
           "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": _pod("pytorch", "pt:2")},
                                            "Worker": {"replicas": 2, "template": _pod("pytorch", "pt:2")}}}}
    result = kf2jobset.convert_job(job, target="trainjob", trainer_runtime="per-job")
    kinds = [(r.group, r.version, r.plural, r.namespaced) for r, _ in result.resources()]
    assert kinds == [(*TRAINER, "trainingruntimes", True), (*TRAINER, "trainjobs", True)]
    with live.connect(kubeconfig=apiserver.kubeconfig) as cluster:
        for resource, _ in result.resources():  # every group/version/plural the result names is served
            assert resource.plural in (cluster.served_plurals(resource.group, resource.version) or ())
    applied = live.apply(result)  # no client given: $KUBECONFIG, as kubectl reads it
    assert [o["kind"] for o in applied.objects] == ["TrainingRuntime", "TrainJob"] and applied.namespace == namespace
    assert [t["metadata"]["name"] for t in _list(api_client, namespace, *TRAINER, "trainjobs")] == ["ddp"]
    with pytest.raises(kf2jobset.UsageError, match="suspend_source=True needs a result of kf2jobset.live.convert"):
        live.apply(result, suspend_source=True)
    with pytest.raises(kf2jobset.UsageError, match="namespace 'elsewhere'"):
        live.apply(result, "elsewhere", cluster=api_client)


def test_the_recipe_with_customobjectsapi_creates_what_apply_would(api_client, namespace):
    job = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "tf"},
           "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 2, "template": _pod("tensorflow", "tf:2")}}}}
    result = kf2jobset.convert_job(job)
    custom = k8s.CustomObjectsApi(api_client)
    for resource, obj in result.resources():
        custom.create_namespaced_custom_object(resource.group, resource.version, namespace, resource.plural, obj)
    assert [j["metadata"]["name"] for j in _list(api_client, namespace, *JOBSETS)] == ["tf"]


def test_cluster_errors_are_typed(apiserver, api_client, namespace):
    with pytest.raises(kf2jobset.NotFoundError, match="no-such-job"):
        live.convert("pytorchjob", "no-such-job", namespace, cluster=api_client)
    with pytest.raises(kf2jobset.UsageError, match="unknown kind 'podjob'"):
        live.convert("podjob", "x", namespace, cluster=api_client)
    stranger = live.connect(kubeconfig=apiserver.kubeconfig_for_user("stranger"))
    with stranger, pytest.raises(kf2jobset.ClusterAuthError) as refused:
        live.convert("tfjob", "x", namespace, cluster=stranger)
    assert "context=... / kubeconfig=..." in (refused.value.problems[0].hint or "")
    with pytest.raises(kf2jobset.ClusterUnreachableError, match="kubeconfig .*no-such-kubeconfig: no such file"):
        live.connect(kubeconfig=str(apiserver.workdir / "no-such-kubeconfig"))


def test_the_documented_cluster_recipes_run(api_client, namespace, capsys):
    page = REPO / "docs" / "api.md"
    blocks = [(line, code) for line, marker, code in python_blocks(page) if marker == "cluster"]
    assert len(blocks) == 3
    pod = _pod("pytorch", "registry.example.com/mnist:1")
    _create(api_client, namespace, {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "mnist"},
                                    "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": pod},
                                                                     "Worker": {"replicas": 1, "template": pod}}}})
    for line, code in blocks:
        run_block(page, line, code, {"api_client": api_client, "namespace": namespace})
    out = capsys.readouterr().out.splitlines()
    assert out == ["['JobSet/mnist-train']", "jobsets.jobset.x-k8s.io/v1alpha2", "True", "['JobSet']", "mnist"]
    names = sorted(j["metadata"]["name"] for j in _list(api_client, namespace, *JOBSETS))
    assert names == ["mnist", "mnist-train", "wide-deep"]
    source = k8s.CustomObjectsApi(api_client).get_namespaced_custom_object("kubeflow.org", "v1", namespace, "pytorchjobs", "mnist")
    assert source["spec"]["runPolicy"]["suspend"] is True
