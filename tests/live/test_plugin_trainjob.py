"""`kubectl kf2jobset apply --target trainjob` against the real API server with the real JobSet,
Training Operator and Trainer v2.3.0 CRDs (no controllers, no webhooks: Trainer's webhook and its
runtime cache are held in tests/e2e/test_trainjob_target.py). What is created, in which order, owned by
what; a shared generated runtime kept; a missing built-in runtime named."""
from __future__ import annotations

import copy

import pytest
import yaml

from kf2jobset import exitcodes

from .. import upstream
from .plugin_harness import FIXTURES, GROUP, kf

pytestmark = pytest.mark.apiserver

TJ = ("trainer.kubeflow.org", "v1alpha1")


@pytest.fixture(scope="module")
def trainer_crds(apiserver):
    apiserver.install_crds([str(upstream.jobset_crd()), *map(str, upstream.training_operator_crds()),
                            *map(str, upstream.trainer_crds())])
    from kubernetes import client

    with apiserver.api_client() as api:
        yield client.CustomObjectsApi(api)


def _job(custom, namespace: str, fixture: str, name: str) -> str:
    body = copy.deepcopy(yaml.safe_load((FIXTURES / fixture / "input.yaml").read_text()))
    body["metadata"] = {"name": name}
    custom.create_namespaced_custom_object(GROUP, "v1", namespace, "pytorchjobs", body)
    return name


def test_a_job_that_fits_becomes_a_trainjob_on_torch_distributed(apiserver, trainer_crds, namespace):
    custom = trainer_crds
    name = _job(custom, namespace, "pytorchjob/master-workers", "ddp")
    missing = kf(apiserver.kubeconfig, "apply", "pytorchjob", name, "-n", namespace, "--target", "trainjob",
                 "--dry-run=none")
    assert missing.code == exitcodes.NOT_FOUND and "ClusterTrainingRuntime 'torch-distributed'" in missing.stderr
    assert missing.stdout == ""
    assert not custom.list_namespaced_custom_object(*TJ, namespace, "trainjobs")["items"]  # nothing half-made
    runtime = yaml.safe_load(upstream.file("trainer", "manifests/base/runtimes/torch_distributed.yaml").read_text())
    try:
        custom.create_cluster_custom_object(*TJ, "clustertrainingruntimes", runtime)
    except Exception as e:  # noqa: BLE001 - created by an earlier run of this module's server
        assert "AlreadyExists" in str(e)
    res = kf(apiserver.kubeconfig, "apply", "pytorchjob", name, "-n", namespace, "--target", "trainjob", "--dry-run=none")
    assert res.code == 0, res
    assert res.stdout.splitlines() == [f"trainjob.trainer.kubeflow.org/{name} created"]
    tj = custom.get_namespaced_custom_object(*TJ, namespace, "trainjobs", name)
    assert tj["spec"]["runtimeRef"]["name"] == "torch-distributed" and tj["spec"]["trainer"]["numNodes"] == 4


