"""Jobs written for the operators that served pre-v1 apiVersions, read as the kubeflow.org/v1 job
they meant, before parsing. Pure: a dict in, an `Upgrade` (the v1 dict, notes, path moves) out.

Which versions are read, the reader of each one's shape (READERS) and its operator's facts are
mapping data (mappings/*.yaml `upgradeFrom`); what each version's operator did is read from its own
API types and controller at the tags named below, and every move is a note at the moment it is made
(codes UP0xx). Facts:
- TFJob v1alpha1 (tf-operator v0.3.0 `pkg/apis/tensorflow/v1alpha1`, `pkg/trainer`): a list of
  replica specs with `tfReplicaType` MASTER/PS/WORKER and `tfPort`; `terminationPolicy.chief`;
  `cleanupPodPolicy` (unset = All); `schedulerName` set on every pod.
- TFJob v1alpha2, v1beta1 (v0.3.0, v0.4.0): top-level `cleanPodPolicy` (default Running) and
  `ttlSecondsAfterFinished`; v1beta2 (v0.5.3) adds top-level `activeDeadlineSeconds`, `backoffLimit`.
- PyTorchJob v1alpha1 (pytorch-operator v0.3.0): replica list with `replicaType` MASTER/WORKER and
  `masterPort`; `terminationPolicy.master`; `schedulerName`. v1alpha2/v1beta1/v1beta2 (v0.3.0,
  v0.4.0, v0.5.0): as TFJob, default cleanPodPolicy None.
- MPIJob v1alpha1 (mpi-operator 0.1.0-v0.3.0): one `template` for launcher and workers; worker count
  from `gpus`/`processingUnits` over the per-node value (spec, else the operator flag, default 1),
  or `replicas`; workers a StatefulSet running `sleep 365d`; launcher a batch Job (backoffLimit 6).
- MPIJob v1alpha2 (v0.2.x-v0.3.0): launcher/worker specs, top-level run fields; `runPolicy`'s
  backoffLimit/activeDeadlineSeconds override them (the controller says so); `mpiDistribution`.
- XGBoostJob xgboostjob.kubeflow.org/v1alpha1 and /v1 (xgboost-operator v0.1.0, v0.2.0): RunPolicy
  inline at the top of spec; default container `xgboostjob`.
- MXJob kubeflow.org/v1beta1 (mxnet-operator v0.1.0-v1.1.0): upgrade_mxnet.py.
"""
from __future__ import annotations

from typing import Any, Callable

from ..mappings import UpgradeSource
from ..notes import Note
from ..text.treecopy import copy_tree
from .moves import (
    RUN_FIELDS,
    UPGRADE_ONLY,
    Upgrade,
    as_mapping,
    bad,
    contract,
    known_fields,
    map_specs,
    old_default,
    refuse,
    run_policy_from_top,
)
from .mpi import mpi_v1alpha1, mpi_v1alpha2
from .mxnet import mx_v1beta1

V1 = "kubeflow.org/v1"


def upgrade(doc: dict, mapping) -> Upgrade:
    """The v1 job `doc` meant; `mapping` is the v1 mapping whose `upgrade_from` lists its apiVersion."""
    api = doc["apiVersion"]
    source = mapping.upgrade_source(api)
    read = READERS.get(source.reader) if source is not None else None
    if read is None:  # mappings list a version with no reader: a kf2jobset bug, said plainly
        raise refuse(("apiVersion",), f"{mapping.kind} {api} has no upgrade in kf2jobset", "report this")
    out = copy_tree(doc)
    out["apiVersion"] = V1
    spec = as_mapping(out.get("spec"), ("spec",))
    if out.get("spec") is None:
        spec = out["spec"] = {}
    up = Upgrade(api, out)
    read(up, spec, mapping, source)
    up.notes.insert(0, Note("UP001", "rewritten", f"{mapping.kind} {api} read as {V1}: {source.summary}",
                            source_path="apiVersion", target_path="apiVersion",
                            action="review the UP notes: each says what the jump to v1 changed", unchecked=UPGRADE_ONLY))
    return up


# --------------------------------------------------------------------------- TFJob / PyTorchJob shapes

_BETA_FIELDS = {"v1alpha2": ("cleanPodPolicy", "ttlSecondsAfterFinished"),
                "v1beta1": ("cleanPodPolicy", "ttlSecondsAfterFinished"),
                "v1beta2": ("activeDeadlineSeconds", "backoffLimit", "cleanPodPolicy", "ttlSecondsAfterFinished")}

