"""Jobs written for the operators that served pre-v1 apiVersions, read as the kubeflow.org/v1 job
they meant, before parsing. Pure: a dict in, an `Upgrade` (the v1 dict, notes, path moves) out.

Which versions are read is mapping data (mappings/*.yaml `upgradeFrom`); what each version's
operator did is read from its own API types and controller at the tags named below, and every
move is a note at the moment it is made (codes UP0xx). Facts:
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
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable

from .errors import InvalidJobError, Location, Problem, UnsupportedError, format_path
from .notes import Note
from .treecopy import copy_tree

V1 = "kubeflow.org/v1"
_TOKEN = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]")  # a path as format_path writes it
# UP notes describe the older apiVersion read as v1; the v1 job then converts like any other, and
# the JobSet-side claims are its notes' own.
UPGRADE_ONLY = "about reading the older apiVersion as kubeflow.org/v1, before any JobSet exists"
RUN_FIELDS = ("cleanPodPolicy", "ttlSecondsAfterFinished", "activeDeadlineSeconds", "backoffLimit", "schedulingPolicy")


@dataclass
class Upgrade:
    source_api_version: str
    doc: dict  # the job as kubeflow.org/v1
    notes: list[Note] = field(default_factory=list)
    # (path in the v1 job, path in the document as written); the longest matching prefix wins
    moves: list[tuple[tuple, tuple]] = field(default_factory=list)

    def note(self, code, category, message, source=None, target=None, action=None, warn=False):
        self.notes.append(Note(code, category, message, source_path=_text(source), target_path=_text(target),
                               action=action, warn=warn, unchecked=UPGRADE_ONLY))

    def move(self, new: tuple, old: tuple) -> None:
        self.moves.append((tuple(new), tuple(old)))

    def old_path(self, path) -> tuple:
        """Where a path of the v1 job was written in the original document."""
        path = tuple(path)
        best = None
        for new, old in self.moves:
            if path[:len(new)] == new and (best is None or len(new) > len(best[0])):
                best = (new, old)
        return best[1] + path[len(best[0]):] if best else path

    def old_path_text(self, text: str) -> str:
        parts = [m.group(1) if m.group(1) is not None else (int(m.group(2)) if m.group(2).isdigit() else m.group(2))
                 for m in _TOKEN.finditer(text)]
        if not parts:
            return text
        prefixed = parts[0] != "spec" and parts[0] not in ("metadata", "apiVersion", "kind")
        old = self.old_path((("spec",) if prefixed else ()) + tuple(parts))
        if old == (("spec",) if prefixed else ()) + tuple(parts):
            return text
        return format_path(old)

    def relocate(self, err):
        """The error with its paths pointing into the document as written."""
        problems = [Problem(p.message, Location(p.location.file, p.location.document, p.location.line, p.location.column,
                                                self.old_path(p.location.path)), p.rule, p.hint) for p in err.problems]
        return type(err)(problems)


def _text(path) -> str | None:
    if path is None or isinstance(path, str):
        return path
    return format_path(path)


def _bad(path, message, hint=None) -> InvalidJobError:
    return InvalidJobError(Problem(message, Location(path=tuple(path)), rule="schema", hint=hint))


def _refuse(path, message, hint) -> UnsupportedError:
    return UnsupportedError(Problem(message, Location(path=tuple(path)), rule="api-version", hint=hint))


def _mapping(value, path) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _bad(path, f"expected a mapping, got {type(value).__name__}")
    return value


def upgrade(doc: dict, mapping) -> Upgrade:
    """The v1 job `doc` meant; `mapping` is the v1 mapping whose `upgrade_from` lists its apiVersion."""
    api = doc["apiVersion"]
    version = api.split("/", 1)[1]
    convert = CONVERTERS.get((mapping.kind, api))
    if convert is None:  # mappings list a version with no converter: a kf2jobset bug, said plainly
        raise _refuse(("apiVersion",), f"{mapping.kind} {api} has no upgrade in kf2jobset", "report this")
    out = copy_tree(doc)
    out["apiVersion"] = V1
    spec = _mapping(out.get("spec"), ("spec",))
    if out.get("spec") is None:
        spec = out["spec"] = {}
    up = Upgrade(api, out)
    convert(up, spec, mapping, version)
    summary = SUMMARY[(mapping.kind, api)]
    up.notes.insert(0, Note("UP001", "rewritten", f"{mapping.kind} {api} read as {V1}: {summary}",
                            source_path="apiVersion", target_path="apiVersion",
                            action="review the UP notes: each says what the jump to v1 changed", unchecked=UPGRADE_ONLY))
    return up


# --------------------------------------------------------------------------- shared moves

def _known_fields(up: Upgrade, spec: dict, known: tuple, version_name: str) -> None:
    """Spec fields the old operator's types did not have never reached it (its decoder dropped them)."""
    for key in [k for k in spec if k not in known]:
        del spec[key]
        up.note("UP012", "dropped", f"spec.{key} is not a field of {version_name}: its operator never read it",
                source=("spec", key), action=f"remove spec.{key}, or set it in the v1 job if you want it now")


