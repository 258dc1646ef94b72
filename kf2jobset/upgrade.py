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
- MXJob kubeflow.org/v1beta1 (mxnet-operator v0.1.0-v1.1.0): upgrade_mxnet.py.
"""
from __future__ import annotations

from typing import Any, Callable

from .notes import Note
from .treecopy import copy_tree
from .upgrade_moves import (RUN_FIELDS, UPGRADE_ONLY, Upgrade, as_mapping, bad, contract, known_fields,
                            map_specs, old_default, refuse, run_policy_from_top)
from .upgrade_mpi import mpi_v1alpha1, mpi_v1alpha2
from .upgrade_mxnet import SUMMARY as MX_SUMMARY
from .upgrade_mxnet import mx_v1beta1

V1 = "kubeflow.org/v1"


def upgrade(doc: dict, mapping) -> Upgrade:
    """The v1 job `doc` meant; `mapping` is the v1 mapping whose `upgrade_from` lists its apiVersion."""
    api = doc["apiVersion"]
    version = api.split("/", 1)[1]
    convert = CONVERTERS.get((mapping.kind, api))
    if convert is None:  # mappings list a version with no converter: a kf2jobset bug, said plainly
        raise refuse(("apiVersion",), f"{mapping.kind} {api} has no upgrade in kf2jobset", "report this")
    out = copy_tree(doc)
    out["apiVersion"] = V1
    spec = as_mapping(out.get("spec"), ("spec",))
    if out.get("spec") is None:
        spec = out["spec"] = {}
    up = Upgrade(api, out)
    convert(up, spec, mapping, version)
    summary = SUMMARY[(mapping.kind, api)]
    up.notes.insert(0, Note("UP001", "rewritten", f"{mapping.kind} {api} read as {V1}: {summary}",
                            source_path="apiVersion", target_path="apiVersion",
                            action="review the UP notes: each says what the jump to v1 changed", unchecked=UPGRADE_ONLY))
    return up


# --------------------------------------------------------------------------- TFJob / PyTorchJob

_BETA_FIELDS = {"v1alpha2": ("cleanPodPolicy", "ttlSecondsAfterFinished"),
                "v1beta1": ("cleanPodPolicy", "ttlSecondsAfterFinished"),
                "v1beta2": ("activeDeadlineSeconds", "backoffLimit", "cleanPodPolicy", "ttlSecondsAfterFinished")}

def _map_form(up: Upgrade, spec: dict, mapping, version: str) -> None:
    """TFJob/PyTorchJob v1alpha2, v1beta1, v1beta2: the v1 shape with the run fields at the top."""
    fields = _BETA_FIELDS[version]
    known_fields(up, spec, (mapping.replica_specs_field, "runPolicy") + fields, f"{mapping.kind} {version}")
    map_specs(up, spec, mapping.replica_specs_field)
    run_policy_from_top(up, spec, fields)
    if mapping.kind == "TFJob":
        old_default(up, spec, "cleanPodPolicy", "Running",
                     f"the default of TFJob {version} (v1 defaults to None: finished jobs would keep running pods)")
    contract(up, mapping.kind, version)


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
    known_fields(up, spec, facts["known"], f"{kind} v1alpha1")
    raw = spec.pop("replicaSpecs", None)
    if not isinstance(raw, list) or not raw:
        raise bad(("spec", "replicaSpecs"), f"{kind} v1alpha1 needs spec.replicaSpecs: a list of replica specs")
    specs: dict = {}
    ports: dict = {}
    for i, item in enumerate(raw):
        where = ("spec", "replicaSpecs", i)
        item = as_mapping(item, where)
        old_type = item.get(facts["type_field"], "MASTER")  # the operator's default
        rtype = facts["types"].get(old_type) if isinstance(old_type, str) else None
        if rtype is None:
            raise bad(where + (facts["type_field"],), f"{facts['type_field']} {old_type!r} is not one of "
                       + ", ".join(facts["types"]), hint="the v1alpha1 operator refused this job too")
        if rtype in specs:
            raise bad(where + (facts["type_field"],), f"a second replica spec of type {old_type}: the v1alpha1 operator "
                       "created both under the same pod names; v1 has one spec per type", hint="merge them into one")
        template = item.get("template")
        if template is None:
            if old_type == "PS":
                raise refuse(where, "a PS replica without a template ran the v1alpha1 operator's built-in parameter "
                              f"server (spec.{facts['image_field']} and its gRPC server script); v1 has no such default",
                              "write the parameter server's pod template")
            raise bad(where + ("template",), f"replica {old_type} has no template", hint="the v1alpha1 operator refused this job too")
        out = {"replicas": item.get("replicas", 1), "template": template}
        extra = [k for k in item if k not in ("replicas", "template", facts["type_field"], facts["port_field"])]
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
            old_default(up, spec, "cleanPodPolicy", "All", "an unset cleanupPodPolicy deleted every pod of a finished "
                         "TFJob v1alpha1 (v1 defaults to None)")
    contract(up, kind, version)


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
            raise bad(("spec", mapping.replica_specs_field, rtype, facts["port_field"]), f"{facts['port_field']} must be an integer")
        containers = (spec["template"].get("spec") or {}).get("containers") if isinstance(spec["template"], dict) else None
        container = next((c for c in containers or [] if isinstance(c, dict) and c.get("name") == mapping.default_container), None)
        if container is None:
            continue  # no default container: v1 parse says so
        written = container.get("ports") or []
        if not isinstance(written, list):
            raise bad(("spec", mapping.replica_specs_field, rtype, "template", "spec", "containers"), "ports must be a list")
        kept = [p for p in written if not (isinstance(p, dict) and p.get("name") == default_port.name)]
        container["ports"] = kept + [{"name": default_port.name, "containerPort": port}]
        up.note("UP021", "rewritten", f"{rtype}: {facts['port_field']} {port} becomes port {default_port.name} of container "
                f"{mapping.default_container}, where v1 reads it", source=("spec", mapping.replica_specs_field, rtype),
                target=("spec", mapping.replica_specs_field, rtype, "template", "spec", "containers"))


def _termination(up: Upgrade, spec: dict, specs: dict, facts: dict, kind: str) -> None:
    """terminationPolicy.<chief|master> named the replica whose success ended the job (default MASTER 0).
    v1 has no such field: its rule is the Master (or Chief), else TF worker 0. Other choices cannot be kept."""
    where = ("spec", "terminationPolicy")
    policy = as_mapping(spec.pop("terminationPolicy", None), where)
    chief = as_mapping(policy.get(facts["termination"]), where + (facts["termination"],))
    name = chief.get("replicaName", "MASTER")
    index = chief.get(facts["index_field"], 0)
    rtype = facts["types"].get(name) if isinstance(name, str) else None
    if rtype is None or rtype not in specs:
        raise bad(where + (facts["termination"], "replicaName"), f"terminationPolicy names replica {name!r}, which the "
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
    raise refuse(where + (facts["termination"],), f"terminationPolicy.{facts['termination']} names {name} "
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

# --------------------------------------------------------------------------- XGBoostJob

def _xgboost(up: Upgrade, spec: dict, mapping, version: str) -> None:
    known_fields(up, spec, ("xgbReplicaSpecs", "runPolicy") + RUN_FIELDS, f"XGBoostJob {up.source_api_version}")
    specs = map_specs(up, spec, "xgbReplicaSpecs")
    run_policy_from_top(up, spec, RUN_FIELDS)
    for rtype, rspec in specs.items():
        if not isinstance(rspec, dict):
            continue  # a null replica spec: the parser refuses it with its place
        pod = rspec["template"].get("spec") if isinstance(rspec.get("template"), dict) else None
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
    contract(up, "XGBoostJob", version)


# --------------------------------------------------------------------------- table

Converter = Callable[[Upgrade, dict, Any, str], None]
CONVERTERS: dict[tuple[str, str], Converter] = {
    ("TFJob", "kubeflow.org/v1alpha1"): _list_form, ("TFJob", "kubeflow.org/v1alpha2"): _map_form,
    ("TFJob", "kubeflow.org/v1beta1"): _map_form, ("TFJob", "kubeflow.org/v1beta2"): _map_form,
    ("PyTorchJob", "kubeflow.org/v1alpha1"): _list_form, ("PyTorchJob", "kubeflow.org/v1alpha2"): _map_form,
    ("PyTorchJob", "kubeflow.org/v1beta1"): _map_form, ("PyTorchJob", "kubeflow.org/v1beta2"): _map_form,
    ("MPIJob", "kubeflow.org/v1alpha1"): mpi_v1alpha1, ("MPIJob", "kubeflow.org/v1alpha2"): mpi_v1alpha2,
    ("XGBoostJob", "xgboostjob.kubeflow.org/v1alpha1"): _xgboost, ("XGBoostJob", "xgboostjob.kubeflow.org/v1"): _xgboost,
    ("MXJob", "kubeflow.org/v1beta1"): mx_v1beta1,
}
SUMMARY = {
    ("TFJob", "kubeflow.org/v1alpha1"): "the replica list becomes tfReplicaSpecs, tfPort the tfjob-port, terminationPolicy v1's "
                           "success rule, cleanupPodPolicy runPolicy.cleanPodPolicy",
    ("TFJob", "kubeflow.org/v1alpha2"): "top-level cleanPodPolicy/ttlSecondsAfterFinished move into runPolicy",
    ("TFJob", "kubeflow.org/v1beta1"): "top-level cleanPodPolicy/ttlSecondsAfterFinished move into runPolicy",
    ("TFJob", "kubeflow.org/v1beta2"): ("top-level cleanPodPolicy/ttlSecondsAfterFinished/activeDeadlineSeconds/backoffLimit "
                                        "move into runPolicy"),
    ("PyTorchJob", "kubeflow.org/v1alpha1"): "the replica list becomes pytorchReplicaSpecs, masterPort the pytorchjob-port, "
                                "terminationPolicy v1's success rule",
    ("PyTorchJob", "kubeflow.org/v1alpha2"): "top-level cleanPodPolicy/ttlSecondsAfterFinished move into runPolicy",
    ("PyTorchJob", "kubeflow.org/v1beta1"): "top-level cleanPodPolicy/ttlSecondsAfterFinished move into runPolicy",
    ("PyTorchJob", "kubeflow.org/v1beta2"): ("top-level cleanPodPolicy/ttlSecondsAfterFinished/activeDeadlineSeconds/backoffLimit "
                                             "move into runPolicy"),
    ("MPIJob", "kubeflow.org/v1alpha1"): "the one template becomes Launcher and Worker specs, gpus/replicas the worker count, "
                            "backoffLimit/activeDeadlineSeconds runPolicy",
    ("MPIJob", "kubeflow.org/v1alpha2"): "top-level backoffLimit/activeDeadlineSeconds/cleanPodPolicy move into runPolicy",
    ("XGBoostJob", "xgboostjob.kubeflow.org/v1alpha1"): "group xgboostjob.kubeflow.org becomes kubeflow.org, top-level "
                                                        "run fields move into runPolicy",
    ("XGBoostJob", "xgboostjob.kubeflow.org/v1"): "group xgboostjob.kubeflow.org becomes kubeflow.org, top-level run "
                                                  "fields move into runPolicy",
    ("MXJob", "kubeflow.org/v1beta1"): MX_SUMMARY,
}
