"""MPIJob v1alpha1 and v1alpha2 (mpi-operator 0.1.0-v0.3.0) read as the kubeflow.org/v1 MPIJob they
meant: the one template split into Launcher and Worker, the worker count from gpus/processingUnits or
replicas, and the launcher and worker details those operators added (see upgrade.py's docstring for
the facts). Its own module because MPIJob's old shape shares nothing with the TFJob/PyTorchJob forms.
"""
from __future__ import annotations

from ..text.treecopy import copy_tree
from .moves import Upgrade, as_mapping, bad, contract, known_fields, map_specs, old_default, run_policy_from_top

_MPI_ALPHA1_FIELDS = ("gpus", "gpusPerNode", "processingUnits", "processingUnitsPerNode", "processingResourceType",
                      "slotsPerWorker", "launcherOnMaster", "backoffLimit", "activeDeadlineSeconds", "replicas", "template")
GPU = "nvidia.com/gpu"
MASTER_ROLE = "node-role.kubernetes.io/master"


def _int_field(spec: dict, key: str):
    value = spec.get(key)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise bad(("spec", key), f"spec.{key} must be an integer")
    return value


def mpi_v1alpha1(up: Upgrade, spec: dict, mapping, source) -> None:
    known_fields(up, spec, _MPI_ALPHA1_FIELDS, "MPIJob v1alpha1")
    template = as_mapping(spec.pop("template", None), ("spec", "template"))
    containers = (template.get("spec") or {}).get("containers") if isinstance(template.get("spec"), dict) else None
    if not isinstance(containers, list) or not containers or not isinstance(containers[0], dict):
        raise bad(("spec", "template", "spec", "containers"), "MPIJob v1alpha1 needs spec.template with a container")
    gpus, units = _int_field(spec, "gpus"), _int_field(spec, "processingUnits")
    replicas = _int_field(spec, "replicas")
    resource = _processing_resource(up, spec)
    if gpus is not None or units is not None:
        workers, per_worker, resource = _workers_from_units(up, spec, gpus, units, replicas, resource)
    elif replicas is not None:
        workers, per_worker = replicas, _limit_per_worker(containers[0], resource)
    else:
        workers, per_worker = 0, 0
    for key in ("gpus", "gpusPerNode", "processingUnits", "processingUnitsPerNode", "replicas"):
        spec.pop(key, None)
    _explicit_slots(up, spec, per_worker)
    launcher, restart = _launcher(up, spec, template)
    specs = {"Launcher": {"replicas": 1, "restartPolicy": restart, "template": launcher}}
    if workers:
        worker = _worker(template, per_worker, resource, counted_units=gpus is not None or units is not None)
        specs["Worker"] = {"replicas": workers, "restartPolicy": "Always", "template": worker}
    spec["mpiReplicaSpecs"] = specs
    for rtype in specs:  # both replica types come from the one template
        up.move(("spec", "mpiReplicaSpecs", rtype, "template"), ("spec", "template"))
        up.move(("spec", "mpiReplicaSpecs", rtype), ("spec", "template"))
        up.move(("spec", "mpiReplicaSpecs", rtype, "restartPolicy"), ("spec", "template", "spec", "restartPolicy"))
    if workers:
        counted = next((k for k, v in (("gpus", gpus), ("processingUnits", units), ("replicas", replicas)) if v is not None))
        up.move(("spec", "mpiReplicaSpecs", "Worker", "replicas"), ("spec", counted))
    up.note("UP031", "rewritten", "spec.template becomes the Launcher (containers[0] without resources, "
            f"restartPolicy {restart}, as the operator's launcher Job)"
            + (f" and {workers} Worker(s) (command and args removed: the operator ran `sleep 365d` there; restartPolicy "
               "Always, as the worker StatefulSet)" if workers else "; no workers (neither gpus, processingUnits nor replicas)"),
            source=("spec", "template"), target=("spec", "mpiReplicaSpecs"))
    run_policy_from_top(up, spec, ("backoffLimit", "activeDeadlineSeconds"))
    old_default(up, spec, "backoffLimit", 6, "the launcher Job's default in MPIJob v1alpha1")
    contract(up, mapping, source)