def _map_form(up: Upgrade, spec: dict, mapping, source: UpgradeSource) -> None:
    """TFJob/PyTorchJob v1alpha2, v1beta1, v1beta2: the v1 shape with the run fields at the top."""
    version = source.version
    fields = _BETA_FIELDS[version]
    known_fields(up, spec, (mapping.replica_specs_field, "runPolicy") + fields, f"{mapping.kind} {version}")
    map_specs(up, spec, mapping.replica_specs_field)
    run_policy_from_top(up, spec, fields)
    if source.clean_pod_policy_default:
        old_default(up, spec, "cleanPodPolicy", *source.clean_pod_policy_default)
    contract(up, mapping, source)


def _list_form(up: Upgrade, spec: dict, mapping, source: UpgradeSource) -> None:
    """TFJob/PyTorchJob v1alpha1: a list of replica specs, each naming its type (field names: the mapping's
    `replicaList`)."""
    facts = source.replica_list
    kind = mapping.kind
    known_fields(up, spec, facts["known"], f"{kind} v1alpha1")
    raw = spec.pop("replicaSpecs", None)
    if not isinstance(raw, list) or not raw:
        raise bad(("spec", "replicaSpecs"), f"{kind} v1alpha1 needs spec.replicaSpecs: a list of replica specs")
    specs: dict = {}
    ports: dict = {}
    for i, item in enumerate(raw):
        where = ("spec", "replicaSpecs", i)
        item = as_mapping(item, where)
        old_type = item.get(facts["typeField"], "MASTER")  # the operator's default
        rtype = facts["types"].get(old_type) if isinstance(old_type, str) else None
        if rtype is None:
            raise bad(where + (facts["typeField"],), f"{facts['typeField']} {old_type!r} is not one of "
                       + ", ".join(facts["types"]), hint="the v1alpha1 operator refused this job too")
        if rtype in specs:
            raise bad(where + (facts["typeField"],), f"a second replica spec of type {old_type}: the v1alpha1 operator "
                       "created both under the same pod names; v1 has one spec per type", hint="merge them into one")
        template = item.get("template")
        if template is None:
            if old_type == "PS":
                raise refuse(where, "a PS replica without a template ran the v1alpha1 operator's built-in parameter "
                              f"server (spec.{facts['imageField']} and its gRPC server script); v1 has no such default",
                              "write the parameter server's pod template")
            raise bad(where + ("template",), f"replica {old_type} has no template", hint="the v1alpha1 operator refused this job too")
        out = {"replicas": item.get("replicas", 1), "template": template}
        extra = [k for k in item if k not in ("replicas", "template", facts["typeField"], facts["portField"])]
        for k in extra:
            up.note("UP012", "dropped", f"spec.replicaSpecs[{i}].{k} is not a field of {kind} v1alpha1", source=where + (k,))
        template = as_mapping(template, where + ("template",))
        pod = as_mapping(template.get("spec"), where + ("template", "spec"))
        # v1alpha1 copied the template's restartPolicy onto the pod (unset: the Pod default, Always);
        # v1 sets the pod's from the replica's, so it moves there.
        restart = pod.get("restartPolicy") or "Always"
        out["restartPolicy"] = restart
        up.note("UP022", "rewritten", f"{rtype}: the pod template's restartPolicy ({restart}"
                + ("" if pod.get("restartPolicy") else ", the Pod default") + ") becomes the replica's restartPolicy, "
                "which v1 applies to the pod", source=where + ("template", "spec", "restartPolicy"),
                target=("spec", mapping.replica_specs_field, rtype, "restartPolicy"))
        specs[rtype] = out
        ports[rtype] = item.get(facts["portField"])
        up.move(("spec", mapping.replica_specs_field, rtype), where)
        up.note("UP020", "rewritten", f"spec.replicaSpecs[{i}] ({facts['typeField']}: {old_type}) becomes "
                f"spec.{mapping.replica_specs_field}.{rtype}", source=where, target=("spec", mapping.replica_specs_field, rtype))
    spec[mapping.replica_specs_field] = specs
    _ports(up, specs, ports, mapping, facts)
    _termination(up, spec, specs, facts, kind)
    _scheduler_name(up, spec, specs, mapping)
    image = spec.pop(facts["imageField"], None)
    if image is not None:
        up.note("UP025", "dropped", f"spec.{facts['imageField']} ({image}) was the image of the operator's built-in pods; "
                "every replica here has its own template", source=("spec", facts["imageField"]))
    spec.pop("RuntimeId", None)  # set by the operator for its pod names, never by users
    policy = spec.pop("cleanupPodPolicy", None)  # only where `known` has it (TFJob)
    if policy is not None:
        spec.setdefault("runPolicy", {})["cleanPodPolicy"] = policy
        up.move(("spec", "runPolicy", "cleanPodPolicy"), ("spec", "cleanupPodPolicy"))
        up.note("UP010", "rewritten", "spec.cleanupPodPolicy moved to spec.runPolicy.cleanPodPolicy",
                source=("spec", "cleanupPodPolicy"), target=("spec", "runPolicy", "cleanPodPolicy"))
    elif source.clean_pod_policy_default:
        old_default(up, spec, "cleanPodPolicy", *source.clean_pod_policy_default)
    contract(up, mapping, source)


