"""AppWrapper components (workload.codeflare.dev/v1beta2, CodeFlare / MLBatch): a wrapped v1 job
becomes a wrapped JobSet. Pure: dicts in, dicts out.

What the AppWrapper controller (project-codeflare/appwrapper v1.2, `pkg/utils.InferPodSets` and
`internal/webhook`) accepts, and so what is written here:
- any component kind; podSets are inferred for known kinds only: batch/v1 Job, jobset.x-k8s.io/v1alpha2
  JobSet (one podSet per replicatedJob, path `template.spec.replicatedJobs[i].template.spec.template`,
  replicas = `replicas` x min(parallelism, completions)), kubeflow.org/v1 PyTorchJob (Master, Worker),
  Ray, Pod, Deployment, StatefulSet. Other kinds (TFJob, MPIJob, ...) need declared `podSets`.
- declared podSets of a known kind must equal the inferred ones: same count, same paths, same replicas.
- `podSetInfos` (what Kueue injects) is parallel to the podSets, by index.
- a TrainJob is not a known kind and holds no pod template (its pods come from a TrainingRuntime), so
  podSets can point nowhere in it: `--target trainjob` is refused for wrapped jobs.
"""
from __future__ import annotations

import re

from ..errors import Location, Problem, UnsupportedError
from ..notes import Note

APPWRAPPER = ("workload.codeflare.dev/v1beta2", "AppWrapper")
COMPONENTS = ("spec", "components")


def is_appwrapper(doc) -> bool:
    return isinstance(doc, dict) and (doc.get("apiVersion"), doc.get("kind")) == APPWRAPPER and \
        isinstance(doc.get("spec"), dict) and isinstance(doc["spec"].get("components"), list)


def jobset_podsets(jobset: dict) -> list[dict]:
    """The podSets the AppWrapper controller infers for a JobSet (InferPodSets), in replicatedJob order."""
    out = []
    for i, rj in enumerate((jobset.get("spec") or {}).get("replicatedJobs") or []):
        job_spec = (rj.get("template") or {}).get("spec") or {}
        pods = job_spec.get("parallelism", 1)
        if "completions" in job_spec and job_spec["completions"] < pods:
            pods = job_spec["completions"]
        out.append({"replicas": rj.get("replicas", 1) * pods,
                    "path": f"template.spec.replicatedJobs[{i}].template.spec.template"})
    return out


# What InferPodSets puts on a JobSet's podSets (Kueue topology-aware scheduling reads them).
_TAS_POD_INDEX = "workload.codeflare.dev.appwrapper/tas-pod-index-label"
_TAS_GROUP_INDEX = "workload.codeflare.dev.appwrapper/tas-sub-group-index-label"
_TAS_GROUP_COUNT = "workload.codeflare.dev.appwrapper/tas-sub-group-count"
_TAS_KEYS = (_TAS_POD_INDEX, _TAS_GROUP_INDEX, _TAS_GROUP_COUNT)


def _tas_annotations(rj: dict) -> dict:
    return {_TAS_POD_INDEX: "batch.kubernetes.io/job-completion-index",
            _TAS_GROUP_INDEX: "jobset.sigs.k8s.io/job-index",
            _TAS_GROUP_COUNT: str(rj.get("replicas", 1))}


def trainjob_refusal(path: tuple) -> UnsupportedError:
    return UnsupportedError(Problem(
        "a job inside an AppWrapper cannot become a TrainJob: the AppWrapper controller infers no podSets for "
        "TrainJob and a TrainJob holds no pod template to point them at (its pods come from a TrainingRuntime)",
        Location(path=path), rule="appwrapper-target", hint="convert AppWrappers with --target jobset (the default)"))


