"""The YuniKorn fields kf2jobset writes and reads, held against what the real k8shim parses from a pod: its
constants (pkg/common/constants), the TaskGroup struct and GetTaskGroupsFromAnnotation (pkg/cache), the
order of GetApplicationIDFromPod and GetSchedulingPolicyParam. No k8shim release builds here (the module proxy
refuses them: tools/README-ground-truth.md, "YuniKorn"), so the Go source was read, not run: the facts were
recorded from k8shim v1.9.0 into tests/facts/yunikorn-k8shim.json (tests/yunikorn_facts.py,
tools/record_yunikorn_facts.py); where k8shim's source is at hand (Go module cache, KF2JOBSET_YUNIKORN_K8SHIM)
it is read again and must say the same."""
from __future__ import annotations

import json
import re

import pytest
import yaml

from kf2jobset.schedulers import yunikorn
from kf2jobset.options import ConvertOptions
from kf2jobset.pipeline import convert_text
from kf2jobset.quantity import parse_quantity

from . import yunikorn_facts
from .conftest import FIXTURES

INT32_MAX = 2**31 - 1


@pytest.fixture(scope="module")
def k8shim() -> dict:
    return yunikorn_facts.facts()


@pytest.fixture(scope="module")
def consts(k8shim) -> dict:
    return k8shim["constants"]


def test_the_recorded_facts_name_their_source(k8shim):
    source = k8shim["source"]
    assert source["module"] == "github.com/apache/yunikorn-k8shim" and re.fullmatch(r"v\d+\.\d+\.\d+", source["tag"])
    assert re.fullmatch(r"[0-9a-f]{40}", source["commit"])
    assert set(source["files"]) == set(yunikorn_facts.SOURCES)
    # DomainYuniKorn comes from scheduler-interface: the constants built on it were resolved with it
    assert k8shim["constants"]["AnnotationTaskGroups"].startswith(k8shim["scheduler_interface_constants"]["DomainYuniKorn"])


def test_the_keys_kf2jobset_writes_are_k8shims(consts):
    assert yunikorn.SCHEDULER_NAME == consts["SchedulerName"]
    assert yunikorn.TASK_GROUPS == consts["AnnotationTaskGroups"]
    assert yunikorn.TASK_GROUP_NAME == consts["AnnotationTaskGroupName"]
    assert yunikorn.POLICY_PARAMETERS == consts["AnnotationSchedulingPolicyParam"]
    assert yunikorn.QUEUE_LABEL == consts["CanonicalLabelQueueName"]
    assert yunikorn.APP_ID_ANNOTATION == consts["AnnotationApplicationID"]
    assert set(yunikorn.APP_ID_KEYS) == {consts["CanonicalLabelApplicationID"], consts["LabelApplicationID"],
                                         consts["SparkLabelAppID"]}


def test_the_application_id_is_looked_up_in_k8shims_order(k8shim):
    order = [tuple(x) for x in k8shim["application_id_order"]]
    assert order[0][0] == "Label" and order[1][0] == "Annotation", order
    # kf2jobset's app_id tries each place alone: a template with only that key gives that key's value
    for kind, key in order:
        meta = {"labels" if kind == "Label" else "annotations": {key: "app"}}
        assert yunikorn.app_id({"metadata": meta}) == "app", (kind, key)
    # and with every place set, the first in k8shim's order wins
    both = {"labels": {k: f"{kind}:{k}" for kind, k in order if kind == "Label"},
            "annotations": {k: f"{kind}:{k}" for kind, k in order if kind == "Annotation"}}
    assert yunikorn.app_id({"metadata": both}) == f"{order[0][0]}:{order[0][1]}"
    both["labels"].pop(order[0][1])
    assert yunikorn.app_id({"metadata": both}) == f"{order[1][0]}:{order[1][1]}"


def _k8shim_parse(text: str, fields: dict[str, str]) -> list[dict]:
    """GetTaskGroupsFromAnnotation as the Go source above does it: encoding/json into []TaskGroup (keys match
    fields case-insensitively, unknown keys are dropped), then its checks. A key Go would drop fails here too:
    what kf2jobset meant by it would be lost."""
    groups = json.loads(text)
    assert isinstance(groups, list)
    by_lower = {f.lower(): f for f in fields}
    for g in groups:
        assert isinstance(g, dict)
        unknown = [k for k in g if k.lower() not in by_lower]
        assert not unknown, f"keys k8shim's TaskGroup has no field for: {unknown}"
        g = {by_lower[k.lower()]: v for k, v in g.items()}
        assert isinstance(g.get("Name"), str) and g["Name"], "taskGroup Name"
        assert isinstance(g.get("MinResource"), dict), "taskGroup MinResource is nil"
        assert all(k and parse_quantity(v) is not None for k, v in g["MinResource"].items()), g["MinResource"]
        assert type(g.get("MinMember")) is int and 0 < g["MinMember"] <= INT32_MAX, "taskGroup MinMember"
        for f in ("Labels", "Annotations", "NodeSelector"):
            assert f not in g or all(isinstance(v, str) for v in g[f].values()), f
        for f in ("Tolerations", "TopologySpreadConstraints"):
            assert f not in g or isinstance(g[f], list), f
    return groups


