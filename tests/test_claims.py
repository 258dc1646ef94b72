"""Every report finding's claim about the JobSet is checked against the JobSet actually emitted.

A finding carries its claims as data, written where its note is made (kf2jobset/claims.py): paths
of the emitted JobSet (or a companion object) with the value the text says they hold. Here every
golden fixture and every job of the upstream corpus (tests/upstream.py) is converted and each claim
of each finding is evaluated against that conversion's objects: no claim may be false. A finding
that asserts nothing the emitted objects can show says so with a reason (`unchecked`); those codes
are listed below with their reasons, read from the findings themselves, never typed here.
"""
from __future__ import annotations

import ast
import copy
from pathlib import Path

import pytest

from kf2jobset import claims as claim_rules
from kf2jobset.options import ConvertOptions
from kf2jobset.text.yamlio import parse_documents, to_plain

from .conftest import FIXTURES
from .fixture_cases import CONVERTED_CASES, CORPUS_OPTIONS, corpus_texts, fixture_options
from .jobs import OCTAL_PYTORCHJOB
from .report_helpers import conversion_findings

PACKAGE = Path(__file__).resolve().parent.parent / "kf2jobset"


def false_claims(pairs) -> list[str]:
    bad = []
    for conv, f in pairs:
        for c in f.claims:
            problem = claim_rules.check(c, conv.objects)
            if problem:
                bad.append(f"{conv.job.display_name()} {f.code}: {problem}\n    {f.message[:200]}")
    return bad


def unaccounted(pairs) -> list[str]:
    return sorted({f"{f.code} ({f.message[:80]})" for _, f in pairs if not f.claims and not (f.unchecked or "").strip()})


@pytest.fixture(scope="module")
def fixture_findings():
    return {case: conversion_findings((case / "input.yaml").read_text(), "input.yaml", fixture_options(case))
            for case in CONVERTED_CASES}


@pytest.fixture(scope="module")
def corpus_findings():
    return {where: conversion_findings(text, where, CORPUS_OPTIONS) for where, text in corpus_texts()}


def test_every_fixture_claim_holds(fixture_findings):
    pairs = [p for v in fixture_findings.values() for p in v]
    checked = sum(len(f.claims) for _, f in pairs)
    assert checked > 500, f"only {checked} claims checked over the fixtures"
    assert false_claims(pairs) == []


def test_every_corpus_claim_holds(corpus_findings):
    pairs = [p for v in corpus_findings.values() for p in v]
    # 44 jobs: the 4 training-operator v1.5.0 XGBoost examples (containers named xgboostjob under
    # kubeflow.org/v1) are refused: no release made a pod for them (JS060 audit, docs/ground-truth.md)
    assert len({id(c) for c, _ in pairs}) >= 40, "expected the whole corpus"
    assert false_claims(pairs) == []


def test_every_finding_has_claims_or_says_why_not(fixture_findings, corpus_findings):
    pairs = [p for d in (fixture_findings, corpus_findings) for v in d.values() for p in v]
    assert unaccounted(pairs) == []


def test_claims_are_about_the_file_written(fixture_findings):
    """The objects the claims are checked against are the ones in expected.yaml (what convert prints)."""
    compared = 0
    for case, pairs in fixture_findings.items():
        if not (case / "expected.yaml").exists() or (case / "env").exists():
            continue
        written = [to_plain(d.data) for d in parse_documents((case / "expected.yaml").read_text())]
        written = [d for d in written if isinstance(d, dict) and d.get("kind") == "JobSet"]
        convs = list({id(c): c for c, _ in pairs}.values())
        if len(written) != len(convs):
            continue  # Katib Experiments carry the JobSet inside the trial template
        for conv, js in zip(convs, written, strict=False):
            assert to_plain(conv.jobset) == js, case
            compared += 1
    assert compared >= 60


def test_a_false_claim_fails(fixture_findings):
    """The check bites: perturb the emitted JobSet (a Job's backoffLimit, an injected env var) and the
    claims that describe it turn false."""
    case = FIXTURES / "mpijob-v2beta1" / "backoff-limit"
    pairs = fixture_findings[case]
    conv = pairs[0][0]
    assert false_claims(pairs) == []
    original = copy.deepcopy(conv.jobset)
    try:
        worker = next(r for r in conv.jobset["spec"]["replicatedJobs"] if r["name"] == "worker")
        worker["template"]["spec"]["backoffLimit"] = 20  # what the old JS034 text said every child Job had
        assert any("JS034" in b for b in false_claims(pairs))
        conv.jobset.clear()
        conv.jobset.update(copy.deepcopy(original))
        launcher = next(r for r in conv.jobset["spec"]["replicatedJobs"] if r["name"] == "launcher")
        container = launcher["template"]["spec"]["template"]["spec"]["containers"][0]
        container["env"] = [e for e in container["env"] if e["name"] != "PRTE_MCA_prte_default_hostfile"]
        assert any("MPI009" in b for b in false_claims(pairs))
    finally:
        conv.jobset.clear()
        conv.jobset.update(original)


