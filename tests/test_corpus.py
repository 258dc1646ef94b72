"""Every Kubeflow job in the upstream corpus (tests/upstream.py) converts, validates against our
schema, the webhook rules and the REAL JobSet CRD schema, and keeps the operator's env contract."""
from __future__ import annotations

import json

import pytest

from kf2jobset.core.convert import convert_job
from kf2jobset.core.document_routing import convert_document
from kf2jobset.options import ConvertOptions
from kf2jobset.runtime.compare import compare_env
from kf2jobset.runtime.jobset_view import jobset_world
from kf2jobset.runtime.operator_view import operator_world
from kf2jobset.k8s.validate import check_jobset

from . import upstream
from .fixture_cases import CORPUS_OPTIONS, NEVER_RAN, all_jobs


@pytest.fixture(scope="module")
def corpus_jobs():
    upstream.need(*upstream.CORPUS)
    jobs = all_jobs()
    assert len(jobs) >= 45, f"expected the whole corpus, found {len(jobs)} jobs"
    return jobs


def test_every_corpus_job_converts_and_validates(corpus_jobs, crd_validator):
    converted = refused = 0
    for where, doc in corpus_jobs:
        result = convert_document(doc, CORPUS_OPTIONS)
        if str(where) in NEVER_RAN:
            assert result.errors and all(f"[{NEVER_RAN[str(where)]}]" in str(e) and "inherited" in str(e)
                                         for e in result.errors), f"{where}: {[str(e) for e in result.errors]}"
            refused += 1
            continue
        assert not result.errors, f"{where}: {[str(e) for e in result.errors]}"
        assert result.conversions, f"{where}: nothing converted"
        for conv in result.conversions:
            converted += 1
            jobset = json.loads(json.dumps(conv.jobset))
            if not jobset["metadata"].get("name"):
                jobset["metadata"]["name"] = "katib-trial-x1"
            assert check_jobset(jobset) == [], where
            errors = sorted(crd_validator.iter_errors(jobset), key=str)
            assert not errors, f"{where}: real CRD rejects: {errors[0].message} at {list(errors[0].absolute_path)}"
    assert converted == len(corpus_jobs) - refused and refused == len(NEVER_RAN)


def test_corpus_env_contract_holds_including_after_rename(corpus_jobs):
    for where, doc in corpus_jobs:
        for conv in convert_document(doc, CORPUS_OPTIONS).conversions:
            covered = {e for n in conv.notes for e in n.explains}
            for name in (None, "renamed-run"):
                diffs, _ = compare_env(operator_world(conv.job, name=name), jobset_world(conv.jobset, name=name, roles=conv.plan.pod_roles))
                bad = [d for d in diffs if ("env", d.var) not in covered]
                assert bad == [], f"{where} (name={name}): {bad}"


def test_mpi_v1_needs_explicit_ssh_decision(corpus_jobs):
    from kf2jobset.errors import UnsupportedError

    v1_mpi = [doc for _, doc in corpus_jobs if doc.get("kind") == "MPIJob" and doc["apiVersion"] == "kubeflow.org/v1"]
    assert v1_mpi
    with pytest.raises(UnsupportedError, match="--accept-mpi-ssh"):
        convert_job(v1_mpi[0], ConvertOptions())