def _run_policy_from_top(up: Upgrade, spec: dict, fields: tuple, old_runpolicy_read: tuple = ()) -> None:
    """Top-level run fields -> runPolicy. `old_runpolicy_read`: runPolicy fields the old operator read
    itself (MPIJob v1alpha2), which then won over the top-level ones; any other runPolicy content was
    never read by it and is dropped."""
    written = spec.get("runPolicy")
    old_rp = _mapping(written, ("spec", "runPolicy"))
    rp: dict = {}
    for key in list(old_rp):
        if key in old_runpolicy_read:
            rp[key] = old_rp[key]
            up.move(("spec", "runPolicy", key), ("spec", "runPolicy", key))
        else:
            up.note("UP012", "dropped", f"spec.runPolicy.{key} was never read by the operator that served {up.source_api_version} "
                    "(it read the top-level fields only)", source=("spec", "runPolicy", key),
                    action=f"move it to the top level of the old job, or set runPolicy.{key} once the job is v1")
    for key in fields:
        if key not in spec:
            continue
        value = spec.pop(key)
        if key in rp:
            up.note("UP013", "rewritten", f"spec.{key} ({value!r}) and spec.runPolicy.{key} ({rp[key]!r}) both set: the "
                    f"{up.source_api_version} operator used runPolicy.{key}, and so does the v1 job",
                    source=("spec", key), target=("spec", "runPolicy", key))
            continue
        rp[key] = value
        up.move(("spec", "runPolicy", key), ("spec", key))
        up.note("UP010", "rewritten", f"spec.{key} moved to spec.runPolicy.{key}", source=("spec", key),
                target=("spec", "runPolicy", key))
    spec.pop("runPolicy", None)
    if rp:
        spec["runPolicy"] = rp


def _old_default(up: Upgrade, spec: dict, key: str, value, why: str) -> None:
    rp = spec.setdefault("runPolicy", {})
    if key not in rp:
        rp[key] = value
        up.move(("spec", "runPolicy", key), ("spec",))
        up.note("UP011", "rewritten", f"runPolicy.{key}: {value} made explicit: {why}",
                source="spec", target=("spec", "runPolicy", key))


def _map_specs(up: Upgrade, spec: dict, field_name: str) -> dict:
    specs = _mapping(spec.get(field_name), ("spec", field_name))
    for key, value in specs.items():
        up.move(("spec", field_name, key), ("spec", field_name, key))
        _mapping(value, ("spec", field_name, key))
    return specs


# --------------------------------------------------------------------------- TFJob / PyTorchJob

_BETA_FIELDS = {"v1alpha2": ("cleanPodPolicy", "ttlSecondsAfterFinished"),
                "v1beta1": ("cleanPodPolicy", "ttlSecondsAfterFinished"),
                "v1beta2": ("activeDeadlineSeconds", "backoffLimit", "cleanPodPolicy", "ttlSecondsAfterFinished")}
_OPERATOR_TAG = {("TFJob", "v1alpha1"): "tf-operator v0.3.0", ("TFJob", "v1alpha2"): "tf-operator v0.3.0",
                 ("TFJob", "v1beta1"): "tf-operator v0.4.0", ("TFJob", "v1beta2"): "tf-operator v0.5.3",
                 ("PyTorchJob", "v1alpha1"): "pytorch-operator v0.3.0", ("PyTorchJob", "v1alpha2"): "pytorch-operator v0.3.0",
                 ("PyTorchJob", "v1beta1"): "pytorch-operator v0.4.0", ("PyTorchJob", "v1beta2"): "pytorch-operator v0.5.0"}