def _processing_resource(up: Upgrade, spec: dict) -> str:
    resource = spec.pop("processingResourceType", None) or GPU
    if resource not in (GPU, "cpu"):
        up.note("UP030", "rewritten", f"processingResourceType {resource!r} is not nvidia.com/gpu or cpu: the operator used "
                "nvidia.com/gpu", source=("spec", "processingResourceType"))
        resource = GPU
    return resource


def _workers_from_units(up: Upgrade, spec: dict, gpus, units, replicas, resource: str) -> tuple[int, int, str]:
    """gpus or processingUnits spread over workers of (gpus|processingUnits)PerNode each, as the operator did:
    (workers, units per worker, the resource they are)."""
    if gpus is not None and units is not None:
        raise bad(("spec", "processingUnits"), "gpus and processingUnits are both set",
                   hint="the operator refused this job too: keep one")
    field_name = "gpus" if gpus is not None else "processingUnits"
    per_node_field = "gpusPerNode" if gpus is not None else "processingUnitsPerNode"
    if gpus is not None:
        resource = GPU
    total = gpus if gpus is not None else units
    per_node = _int_field(spec, per_node_field)
    assumed = per_node is None
    per_node = 1 if assumed else per_node  # the operator's --gpus-per-node / --processing-units-per-node default
    if per_node <= 0:
        raise bad(("spec", per_node_field), f"spec.{per_node_field} must be positive")
    if total < per_node:
        workers, per_worker = 1, total
    elif total % per_node == 0:
        workers, per_worker = total // per_node, per_node
    else:
        raise bad(("spec", field_name), f"{field_name} {total} is not a multiple of {per_node_field} ({per_node})",
                   hint="the operator refused this job too")
    up.note("UP030", "approximated" if assumed else "rewritten",
            f"{field_name}: {total} becomes {workers} worker(s) with {per_worker} {resource} each "
            f"({per_node} per node{', the operator flag default: spec.' + per_node_field + ' was unset' if assumed else ''})",
            source=("spec", field_name), target=("spec", "mpiReplicaSpecs", "Worker", "replicas"),
            action=(f"if your operator ran with another --{'gpus' if gpus is not None else 'processing-units'}-per-node, "
                    f"set spec.{per_node_field} to it and convert again") if assumed else None)
    if replicas is not None:
        up.note("UP012", "dropped", f"spec.replicas ({replicas}) is ignored when {field_name} is set, as the operator "
                "ignored it", source=("spec", "replicas"))
    return workers, per_worker, resource


def _limit_per_worker(container: dict, resource: str) -> int:
    """With spec.replicas: the processing units per worker are the first container's whole-number limit, else 0."""
    limits = (container.get("resources") or {}).get("limits") if isinstance(container.get("resources"), dict) else None
    value = (limits or {}).get(resource) if isinstance(limits, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else (
        int(value) if isinstance(value, str) and value.isdigit() else 0)


def _explicit_slots(up: Upgrade, spec: dict, per_worker: int) -> None:
    if _int_field(spec, "slotsPerWorker") is not None:
        return
    # the operator's hostfile: processing units per worker, else 1; v1 reads an unset value as 1
    spec["slotsPerWorker"] = per_worker if per_worker > 0 else 1
    if per_worker > 1:
        up.note("UP011", "rewritten", f"slotsPerWorker: {per_worker} made explicit: the v1alpha1 hostfile gave each "
                "worker as many slots as processing units (v1 defaults to 1)", target=("spec", "slotsPerWorker"))


def _launcher(up: Upgrade, spec: dict, template: dict) -> tuple[dict, str]:
    """The launcher's template (the first container without resources, on the master with launcherOnMaster)
    and its restartPolicy."""
    launcher = copy_tree(template)
    lpod = launcher.setdefault("spec", {})
    lc0 = lpod["containers"][0]
    if isinstance(lc0.get("resources"), dict):
        lc0["resources"].pop("limits", None)
        lc0["resources"].pop("requests", None)
        if not lc0["resources"]:
            del lc0["resources"]
    restart = "Never" if lpod.get("restartPolicy") == "Never" else "OnFailure"
    lpod.pop("restartPolicy", None)
    if spec.pop("launcherOnMaster", False) is True:
        lpod["tolerations"] = [{"key": MASTER_ROLE, "effect": "NoSchedule"}]
        lpod["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": MASTER_ROLE, "operator": "Exists"}]}]}}}
        up.note("UP032", "rewritten", "launcherOnMaster: the launcher gets the toleration and node affinity for "
                f"{MASTER_ROLE} the operator gave it (replacing the template's)", source=("spec", "launcherOnMaster"),
                target=("spec", "mpiReplicaSpecs", "Launcher", "template", "spec", "affinity"))
    return launcher, restart


