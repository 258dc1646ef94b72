"""Label selectors pick the same pods after conversion (kf2jobset/core/selectorfix.py).

The models of both worlds (runtime/operator_view.py, runtime/jobset_view.py) play the e2e differential's
part here (tests/e2e/test_differential.py does it with the real operators and the real API server): for
every fixture, every selector of the job's pod templates and of the file's selecting objects picks, among
the converted JobSet's pods, the twins of the v1 pods it picked -- unless a JS054 names it.
"""
from __future__ import annotations

import dataclasses

import pytest
import yaml

from kf2jobset.options import ConvertOptions
from kf2jobset.files.pipeline import convert_text
from kf2jobset.runtime import selectors as sel
from kf2jobset.runtime.jobset_view import jobset_world
from kf2jobset.runtime.operator_view import operator_world

from .conftest import FIXTURES
from .jobs import pytorchjob_text, replica_text

SELECTING_FIXTURES = ["mpijob-v2beta1/anti-affinity", "mpijob-v1/anti-affinity", "pytorchjob/topology-spread",
                      "tfjob/selecting-objects"]


def _options(case) -> ConvertOptions:
    args = (FIXTURES / case / "args").read_text().split() if (FIXTURES / case / "args").exists() else []
    return ConvertOptions(accept_mpi_ssh="--accept-mpi-ssh" in args, keep_kubeflow_labels="--keep-kubeflow-labels" in args)


def _picked(conv, peers_before, peers_after):
    """[(where, v1 pods, JobSet pods)] for every selector of the conversion and the file's objects."""
    op = operator_world(conv.job)
    js = jobset_world(conv.jobset, roles=conv.plan.pod_roles)
    out = []
    field = conv.job.mapping.replica_specs_field
    for rtype, spec in conv.job.replicas.items():
        base = f"{field}.{rtype}.template.spec"
        before = sel.pod_selectors(spec.template.get("spec") or {}, base)
        for rj in conv.jobset["spec"]["replicatedJobs"]:
            if conv.plan.pod_roles[rj["name"]][0] != rtype.lower():
                continue
            after = {f.path: f for f in sel.pod_selectors(rj["template"]["spec"]["template"]["spec"], base)}
            for f in before:
                out.append((f.what, sel.selected(f.reqs, op.pods), sel.selected(after[f.path].reqs, js.pods)))
    for a, b in zip(peers_before, peers_after, strict=False):
        after = {f.path: f for f in sel.object_selectors(b)}
        for f in sel.object_selectors(a):
            out.append((f.what, sel.selected(f.reqs, op.pods), sel.selected(after[f.path].reqs, js.pods)))
    return out


def _peers(text: str) -> list:
    return [d for d in yaml.safe_load_all(text) if isinstance(d, dict) and d.get("kind") in sel.SELECTING]


@pytest.mark.parametrize("case", SELECTING_FIXTURES)
def test_every_selector_picks_the_twins_of_its_v1_pods(case):
    text = (FIXTURES / case / "input.yaml").read_text()
    result = convert_text(text, "input.yaml", _options(case))
    assert not result.errors
    (conv,) = result.conversions
    rows = _picked(conv, _peers(text), _peers(result.new_text))
    assert rows, f"{case} has no selectors"
    named = {n.message for n in conv.notes if n.code == "JS054"}
    for where, v1, now in rows:
        if v1 != now:
            assert any(where in m for m in named), f"{where}: v1 {sorted(v1)}, JobSet {sorted(now)}, and no JS054 says so"


def test_without_the_fix_the_selectors_pick_nothing():
    """The check above bites: the JobSet as it was before (no kept labels, no rewrites) picks none of them."""
    import kf2jobset.core.selectorfix as fix

    text = (FIXTURES / "mpijob-v2beta1/anti-affinity/input.yaml").read_text()
    original = fix.fix_selectors
    try:
        fix.fix_selectors = lambda conv, options: None
        import kf2jobset.core.convert as convert_module  # noqa: F401 - imports fix_selectors by name at call time

        result = convert_text(text, "input.yaml", ConvertOptions())
    finally:
        fix.fix_selectors = original
    (conv,) = result.conversions
    rows = [r for r in _picked(conv, [], []) if r[1]]
    assert rows and all(not now for _, _, now in rows)


