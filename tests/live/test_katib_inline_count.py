"""What an Experiment's inline trialSpec makes of a replica count that is a trial parameter, held against the
real API server: Katib writes the trial object out as JSON, then fills in `${trialParameters.x}`, so the
count reaches the API server as a JSON string ("4"). kf2jobset refuses such a trialSpec and says the refusal
is inherited (fixtures/katib/sized-inline-trial); that claim holds only if the PyTorchJob CRD refuses the
string, which this test checks on the Training Operator's own CRD."""
from __future__ import annotations

import json

import pytest
import yaml

from .. import upstream
from ..conftest import FIXTURES


@pytest.fixture(scope="module")
def custom(apiserver):
    upstream.need("training-operator")
    from kubernetes import client

    apiserver.install_crds([str(p) for p in upstream.training_operator_crds()])
    with apiserver.api_client() as api_client:
        yield client.CustomObjectsApi(api_client)


def _trial(count):
    """The fixture's trialSpec as Katib creates it for a trial whose numWorkers is 4."""
    case = FIXTURES / "katib" / "sized-inline-trial"
    text = (case / "input.yaml").read_text().replace("${trialParameters.numWorkers}", "PLACEHOLDER")
    experiment = yaml.safe_load(text)
    trial = experiment["spec"]["trialTemplate"]["trialSpec"]
    trial["metadata"] = {"name": "trial-a"}
    trial["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] = count
    return trial


def test_a_count_katib_fills_in_as_a_string_is_refused_by_the_crd(custom):
    from kubernetes.client.rest import ApiException

    expected = (FIXTURES / "katib" / "sized-inline-trial" / "expected-error.txt").read_text()
    assert "inherited" in expected  # the claim this test holds
    with pytest.raises(ApiException) as ei:
        custom.create_namespaced_custom_object("kubeflow.org", "v1", "default", "pytorchjobs", _trial("4"),
                                               dry_run="All")
    body = ei.value.body.decode() if isinstance(ei.value.body, bytes) else str(ei.value.body)
    assert ei.value.status == 422, body
    message = json.loads(body)["message"]
    assert "replicas" in message and "integer" in message, message
    # the same trial with the count as a number (a ConfigMap template, filled in as text) is accepted
    created = custom.create_namespaced_custom_object("kubeflow.org", "v1", "default", "pytorchjobs", _trial(4),
                                                     dry_run="All")
    assert created["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 4