def test_alike_jobs_share_the_generated_runtime_and_companions_belong_to_the_trainjob(apiserver, trainer_crds, namespace):
    custom = trainer_crds
    first = _job(custom, namespace, "pytorchjob/sidecar", "shipper-a")
    second = _job(custom, namespace, "pytorchjob/sidecar", "shipper-b")
    # no shared runtime takes a job with a sidecar: refused by default, nothing created
    refused = kf(apiserver.kubeconfig, "apply", "pytorchjob", first, "-n", namespace, "--target", "trainjob", "--dry-run=none")
    assert refused.code == 4 and "[trainjob-no-shared-runtime]" in refused.stderr and refused.stdout == "", refused
    assert not custom.list_namespaced_custom_object(*TJ, namespace, "trainingruntimes")["items"]
    per_job = ("--target", "trainjob", "--trainer-runtime", "per-job", "--dry-run=none")
    a = kf(apiserver.kubeconfig, "apply", "pytorchjob", first, "-n", namespace, *per_job)
    assert a.code == 0, a
    lines = a.stdout.splitlines()
    assert lines[0].startswith("trainingruntime.trainer.kubeflow.org/kf2jobset-torch-") and lines[0].endswith(" created")
    assert lines[1] == f"trainjob.trainer.kubeflow.org/{first} created"
    b = kf(apiserver.kubeconfig, "apply", "pytorchjob", second, "-n", namespace, *per_job)
    assert b.code == 0, b
    assert b.stdout.splitlines() == [f"trainjob.trainer.kubeflow.org/{second} created"]
    assert "exists already: kept" in b.stderr
    runtimes = custom.list_namespaced_custom_object(*TJ, namespace, "trainingruntimes")["items"]
    assert len(runtimes) == 1
    refs = {custom.get_namespaced_custom_object(*TJ, namespace, "trainjobs", n)["spec"]["runtimeRef"]["name"]
            for n in (first, second)}
    assert refs == {runtimes[0]["metadata"]["name"]}


def test_server_dry_run_creates_nothing(apiserver, trainer_crds, namespace):
    custom = trainer_crds
    name = _job(custom, namespace, "pytorchjob/sidecar", "dry")
    res = kf(apiserver.kubeconfig, "apply", "pytorchjob", name, "-n", namespace, "--target", "trainjob",
             "--trainer-runtime", "per-job")
    assert res.code == 0, res
    assert all(line.endswith("created (server dry run)") for line in res.stdout.splitlines())
    assert not custom.list_namespaced_custom_object(*TJ, namespace, "trainjobs")["items"]
    assert not custom.list_namespaced_custom_object(*TJ, namespace, "trainingruntimes")["items"]


def test_a_gang_trainjob_needs_its_runtime_in_the_gang_flavour(apiserver, trainer_crds, namespace):
    """A TFJob whose pods name YuniKorn (TJ046): refused while the installed runtime is the plain bundle's, naming
    the flavour's command, nothing half-made; created once the platform installed the yunikorn flavour."""
    from kf2jobset.targets.bundle_catalog import catalog
    from kf2jobset.targets.bundle_gang import GANG_ANNOTATION, Gang

    custom = trainer_crds
    body = copy.deepcopy(yaml.safe_load((FIXTURES / "targets/trainjob/gang-yunikorn-tfjob/input.yaml").read_text()))
    body["metadata"] = {"name": "mnist-yk"}
    custom.create_namespaced_custom_object(GROUP, "v1", namespace, "tfjobs", body)
    runtime = next(r for r in catalog() if r.name == "kf2jobset-tensorflow-onfailure")
    ctr = (*TJ, "clustertrainingruntimes")
    for obj in (runtime.object(), runtime.object(Gang("yunikorn", "yunikorn"))):
        try:
            custom.delete_cluster_custom_object(*ctr, runtime.name)
        except Exception:  # noqa: BLE001 - absent
            pass
        custom.create_cluster_custom_object(*ctr, obj)
        res = kf(apiserver.kubeconfig, "apply", "tfjob", "mnist-yk", "-n", namespace, "--target", "trainjob", "--dry-run=none")
        if obj["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"].get("schedulerName"):
            break
        assert res.code == exitcodes.NOT_FOUND, res
        assert "not in the yunikorn flavour" in res.stderr and "kf2jobset runtimes --gang yunikorn" in res.stderr
        assert not custom.list_namespaced_custom_object(*TJ, namespace, "trainjobs")["items"]  # nothing half-made
    custom.delete_cluster_custom_object(*ctr, runtime.name)
    assert res.code == 0, res
    tj = custom.get_namespaced_custom_object(*TJ, namespace, "trainjobs", "mnist-yk")
    assert tj["metadata"]["annotations"][GANG_ANNOTATION] == "yunikorn"
    assert tj["spec"]["runtimeRef"]["name"] == runtime.name