def _map_form(up: Upgrade, spec: dict, mapping, version: str) -> None:
    """TFJob/PyTorchJob v1alpha2, v1beta1, v1beta2: the v1 shape with the run fields at the top."""
    fields = _BETA_FIELDS[version]
    _known_fields(up, spec, (mapping.replica_specs_field, "runPolicy") + fields, f"{mapping.kind} {version}")
    _map_specs(up, spec, mapping.replica_specs_field)
    _run_policy_from_top(up, spec, fields)
    if mapping.kind == "TFJob":
        _old_default(up, spec, "cleanPodPolicy", "Running",
                     f"the default of TFJob {version} (v1 defaults to None: finished jobs would keep running pods)")
    _contract(up, mapping.kind, version)


_V1ALPHA1 = {
    "TFJob": {"type_field": "tfReplicaType", "port_field": "tfPort", "image_field": "tfImage",
              "types": {"MASTER": "Master", "PS": "PS", "WORKER": "Worker"}, "termination": "chief",
              "index_field": "replicaIndex", "known": ("replicaSpecs", "tfImage", "terminationPolicy", "cleanupPodPolicy",
                                                        "schedulerName", "RuntimeId")},
    "PyTorchJob": {"type_field": "replicaType", "port_field": "masterPort", "image_field": "pytorchImage",
                   "types": {"MASTER": "Master", "WORKER": "Worker"}, "termination": "master",
                   "index_field": "replicaRank", "known": ("replicaSpecs", "pytorchImage", "terminationPolicy",
                                                            "schedulerName", "RuntimeId")},
}


def _list_form(up: Upgrade, spec: dict, mapping, version: str) -> None:
    """TFJob/PyTorchJob v1alpha1: a list of replica specs, each naming its type."""
    facts = _V1ALPHA1[mapping.kind]
    kind = mapping.kind
    _known_fields(up, spec, facts["known"], f"{kind} v1alpha1")
    raw = spec.pop("replicaSpecs", None)
    if not isinstance(raw, list) or not raw:
        raise _bad(("spec", "replicaSpecs"), f"{kind} v1alpha1 needs spec.replicaSpecs: a list of replica specs")
    specs: dict = {}
    ports: dict = {}
    for i, item in enumerate(raw):
        where = ("spec", "replicaSpecs", i)
        item = _mapping(item, where)
        old_type = item.get(facts["type_field"], "MASTER")  # the operator's default
        rtype = facts["types"].get(old_type) if isinstance(old_type, str) else None
        if rtype is None:
            raise _bad(where + (facts["type_field"],), f"{facts['type_field']} {old_type!r} is not one of "
                       + ", ".join(facts["types"]), hint="the v1alpha1 operator refused this job too")
        if rtype in specs:
            raise _bad(where + (facts["type_field"],), f"a second replica spec of type {old_type}: the v1alpha1 operator "
                       "created both under the same pod names; v1 has one spec per type", hint="merge them into one")
        template = item.get("template")
        if template is None:
            if old_type == "PS":
                raise _refuse(where, "a PS replica without a template ran the v1alpha1 operator's built-in parameter "
                              f"server (spec.{facts['image_field']} and its gRPC server script); v1 has no such default",
                              "write the parameter server's pod template")
            raise _bad(where + ("template",), f"replica {old_type} has no template", hint="the v1alpha1 operator refused this job too")
        out = {"replicas": item.get("replicas", 1), "template": template}
        extra = [k for k in item if k not in ("replicas", "template", facts["type_field"], facts["port_field"])]
        for k in extra:
            up.note("UP012", "dropped", f"spec.replicaSpecs[{i}].{k} is not a field of {kind} v1alpha1", source=where + (k,))
        template = _mapping(template, where + ("template",))
        pod = _mapping(template.get("spec"), where + ("template", "spec"))
        # v1alpha1 copied the template's restartPolicy onto the pod (unset: the Pod default, Always);
        # v1 sets the pod's from the replica's, so it moves there.
        restart = pod.get("restartPolicy") or "Always"
        out["restartPolicy"] = restart
        up.note("UP022", "rewritten", f"{rtype}: the pod template's restartPolicy ({restart}"
                + ("" if pod.get("restartPolicy") else ", the Pod default") + ") becomes the replica's restartPolicy, "
                "which v1 applies to the pod", source=where + ("template", "spec", "restartPolicy"),
                target=("spec", mapping.replica_specs_field, rtype, "restartPolicy"))
        specs[rtype] = out
        ports[rtype] = item.get(facts["port_field"])
        up.move(("spec", mapping.replica_specs_field, rtype), where)
        up.note("UP020", "rewritten", f"spec.replicaSpecs[{i}] ({facts['type_field']}: {old_type}) becomes "
                f"spec.{mapping.replica_specs_field}.{rtype}", source=where, target=("spec", mapping.replica_specs_field, rtype))
    spec[mapping.replica_specs_field] = specs
    _ports(up, specs, ports, mapping, facts)
    _termination(up, spec, specs, facts, kind)
    _scheduler_name(up, spec, specs, mapping)
    image = spec.pop(facts["image_field"], None)
    if image is not None:
        up.note("UP025", "dropped", f"spec.{facts['image_field']} ({image}) was the image of the operator's built-in pods; "
                "every replica here has its own template", source=("spec", facts["image_field"]))
    spec.pop("RuntimeId", None)  # set by the operator for its pod names, never by users
    if kind == "TFJob":
        policy = spec.pop("cleanupPodPolicy", None)
        rp = spec.setdefault("runPolicy", {})
        if policy is not None:
            rp["cleanPodPolicy"] = policy
            up.move(("spec", "runPolicy", "cleanPodPolicy"), ("spec", "cleanupPodPolicy"))
            up.note("UP010", "rewritten", "spec.cleanupPodPolicy moved to spec.runPolicy.cleanPodPolicy",
                    source=("spec", "cleanupPodPolicy"), target=("spec", "runPolicy", "cleanPodPolicy"))
        else:
            _old_default(up, spec, "cleanPodPolicy", "All", "an unset cleanupPodPolicy deleted every pod of a finished "
                         "TFJob v1alpha1 (v1 defaults to None)")
    _contract(up, kind, version)


