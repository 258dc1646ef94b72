"""Every golden JobSet (fixtures/*/*/expected.yaml) against the real API server: server-side dry run
with strict field validation on the real JobSet CRD. And the server's own list-map verdict on a
repeated env name, held against what kf2jobset's validator says for the same object.
"""
from __future__ import annotations

import copy
import json

import pytest
import yaml

from .. import upstream

pytestmark = pytest.mark.apiserver

REPO_FIXTURES = __import__("pathlib").Path(__file__).resolve().parents[2] / "fixtures"
CASES = sorted(p.parent for p in REPO_FIXTURES.glob("*/*/expected.yaml"))


@pytest.fixture(scope="module")
def jobset_crd(apiserver):
    return apiserver.install_crds([str(upstream.jobset_crd())])


@pytest.fixture(scope="module")
def custom(apiserver, jobset_crd):
    from kubernetes import client

    with apiserver.api_client() as api_client:
        yield client.CustomObjectsApi(api_client)


def _dry_run(custom, body: dict):
    return custom.create_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", "default", "jobsets", body,
                                                  dry_run="All", field_validation="Strict")


def _jobsets(case) -> list[dict]:
    out = []
    from ..conftest import held_jobsets
    from ..templates import case_values, fill, render

    # an envsubst template (fixtures/envsubst) is sent as it will be applied: substituted; a Go text/template or
    # Jinja one (a `render` file) rendered
    docs = []
    text = fill((case / "expected.yaml").read_text(), case_values(case))
    for doc in yaml.safe_load_all(render(text, case) if (case / "render").exists() else text):
        if isinstance(doc, dict) and doc.get("kind") == "AppWrapper":  # fixtures/appwrapper: the wrapped JobSets
            docs += [c.get("template") for c in doc["spec"]["components"]]
        else:
            docs.append(doc)
    for doc in docs:
        if isinstance(doc, dict) and doc.get("kind") == "Experiment" and "trialSpec" in doc["spec"]["trialTemplate"]:
            doc = doc["spec"]["trialTemplate"]["trialSpec"]
        held = held_jobsets(doc) if isinstance(doc, dict) and doc.get("kind") != "JobSet" else []
        for js in held or [doc]:  # JobSets written as text into Argo manifests and ConfigMap values too
            if not (isinstance(js, dict) and js.get("kind") == "JobSet"):
                continue
            js = copy.deepcopy(js)
            js["metadata"].pop("generateName", None)
            js["metadata"]["name"] = js["metadata"].get("name") or "trial-abcdefgh"
            js["metadata"].pop("namespace", None)
            out.append(js)
    return out


def test_every_golden_jobset_is_accepted_by_the_real_api_server(custom):
    assert CASES, "no golden fixtures found"
    refused = []
    count = 0
    for case in CASES:
        for body in _jobsets(case):
            count += 1
            try:
                _dry_run(custom, body)
            except Exception as e:  # kubernetes ApiException: keep the server's words
                refused.append(f"{case.relative_to(REPO_FIXTURES)}: {getattr(e, 'body', e)}")
    assert not refused, "\n".join(refused)
    assert count >= len(CASES)  # every case with an expected JobSet was sent


def test_a_repeated_env_name_is_refused_by_the_server_and_by_our_validator(custom):
    from kubernetes.client.exceptions import ApiException

    from kf2jobset.k8s.validate import check_jobset

    body = _jobsets(REPO_FIXTURES / "pytorchjob" / "env-override")[0]
    env = body["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["env"]
    env.append({"name": "MASTER_PORT", "value": "1"})
    with pytest.raises(ApiException) as ei:
        _dry_run(custom, body)
    message = json.loads(ei.value.body)["message"]
    where = "spec.replicatedJobs[0].template.spec.template.spec.containers[0].env"
    assert f"{where}[{len(env) - 1}]: Duplicate value" in message and '"name":"MASTER_PORT"' in message, message
    from kf2jobset.errors import format_path

    ours = [f"{format_path(p.location.path, empty='')}: {p.message}" for p in check_jobset(body)]
    assert ours == [f'{where}[{len(env) - 1}]: Duplicate value: {{"name":"MASTER_PORT"}}'], ours
