"""`--target trainjob` output against the real API server with the real Trainer v2.3.0 CRDs
(github.com/kubeflow/trainer/v2@v2.3.0 manifests/base/crds): server-side dry run, strict field validation, the CRDs'
own CEL rules (TrainJob name, runtimeRef, managedBy, the runtime's JobSet template). The Trainer
controller and its webhooks hold the same output in tests/e2e/test_trainjob_target.py."""
from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner

from kf2jobset.cli.main import main

from ..templates import case_values, fill
from .. import upstream

pytestmark = pytest.mark.apiserver

REPO_FIXTURES = __import__("pathlib").Path(__file__).resolve().parents[2] / "fixtures"
CASES = (sorted(p.parent for p in REPO_FIXTURES.glob("*/*/input.yaml"))
         + sorted(p.parent for p in (REPO_FIXTURES / "targets").glob("*/*/input.yaml")))
PLURAL = {"TrainJob": "trainjobs", "TrainingRuntime": "trainingruntimes"}


@pytest.fixture(scope="module")
def custom(apiserver):
    apiserver.install_crds([str(p) for p in upstream.trainer_crds()])
    from kubernetes import client

    with apiserver.api_client() as api_client:
        yield client.CustomObjectsApi(api_client)


def _outputs(case) -> list[dict]:
    args = []
    if (case / "args").exists():
        args = [a for a in (case / "args").read_text().splitlines() if a.strip() and not a.startswith("#")]
    if "--katib" in args:
        return []
    text = fill((case / "input.yaml").read_text(), case_values(case))
    result = CliRunner().invoke(main, ["convert", "-", *args, "--target", "trainjob"], input=text, catch_exceptions=False)
    if "[trainjob-no-shared-runtime]" in result.stderr:  # refused by default: the per-job runtime on request
        result = CliRunner().invoke(main, ["convert", "-", *args, "--target", "trainjob", "--trainer-runtime", "per-job"],
                                    input=text, catch_exceptions=False)
    if result.exit_code != 0:
        return []
    return [d for d in yaml.safe_load_all(result.stdout) if isinstance(d, dict) and d.get("kind") in PLURAL]


def test_every_fixture_trainjob_and_runtime_is_accepted_by_the_real_api_server(custom):
    refused, sent = [], 0
    for case in CASES:
        for body in _outputs(case):
            body["metadata"].pop("namespace", None)
            if not body["metadata"].get("name"):
                body["metadata"].pop("generateName", None)
                body["metadata"]["name"] = "trial-abcdefgh"
            sent += 1
            try:
                custom.create_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", "default", PLURAL[body["kind"]],
                                                       body, dry_run="All", field_validation="Strict")
            except Exception as e:  # kubernetes ApiException: keep the server's words
                refused.append(f"{case.relative_to(REPO_FIXTURES)} {body['kind']}: {getattr(e, 'body', e)}")
    assert not refused, "\n".join(refused)
    assert sent > 90  # a TrainJob for every fixture, a runtime beside those on none of the shared ones


FLAVOURS = [[], ["--gang", "coscheduling"], ["--gang", "coscheduling", "--gang-scheduler-name", "scheduler-plugins-scheduler"],
            ["--gang", "volcano"], ["--gang", "yunikorn"]]


@pytest.mark.parametrize("flavour", FLAVOURS, ids=lambda f: "-".join(f[1::2]) or "plain")
def test_every_runtime_of_kf2jobsets_bundle_is_accepted_by_the_real_api_server(custom, flavour):
    """`kf2jobset runtimes` and each gang flavour of it (`--gang`): every ClusterTrainingRuntime as the platform
    applies it (strict fields, the CRD's CEL rules on the JobSet template, the mlPolicy and the podGroupPolicy),
    stored with the podGroupPolicy and schedulerName the flavour wrote."""
    out = CliRunner().invoke(main, ["runtimes", *flavour], catch_exceptions=False)
    bundle = [d for d in yaml.safe_load_all(out.stdout) if d]
    assert len(bundle) >= 5
    refused = []
    for body in bundle:
        try:
            stored = custom.create_cluster_custom_object("trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes",
                                                         body, dry_run="All", field_validation="Strict")
        except Exception as e:  # noqa: BLE001 - the server's words
            refused.append(f"{body['metadata']['name']}: {getattr(e, 'body', e)}")
            continue
        if stored["spec"].get("podGroupPolicy") != body["spec"].get("podGroupPolicy"):
            refused.append(f"{body['metadata']['name']}: podGroupPolicy stored as {stored['spec'].get('podGroupPolicy')}")
        names = [rj["template"]["spec"]["template"]["spec"].get("schedulerName")
                 for rj in stored["spec"]["template"]["spec"]["replicatedJobs"]]
        if names != [rj["template"]["spec"]["template"]["spec"].get("schedulerName")
                     for rj in body["spec"]["template"]["spec"]["replicatedJobs"]]:
            refused.append(f"{body['metadata']['name']}: schedulerName stored as {names}")
    assert not refused, "\n".join(refused)


def test_the_server_refuses_what_the_crd_refuses(custom):
    """The check bites: a TrainJob name that is not an RFC 1035 label is refused by the CRD's CEL rule."""
    from kubernetes.client.exceptions import ApiException

    body = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "1job"},
            "spec": {"runtimeRef": {"name": "torch-distributed"}}}
    with pytest.raises(ApiException) as info:
        custom.create_namespaced_custom_object("trainer.kubeflow.org", "v1alpha1", "default", "trainjobs", body,
                                               dry_run="All", field_validation="Strict")
    assert info.value.status == 422


IMAGES = ["registry.example.com/team/train", "registry.example.com/team/train:latest", "registry.example.com/team/train:1.4",
          "localhost:5000/train", "localhost:5000/train:2", "train@sha256:" + "ab" * 32,
          "train:latest@sha256:" + "ab" * 32, "gcr.io/p/train:v1@sha256:" + "ab" * 32]


def test_the_image_pull_policy_a_node_gets_is_the_one_kf2jobset_names(apiserver):
    """TJ018/TJ019 say which imagePullPolicy the node gets when a TrainJob cannot carry one: the real API
    server's defaulting of a container without it, for every form of image reference."""
    from kubernetes import client

    from kf2jobset.k8s.images import default_pull_policy

    with apiserver.api_client() as api_client:
        core = client.CoreV1Api(api_client)
        got = {}
        for image in IMAGES:
            pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pull"},
                   "spec": {"containers": [{"name": "c", "image": image}]}}
            created = core.create_namespaced_pod("default", pod, dry_run="All")
            got[image] = created.spec.containers[0].image_pull_policy
    assert got == {image: default_pull_policy(image) for image in IMAGES}
    assert set(got.values()) == {"Always", "IfNotPresent"}
