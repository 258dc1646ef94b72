"""Scalars the way Kubernetes (YAML 1.1) reads them, and how the report uses that reading."""
from __future__ import annotations

from kf2jobset.options import ConvertOptions
from kf2jobset.files.pipeline import convert_text

import pytest

from kf2jobset.text import k8syaml
from kf2jobset.text.yamlio import parse_documents

from .jobs import OCTAL_PYTORCHJOB
from .report_helpers import report_for


def load(text: str):
    return parse_documents(text)[0].data


@pytest.mark.parametrize("text, expected", [
    ("yes", True), ("Yes", True), ("YES", True), ("y", True), ("Y", True), ("on", True), ("ON", True),
    ("no", False), ("No", False), ("n", False), ("off", False), ("Off", False), ("OFF", False),
])
def test_plain_bool_words(text, expected):
    (r,) = k8syaml.readings(load(f"a: {text}\n"))
    assert (r.path, r.text, r.yaml12, r.kubernetes, r.kind) == (("a",), text, text, expected, "bool")


@pytest.mark.parametrize("text", ["'yes'", '"on"', "true", "false", "yess", "onion", "0", "10", "0o17", "0x1F",
                                  "1_000", "09", "1e3", "hello world", "|\n  yes\n"])
def test_same_reading_is_not_flagged(text):
    assert k8syaml.readings(load(f"a: {text}\n")) == []


@pytest.mark.parametrize("text, yaml12, kubernetes", [("010", 10, 8), ("0644", 644, 420), ("0755", 755, 493), ("00", None, None)])
def test_leading_zero_is_octal(text, yaml12, kubernetes):
    found = k8syaml.readings(load(f"a: {text}\n"))
    if kubernetes is None:
        assert found == []  # 00 is 0 either way
    else:
        assert [(r.text, r.yaml12, r.kubernetes, r.kind) for r in found] == [(text, yaml12, kubernetes, "octal")]


def test_keys_and_nested_paths():
    data = load("metadata:\n  labels:\n    on: 'x'\nitems:\n  - [1, off]\n")
    found = k8syaml.readings(data)
    assert [(r.path, r.kind) for r in found] == [(("metadata", "labels", "on"), "key"), (("items", 0, 1), "bool")]
    assert found[0].describe() == "`on` is the key 'true' to Kubernetes (YAML 1.1), not 'on'"


def test_kubernetes_value_is_a_pure_copy():
    data = load("a: 010\nb: yes\nc: 'no'\nd: [on, 7]\n")
    k = k8syaml.kubernetes_value(data)
    assert k == {"a": 8, "b": True, "c": "no", "d": [True, 7]}
    assert data["a"] == 10 and data["b"] == "yes"  # the input is untouched




def test_copied_octal_is_flagged_but_means_the_same():
    report = report_for(OCTAL_PYTORCHJOB.replace("{workers}", "2"))
    (f,) = [f for f in report.findings if f.code.startswith("K8S")]
    assert (f.code, f.category) == ("K8S002", "unchanged")
    assert "`0644` is the number 420 to Kubernetes" in f.message
    assert f.source_path.endswith("volumes[0].configMap.defaultMode") and f.line == 16
    assert not [x for x in report.findings if x.category == "unexplained"]


def test_octal_replicas_are_compared_the_kubernetes_way():
    """`replicas: 010` is 8 workers to Kubernetes: the operator ran 8, and so does the JobSet."""
    text = OCTAL_PYTORCHJOB.replace("{workers}", "010")
    report = report_for(text)
    k8s = next(f for f in report.findings if f.code == "K8S002" and "replicas" in f.source_path)
    assert k8s.category == "rewritten" and "converts with 8" in k8s.message
    assert not [f for f in report.findings if f.category == "unexplained"]
    conv = convert_text(text, "job.yaml", ConvertOptions()).conversions[0]
    worker = next(r for r in conv.jobset["spec"]["replicatedJobs"] if r["name"] == "worker")
    assert worker["replicas"] == 8


def test_plain_yes_in_a_string_field_is_rejected_by_kubernetes():
    text = OCTAL_PYTORCHJOB.replace("{workers}", "1").replace(
        "image: trainer:1\n              volumeMounts",
        "image: trainer:1\n              env: [{name: DEBUG, value: yes}]\n              volumeMounts")
    result = convert_text(text, "job.yaml", ConvertOptions())
    [problem] = [p for e in result.errors for p in e.problems]
    assert problem.message == "expected string, got boolean true"
    assert (problem.location.line, problem.location.path[-1]) == (13, "value")
    assert "boolean true to Kubernetes" in problem.hint and "quote it" in problem.hint
