"""Katib TrainJob trials whose job needs files of its own name (an MPIJob's hostfile on kf2jobset's bundle).

A trialSpec holds one object, and Katib names each trial when it creates it: a ConfigMap written beside the
TrainJob could neither be created per trial nor name the trial's pods. So each such ConfigMap rides in the
TrainJob: its keys become annotations of the pods that mounted it (through runtimePatches, which may set pod
annotations and volumes), the volume becomes a downward-API volume that writes those annotations as the same
files, and the trial's name in them is `${trialParameters.<name>}`, a trial parameter Katib fills with the trial's
own name (reference `${trialSpec.Name}`). The job is converted under a stand-in name of the trial's length
(`<experiment>-xxxxxxxx`), which this module puts back.
"""
from __future__ import annotations

import copy
import json

from ..checks.name_binding import NAME_LITERALS_ANNOTATION, NAMED_FOR_ANNOTATION

TRIAL_NAME_PARAMETER = "kf2jobsetTrialName"
TRIAL_NAME_REFERENCE = "${trialSpec.Name}"
ANNOTATION_PREFIX = "kf2jobset.dev/file."
SOURCE_ANNOTATION = "kf2jobset.dev/source"


def stand_in(experiment_name: str | None) -> str:
    """The name a trial is converted under: as long as the name Katib gives it (<experiment>-<8 characters>)."""
    return f"{experiment_name or 'trial'}-xxxxxxxx"


def trial_name_parameter(template: dict) -> str:
    """The trial parameter that holds the trial's name: the Experiment's own if it has one, else kf2jobset's
    (added to trialParameters)."""
    params = template.setdefault("trialParameters", [])
    for p in params:
        if isinstance(p, dict) and p.get("reference") == TRIAL_NAME_REFERENCE and p.get("name"):
            return p["name"]
    params.append({"name": TRIAL_NAME_PARAMETER, "description": "the trial's name (its pods' addresses in the MPI hostfile)",
                   "reference": TRIAL_NAME_REFERENCE})
    return TRIAL_NAME_PARAMETER


def _pod_templates(trainjob: dict):
    """(replicatedJob name, pod template patch) of the TrainJob's runtimePatches."""
    for patch in trainjob["spec"].get("runtimePatches") or []:
        spec = (((patch.get("trainingRuntimeSpec") or {}).get("template") or {}).get("spec") or {})
        for rj in spec.get("replicatedJobs") or []:
            pod = (((rj.get("template") or {}).get("spec") or {}).get("template"))
            if isinstance(pod, dict):
                yield rj.get("name"), pod


def _downward(volume: dict, cm: dict) -> tuple[dict, dict]:
    """(the downward-API volume writing the ConfigMap's files, the pod annotations it reads)."""
    source = volume["configMap"]
    data = cm.get("data") or {}
    items = source.get("items") or [{"key": k, "path": k} for k in data]
    out = {"name": volume["name"], "downwardAPI": {"items": [
        {"path": i["path"], "fieldRef": {"fieldPath": f"metadata.annotations['{ANNOTATION_PREFIX}{i['key']}']"},
         **({"mode": i["mode"]} if "mode" in i else {})} for i in items]}}
    if "defaultMode" in source:
        out["downwardAPI"]["defaultMode"] = source["defaultMode"]
    return out, {f"{ANNOTATION_PREFIX}{i['key']}": data[i["key"]] for i in items}