def rewrite_component(component: dict, conv, index: int) -> list[dict]:
    """The components that replace one whose template was a v1 job: the JobSet's component (podSets
    and podSetInfos re-pointed at the JobSet's pod templates) followed by one component per companion
    object (an MPI hostfile ConfigMap, a Volcano PodGroup). Raises UnsupportedError for podSets that
    name no replica of the job."""
    jobset = conv.jobset
    out = {k: v for k, v in component.items() if k not in ("template", "podSets", "podSetInfos")}
    declared = component.get("podSets")
    infos = component.get("podSetInfos")
    inferred = jobset_podsets(jobset)
    if declared or infos:
        by_type = _source_podsets(declared or _inferred_v1(component, conv), conv, index)
        rtype_of = {r.name: r.rtype for r in conv.plan.rjobs}
        podsets, new_infos = [], []
        rjobs = (jobset.get("spec") or {}).get("replicatedJobs") or []
        for ps, rj in zip(inferred, rjobs, strict=False):
            source = by_type.get(rtype_of.get(rj.get("name")))
            entry = dict(ps)
            own = declared[source].get("annotations") if source is not None and declared else None
            # the controller's topology annotations name JobSet labels now; the user's others stay
            entry["annotations"] = {**{k: v for k, v in (own if isinstance(own, dict) else {}).items()
                                       if k not in _TAS_KEYS}, **_tas_annotations(rj)}
            podsets.append(entry)
            if isinstance(infos, list):
                new_infos.append(infos[source] if source is not None and source < len(infos) else {})
        if declared:
            out["podSets"] = podsets
        if isinstance(infos, list) and infos:
            out["podSetInfos"] = new_infos
    out["template"] = jobset
    # Keys in the order the component had them, the template where it was.
    ordered = {k: out[k] for k in component if k in out}
    ordered.update({k: v for k, v in out.items() if k not in ordered})
    where = f"spec.components[{index}]"
    conv.notes.append(Note(
        "AW001", "rewritten",
        f"AppWrapper component: the JobSet takes the {conv.job.kind}'s place"
        + ("; its podSets name the JobSet's pod templates (template.spec.replicatedJobs[i].template.spec.template), "
           "one per replicatedJob, as the AppWrapper controller infers them" if declared else
           "; its podSets are inferred by the AppWrapper controller (one per replicatedJob)")
        + (f"; {len(conv.companions)} companion object(s) become components of their own" if conv.companions else ""),
        source_path=where, target_path=where,
        unchecked="about the AppWrapper around the JobSet, not the JobSet itself; tests/test_appwrapper.py checks "
                  "the podSets against the controller's inference"))
    extra = [{"template": c} for c in conv.companions]
    return [ordered, *extra]


def _inferred_v1(component: dict, conv) -> list[dict]:
    """The podSets the controller inferred for the v1 job itself (PyTorchJob only: Master, then Worker,
    as written), which podSetInfos without declared podSets are parallel to."""
    template = component.get("template") or {}
    if (template.get("apiVersion"), template.get("kind")) != ("kubeflow.org/v1", "PyTorchJob"):
        return []
    specs = (template.get("spec") or {}).get("pytorchReplicaSpecs") or {}
    return [{"path": f"template.spec.pytorchReplicaSpecs.{t}.template"} for t in ("Master", "Worker")
            if isinstance(specs.get(t), dict) and "template" in specs[t]]


def _source_podsets(declared: list, conv, index: int) -> dict:
    """replica type -> index of the declared podSet whose path is that replica's pod template."""
    field = conv.job.mapping.replica_specs_field
    by_key = {spec.source_key: rtype for rtype, spec in conv.job.replicas.items()}
    out = {}
    for i, ps in enumerate(declared):
        path = ps.get("path") if isinstance(ps, dict) else None
        m = re.fullmatch(rf"template\.spec\.{re.escape(field)}\.([^.\[\]]+)\.template", str(path))
        rtype = by_key.get(m.group(1)) if m else None
        if rtype is None:
            if m:
                continue  # a replica spec the operator ignored (JS071): no pods, no podSet
            raise UnsupportedError(Problem(
                f"podSets[{i}].path {path!r} does not name a replica's pod template of this {conv.job.kind} "
                f"(template.spec.{field}.<type>.template), so it cannot be pointed at the JobSet",
                Location(path=(*COMPONENTS, index, "podSets", i, "path")), rule="appwrapper-podsets",
                hint="fix the path, or remove podSets (the AppWrapper controller infers a JobSet's podSets)"))
        out[rtype] = i
    return out