def _ports(up: Upgrade, specs: dict, ports: dict, mapping, facts: dict) -> None:
    """tfPort (each replica's TF_CONFIG port) / masterPort (the master's port) -> the default container's
    port named as v1 reads it."""
    default_port = mapping.default_port
    port_on = facts.get("portOn")  # the types whose port v1 reads (unset: every type's own)
    targets = specs if port_on is None else {t: s for t, s in specs.items() if t in port_on}
    for rtype, spec in specs.items():
        port = ports.get(rtype)
        if port_on is not None and rtype not in port_on and port is not None:
            owner = port_on[0]
            expected = ports.get(owner) or default_port.number
            if port != expected:
                up.note("UP021", "approximated", f"{rtype} {facts['portField']} {port} differs from the {owner.lower()}'s "
                        f"({expected}): v1 gives every pod the {owner.lower()}'s port",
                        source=("spec", "replicaSpecs"), target=("spec", mapping.replica_specs_field, owner))
        if rtype not in targets or port is None:
            continue
        if not isinstance(port, int) or isinstance(port, bool):
            raise bad(("spec", mapping.replica_specs_field, rtype, facts["portField"]), f"{facts['portField']} must be an integer")
        containers = (spec["template"].get("spec") or {}).get("containers") if isinstance(spec["template"], dict) else None
        container = next((c for c in containers or [] if isinstance(c, dict) and c.get("name") == mapping.default_container), None)
        if container is None:
            continue  # no default container: v1 parse says so
        written = container.get("ports") or []
        if not isinstance(written, list):
            raise bad(("spec", mapping.replica_specs_field, rtype, "template", "spec", "containers"), "ports must be a list")
        kept = [p for p in written if not (isinstance(p, dict) and p.get("name") == default_port.name)]
        container["ports"] = kept + [{"name": default_port.name, "containerPort": port}]
        up.note("UP021", "rewritten", f"{rtype}: {facts['portField']} {port} becomes port {default_port.name} of container "
                f"{mapping.default_container}, where v1 reads it", source=("spec", mapping.replica_specs_field, rtype),
                target=("spec", mapping.replica_specs_field, rtype, "template", "spec", "containers"))


def _termination(up: Upgrade, spec: dict, specs: dict, facts: dict, kind: str) -> None:
    """terminationPolicy.<chief|master> named the replica whose success ended the job (default MASTER 0).
    v1 has no such field: its rule is the Master (or Chief), else TF worker 0. Other choices cannot be kept."""
    where = ("spec", "terminationPolicy")
    policy = as_mapping(spec.pop("terminationPolicy", None), where)
    chief = as_mapping(policy.get(facts["termination"]), where + (facts["termination"],))
    name = chief.get("replicaName", "MASTER")
    index = chief.get(facts["indexField"], 0)
    rtype = facts["types"].get(name) if isinstance(name, str) else None
    if rtype is None or rtype not in specs:
        raise bad(where + (facts["termination"], "replicaName"), f"terminationPolicy names replica {name!r}, which the "
                   "job does not have", hint="the v1alpha1 operator refused this job too")
    if rtype == "Master" and index == 0:
        if policy:
            up.note("UP023", "rewritten", "terminationPolicy (MASTER 0) is v1's rule: the master's success ends the job",
                    source=where)
        return
    if facts.get("workerZeroEnds") and rtype == "Worker" and index == 0 and "Master" not in specs:
        up.note("UP023", "rewritten", f"terminationPolicy (WORKER 0) is v1's rule for a {kind} without chief or master",
                source=where)
        return
    raise refuse(where + (facts["termination"],), f"terminationPolicy.{facts['termination']} names {name} "
                  f"{facts['indexField']} {index}: v1 cannot make that replica's success end the job",
                  "v1 ends the job on the master's success (TFJob without master: worker 0); add a master or adapt the job")