def _worker(template: dict, per_worker: int, resource: str, *, counted_units: bool) -> dict:
    """The workers' template: the first container without its command (the operator ran `sleep 365d`),
    limited to its units of `resource` when they were counted."""
    worker = copy_tree(template)
    wpod = worker.setdefault("spec", {})
    wc0 = wpod["containers"][0]
    wc0.pop("command", None)  # replaced by `sleep 365d`, which v1 runs for a worker without a command
    wc0.pop("args", None)
    wpod.pop("restartPolicy", None)
    if per_worker or counted_units:
        resources = wc0.setdefault("resources", {})
        if not isinstance(resources, dict):
            raise bad(("spec", "template", "spec", "containers", 0, "resources"), "resources must be a mapping")
        resources.setdefault("limits", {})[resource] = per_worker
    return worker


_MPI_ALPHA2_FIELDS = ("slotsPerWorker", "backoffLimit", "activeDeadlineSeconds", "cleanPodPolicy", "mpiReplicaSpecs",
                      "mainContainer", "runPolicy", "mpiDistribution")


def mpi_v1alpha2(up: Upgrade, spec: dict, mapping, source) -> None:
    known_fields(up, spec, _MPI_ALPHA2_FIELDS, "MPIJob v1alpha2")
    specs = map_specs(up, spec, "mpiReplicaSpecs")
    launcher = specs.get("Launcher")
    if isinstance(launcher, dict) and launcher.get("restartPolicy") != "Never":
        if launcher.get("restartPolicy") not in (None, "OnFailure"):
            up.note("UP022", "rewritten", f"Launcher restartPolicy {launcher['restartPolicy']} becomes OnFailure, as the "
                    "operator defaulted it (its launcher was a batch Job)",
                    source=("spec", "mpiReplicaSpecs", "Launcher", "restartPolicy"))
        launcher["restartPolicy"] = "OnFailure"
    worker = specs.get("Worker")
    if isinstance(worker, dict) and worker.get("restartPolicy") != "Always":
        worker["restartPolicy"] = "Always"
        up.note("UP022", "rewritten", "Worker restartPolicy Always: the operator ran workers as a StatefulSet, "
                "whose pods always restart", source=("spec", "mpiReplicaSpecs", "Worker"),
                target=("spec", "mpiReplicaSpecs", "Worker", "restartPolicy"))
    dist = spec.pop("mpiDistribution", None)
    if dist not in (None, "OpenMPI"):
        up.note("UP033", "breaking", f"mpiDistribution {dist}: MPIJob v1 has no such field; the v1alpha2 launcher got "
                + ("I_MPI_HYDRA_BOOTSTRAP_EXEC and I_MPI_HYDRA_HOST_FILE" if dist == "IntelMPI" else
                   "HYDRA_LAUNCHER_EXEC and HYDRA_HOST_FILE") + ", the converted one gets the Open MPI variables",
                source=("spec", "mpiDistribution"), action="set the launcher variables your MPI needs in its env")
    # the v1alpha2 controller read runPolicy.backoffLimit/activeDeadlineSeconds over the top-level ones
    # and cleanPodPolicy from the top level only
    run_policy_from_top(up, spec, ("backoffLimit", "activeDeadlineSeconds", "cleanPodPolicy"),
                         old_runpolicy_read=("backoffLimit", "activeDeadlineSeconds"))
    old_default(up, spec, "backoffLimit", 6, "the launcher Job's default in MPIJob v1alpha2")
    contract(up, mapping, source)

