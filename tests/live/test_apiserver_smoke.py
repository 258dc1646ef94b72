"""Smoke tests for the live test API server (tests/live/conftest.py, tools/testapiserver).

They pin down what the plugin's end-to-end tests rely on: CRDs install and become Established,
CustomObjectsApi create with dryRun=All / fieldValidation=Strict, CEL rules, list pagination,
patch, ConfigMaps/Secrets, RBAC Forbidden for a restricted user, kubectl, and swapping the
v1 / v2beta1 MPIJob CRDs (same name mpijobs.kubeflow.org).
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from .. import upstream
from ..jobs import pytorchjob

pytestmark = pytest.mark.apiserver

PARALLEL_JOBS = Path(__file__).resolve().parents[1] / "jobsets" / "parallel.yaml"

JS_GROUP, JS_VERSION, JS_PLURAL = "jobset.x-k8s.io", "v1alpha2", "jobsets"
KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"


def _need_crds() -> None:
    upstream.need("jobset", "training-operator", "mpi-operator")


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text())


@pytest.fixture(scope="module")
def crds(apiserver) -> list[str]:
    _need_crds()
    paths = [upstream.jobset_crd(), *upstream.training_operator_crds()]
    return apiserver.install_crds([str(p) for p in paths])


@pytest.fixture
def custom(apiserver):
    from kubernetes import client

    with apiserver.api_client() as api_client:
        yield client.CustomObjectsApi(api_client)


def _jobset(name: str) -> dict:
    body = _load(PARALLEL_JOBS)
    body["metadata"] = {"name": name}
    return body


def _api_error(excinfo) -> tuple[int, str]:
    """(HTTP status, Status.message) of an ApiException."""
    e = excinfo.value
    body = e.body.decode() if isinstance(e.body, bytes) else str(e.body)
    try:
        return e.status, json.loads(body).get("message", body)
    except ValueError:
        return e.status, body


def _refused_under_strict(custom, namespace: str, body: dict) -> tuple[int, str]:
    """(HTTP status, message) of the API server refusing a dry-run create of ``body`` under Strict field validation."""
    from kubernetes.client.rest import ApiException

    with pytest.raises(ApiException) as ei:
        custom.create_namespaced_custom_object(
            JS_GROUP, JS_VERSION, namespace, JS_PLURAL, body, dry_run="All", field_validation="Strict"
        )
    return _api_error(ei)


# ---------------------------------------------------------------------------------------------


def test_server_answers(apiserver):
    from kubernetes import client

    with apiserver.api_client() as api_client:
        info = client.VersionApi(api_client).get_code()
        groups = {g.name for g in client.ApisApi(api_client).get_api_versions().groups}
    assert info.git_version.startswith("v1.")
    assert {"apiextensions.k8s.io", "rbac.authorization.k8s.io"} <= groups
    assert apiserver.server.startswith("https://127.0.0.1:")
    assert Path(apiserver.kubeconfig).is_file()


def test_crds_installed_and_established(apiserver, crds):
    from kubernetes import client

    expected = {
        "jobsets.jobset.x-k8s.io",
        "tfjobs.kubeflow.org",
        "pytorchjobs.kubeflow.org",
        "mpijobs.kubeflow.org",
        "xgboostjobs.kubeflow.org",
        "paddlejobs.kubeflow.org",
        "jaxjobs.kubeflow.org",
    }
    assert expected <= set(crds)
    with apiserver.api_client() as api_client:
        ext = client.ApiextensionsV1Api(api_client)
        for name in expected:
            conds = {c.type: c.status for c in ext.read_custom_resource_definition(name).status.conditions}
            assert conds.get("Established") == "True", (name, conds)
            assert conds.get("NamesAccepted") == "True", (name, conds)


def test_jobset_example_accepted_dry_run_strict(crds, custom, namespace):
    out = custom.create_namespaced_custom_object(
        JS_GROUP, JS_VERSION, namespace, JS_PLURAL, _jobset("paralleljobs"),
        dry_run="All", field_validation="Strict",
    )  # fmt: skip
    assert out["metadata"]["uid"]
    assert out["metadata"]["namespace"] == namespace
    # schema defaulting ran
    assert out["spec"]["replicatedJobs"][0]["replicas"] == 1
    # dryRun=All did not persist anything
    from kubernetes.client.rest import ApiException

    with pytest.raises(ApiException) as ei:
        custom.get_namespaced_custom_object(JS_GROUP, JS_VERSION, namespace, JS_PLURAL, "paralleljobs")
    assert ei.value.status == 404


def test_unknown_field_rejected_under_strict(crds, custom, namespace):
    body = _jobset("bogus")
    body["spec"]["bogusField"] = True
    status, text = _refused_under_strict(custom, namespace, body)
    assert status == 400, text
    assert 'unknown field "spec.bogusField"' in text
    # the same object is accepted (field pruned) when not Strict
    out = custom.create_namespaced_custom_object(
        JS_GROUP, JS_VERSION, namespace, JS_PLURAL, body, dry_run="All", field_validation="Ignore"
    )
    assert "bogusField" not in out["spec"]


def test_cel_rule_startup_policy_vs_depends_on_rejected(crds, custom, namespace):
    body = _jobset("cel")
    body["spec"]["startupPolicy"] = {"startupPolicyOrder": "InOrder"}
    body["spec"]["replicatedJobs"][0]["dependsOn"] = [{"name": "driver", "status": "Ready"}]
    status, text = _refused_under_strict(custom, namespace, body)
    assert status == 422, text
    assert "StartupPolicy and DependsOn APIs are mutually exclusive" in text


def test_pytorchjob_v1_accepted(crds, custom, namespace):
    body = pytorchjob("pt", workers=0, image="busybox", restart_policy=None)
    out = custom.create_namespaced_custom_object(
        "kubeflow.org", "v1", namespace, "pytorchjobs", body, field_validation="Strict"
    )
    assert out["metadata"]["uid"]
    got = custom.get_namespaced_custom_object("kubeflow.org", "v1", namespace, "pytorchjobs", "pt")
    assert got["spec"]["pytorchReplicaSpecs"]["Master"]["replicas"] == 1


def test_list_pagination_and_patch(crds, custom, namespace):
    for i in range(3):
        custom.create_namespaced_custom_object(JS_GROUP, JS_VERSION, namespace, JS_PLURAL, _jobset(f"js-{i}"))
    seen, token, pages = [], None, 0
    while True:
        kw = {"limit": 1} if token is None else {"limit": 1, "_continue": token}
        page = custom.list_namespaced_custom_object(JS_GROUP, JS_VERSION, namespace, JS_PLURAL, **kw)
        pages += 1
        seen += [o["metadata"]["name"] for o in page["items"]]
        token = page["metadata"].get("continue")
        if not token:
            break
    assert seen == ["js-0", "js-1", "js-2"]
    assert pages == 3
    cluster = custom.list_cluster_custom_object(JS_GROUP, JS_VERSION, JS_PLURAL, limit=500)
    assert {"js-0", "js-1", "js-2"} <= {o["metadata"]["name"] for o in cluster["items"]}

    patched = custom.patch_namespaced_custom_object(
        JS_GROUP, JS_VERSION, namespace, JS_PLURAL, "js-1", {"metadata": {"labels": {"migrated": "yes"}}}
    )
    assert patched["metadata"]["labels"] == {"migrated": "yes"}


def test_configmaps_and_secrets(apiserver, namespace):
    from kubernetes import client

    with apiserver.api_client() as api_client:
        core = client.CoreV1Api(api_client)
        core.create_namespaced_config_map(
            namespace,
            client.V1ConfigMap(metadata=client.V1ObjectMeta(name="companion"), data={"hostfile": "a slots=1\n"}),
        )
        core.create_namespaced_secret(
            namespace, client.V1Secret(metadata=client.V1ObjectMeta(name="s"), string_data={"k": "v"})
        )
        assert core.read_namespaced_config_map("companion", namespace).data == {"hostfile": "a slots=1\n"}
        assert core.read_namespaced_secret("s", namespace).data == {"k": "dg=="}  # base64("v")


def test_rbac_restricted_user_gets_forbidden_until_granted(apiserver, crds, namespace):
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    kc = apiserver.kubeconfig_for_user("alice", ["kf2jobset-devs"])
    with apiserver.api_client(kc) as alice_client:
        alice = client.CustomObjectsApi(alice_client)
        with pytest.raises(ApiException) as ei:
            alice.list_namespaced_custom_object(JS_GROUP, JS_VERSION, namespace, JS_PLURAL)
        status, text = _api_error(ei)
        assert status == 403, text
        assert json.loads(ei.value.body)["reason"] == "Forbidden"
        assert 'User "alice" cannot list resource "jobsets"' in text, text

        with apiserver.api_client() as admin_client:
            rbac = client.RbacAuthorizationV1Api(admin_client)
            rbac.create_namespaced_role(
                namespace,
                {
                    "metadata": {"name": "jobset-reader"},
                    "rules": [{"apiGroups": [JS_GROUP], "resources": [JS_PLURAL], "verbs": ["get", "list"]}],
                },
            )
            rbac.create_namespaced_role_binding(
                namespace,
                {
                    "metadata": {"name": "devs-read-jobsets"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "jobset-reader"},
                    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "kf2jobset-devs"}],
                },
            )
        deadline = time.monotonic() + 10  # the RBAC authorizer reads through informers
        while True:
            try:
                out = alice.list_namespaced_custom_object(JS_GROUP, JS_VERSION, namespace, JS_PLURAL)
                break
            except ApiException as e:
                if e.status != 403 or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        assert out["items"] == []
        # still no write access
        with pytest.raises(ApiException) as ei:
            alice.create_namespaced_custom_object(
                JS_GROUP, JS_VERSION, namespace, JS_PLURAL, _jobset("x"), dry_run="All"
            )
        assert ei.value.status == 403


def test_kubectl_get_jobsets(apiserver, crds, custom, namespace):
    if not Path(KUBECTL).is_file():
        pytest.skip("kubectl not installed")
    custom.create_namespaced_custom_object(JS_GROUP, JS_VERSION, namespace, JS_PLURAL, _jobset("via-kubectl"))
    proc = subprocess.run(
        [KUBECTL, "--kubeconfig", apiserver.kubeconfig, "get", "jobsets", "-A", "-o", "json"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    items = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in json.loads(proc.stdout)["items"]}
    assert (namespace, "via-kubectl") in items


def test_swap_mpijob_crd_v1_and_v2beta1(apiserver, crds, custom, namespace):
    v1_path = upstream.mpi_v1_crd()
    try:
        apiserver.remove_crd("mpijobs.kubeflow.org")
        apiserver.install_crds([str(upstream.mpi_v2_crd())])
        body = {
            "apiVersion": "kubeflow.org/v2beta1",
            "kind": "MPIJob",
            "metadata": {"name": "mpi"},
            "spec": {
                "mpiReplicaSpecs": {
                    "Launcher": {
                        "replicas": 1,
                        "template": {"spec": {"containers": [{"name": "l", "image": "busybox"}]}},
                    }
                }
            },
        }
        out = custom.create_namespaced_custom_object(
            "kubeflow.org", "v2beta1", namespace, "mpijobs", copy.deepcopy(body), dry_run="All"
        )
        assert out["apiVersion"] == "kubeflow.org/v2beta1"
    finally:
        apiserver.remove_crd("mpijobs.kubeflow.org")
        apiserver.install_crds([str(v1_path)])
    from kubernetes.client.rest import ApiException

    with pytest.raises(ApiException) as ei:
        custom.list_namespaced_custom_object("kubeflow.org", "v2beta1", namespace, "mpijobs")
    assert ei.value.status == 404
    assert custom.list_namespaced_custom_object("kubeflow.org", "v1", namespace, "mpijobs")["items"] == []