def carry_companions(trainjob: dict, jobset: dict, companions: list[dict], name: str, parameter: str) -> list[str] | None:
    """Move each companion ConfigMap into the TrainJob (and the planned JobSet, which keeps the stand-in `name`);
    put the trial's name back as `${trialParameters.<parameter>}`. Returns the files carried (mount path of each
    ConfigMap's volume and key), or None when a companion cannot be carried (not a ConfigMap of text mounted through
    runtimePatches) or the stand-in name is left elsewhere in the TrainJob."""
    carried = []
    by_rjob = {r["name"]: r for r in jobset["spec"]["replicatedJobs"]}
    for cm in companions:
        if cm.get("kind") != "ConfigMap" or cm.get("binaryData"):
            return None
        found = False
        for rjob, pod in _pod_templates(trainjob):
            volumes = (pod.get("spec") or {}).get("volumes") or []
            for i, volume in enumerate(volumes):
                if (volume.get("configMap") or {}).get("name") != cm["metadata"]["name"]:
                    continue
                found = True
                new, annotations = _downward(volume, cm)
                volumes[i] = new
                pod.setdefault("metadata", {}).setdefault("annotations", {}).update(annotations)
                planned = by_rjob[rjob]["template"]["spec"]["template"]
                planned["spec"]["volumes"] = [copy.deepcopy(new) if v.get("name") == volume["name"] else v
                                              for v in planned["spec"].get("volumes") or []]
                planned.setdefault("metadata", {}).setdefault("annotations", {}).update(copy.deepcopy(annotations))
                mounts = [m["mountPath"] for c in (pod.get("spec") or {}).get("containers") or []
                          for m in c.get("volumeMounts") or [] if m.get("name") == volume["name"]]
                carried += [f"{p.rstrip('/')}/{item['path']}" for p in mounts for item in new["downwardAPI"]["items"]]
        if not found:
            return None
    return carried if _put_back_name(trainjob, name, "${trialParameters.%s}" % parameter) else None


def _put_back_name(trainjob: dict, name: str, reference: str) -> bool:
    """The stand-in name: out of the source annotations (an unnamed trial's), the trial parameter in the carried
    files; True when it is nowhere else."""
    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                if isinstance(v, str) and name in v:
                    if k == SOURCE_ANNOTATION:
                        node[k] = v.replace(f" {name}", "")
                    elif k.startswith(ANNOTATION_PREFIX):
                        node[k] = v.replace(name, reference)
                else:
                    walk(v)
        elif isinstance(node, list):
            for x in node:
                walk(x)
    trainjob["metadata"].pop("name", None)
    for record in (NAMED_FOR_ANNOTATION, NAME_LITERALS_ANNOTATION):  # each trial's files name its own pods (Katib fills them)
        trainjob["metadata"].get("annotations", {}).pop(record, None)
    walk(trainjob)
    return name not in json.dumps(trainjob)


def carry_into_trial(template: dict, conv, trainjob: dict, name: str | None):
    """The trial's companions carried in its TrainJob (`template`: the Experiment's trialTemplate): the note
    saying so, or None when they cannot be (the caller refuses the trial)."""
    from ..notes import Note

    if not name:
        return None
    before = copy.deepcopy(template.get("trialParameters"))
    parameter = trial_name_parameter(template)
    carried = carry_companions(trainjob, conv.jobset, conv.companions, name, parameter)
    if carried is None:
        template["trialParameters"] = before
        return None
    conv.companions = []
    # Katib names every trial anew: no MPIJob's Service holds the name (MPI008 is about a job migrated in place)
    conv.notes[:] = [n for n in conv.notes if n.code != "MPI008"]
    conv.output = [o for o in conv.output if o.get("kind") != "ConfigMap"]
    return Note(
        "TJ041", "rewritten",
        f"Katib trial: {', '.join(carried)} reach the launcher from pod annotations (a downward-API volume) instead "
        f"of a ConfigMap beside the TrainJob, with the trial's name filled in by Katib (trial parameter "
        f"{parameter}, reference {TRIAL_NAME_REFERENCE}): each trial's file names its own pods",
        source_path="spec.trialTemplate", target_path="spec.trialTemplate.trialSpec.spec.runtimePatches",
        unchecked="about the Katib Experiment around the TrainJob (Katib fills in the trial's name); "
        "the report compares the files the launcher reads with v1's")
