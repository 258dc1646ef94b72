"""Tests for schemas/*.schema.json and kf2jobset.k8s.schemas.

The upstream corpus and the real JobSet CRD come from the Go modules of tools/upstream-modules.txt
(tests/upstream.py); the JobSets checked against our schema are the tests' own (tests/jobsets).
"""
from __future__ import annotations

import copy
import functools
import importlib.util
import io
import json
import statistics
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from kf2jobset.data_dirs import data_dir
from kf2jobset.k8s.schemas import SchemaIssue, schema_name_for, validate

from . import upstream
from .jobs import leader_workers_jobset, mnist_tfjob

REPO = Path(__file__).resolve().parents[1]
JOBSETS = Path(__file__).resolve().parent / "jobsets"
SCHEMAS = data_dir("schemas")

_yaml = YAML(typ="safe")


def _load_all(path: Path) -> list:
    return [d for d in _yaml.load_all(path.read_text(encoding="utf-8")) if d]


def _load_str(text: str):
    return _yaml.load(io.StringIO(text))


# ----------------------------------------------------------------------------- corpus

# Official examples that our strict schema rejects, and why. Their pod templates carry
# `apiVersion: v1` / `kind: Pod`. A PodTemplateSpec has no such fields and the CRDs'
# embedded template schema lists only metadata/spec, so the API server prunes them, and
# with fieldValidation=Strict (kubectl's default) rejects the job with
# `unknown field "spec.xgbReplicaSpecs[Master].template.apiVersion"`.
# (The four v1.5.0 xgboost-dist files have a second, code-level problem - container name
# `xgboostjob` instead of `xgboost` - which is not a schema matter.)
_TEMPLATE_TYPE_META = [
    (("spec", "xgbReplicaSpecs", rt, "template", f), f"unknown field '{f}'")
    for rt in ("Master", "Worker")
    for f in ("apiVersion", "kind")
]
KNOWN_SCHEMA_FAILURES = {
    "corpus/training-operator-v1.5.0/examples/xgboost/xgboost-dist/xgboostjob_v1alpha1_iris_predict.yaml": _TEMPLATE_TYPE_META,
    "corpus/training-operator-v1.5.0/examples/xgboost/xgboost-dist/xgboostjob_v1alpha1_iris_predict_local.yaml": _TEMPLATE_TYPE_META,
    "corpus/training-operator-v1.5.0/examples/xgboost/xgboost-dist/xgboostjob_v1alpha1_iris_train.yaml": _TEMPLATE_TYPE_META,
    "corpus/training-operator-v1.5.0/examples/xgboost/xgboost-dist/xgboostjob_v1alpha1_iris_train_local.yaml": _TEMPLATE_TYPE_META,
    "corpus/training-operator/examples/xgboost/smoke-dist/xgboostjob_v1alpha1_rabit_test.yaml": _TEMPLATE_TYPE_META,
}


def _corpus_jobs() -> list[tuple[str, dict]]:
    """Every Kubeflow job document in the corpus, including those embedded in Katib files."""
    jobs: list[tuple[str, dict]] = []
    for name, path in upstream.require_corpus():
        if path.suffix == ".json":
            docs = [json.loads(path.read_text(encoding="utf-8"))]
        else:
            docs = _load_all(path)
        for i, doc in enumerate(docs):
            label = f"corpus/{name}#{i}"
            kind = doc.get("kind") if isinstance(doc, dict) else None
            if kind == "Experiment":
                jobs.append((label + ":trialSpec", doc["spec"]["trialTemplate"]["trialSpec"]))
            elif kind == "ConfigMap":
                for key, text in sorted(doc.get("data", {}).items()):
                    embedded = _load_str(text)
                    if schema_name_for(embedded.get("apiVersion"), embedded.get("kind")):
                        jobs.append((f"{label}:data.{key}", embedded))
            elif path.name == "trial-template.json":
                for data in doc["Data"]:
                    for cm in data["ConfigMaps"]:
                        for tmpl in cm["Templates"]:
                            embedded = _load_str(tmpl["Yaml"])
                            if schema_name_for(embedded.get("apiVersion"), embedded.get("kind")):
                                jobs.append((f"{label}:{cm['ConfigMapName']}/{tmpl['Path']}", embedded))
            elif kind is not None:
                jobs.append((label, doc))
    return jobs