def _ports(up: Upgrade, specs: dict, ports: dict, mapping, facts: dict) -> None:
    """tfPort (each replica's TF_CONFIG port) / masterPort (the master's port) -> the default container's
    port named as v1 reads it."""
    default_port = mapping.default_port
    targets = specs if mapping.kind == "TFJob" else {t: s for t, s in specs.items() if t == "Master"}
    master_port = ports.get("Master")
    for rtype, spec in specs.items():
        port = ports.get(rtype)
        if mapping.kind == "PyTorchJob" and rtype == "Worker" and port is not None and port != (master_port or default_port.number):
            up.note("UP021", "approximated", f"Worker masterPort {port} differs from the master's "
                    f"({master_port or default_port.number}): v1 gives every pod the master's port",
                    source=("spec", "replicaSpecs"), target=("spec", mapping.replica_specs_field, "Master"))
        if rtype not in targets or port is None:
            continue
        if not isinstance(port, int) or isinstance(port, bool):
            raise _bad(("spec", mapping.replica_specs_field, rtype, facts["port_field"]), f"{facts['port_field']} must be an integer")
        containers = (spec["template"].get("spec") or {}).get("containers") if isinstance(spec["template"], dict) else None
        container = next((c for c in containers or [] if isinstance(c, dict) and c.get("name") == mapping.default_container), None)
        if container is None:
            continue  # no default container: v1 parse says so
        written = container.get("ports") or []
        if not isinstance(written, list):
            raise _bad(("spec", mapping.replica_specs_field, rtype, "template", "spec", "containers"), "ports must be a list")
        kept = [p for p in written if not (isinstance(p, dict) and p.get("name") == default_port.name)]
        container["ports"] = kept + [{"name": default_port.name, "containerPort": port}]
        up.note("UP021", "rewritten", f"{rtype}: {facts['port_field']} {port} becomes port {default_port.name} of container "
                f"{mapping.default_container}, where v1 reads it", source=("spec", mapping.replica_specs_field, rtype),
                target=("spec", mapping.replica_specs_field, rtype, "template", "spec", "containers"))


