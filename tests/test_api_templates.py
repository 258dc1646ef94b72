"""Placeholders in a job handed over as data: envsubst's `${VAR}` as in any file, and with
placeholders='argo' Argo's `{{...}}`, converted exactly as the same manifest inside an Argo resource step."""
from __future__ import annotations

import copy

import pytest
import yaml

import kf2jobset

from .conftest import REPO

WORKFLOW = REPO / "fixtures" / "argo" / "workflow-template" / "input.yaml"


def _manifest(text: str) -> dict:
    return yaml.safe_load(yaml.safe_load(text)["spec"]["templates"][0]["resource"]["manifest"])


def test_an_argo_manifest_as_data_converts_as_the_step_does():
    text = WORKFLOW.read_text()
    job = _manifest(text)
    step = _manifest(kf2jobset.convert_yaml(text))
    result = kf2jobset.convert_job(job, placeholders="argo")
    assert result.primary == step
    assert result.primary["metadata"]["name"] == "{{workflow.name}}-bert"
    assert [n.code for n in result.notes if n.code.startswith("TPL")] == ["TPL002"]
    assert "Argo placeholder" in next(n.message for n in result.notes if n.code == "TPL002")


def test_without_the_switch_the_refusal_names_it():
    job = _manifest(WORKFLOW.read_text())
    with pytest.raises(kf2jobset.InvalidJobError) as err:
        kf2jobset.convert_job(job)
    assert all("placeholders='argo'" in (p.hint or "") for p in err.value.problems if "{{" in p.message)
    assert any("{{" in p.message for p in err.value.problems)


def test_where_the_value_is_needed_the_argo_placeholder_is_named():
    job = _manifest(WORKFLOW.read_text())
    job["spec"]["pytorchReplicaSpecs"]["Master"]["restartPolicy"] = "{{inputs.parameters.policy}}"
    with pytest.raises(kf2jobset.InvalidJobError) as err:
        kf2jobset.convert_job(job, placeholders="argo")
    (problem,) = err.value.problems
    assert "{{inputs.parameters.policy}}" in problem.message and "KF2JOBSET_ARGO" not in str(err.value)
    assert problem.path == ("spec", "pytorchReplicaSpecs", "Master", "restartPolicy")


def test_envsubst_variables_beside_argos_are_still_named_for_envsubst():
    job = _manifest(WORKFLOW.read_text())
    before = copy.deepcopy(job)
    job["metadata"]["labels"] = {"team": "${TEAM}"}
    result = kf2jobset.convert_job(job, placeholders="argo")
    tpl001 = next(n for n in result.notes if n.code == "TPL001")
    assert "TEAM" in tpl001.message and "workflow.name" not in tpl001.message
    assert result.primary["metadata"]["labels"]["team"] == "${TEAM}"
    assert _manifest(WORKFLOW.read_text()) == before


def test_the_switch_is_checked():
    with pytest.raises(kf2jobset.UsageError, match="placeholders='jinja'"):
        kf2jobset.convert_job(_manifest(WORKFLOW.read_text()), placeholders="jinja")
