"""Every Kubeflow job in the upstream corpus (tests/upstream.py) converts, validates against our
schema, the webhook rules and the REAL JobSet CRD schema, and keeps the operator's env contract."""
from __future__ import annotations

import json

import pytest

from kf2jobset.convert import convert_document, convert_job, is_job
from kf2jobset.options import ConvertOptions
from kf2jobset.runtime.compare import compare_env
from kf2jobset.runtime.jobset_view import jobset_world
from kf2jobset.runtime.operator_view import operator_world
from kf2jobset.validate import check_jobset
from kf2jobset.yamlio import parse_documents

from . import upstream

# MPIJob v1 needs the explicit SSH decision; Katib trials have no name, so MPI needs a named Secret.
OPTIONS = ConvertOptions(accept_mpi_ssh=True, katib=True, ssh_secret="mpi-ssh")


def corpus_files():
    """(name, path) of the corpus files whose modules are in the Go module cache."""
    return upstream.corpus()


def embedded_string_jobs(doc):
    """Katib keeps some trial templates as YAML strings (ConfigMap data, UI fixtures)."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
        elif isinstance(node, str) and "kubeflow.org/" in node and "ReplicaSpecs" in node:
            for d in parse_documents(node):
                if is_job(d.data):
                    found.append(d.data)

    walk(doc)
    return found


def all_jobs():
    out = []
    for name, path in corpus_files():
        for doc in parse_documents(path.read_text()):
            assert doc.error is None, f"{name}: {doc.error}"
            if is_job(doc.data) or (isinstance(doc.data, dict) and doc.data.get("kind") == "Experiment"):
                out.append((name, doc.data))
            for job in embedded_string_jobs(doc.data):
                out.append((name, job))
    return out


@pytest.fixture(scope="module")
def corpus_jobs():
    upstream.need(*upstream.CORPUS)
    jobs = all_jobs()
    assert len(jobs) >= 45, f"expected the whole corpus, found {len(jobs)} jobs"
    return jobs


# Corpus jobs no v1 release ran, refused as inherited (rule id): training-operator v1.5.0's XGBoost
# examples kept the old operator's container name `xgboostjob` under kubeflow.org/v1, where every pod's
# MASTER_PORT is read from a container named `xgboost` (docs/ground-truth.md, "No container of the
# default name").
NEVER_RAN = {f"training-operator-v1.5.0/examples/xgboost/xgboost-dist/xgboostjob_v1alpha1_iris_{case}.yaml": "default-container"
             for case in ("predict", "predict_local", "train", "train_local")}


def test_every_corpus_job_converts_and_validates(corpus_jobs, crd_validator):
    converted = refused = 0
    for where, doc in corpus_jobs:
        result = convert_document(doc, OPTIONS)
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
        for conv in convert_document(doc, OPTIONS).conversions:
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