def test_corpus_inventory():
    jobs = _corpus_jobs()
    labels = [label for label, _ in jobs]
    kinds = {(d["apiVersion"], d["kind"]) for _, d in jobs}
    assert len(jobs) >= 47
    assert all(schema_name_for(*k) for k in kinds), kinds
    assert ("kubeflow.org/v2beta1", "MPIJob") in kinds and ("kubeflow.org/v1", "MPIJob") in kinds
    # the Katib-embedded jobs are included
    assert sum(":trialSpec" in label for label in labels) == 4
    assert any(label.endswith(":data.pytorchJobTemplate") for label in labels)
    assert any("trial-template.json" in label and "pytorchJobTemplate" in label for label in labels)


def test_every_corpus_job_validates():
    failures = {}
    known = {}
    for label, doc in _corpus_jobs():
        name = schema_name_for(doc["apiVersion"], doc["kind"])
        issues = validate(doc, name)
        path = label.split("#")[0]
        if path in KNOWN_SCHEMA_FAILURES and ":" not in label.split("#")[1]:
            known[path] = [(i.path, i.message) for i in issues]
        elif issues:
            failures[label] = [str(i) for i in issues]
    assert failures == {}
    assert known == {p: sorted(exp) for p, exp in KNOWN_SCHEMA_FAILURES.items()}


def test_known_failures_validate_once_template_type_meta_is_dropped():
    for rel in KNOWN_SCHEMA_FAILURES:
        (doc,) = _load_all(upstream.corpus_file(rel.removeprefix("corpus/")))
        for spec in doc["spec"]["xgbReplicaSpecs"].values():
            spec["template"].pop("apiVersion")
            spec["template"].pop("kind")
        assert validate(doc, "kubeflow/xgboostjob") == [], rel


def test_katib_trial_specs_keep_placeholders():
    jobs = dict(_corpus_jobs())
    trial = next(d for label, d in jobs.items() if "pytorchjob-mnist.yaml" in label)
    assert "metadata" not in trial or "name" not in trial.get("metadata", {})
    assert "${trialParameters." in json.dumps(trial)
    assert validate(trial, "kubeflow/pytorchjob") == []


# ----------------------------------------------------------------------------- JobSet examples

# JobSets whose failurePolicy rules have no `name`. The CRD marks rules[].name required,
# but JobSet's mutating webhook fills it in (`failurePolicyRule<index>`) before the schema
# is checked, so a cluster accepts them; offline (and for our emitter, which must name its
# rules) the field is missing (sigs.k8s.io/jobset@v0.12.0 pkg/webhooks/jobset_webhook.go, Default).
UNNAMED_RULES = {"failure-policy.yaml:rules-unnamed": 2}


def _jobset_examples() -> list[tuple[str, dict]]:
    """(file:name, JobSet) of every JobSet in tests/jobsets."""
    out = []
    for path in sorted(JOBSETS.glob("*.yaml")):
        for doc in _load_all(path):
            assert isinstance(doc, dict) and doc.get("kind") == "JobSet", path
            meta = doc["metadata"]
            out.append((f"{path.name}:{meta.get('name') or meta['generateName']}", doc))
    return out


def test_every_jobset_example_validates():
    examples = _jobset_examples()
    assert len(examples) >= 12
    fields = {k for _, doc in examples for k in doc["spec"]}
    assert fields == set(_crd_spec_schema()["properties"]), "a field of the JobSet spec no example uses"
    unexpected = {}
    for rel, doc in examples:
        issues = validate(doc, "jobset")
        expected = [
            SchemaIssue(("spec", "failurePolicy", "rules", i, "name"), "missing required field 'name'")
            for i in range(UNNAMED_RULES.get(rel, 0))
        ]
        if issues != expected:
            unexpected[rel] = [str(i) for i in issues]
        if rel in UNNAMED_RULES:  # what the webhook does makes them valid
            for i, rule in enumerate(doc["spec"]["failurePolicy"]["rules"]):
                rule.setdefault("name", f"failurePolicyRule{i}")
            assert validate(doc, "jobset") == [], rel
    assert unexpected == {}


# ----------------------------------------------------------------------------- negative cases


# ----------------------------------------------------------------------------- generator


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_k8s_schema", REPO / "tools" / "gen_k8s_schema.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_k8s_schema_is_up_to_date():
    committed = (SCHEMAS / "k8s.schema.json").read_text(encoding="utf-8")
    comment = json.loads(committed)["$comment"]
    installed = metadata.version("kubernetes")
    if f"kubernetes client {installed}." not in comment:
        pytest.skip(f"k8s.schema.json was generated from another kubernetes client than {installed}: {comment[:80]}")
    gen = _load_generator()
    assert gen.render(gen.build()) == committed, "run: python tools/gen_k8s_schema.py"