def _scheduler_name(up: Upgrade, spec: dict, specs: dict, mapping) -> None:
    """v1alpha1 set every pod's schedulerName to spec.schedulerName (also when unset: the default scheduler)."""
    name = spec.pop("schedulerName", None)
    for rtype, rspec in specs.items():
        pod = (rspec["template"] or {}).get("spec") if isinstance(rspec["template"], dict) else None
        if not isinstance(pod, dict):
            continue
        if name:
            pod["schedulerName"] = name
        elif pod.get("schedulerName"):
            up.note("UP024", "rewritten", f"{rtype}: the template's schedulerName {pod['schedulerName']!r} removed: the "
                    "v1alpha1 operator replaced it with spec.schedulerName (unset: the default scheduler)",
                    source=("spec", mapping.replica_specs_field, rtype, "template", "spec", "schedulerName"))
            del pod["schedulerName"]
    if name:
        up.note("UP024", "rewritten", f"spec.schedulerName {name!r} set on every pod template, as the operator set it on every pod",
                source=("spec", "schedulerName"))

# --------------------------------------------------------------------------- XGBoostJob

def _inline_run_policy(up: Upgrade, spec: dict, mapping, source: UpgradeSource) -> None:
    """The standalone xgboost-operator's XGBoostJob: RunPolicy inline at the top of spec, and its own
    default container name (`oldDefaultContainer`)."""
    field = mapping.replica_specs_field
    known_fields(up, spec, (field, "runPolicy") + RUN_FIELDS, f"{mapping.kind} {up.source_api_version}")
    specs = map_specs(up, spec, field)
    run_policy_from_top(up, spec, RUN_FIELDS)
    old, new = source.old_default_container, mapping.default_container
    for rtype, rspec in specs.items():
        if not isinstance(rspec, dict):
            continue  # a null replica spec: the parser refuses it with its place
        pod = rspec["template"].get("spec") if isinstance(rspec.get("template"), dict) else None
        containers = pod.get("containers") if isinstance(pod, dict) else None
        if not isinstance(containers, list) or not old:
            continue
        names = [c.get("name") for c in containers if isinstance(c, dict)]
        if new not in names and old in names:
            i = names.index(old)
            containers[i]["name"] = new
            up.note("UP034", "rewritten", f"{rtype}: container {old} renamed {new}: the old operator's default "
                    f"container (its port {mapping.default_port.name}) has v1's default name", source=("spec", field, rtype,
                    "template", "spec", "containers", i, "name"), action=f"kubectl logs -c {new} from now on")
    contract(up, mapping, source)


# --------------------------------------------------------------------------- readers

Reader = Callable[[Upgrade, dict, Any, UpgradeSource], None]
# The shapes of the older apiVersions, by the name their mapping entry gives (`upgradeFrom[].reader`).
READERS: dict[str, Reader] = {
    "replicaList": _list_form, "runFieldsOnTop": _map_form, "inlineRunPolicy": _inline_run_policy,
    "mpiOneTemplate": mpi_v1alpha1, "mpiRunFieldsOnTop": mpi_v1alpha2, "mxnetReplicaLabels": mx_v1beta1,
}


# fields of MPIJob v1alpha1 that hold a number of their own, read into others (a total over the workers)
_MPI_ALPHA1_TOTALS = ("gpus", "gpusPerNode", "processingUnits", "processingUnitsPerNode")


def v1_path(mapping, api_version: str, path: tuple) -> tuple | None:
    """Where a field of a document written for an older apiVersion is read in the v1 job it is upgraded to,
    for what reads such documents before they are upgraded (a chart's stand-ins take the v1 field's shape);
    None: a field with no one place there (a list form's replica, a total the worker count is derived from)."""
    source = mapping.upgrade_source(api_version)
    reader = source.reader if source is not None else None
    top = path[1] if len(path) > 1 and path[0] == "spec" else None
    if reader == "mpiOneTemplate":
        if top == "template":  # the workers' template (the launcher's is a copy of it)
            return ("spec", "mpiReplicaSpecs", "Worker") + path[1:]
        if top == "replicas":
            return ("spec", "mpiReplicaSpecs", "Worker", "replicas")
        if top in _MPI_ALPHA1_TOTALS:
            return None
    if reader == "replicaList" and top == "replicaSpecs":
        return None
    if reader in ("runFieldsOnTop", "inlineRunPolicy", "mpiOneTemplate", "mpiRunFieldsOnTop") and top in RUN_FIELDS:
        return ("spec", "runPolicy") + path[1:]
    return path
