"""kf2jobset's ``--target trainjob --scheduler scheduler-plugins`` held to the real Trainer v2.3.0 (stack flavour
"trainer", which installs the PodGroup CRD of the scheduler-plugins release Trainer pins before Trainer starts).

Where kf2jobset asks Trainer for the gang (podGroupPolicy.coscheduling, TJ050), the PodGroup Trainer makes must
be the one the operator made: the companion PodGroup ``--target jobset`` writes for the same job, which
tests/e2e/test_scheduler_plugins.py holds to the real operator (this fixture is one of its cases). Its timeout
is v1's, or Trainer's default of 60 where v1 had none; Trainer owns it; the pods carry its label and v1's
schedulerName. Where kf2jobset does not (TJ051: a replicatedJob of several pods), the test shows why: the same
runtime with podGroupPolicy added by hand gets a PodGroup that counts one pod per replicatedJob. No scheduler
runs: the pods stay Pending.

On the shared runtimes (kf2jobset/targets/bundle_gang.py): a gang job's TrainJob, created on its runtime installed
in the coscheduling flavour (`kf2jobset runtimes --gang coscheduling`), gets from Trainer the PodGroup the operator
made (minMember, minResources: kf2jobset's companion PodGroup for ``--target jobset``, which
tests/e2e/test_scheduler_plugins.py holds to the real operator for the same fixtures), and the JobSet kf2jobset
predicted. ``KF2JOBSET_GANG_ONLY`` (a regex on the case name) narrows those cases.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import re

import pytest

from kf2jobset.options import ConvertOptions
from kf2jobset.files.pipeline import convert_text
from kf2jobset.k8s.quantity import parse_quantity

from ..conftest import FIXTURES
from .stack import wait_for
from .trainer_harness import core, custom, jobset_of, tapi, tns, trainer_stack  # noqa: F401 (the fixtures)
from .trainjob_harness import create_trainjob_after_its_runtime, differences, named_in

CASE = FIXTURES / "targets" / "trainjob" / "scheduler-plugins-gang" / "input.yaml"
PG = ("scheduling.x-k8s.io", "v1alpha1", "podgroups")
LABEL = "scheduling.x-k8s.io/pod-group"
NO_TIMEOUT = ("    schedulingPolicy:\n      scheduleTimeoutSeconds: 120\n", "")
THREE_WORKERS = ("    Worker:\n      replicas: 1", "    Worker:\n      replicas: 3")


def _objects(text: str, target: str) -> dict[str, dict]:
    result = convert_text(text, "job.yaml", ConvertOptions(target=target, scheduler="scheduler-plugins", trainer_runtime="per-job"))
    assert not result.errors, result.errors
    (conv,) = [c for r in result.results for c in r.conversions]
    return {o["kind"]: o for o in conv.objects}


def _apply(custom, core, objects: dict[str, dict], ns: str) -> tuple[dict, list]:
    """The runtime, then the TrainJob; the PodGroup Trainer makes and the pods of the JobSet it builds."""
    for kind in ("TrainingRuntime", "TrainJob"):
        create_trainjob_after_its_runtime(custom, core, named_in(objects[kind], ns), ns)
    name = objects["TrainJob"]["metadata"]["name"]
    pg = wait_for(lambda: next(iter(custom.list_namespaced_custom_object(*PG[:2], ns, PG[2])["items"]), None),
                  timeout=120, what="Trainer's PodGroup")
    n = sum(rj.get("replicas", 1) for rj in objects["TrainingRuntime"]["spec"]["template"]["spec"]["replicatedJobs"])
    pods = wait_for(lambda: (lambda items: items if len(items) >= n else None)(core.list_namespaced_pod(ns).items),
                    timeout=180, what=f"{n} pods of TrainJob {name}")
    return pg, pods


def _amounts(resources: dict | None) -> dict:
    return {k: parse_quantity(v) for k, v in (resources or {}).items()}


@pytest.mark.parametrize("variant", ["timeout", "no-timeout"])
def test_trainer_makes_the_podgroup_the_operator_made(custom, core, tns, variant):  # noqa: F811
    text = CASE.read_text() if variant == "timeout" else CASE.read_text().replace(*NO_TIMEOUT)
    objects = _objects(text, "trainjob")
    assert "PodGroup" not in objects and "coscheduling" in objects["TrainingRuntime"]["spec"]["podGroupPolicy"]
    operator = _objects(text, "jobset")["PodGroup"]["spec"]  # held to the real operator: test_scheduler_plugins.py
    pg, pods = _apply(custom, core, objects, tns)
    name = objects["TrainJob"]["metadata"]["name"]
    print(f"\n[e2e trainjob gang] {variant}: Trainer's PodGroup {pg['metadata']['name']} {pg['spec']} | operator's {operator}")
    assert pg["metadata"]["name"] == name
    assert [(o["kind"], o["name"], o.get("controller")) for o in pg["metadata"]["ownerReferences"]] == [("TrainJob", name, True)]
    assert pg["spec"]["minMember"] == operator["minMember"]
    assert _amounts(pg["spec"].get("minResources")) == _amounts(operator.get("minResources"))
    assert pg["spec"]["scheduleTimeoutSeconds"] == operator.get("scheduleTimeoutSeconds", 60)  # 60: Trainer's default
    for pod in pods:
        assert (pod.metadata.labels or {}).get(LABEL) == name, pod.metadata.name
        assert pod.spec.scheduler_name == "scheduler-plugins", pod.metadata.name  # v1's, kept in the runtime


def test_trainer_counts_one_pod_per_replicated_job(custom, core, tns):  # noqa: F811
    """Why kf2jobset keeps the companion PodGroup for a replicatedJob of several pods (TJ051)."""
    text = CASE.read_text().replace(*THREE_WORKERS)
    objects = _objects(text, "trainjob")
    assert "PodGroup" in objects and "podGroupPolicy" not in objects["TrainingRuntime"]["spec"]
    forced = copy.deepcopy(objects)
    forced["TrainingRuntime"]["spec"]["podGroupPolicy"] = {"coscheduling": {"scheduleTimeoutSeconds": 120}}
    forced["TrainingRuntime"]["metadata"]["name"] += "-forced"
    forced["TrainJob"]["spec"]["runtimeRef"]["name"] = forced["TrainingRuntime"]["metadata"]["name"]
    pg, pods = _apply(custom, core, forced, tns)
    print(f"\n[e2e trainjob gang] forced podGroupPolicy, 1 master + 3 workers: Trainer's PodGroup {pg['spec']}")
    assert len(pods) == 4 and pg["spec"]["minMember"] == 2  # one per replicatedJob, where v1's gang held 4


# fixtures converted with --scheduler scheduler-plugins (coscheduling) or their own args (volcano): workers sized
# by numNodes (one Job per role), and master + workers in one Job `node` (PyTorch). Their companion PodGroups are
# held to the real operator by test_scheduler_plugins.py and test_volcano.py (same case names).
ONLY = os.environ.get("KF2JOBSET_GANG_ONLY", "")
COSCHEDULING_CASES = [c for c in ("targets/trainjob/gang-coscheduling-tfjob", "targets/trainjob/gang-volcano-pytorch")
                      if re.search(ONLY, c)]
VOLCANO_CASES = [c for c in ("scheduling/volcano", "targets/trainjob/gang-volcano-pytorch") if re.search(ONLY, c)]
CTR = ("trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes")
VPG = ("scheduling.volcano.sh", "v1beta1", "podgroups")


def _shared(case: str, **kw):
    """(the TrainJob conversion, its TrainJob, the flavour it needs, the operator's PodGroup as kf2jobset's JobSet
    target writes it) for a fixture."""
    from kf2jobset.targets.bundle_gang import GANG_ANNOTATION, parse

    from ..fixture_cases import fixture_options

    def convert(target):
        options = dataclasses.replace(fixture_options(FIXTURES / case), target=target, **kw)
        result = convert_text((FIXTURES / case / "input.yaml").read_text(), "job.yaml", options)
        assert not result.errors, result.errors
        return result.conversions[0]

    conv = convert("trainjob")
    (tj,) = [o for o in conv.output if o["kind"] == "TrainJob"]
    operator = next(o for o in convert("jobset").companions if o["kind"] == "PodGroup")
    assert not [o for o in conv.output if o["kind"] == "PodGroup"]
    return conv, tj, parse(tj["metadata"]["annotations"][GANG_ANNOTATION]), operator["spec"]


def _on_flavour(custom, core, ns: str, conv, tj: dict, gang, pg_api: tuple, members: int):
    """The TrainJob created on its runtime installed in `gang`'s flavour (as `kf2jobset runtimes --gang` prints
    it, under its own name; removed after): Trainer's PodGroup, the pods, and the JobSet built, with the one
    kf2jobset predicted as this API server stores it."""
    from kubernetes.client.exceptions import ApiException

    from kf2jobset.targets.bundle_catalog import catalog

    from .trainjob_harness import create_object

    name = tj["spec"]["runtimeRef"]["name"]
    try:
        custom.delete_cluster_custom_object(*CTR, name)  # the plain bundle's, if a test installed it
    except ApiException as e:
        if e.status != 404:
            raise
    custom.create_cluster_custom_object(*CTR, next(r for r in catalog() if r.name == name).object(gang))
    try:
        want = create_object(custom, core, named_in(conv.jobset, ns), ns, dry_run="All")
        create_trainjob_after_its_runtime(custom, core, named_in(tj, ns), ns)
        pg = wait_for(lambda: next(iter(custom.list_namespaced_custom_object(*pg_api[:2], ns, pg_api[2])["items"]), None),
                      timeout=120, what="Trainer's PodGroup")
        pods = wait_for(lambda: (lambda items: items if len(items) >= members else None)(core.list_namespaced_pod(ns).items),
                        timeout=180, what=f"{members} pods of TrainJob {tj['metadata']['name']}")
        built = jobset_of(custom, ns, tj["metadata"]["name"])
    finally:
        custom.delete_cluster_custom_object(*CTR, name)
    tname = tj["metadata"]["name"]
    assert pg["metadata"]["name"] == tname
    assert [(o["kind"], o["name"], o.get("controller")) for o in pg["metadata"]["ownerReferences"]] == [("TrainJob", tname, True)]
    assert pg["spec"]["minMember"] == len(pods) == members
    for pod in pods:
        assert pod.spec.scheduler_name == gang.scheduler_name, pod.metadata.name
    assert differences(want, built) == []  # the pod label or annotation included (kf2jobset's model of Trainer)
    return pg, pods


@pytest.mark.parametrize("case", COSCHEDULING_CASES)
def test_a_gang_job_on_the_coscheduling_flavour_gets_the_operators_podgroup(custom, core, tns, case):  # noqa: F811
    conv, tj, gang, operator = _shared(case, scheduler="scheduler-plugins")
    assert gang.flavour == "coscheduling"
    pg, pods = _on_flavour(custom, core, tns, conv, tj, gang, PG, operator["minMember"])
    print(f"\n[e2e trainjob gang shared] {case} on {tj['spec']['runtimeRef']['name']} ({gang.value}): Trainer's PodGroup "
          f"{pg['spec']} | operator's {operator}")
    assert pg["spec"]["minMember"] == operator["minMember"]
    assert _amounts(pg["spec"].get("minResources")) == _amounts(operator.get("minResources"))
    assert pg["spec"]["scheduleTimeoutSeconds"] == 60  # the flavour's (TJ047 names v1's where it differs)
    for pod in pods:
        assert (pod.metadata.labels or {}).get(LABEL) == tj["metadata"]["name"], pod.metadata.name


@pytest.mark.parametrize("case", VOLCANO_CASES)
def test_a_gang_job_on_the_volcano_flavour_gets_the_operators_podgroup_but_what_tj047_names(custom, core, tns, case):  # noqa: F811
    """Volcano's PodGroup (the schema-less CRD of the "volcano" stack; no Volcano runs) as Trainer makes it from the
    flavour: equal to the training operator's field by field, except the fields a TJ047 finding names."""
    from kf2jobset.targets.trainjob_gang import trainer_podgroup

    conv, tj, gang, operator = _shared(case)
    assert gang.flavour == "volcano"
    members, resources, _ = trainer_podgroup(conv.jobset["spec"])
    pg, pods = _on_flavour(custom, core, tns, conv, tj, gang, VPG, members)
    named = {n.message.split(":")[0] for n in conv.notes if n.code == "TJ047"}
    print(f"\n[e2e trainjob gang shared] {case} on {tj['spec']['runtimeRef']['name']} (volcano): Trainer's PodGroup "
          f"{pg['spec']} | operator's {operator} | TJ047: {sorted(named)}")
    assert _amounts(pg["spec"].get("minResources")) == {k: v for k, v in resources.items() if v}
    for field, tj047 in (("minMember", "minAvailable"), ("minResources", "minResources"),
                         ("priorityClassName", "priorityClassName"), ("queue", "queue")):
        same = _amounts(pg["spec"].get(field)) == _amounts(operator.get(field)) if field == "minResources" else (
            pg["spec"].get(field) == operator.get(field))
        assert same != (tj047 in named), f"{field}: Trainer's {pg['spec'].get(field)!r}, the operator's {operator.get(field)!r}"
    for pod in pods:
        assert (pod.metadata.annotations or {}).get("scheduling.k8s.io/group-name") == tj["metadata"]["name"]
