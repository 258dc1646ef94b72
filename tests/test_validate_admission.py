"""validate.admitted: the JobSet as the API server validates it after JobSet's mutating webhook
(facts held against the real admission chain by tools/validator_vs_apiserver.py)."""
from __future__ import annotations

import copy

from kf2jobset.k8s.validate import admitted, check_jobset

JOBSET = {
    "apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "q"},
    "spec": {"replicatedJobs": [{"name": "w", "replicas": 1, "template": {"spec": {
        "completions": 1, "parallelism": 1,
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}}]},
}


def _with_cpu(value, *, all_defaults_set=False):
    js = copy.deepcopy(JOBSET)
    pod = js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    pod["containers"][0]["resources"] = {"limits": {"cpu": value}}
    if all_defaults_set:  # nothing left for the webhook to default: it sends no patch
        js["spec"].update(network={"enableDNSHostnames": True, "publishNotReadyAddresses": True},
                          successPolicy={"operator": "All"}, startupPolicy={"startupPolicyOrder": "AnyOrder"})
        js["spec"]["replicatedJobs"][0]["template"]["spec"]["completionMode"] = "Indexed"
    return js


def test_a_fractional_quantity_is_rewritten_by_the_webhook_patch():
    view, problems = admitted(_with_cpu(0.5))
    assert problems == []
    assert view["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["resources"] == \
        {"limits": {"cpu": "500m"}}
    assert check_jobset(_with_cpu(0.5)) == []


def test_without_a_patch_the_schema_sees_the_number():
    problems = check_jobset(_with_cpu(0.5, all_defaults_set=True))
    assert [p.rule for p in problems] == ["schema"], problems
    assert check_jobset(_with_cpu("500m", all_defaults_set=True)) == []
    assert check_jobset(_with_cpu(1.0, all_defaults_set=True)) == []  # a whole float is an integer


def test_a_quantity_go_cannot_read_is_denied_either_way():
    for flag in (False, True):
        assert [p.rule for p in check_jobset(_with_cpu("1.5.5", all_defaults_set=flag))] == ["quantity"]


def test_a_jobset_needs_a_name():
    js = copy.deepcopy(JOBSET)
    del js["metadata"]["name"]
    assert [(p.rule, p.location.path) for p in check_jobset(js)] == [("schema", ("metadata",))]
    js["metadata"]["name"] = ""  # present, so the schema's anyOf passes; the API server still wants one
    assert [p.rule for p in check_jobset(js)] == ["jobset-name"]