def test_the_parser_checks_are_the_ones_modelled_here(k8shim):
    fields = k8shim["task_group_fields"]
    assert {"Name", "MinMember", "MinResource", "NodeSelector", "Tolerations", "Affinity"} <= set(fields), fields
    assert fields["MinMember"] == "int32"
    assert {tuple(c) for c in k8shim["task_group_checks"]} == {
        ("Name", "==", '""'), ("MinResource", "==", "nil"), ("MinMember", "==", "int32(0)"), ("MinMember", "<", "int32(0)")
    }, "k8shim's checks changed: update _k8shim_parse"


def _yunikorn_conversions():
    """Every JobSet kf2jobset writes for a fixture whose pods name YuniKorn, with --scheduler yunikorn as well
    as with the fixture's own arguments."""
    for case in sorted(FIXTURES.glob("*/*/input.yaml")):
        text = case.read_text()
        args = case.parent / "args"
        if "yunikorn" not in text + (args.read_text() if args.exists() else ""):
            continue
        for scheduler in ("none", "yunikorn"):
            result = convert_text(text, case.name, ConvertOptions(scheduler=scheduler))
            for r in result.results:
                for c in r.conversions:
                    yield f"{case.parent.parent.name}/{case.parent.name} --scheduler={scheduler}", c.objects


def _pods(manifests) -> list[tuple[str, int, dict]]:
    return [(rj["name"], rj.get("replicas", 1), rj["template"]["spec"]["template"])
            for m in manifests if m.get("kind") == "JobSet" for rj in m["spec"]["replicatedJobs"]]


def test_every_task_group_kf2jobset_emits_parses_in_k8shim(k8shim, consts):
    fields = k8shim["task_group_fields"]
    checked = 0
    params = {consts["SchedulingPolicyTimeoutParam"], consts["SchedulingPolicyStyleParam"]}
    assert k8shim["policy_parameters_split"]  # KEY=VALUE parameters, split by SchedulingPolicyParamDelimiter
    for label, manifests in _yunikorn_conversions():
        pods = [p for p in _pods(manifests) if (p[2].get("spec") or {}).get("schedulerName") == consts["SchedulerName"]]
        for name, _, pod in pods:
            ann = (pod.get("metadata") or {}).get("annotations") or {}
            if consts["AnnotationTaskGroups"] in ann:
                groups = _k8shim_parse(ann[consts["AnnotationTaskGroups"]], fields)
                own = ann.get(consts["AnnotationTaskGroupName"])
                # FindAppTaskGroup: a pod naming a group the application does not define is an error
                assert own is None or own in {g["name"] for g in groups}, (label, name, own)
                checked += 1
            for p in filter(None, ann.get(consts["AnnotationSchedulingPolicyParam"], "").split(consts["SchedulingPolicyParamDelimiter"])):
                key, _, v = p.partition("=")
                assert key in params and v, (label, p)
                if key == consts["SchedulingPolicyTimeoutParam"]:
                    assert re.fullmatch(r"-?\d+", v) and int(v) < 2**63, (label, p)
        if "yunikorn" in label.rsplit("=", 1)[1]:
            # --scheduler yunikorn: every pod one application, and every pod in a task group
            assert len({yunikorn.app_id(p) for _, _, p in pods}) == 1, label
    assert checked >= 6, "too few task groups found in the fixtures to hold against k8shim"


def test_the_placeholder_resources_are_what_each_pod_requests(k8shim):
    """A placeholder asks for minResource (GetPlaceholderResourceRequests copies every non-empty key), and the
    real pod takes its place only if it fits there: kf2jobset's minResource is one pod's requests."""
    assert k8shim["placeholder_skips_empty_resource_name"]
    job = yaml.safe_load((FIXTURES / "scheduling/yunikorn-pytorchjob/input.yaml").read_text())
    result = convert_text(yaml.safe_dump(job), "job.yaml", ConvertOptions(scheduler="yunikorn"))
    (conv,) = [c for r in result.results for c in r.conversions]
    for name, _, pod in _pods(conv.objects):
        groups = json.loads(pod["metadata"]["annotations"][yunikorn.TASK_GROUPS])
        (own,) = [g for g in groups if g["name"] == pod["metadata"]["annotations"][yunikorn.TASK_GROUP_NAME]]
        for c in pod["spec"]["containers"]:
            for k, v in ((c.get("resources") or {}).get("requests") or {}).items():
                assert parse_quantity(own["minResource"][k]) >= parse_quantity(v), (name, k)