def _termination(up: Upgrade, spec: dict, specs: dict, facts: dict, kind: str) -> None:
    """terminationPolicy.<chief|master> named the replica whose success ended the job (default MASTER 0).
    v1 has no such field: its rule is the Master (or Chief), else TF worker 0. Other choices cannot be kept."""
    where = ("spec", "terminationPolicy")
    policy = _mapping(spec.pop("terminationPolicy", None), where)
    chief = _mapping(policy.get(facts["termination"]), where + (facts["termination"],))
    name = chief.get("replicaName", "MASTER")
    index = chief.get(facts["index_field"], 0)
    rtype = facts["types"].get(name) if isinstance(name, str) else None
    if rtype is None or rtype not in specs:
        raise _bad(where + (facts["termination"], "replicaName"), f"terminationPolicy names replica {name!r}, which the "
                   "job does not have", hint="the v1alpha1 operator refused this job too")
    if rtype == "Master" and index == 0:
        if policy:
            up.note("UP023", "rewritten", "terminationPolicy (MASTER 0) is v1's rule: the master's success ends the job",
                    source=where)
        return
    if kind == "TFJob" and rtype == "Worker" and index == 0 and "Master" not in specs:
        up.note("UP023", "rewritten", "terminationPolicy (WORKER 0) is v1's rule for a TFJob without chief or master",
                source=where)
        return
    raise _refuse(where + (facts["termination"],), f"terminationPolicy.{facts['termination']} names {name} "
                  f"{facts['index_field']} {index}: v1 cannot make that replica's success end the job",
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


# --------------------------------------------------------------------------- runtime contract

_CONTRACT = {
    ("TFJob", "v1alpha1"): "Services were <job>-<type>-<runtimeId>-<index> (pods with a random suffix) with labels "
                           "job_type, tf_job_name, task_index; TF_CONFIG had the same cluster/task/environment keys",
    ("PyTorchJob", "v1alpha1"): "the master got MASTER_ADDR=localhost, every pytorch container also a TF_CONFIG and "
                                "PYTHONUNBUFFERED=0, and no init container waited for the master",
    ("PyTorchJob", None): "the master got MASTER_ADDR=localhost, every pod PYTHONUNBUFFERED=0 and no PET_* "
                          "variables, and no init container waited for the master",
    ("TFJob", None): "pods carried that operator's labels (group_name or group-name, tf_job_name or tf-job-name, "
                     "tf-replica-type, tf-replica-index), not training.kubeflow.org/*",
    ("MPIJob", None): "workers were a StatefulSet (<job>-worker-<i>) restarted by it, the launcher a batch Job "
                      "(<job>-launcher-<random>) with labels mpi-job-name, mpi-job-role",
    ("XGBoostJob", None): "pods got PYTHONUNBUFFERED=0 and no WORKER_ADDRS/WORKER_PORT",
}


def _contract(up: Upgrade, kind: str, version: str) -> None:
    old = _CONTRACT.get((kind, version)) or _CONTRACT[(kind, None)]
    tag = _OPERATOR_TAG.get((kind, version)) or {"MPIJob": "mpi-operator " + ("0.1.0-v0.3.0" if version == "v1alpha1" else "v0.2-v0.3.0"),
                                                 "XGBoostJob": "xgboost-operator v0.1.0/v0.2.0"}[kind]
    up.note("UP002", "approximated", f"the JobSet carries training-operator v1's runtime contract (env, labels, pod names, "
            f"start order, success and restart rules); under {tag} {old}",
            source="apiVersion", action="check code that read what the old operator injected")


# --------------------------------------------------------------------------- MPIJob

_MPI_ALPHA1_FIELDS = ("gpus", "gpusPerNode", "processingUnits", "processingUnitsPerNode", "processingResourceType",
                      "slotsPerWorker", "launcherOnMaster", "backoffLimit", "activeDeadlineSeconds", "replicas", "template")
GPU = "nvidia.com/gpu"
MASTER_ROLE = "node-role.kubernetes.io/master"


def _int_field(spec: dict, key: str):
    value = spec.get(key)
    if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
        raise _bad(("spec", key), f"spec.{key} must be an integer")
    return value


def _mpi_v1alpha1(up: Upgrade, spec: dict, mapping, version: str) -> None:
    _known_fields(up, spec, _MPI_ALPHA1_FIELDS, "MPIJob v1alpha1")
    template = _mapping(spec.pop("template", None), ("spec", "template"))
    containers = (template.get("spec") or {}).get("containers") if isinstance(template.get("spec"), dict) else None
    if not isinstance(containers, list) or not containers or not isinstance(containers[0], dict):
        raise _bad(("spec", "template", "spec", "containers"), "MPIJob v1alpha1 needs spec.template with a container")
    gpus, units = _int_field(spec, "gpus"), _int_field(spec, "processingUnits")
    replicas = _int_field(spec, "replicas")
    resource = spec.pop("processingResourceType", None) or GPU
    if resource not in (GPU, "cpu"):
        up.note("UP030", "rewritten", f"processingResourceType {resource!r} is not nvidia.com/gpu or cpu: the operator used "
                "nvidia.com/gpu", source=("spec", "processingResourceType"))
        resource = GPU
    per_worker = 0
    if gpus is not None or units is not None:
        if gpus is not None and units is not None:
            raise _bad(("spec", "processingUnits"), "gpus and processingUnits are both set",
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
            raise _bad(("spec", per_node_field), f"spec.{per_node_field} must be positive")
        if total < per_node:
            workers, per_worker = 1, total
        elif total % per_node == 0:
            workers, per_worker = total // per_node, per_node
        else:
            raise _bad(("spec", field_name), f"{field_name} {total} is not a multiple of {per_node_field} ({per_node})",
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
    elif replicas is not None:
        workers = replicas
        limits = (containers[0].get("resources") or {}).get("limits") if isinstance(containers[0].get("resources"), dict) else None
        value = (limits or {}).get(resource) if isinstance(limits, dict) else None
        per_worker = value if isinstance(value, int) and not isinstance(value, bool) else (
            int(value) if isinstance(value, str) and value.isdigit() else 0)
    else:
        workers = 0
    for key in ("gpus", "gpusPerNode", "processingUnits", "processingUnitsPerNode", "replicas"):
        spec.pop(key, None)
    slots = _int_field(spec, "slotsPerWorker")
    if slots is None:
        # the operator's hostfile: processing units per worker, else 1; v1 reads an unset value as 1
        spec["slotsPerWorker"] = per_worker if per_worker > 0 else 1
        if per_worker > 1:
            up.note("UP011", "rewritten", f"slotsPerWorker: {per_worker} made explicit: the v1alpha1 hostfile gave each "
                    "worker as many slots as processing units (v1 defaults to 1)", target=("spec", "slotsPerWorker"))
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
    specs = {"Launcher": {"replicas": 1, "restartPolicy": restart, "template": launcher}}
    if workers:
        worker = copy_tree(template)
        wpod = worker.setdefault("spec", {})
        wc0 = wpod["containers"][0]
        wc0.pop("command", None)  # replaced by `sleep 365d`, which v1 runs for a worker without a command
        wc0.pop("args", None)
        wpod.pop("restartPolicy", None)
        if per_worker or gpus is not None or units is not None:
            resources = wc0.setdefault("resources", {})
            if not isinstance(resources, dict):
                raise _bad(("spec", "template", "spec", "containers", 0, "resources"), "resources must be a mapping")
            resources.setdefault("limits", {})[resource] = per_worker
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
    _run_policy_from_top(up, spec, ("backoffLimit", "activeDeadlineSeconds"))
    _old_default(up, spec, "backoffLimit", 6, "the launcher Job's default in MPIJob v1alpha1")
    _contract(up, "MPIJob", version)


_MPI_ALPHA2_FIELDS = ("slotsPerWorker", "backoffLimit", "activeDeadlineSeconds", "cleanPodPolicy", "mpiReplicaSpecs",
                      "mainContainer", "runPolicy", "mpiDistribution")


def _mpi_v1alpha2(up: Upgrade, spec: dict, mapping, version: str) -> None:
    _known_fields(up, spec, _MPI_ALPHA2_FIELDS, "MPIJob v1alpha2")
    specs = _map_specs(up, spec, "mpiReplicaSpecs")
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
    _run_policy_from_top(up, spec, ("backoffLimit", "activeDeadlineSeconds", "cleanPodPolicy"),
                         old_runpolicy_read=("backoffLimit", "activeDeadlineSeconds"))
    _old_default(up, spec, "backoffLimit", 6, "the launcher Job's default in MPIJob v1alpha2")
    _contract(up, "MPIJob", version)


# --------------------------------------------------------------------------- XGBoostJob

def _xgboost(up: Upgrade, spec: dict, mapping, version: str) -> None:
    _known_fields(up, spec, ("xgbReplicaSpecs", "runPolicy") + RUN_FIELDS, f"XGBoostJob {up.source_api_version}")
    specs = _map_specs(up, spec, "xgbReplicaSpecs")
    _run_policy_from_top(up, spec, RUN_FIELDS)
    for rtype, rspec in specs.items():
        pod = (rspec.get("template") or {}).get("spec") if isinstance(rspec.get("template"), dict) else None
        containers = pod.get("containers") if isinstance(pod, dict) else None
        if not isinstance(containers, list):
            continue
        names = [c.get("name") for c in containers if isinstance(c, dict)]
        if "xgboost" not in names and "xgboostjob" in names:
            i = names.index("xgboostjob")
            containers[i]["name"] = "xgboost"
            up.note("UP034", "rewritten", f"{rtype}: container xgboostjob renamed xgboost: the old operator's default "
                    "container (its port xgboostjob-port) has v1's default name", source=("spec", "xgbReplicaSpecs", rtype,
                    "template", "spec", "containers", i, "name"), action="kubectl logs -c xgboost from now on")
    _contract(up, "XGBoostJob", version)


# --------------------------------------------------------------------------- table

Converter = Callable[[Upgrade, dict, Any, str], None]
CONVERTERS: dict[tuple[str, str], Converter] = {
    ("TFJob", "kubeflow.org/v1alpha1"): _list_form, ("TFJob", "kubeflow.org/v1alpha2"): _map_form,
    ("TFJob", "kubeflow.org/v1beta1"): _map_form, ("TFJob", "kubeflow.org/v1beta2"): _map_form,
    ("PyTorchJob", "kubeflow.org/v1alpha1"): _list_form, ("PyTorchJob", "kubeflow.org/v1alpha2"): _map_form,
    ("PyTorchJob", "kubeflow.org/v1beta1"): _map_form, ("PyTorchJob", "kubeflow.org/v1beta2"): _map_form,
    ("MPIJob", "kubeflow.org/v1alpha1"): _mpi_v1alpha1, ("MPIJob", "kubeflow.org/v1alpha2"): _mpi_v1alpha2,
    ("XGBoostJob", "xgboostjob.kubeflow.org/v1alpha1"): _xgboost, ("XGBoostJob", "xgboostjob.kubeflow.org/v1"): _xgboost,
}
SUMMARY = {
    ("TFJob", "kubeflow.org/v1alpha1"): "the replica list becomes tfReplicaSpecs, tfPort the tfjob-port, terminationPolicy v1's "
                           "success rule, cleanupPodPolicy runPolicy.cleanPodPolicy",
    ("TFJob", "kubeflow.org/v1alpha2"): "top-level cleanPodPolicy/ttlSecondsAfterFinished move into runPolicy",
    ("TFJob", "kubeflow.org/v1beta1"): "top-level cleanPodPolicy/ttlSecondsAfterFinished move into runPolicy",
    ("TFJob", "kubeflow.org/v1beta2"): "top-level cleanPodPolicy/ttlSecondsAfterFinished/activeDeadlineSeconds/backoffLimit move into runPolicy",
    ("PyTorchJob", "kubeflow.org/v1alpha1"): "the replica list becomes pytorchReplicaSpecs, masterPort the pytorchjob-port, "
                                "terminationPolicy v1's success rule",
    ("PyTorchJob", "kubeflow.org/v1alpha2"): "top-level cleanPodPolicy/ttlSecondsAfterFinished move into runPolicy",
    ("PyTorchJob", "kubeflow.org/v1beta1"): "top-level cleanPodPolicy/ttlSecondsAfterFinished move into runPolicy",
    ("PyTorchJob", "kubeflow.org/v1beta2"): "top-level cleanPodPolicy/ttlSecondsAfterFinished/activeDeadlineSeconds/backoffLimit move into runPolicy",
    ("MPIJob", "kubeflow.org/v1alpha1"): "the one template becomes Launcher and Worker specs, gpus/replicas the worker count, "
                            "backoffLimit/activeDeadlineSeconds runPolicy",
    ("MPIJob", "kubeflow.org/v1alpha2"): "top-level backoffLimit/activeDeadlineSeconds/cleanPodPolicy move into runPolicy",
    ("XGBoostJob", "xgboostjob.kubeflow.org/v1alpha1"): "group xgboostjob.kubeflow.org becomes kubeflow.org, top-level "
                                                        "run fields move into runPolicy",
    ("XGBoostJob", "xgboostjob.kubeflow.org/v1"): "group xgboostjob.kubeflow.org becomes kubeflow.org, top-level run "
                                                  "fields move into runPolicy",
}