def test_js034_says_where_the_backoff_limit_went(fixture_findings):
    """mpi-operator v0.8.2 gave runPolicy.backoffLimit to the launcher's batch Job only and made the
    worker pods itself: the JobSet's worker Jobs never get the runPolicy value."""
    for name, worker in (("backoff-limit", 0), ("backoff-limit-restarting-workers", 2147483647)):
        pairs = fixture_findings[FIXTURES / "mpijob-v2beta1" / name]
        conv, note = next((c, f) for c, f in pairs if f.code == "JS034")
        limits = {r["name"]: r["template"]["spec"]["backoffLimit"] for r in conv.jobset["spec"]["replicatedJobs"]}
        assert limits == {"worker": worker, "launcher": conv.job.run_policy.backoff_limit}
        assert "every child Job" not in note.message and "launcher Job only" in note.message
        assert {c.path for c in note.claims} == {f"spec.replicatedJobs[{n}].template.spec.backoffLimit" for n in limits}


def _note_calls():
    """Every `Note(...)` the package builds, with its code and whether it names claims= or unchecked=."""
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Note":
                code = node.args[0].value if node.args and isinstance(node.args[0], ast.Constant) else "?"
                keys = {k.arg for k in node.keywords}
                yield f"{path.relative_to(PACKAGE)}:{node.lineno} {code}", keys


def test_every_note_in_the_code_has_claims_or_a_reason():
    """Also the codes no fixture reaches: each place that makes a note states its claims or why none."""
    calls = list(_note_calls())
    assert len(calls) >= 60
    missing = [where for where, keys in calls if not keys & {"claims", "unchecked"}]
    assert missing == []


def test_uncheckable_codes_are_listed_with_reasons(fixture_findings, corpus_findings, capsys):
    pairs = [p for d in (fixture_findings, corpus_findings) for v in d.values() for p in v]
    reasons: dict[str, set] = {}
    checked: set = set()
    for _, f in pairs:
        if f.claims:
            checked.add(f.code)
        else:
            reasons.setdefault(f.code, set()).add(f.unchecked)
    for code, why in reasons.items():
        assert all(w and len(w) > 20 for w in why), f"{code}: an unchecked finding needs a reason"
    with capsys.disabled():
        print(f"\n{len(checked)} codes with checked claims; {sum(len(f.claims) for _, f in pairs)} claims over "
              f"{len(pairs)} findings; without claims:")
        for code in sorted(reasons):
            print(f"  {code}: {'; '.join(sorted(reasons[code]))}")
    assert len(checked) >= 40


# the octal job of tests/test_report_k8syaml.py, with octal replicas and a YAML 1.1 boolean on the master's pod
K8S_JOB = OCTAL_PYTORCHJOB.replace("{workers}", "010").replace("        spec:\n          containers:",
                                                       "        spec:\n          hostNetwork: yes\n          containers:", 1)


def test_yaml_reading_claims_hold():
    """K8S001/K8S002 say the JobSet holds what Kubernetes read from the v1 text (no fixture has one)."""
    pairs = conversion_findings(K8S_JOB, "job.yaml", ConvertOptions())
    readings = [f for _, f in pairs if f.code.startswith("K8S")]
    assert {f.code for f in readings} == {"K8S001", "K8S002"} and all(f.claims for f in readings)
    assert {c.value for f in readings for c in f.claims} == {True, 420, 8}
    assert false_claims(pairs) == []


def test_claim_paths():
    js = {"spec": {"replicatedJobs": [
        {"name": "a", "template": {"spec": {"backoffLimit": 0, "template": {"spec": {"containers": [
            {"name": "c", "env": [{"name": "X", "value": "1"}], "ports": [{"containerPort": 22}]}]}}}}},
        {"name": "b", "template": {"spec": {"backoffLimit": 3}}}]}, "kind": "JobSet"}
    objs = [js, {"kind": "ConfigMap", "metadata": {"name": "h"}, "data": {"hostfile": "a slots=1\n"}}]
    ok = [claim_rules.equals("spec.replicatedJobs[a].template.spec.backoffLimit", 0),
          claim_rules.atleast("spec.replicatedJobs[b].template.spec.backoffLimit", 1),
          claim_rules.absent("spec.replicatedJobs[c]"),
          claim_rules.equals(claim_rules.pod_path("a") + ".spec.containers[c].env[X].value", "1"),
          claim_rules.count(claim_rules.pod_path("a") + ".spec.containers[0].ports[containerPort=22]", 1),
          claim_rules.contains("data[hostfile]", "a slots=1", target="ConfigMap"),
          claim_rules.absent("kind", target="PodGroup")]
    bad = [claim_rules.equals("spec.replicatedJobs[*].template.spec.backoffLimit", 0),  # b has 3
           claim_rules.present(claim_rules.pod_path("a") + ".spec.containers[c].env[Y]"),
           claim_rules.equals("spec.replicatedJobs[z].replicas", 1),  # reaches nothing
           claim_rules.atleast("spec.replicatedJobs[a].template.spec.backoffLimit", 1),
           claim_rules.contains("data[hostfile]", "b slots=1", target="ConfigMap/h")]
    assert [claim_rules.check(c, objs) for c in ok] == [None] * len(ok)
    assert all(claim_rules.check(c, objs) for c in bad)