def test_the_file_s_objects_keep_every_other_byte():
    text = (FIXTURES / "tfjob/selecting-objects/input.yaml").read_text()
    out = convert_text(text, "input.yaml", ConvertOptions()).new_text
    service = out[out.index("kind: Service"):out.index("---", out.index("kind: Service"))]
    assert "jobset.sigs.k8s.io/job-global-index: \"1\"" in service
    assert "training.kubeflow.org/job-name: mnist-dist" in service
    # the PDB's comment and layout are untouched; the legacy PodMonitor is left as written (JS055)
    assert "minAvailable: 4   # every pod: a lost PS or worker stalls the step" in out
    assert text[text.index("# written for tf-operator"):] == out[out.index("# written for tf-operator"):]


def test_kept_labels_are_exactly_the_v1_labels_of_those_pods():
    text = (FIXTURES / "pytorchjob/topology-spread/input.yaml").read_text()
    (conv,) = convert_text(text, "input.yaml", ConvertOptions()).conversions
    op = {p.key: p.labels for p in operator_world(conv.job).pods}
    for p in jobset_world(conv.jobset, roles=conv.plan.pod_roles).pods:
        kf = {k: v for k, v in p.labels.items() if k.startswith(sel.KF)}
        assert kf and all(op[p.key][k] == v for k, v in kf.items()), (p.key, kf)


def test_other_namespaces_objects_are_not_touched():
    text = (FIXTURES / "tfjob/selecting-objects/input.yaml").read_text().replace("namespace: ml-team\nspec:\n  selector:\n    training",
                                                                               "namespace: other\nspec:\n  selector:\n    training", 1)
    result = convert_text(text, "input.yaml", ConvertOptions())
    assert "training.kubeflow.org/job-role: master" in result.new_text  # that Service selects other pods


@pytest.mark.parametrize("reqs,labels,want", [
    ([sel.Req("a", "In", ("1",))], {"a": "1"}, True),
    ([sel.Req("a", "In", ("1",))], {}, False),
    ([sel.Req("a", "NotIn", ("1",))], {}, True),
    ([sel.Req("a", "NotIn", ("1",))], {"a": "1"}, False),
    ([sel.Req("a", "Exists")], {"a": ""}, True),
    ([sel.Req("a", "DoesNotExist")], {"a": ""}, False),
    ([], {"x": "y"}, True),
])
def test_requirements_as_kubernetes_evaluates_them(reqs, labels, want):
    assert sel.matches(reqs, labels) is want


def test_a_service_selector_is_equality_only():
    reqs = sel.requirements({"app": "x", "n": 0}, "map")
    assert [(r.key, r.op, r.values) for r in reqs] == [("app", "In", ("x",)), ("n", "In", ("0",))]
    assert sel.requirements({}, "map") is None  # a Service without a selector selects no pod


def test_keep_kubeflow_labels_needs_no_keep():
    text = (FIXTURES / "pytorchjob/topology-spread/input.yaml").read_text()
    options = dataclasses.replace(ConvertOptions(), keep_kubeflow_labels=True)
    (conv,) = convert_text(text, "input.yaml", options).conversions
    assert not [n for n in conv.notes if n.code in ("JS052", "JS053", "JS054")]


def test_the_krm_function_rewrites_the_list_s_objects_too():
    from kf2jobset.files.krm import transform

    docs = list(yaml.safe_load_all((FIXTURES / "tfjob/selecting-objects/input.yaml").read_text()))
    run = transform({"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": docs}, ConvertOptions())
    items = yaml.safe_load(run.output)["items"]
    service = next(i for i in items if i["kind"] == "Service")
    assert service["spec"]["selector"] == {"training.kubeflow.org/job-name": "mnist-dist",
                                           "jobset.sigs.k8s.io/job-global-index": "1"}
    jobset = next(i for i in items if i["kind"] == "JobSet")
    assert all(rj["template"]["spec"]["template"]["metadata"]["labels"]["training.kubeflow.org/job-name"] == "mnist-dist"
               for rj in jobset["spec"]["replicatedJobs"])


