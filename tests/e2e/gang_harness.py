"""Gang scheduling for the e2e tests (tests/e2e/test_scheduler_plugins.py, test_gang_run.py, test_mpi_volcano.py):
scheduler-plugins' PodGroup resource, a conversion for the operator run with --gang-scheduler-name, the conversion
taken apart and applied as a user would, and the operator's PodGroup compared with kf2jobset's."""
from __future__ import annotations

import time

import yaml

from .stack import wait_for


PG = ("scheduling.x-k8s.io", "v1alpha1", "podgroups")
FLAG = "scheduler-plugins"  # the stack's --gang-scheduler-name


def convert_for_gang(job: dict):
    """The conversion with --scheduler scheduler-plugins and the stack's gang scheduler name."""
    from kf2jobset.options import ConvertOptions
    from kf2jobset.files.pipeline import convert_text

    result = convert_text(yaml.safe_dump(job, sort_keys=False), "job.yaml",
                          ConvertOptions(scheduler="scheduler-plugins", gang_scheduler_name=FLAG))
    assert not result.errors, result.errors
    (conv,) = [c for r in result.results for c in r.conversions]
    return conv


def conversion_parts(job: dict, convert) -> tuple:
    """``job`` (its namespace dropped: each world gets its own) converted, the converted PodGroup, whether its
    minResources sum is free of PriorityClass order (no JS091), the JobSet's pod templates by replicatedJob,
    and the JobSet's pod count."""
    job["metadata"].pop("namespace", None)
    conv = convert(job)
    (pg_model,) = [c for c in conv.companions if c.get("kind") == "PodGroup"]
    order_free = "JS091" not in {n.code for n in conv.notes}
    templates = {rj["name"]: rj["template"]["spec"]["template"] for rj in conv.jobset["spec"]["replicatedJobs"]}
    return conv, pg_model, order_free, templates, sum(rj["replicas"] for rj in conv.jobset["spec"]["replicatedJobs"])


def apply_conversion(core, custom, pg_api: tuple, pg_model: dict, jobset: dict, ns: str) -> list:
    """The conversion applied as a user would, in ``ns``: its PodGroup, then the JobSet (through the
    webhooks); returns the pods the Job controller makes for the replicatedJobs that wait for none."""
    pg_obj = dict(pg_model, metadata=dict(pg_model["metadata"], namespace=ns))
    custom.create_namespaced_custom_object(*pg_api[:2], ns, pg_api[2], pg_obj)
    custom.create_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", ns, "jobsets", jobset)
    return pods_of(core, ns, sum(rj["replicas"] for rj in jobset["spec"]["replicatedJobs"] if not rj.get("dependsOn")),
                   "the JobSet's pods")


def podgroup_diffs(label: str, real_pg: dict, pg_model: dict, job: dict, jobset: dict, fields: tuple,
                   order_free: bool) -> list[str]:
    """The operator's PodGroup against kf2jobset's: the names (v1's after the job, kf2jobset's after the JobSet),
    ``fields`` of the spec (minResources only where its sum is free of PriorityClass order, JS091), and no
    other spec field set by the operator."""
    print(f"\n{label}: real PodGroup {real_pg['metadata']['name']} {real_pg['spec']} | "
          f"kf2jobset {pg_model['metadata']['name']} {pg_model['spec']}")
    diffs = []
    if real_pg["metadata"]["name"] != job["metadata"]["name"] or pg_model["metadata"]["name"] != jobset["metadata"]["name"]:
        diffs.append(f"PodGroup names: real {real_pg['metadata']['name']!r}, kf2jobset {pg_model['metadata']['name']!r}")
    for f in fields:
        if f == "minResources" and not order_free:
            continue
        if real_pg["spec"].get(f) != pg_model["spec"].get(f):
            diffs.append(f"PodGroup spec.{f}: real {real_pg['spec'].get(f)!r} != kf2jobset {pg_model['spec'].get(f)!r}")
    if set(real_pg["spec"]) - set(fields):
        diffs.append(f"PodGroup spec fields the operator set and the test does not compare: {sorted(set(real_pg['spec']) - set(fields))}")
    return diffs


def pods_of(core, ns: str, n: int, what: str, nudge=None, explain=None) -> list:
    """The first ``n`` pods in ``ns``. ``nudge()`` runs every NUDGE_EVERY seconds while they are missing;
    ``explain()`` says more when the wait ends without them."""
    started = time.monotonic()
    nudged = [0]

    def pods():
        items = core.list_namespaced_pod(ns).items
        if len(items) >= n:
            return items
        due = int((time.monotonic() - started) // NUDGE_EVERY)
        if nudge and due > nudged[0]:
            nudged[0] = due
            nudge(due)
        return None
    try:
        return wait_for(pods, timeout=180, what=what)
    except TimeoutError as e:
        raise TimeoutError(f"{e}; nudged {nudged[0]} times" + (f"\n{explain()}" if explain else "")) from None


# The Training Operator (v1.9 common/scheduling.go SyncPodGroup) reads the PodGroup it just created from its
# informer cache; on a loaded machine the cache can lag, the reconcile ends without pods, and the PodGroup's
# create event does not requeue the job (reconciler.go OnDependentCreateFuncGeneric: no replica-type label).
# Its status update (LastReconcileTime, whole seconds) can be a no-op, so nothing comes back to the job: a
# change to the job's annotations is the event a user's edit would be. The objects compared stay the same.
NUDGE_EVERY = 30


def nudge_job(custom, group_version: tuple, ns: str, plural: str, name: str):
    """A ``nudge`` for pods_of: an annotation change on the v1 job (an update event for its operator)."""
    def nudge(n: int) -> None:
        custom.patch_namespaced_custom_object(*group_version, ns, plural, name,
                                              {"metadata": {"annotations": {"kf2jobset.test/nudge": str(n)}}})
    return nudge


def operator_said(stack, custom, ns: str, job: dict) -> str:
    """The v1 job's status and what the Training Operator logged about it: why no pods came."""
    name, plural = job["metadata"]["name"], job["kind"].lower() + "s"
    try:
        status = custom.get_namespaced_custom_object("kubeflow.org", "v1", ns, plural, name).get("status")
    except Exception as e:  # noqa: BLE001 - a diagnostic: say what the read met instead
        status = f"unreadable: {e}"
    lines = [ln for ln in stack.log_tail("training-operator", 4000).splitlines() if ns in ln]
    return f"{job['kind']} status: {status}\noperator log lines for {ns}:\n" + "\n".join(lines[-40:])