def test_k8s_schema_shape():
    defs = json.loads((SCHEMAS / "k8s.schema.json").read_text(encoding="utf-8"))["$defs"]
    assert defs["io.k8s.api.core.v1.PodSpec"]["required"] == ["containers"]
    assert defs["io.k8s.api.core.v1.Container"]["required"] == ["name"]
    assert defs["io.k8s.api.core.v1.EnvVar"]["required"] == ["name"]
    assert defs["io.k8s.api.core.v1.Volume"]["required"] == ["name"]
    assert defs["io.k8s.api.core.v1.ContainerPort"]["required"] == ["containerPort"]
    assert defs["io.k8s.api.batch.v1.JobSpec"]["required"] == ["template"]
    assert "required" not in defs["io.k8s.api.batch.v1.JobTemplateSpec"]
    assert "required" not in defs["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]
    for name, schema in defs.items():
        if schema.get("type") == "object" and "properties" in schema:
            assert schema["additionalProperties"] is False, name
    ios = {"$ref": "#/$defs/io.k8s.apimachinery.pkg.util.intstr.IntOrString"}
    assert defs["io.k8s.api.core.v1.HTTPGetAction"]["properties"]["port"] == ios
    assert defs["io.k8s.api.core.v1.TCPSocketAction"]["properties"]["port"] == ios
    assert defs["io.k8s.api.core.v1.GRPCAction"]["properties"]["port"] == {"type": "integer"}


# ----------------------------------------------------------------------------- CRD cross-check


@functools.lru_cache(maxsize=1)
def _crd() -> dict:
    return _load_all(upstream.jobset_crd())[0]


def _crd_spec_schema():
    crd = copy.deepcopy(_crd())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha2"]
    return version["schema"]["openAPIV3Schema"]["properties"]["spec"]


def _ours(node, root):
    while "$ref" in node and node["$ref"].startswith("#/"):
        target = root
        for part in node["$ref"][2:].split("/"):
            target = target[part]
        node = target
    return node


JOBSET_OBJECTS = {
    "spec": (),
    "replicatedJobs[]": ("replicatedJobs", "[]"),
    "dependsOn[]": ("replicatedJobs", "[]", "dependsOn", "[]"),
    "network": ("network",),
    "successPolicy": ("successPolicy",),
    "failurePolicy": ("failurePolicy",),
    "rules[]": ("failurePolicy", "rules", "[]"),
    "startupPolicy": ("startupPolicy",),
    "coordinator": ("coordinator",),
    "volumeClaimPolicies[]": ("volumeClaimPolicies", "[]"),
    "retentionPolicy": ("volumeClaimPolicies", "[]", "retentionPolicy"),
}



@pytest.mark.parametrize("label", sorted(JOBSET_OBJECTS))
def test_jobset_schema_matches_crd(label):
    crd = _crd_spec_schema()
    root = json.loads((SCHEMAS / "jobset.schema.json").read_text(encoding="utf-8"))
    ours = _ours(root["properties"]["spec"], root)
    for step in JOBSET_OBJECTS[label]:
        crd = crd["items"] if step == "[]" else crd["properties"][step]
        ours = _ours(ours["items"] if step == "[]" else ours["properties"][step], root)
    assert set(ours["properties"]) == set(crd["properties"])
    assert set(ours.get("required", [])) == set(crd.get("required", []))
    for field, crd_field in crd["properties"].items():
        our_field = _ours(ours["properties"][field], root)
        for kw in ("enum", "maxItems", "minimum"):
            assert our_field.get(kw) == crd_field.get(kw), (label, field, kw)
        assert our_field.get("type") == crd_field.get("type") or (
            "$ref" in ours["properties"][field] and crd_field.get("type") == "object"
        ), (label, field)


# ----------------------------------------------------------------------------- cost


def test_importing_schemas_does_not_import_jsonschema():
    code = "import sys, kf2jobset.k8s.schemas; sys.exit(1 if 'jsonschema' in sys.modules else 0)"
    assert subprocess.run([sys.executable, "-c", code], cwd=REPO).returncode == 0


def test_validation_is_fast():
    doc = mnist_tfjob()
    validate(doc, "kubeflow/tfjob")  # build the validator once
    js = leader_workers_jobset()
    validate(js, "jobset")
    timings = []
    for _ in range(30):
        t0 = time.perf_counter()
        validate(doc, "kubeflow/tfjob")
        validate(js, "jobset")
        timings.append((time.perf_counter() - t0) / 2)
    assert statistics.median(timings) < 0.020