def test_a_job_named_at_creation_keeps_no_name_label():
    """generateName / a Katib trial: the name is not known, so no label or selector may hold a stand-in for it."""
    text = (FIXTURES / "pytorchjob/topology-spread/input.yaml").read_text().replace('  name: "llama-ft"', '  generateName: "llama-ft-"')
    result = convert_text(text, "input.yaml", ConvertOptions())
    (conv,) = result.conversions
    labels = [rj["template"]["spec"]["template"].get("metadata", {}).get("labels", {}) for rj in conv.jobset["spec"]["replicatedJobs"]]
    assert all(sel.KF + "job-name" not in ls for ls in labels), labels
    assert "x7k2q" not in result.new_text and "jobset-name Exists" not in result.new_text
    spread = conv.jobset["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]["topologySpreadConstraints"]
    assert {"key": sel.JS + "jobset-name", "operator": "Exists"} in spread[1]["labelSelector"]["matchExpressions"]


_ANTI_AFFINITY_TO_B = """\
affinity:
  podAntiAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
    - topologyKey: kubernetes.io/hostname
      labelSelector: {matchLabels: {training.kubeflow.org/job-name: b}}
    - topologyKey: kubernetes.io/hostname
      labelSelector: {matchLabels: {training.kubeflow.org/job-name: b, training.kubeflow.org/replica-index: "1"}}
"""

TWO_JOBS_AND_A_DEPLOYMENT = (pytorchjob_text("a", replica_text("Worker", "2", image="x", pod=_ANTI_AFFINITY_TO_B), flow_name=True)
                             + "---\n" + pytorchjob_text("b", replica_text("Worker", "2", image="x"), flow_name=True) + """\
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: sidecar}
spec:
  selector: {matchLabels: {app: sc}}
  template:
    metadata: {labels: {app: sc}}
    spec:
      affinity:
        podAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - topologyKey: kubernetes.io/hostname
            labelSelector:
              matchLabels: {training.kubeflow.org/job-name: a, training.kubeflow.org/replica-index: "0"}
      containers: [{name: c, image: y}]
""")


def test_other_jobs_and_workloads_of_the_file_select_too():
    result = convert_text(TWO_JOBS_AND_A_DEPLOYMENT, "two.yaml", ConvertOptions())
    a, b = result.conversions
    labels_b = b.jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["metadata"]["labels"]
    assert labels_b[sel.KF + "job-name"] == "b"  # a's anti-affinity keeps picking b's pods
    assert [n.code for n in b.notes if n.code.startswith("JS05") and n.code != "JS051"] == ["JS052", "JS056"]
    assert "matchLabels: {training.kubeflow.org/job-name: a, jobset.sigs.k8s.io/job-index: \"0\"}" in result.new_text


@pytest.mark.parametrize("case", sorted(str(p.parent.relative_to(FIXTURES)) for p in FIXTURES.glob("*/*/expected.yaml")))
def test_the_label_models_are_the_worlds_labels(case):
    """selectorfix reads labels from operator_pod_labels / jobset_pod_labels (no env: 10 000 replicas stay
    fast); they are exactly the labels of operator_world / jobset_world."""
    from kf2jobset.runtime.jobset_view import jobset_pod_labels
    from kf2jobset.runtime.operator_view import operator_pod_labels

    from .templates import case_values, fill

    text = fill((FIXTURES / case / "input.yaml").read_text(), case_values(FIXTURES / case))
    result = convert_text(text, "input.yaml", _options(case))
    for conv in result.conversions:
        assert operator_pod_labels(conv.job) == [(p.key, p.labels) for p in operator_world(conv.job).pods]
        roles = conv.pods.pod_roles
        assert jobset_pod_labels(conv.jobset, roles=roles) == [(p.key, p.labels) for p in jobset_world(conv.jobset, roles=roles).pods]


def test_ten_thousand_replicas_stay_fast():
    import time

    text = (FIXTURES / "pytorchjob/topology-spread/input.yaml").read_text().replace("replicas: 4", "replicas: 9999")
    t0 = time.process_time()
    result = convert_text(text, "input.yaml", ConvertOptions())
    assert not result.errors and time.process_time() - t0 < 8
