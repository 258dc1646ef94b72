"""`--target trainjob` on a runtime of kf2jobset's bundle: the TrainJob, the JobSet Trainer builds from
it (the report compares that one with the v1 pods; tests/e2e holds it against the real Trainer), where
the v1 pods are in it, and the notes. The split between runtime and TrainJob is bundle.py's."""
from __future__ import annotations

import re
from dataclasses import replace

from .. import claims as claim
from ..frameworks.base import LABEL_JOB_INDEX, LABEL_RJOB_NAME
from ..notes import Note
from ..staleness import NUM_NODES, SIZE_LITERALS_ANNOTATION, SIZED_FOR_ANNOTATION
from . import builtin, builtin_notes, bundle, bundle_catalog, bundle_fit, bundle_gang, trainer_build
from .bundle import SH
from .trainer_build import NODE

PATCH_MANAGER = builtin.PATCH_MANAGER
_WHY = ("about the TrainJob on a runtime of kf2jobset's bundle; the predicted JobSet is compared with the one the "
        "real Trainer builds in tests/e2e/test_trainjob_target.py")
# Notes about kf2jobset's own JobSet that this path replaces (with the note that does), and those about
# its size contract (the pod count is numNodes here: TJ028 says which values are literals).
_ENV_ENTRY = re.compile(r"\.env\[[^\]]+\]$")
REPLACED_NOTES = {"JS004": "TJ026", "JS033": "TJ011", "JS041": "TJ003", "SZ001": "TJ028", "SZ002": "TJ028",
                  **builtin_notes.LIFETIME_NOTES}
# in one `node` Job: the start order (PyTorch's init container became dependsOn) is gone (TJ008)
NODE_REPLACED_NOTES = {"PT001": "TJ008", "JS010": "TJ008"}


def misfits(conversion, options) -> tuple[bundle.Derived | None, bundle_catalog.BundleRuntime | None, list[str]]:
    """(the split, the bundle runtime it runs on, why not) for this job. A job whose pods name a gang scheduler
    is split without what the bundle's flavour for that scheduler holds (bundle_gang.py)."""
    found = bundle_gang.job_gang(conversion, options)
    try:
        derived = bundle.derive(bundle_gang.prepared(conversion, options, found) if found else conversion, options)
    except bundle.Misfit as e:
        if found is None or found.gang.flavour != "volcano":
            return None, None, e.reasons
        try:  # one Job for every role: without the per-role volcano.sh/task-spec (TJ047 says why that is fine)
            derived = bundle.derive(bundle_gang.prepared(conversion, options, found, drop_task_spec=True), options)
        except bundle.Misfit:
            return None, None, e.reasons
    derived.gang = found
    why = builtin.limits({"spec": {"trainer": derived.trainer}})
    if why:
        return derived, None, why
    found = bundle_catalog.find(derived.runtime_spec)
    if found is None:  # a retry limit and the declared ports are the runtime's (bundle_fit.py)
        framework = bundle_catalog.profile(conversion.job.mapping.profile).runtime_framework
        found, derived.retries, derived.ports = bundle_fit.shape_fit(derived.runtime_spec, bundle_catalog.catalog(), framework)
    if found is None:
        return derived, None, [_no_runtime(conversion, derived)]
    return derived, found, []


def _no_runtime(conversion, derived) -> str:
    """What the job's shape is, against the bundle's runtimes of its framework."""
    framework = bundle_catalog.profile(conversion.job.mapping.profile).runtime_framework
    shape = ", ".join(f"{role} {'x numNodes' if i == 0 and derived.layout == 'roles' else ''}".strip()
                      for i, (_, role, _, _, _) in enumerate(derived.rjobs))
    rules = []
    for rj in derived.runtime_spec["template"]["spec"]["replicatedJobs"]:
        job = rj["template"]["spec"]
        pod = job["template"]["spec"]
        rule = f"{rj['name']}: restartPolicy {pod.get('restartPolicy')}, backoffLimit {job.get('backoffLimit')}"
        if job.get("podFailurePolicy"):
            rule += ", exit-code rule"
        rules.append(rule)
    ours = [r.name for r in bundle_catalog.catalog() if r.framework == framework]
    zero = bundle_fit.never_retried(derived.runtime_spec, bundle_catalog.catalog())
    return (f"no runtime of kf2jobset's bundle has this shape ({shape}; {'; '.join(rules)})"
            + (f"; it differs from {', '.join(zero)} only by a retry limit of 0 on one side (a job v1 never retried "
               "is not run again by a runtime that retries, nor the reverse)" if zero else "")
            + (f"; the bundle's {framework} runtimes: {', '.join(ours)}" if ours else ""))


def finish(conversion, options, derived: bundle.Derived, runtime: bundle_catalog.BundleRuntime,
           size_literals: str | None) -> dict:
    """Write the TrainJob; returns the Kueue labels it carries (trainjob.py adds what every TrainJob says)."""
    jobset = conversion.jobset
    meta = jobset.get("metadata") or {}
    spec = jobset["spec"]
    labels = dict(meta.get("labels") or {})
    kueue = {k: labels.pop(k) for k in builtin.KUEUE_LABELS if k in labels}
    annotations = dict(meta.get("annotations") or {})
    gang = derived.gang
    if gang is not None:
        annotations[bundle_gang.GANG_ANNOTATION] = gang.gang.value
        bundle_gang.patch_metadata(gang, conversion, derived.jobset_meta)
    literals = [*derived.size_literals, *([size_literals] if size_literals else [])]
    if gang is not None and gang.gang.flavour != "yunikorn":  # Trainer's PodGroup counts numNodes itself
        literals = bundle_gang.without_podgroup_sizes(literals)
    if literals:
        annotations[SIZED_FOR_ANNOTATION] = f"{NUM_NODES}={derived.trainer[NUM_NODES]}"
        annotations[SIZE_LITERALS_ANNOTATION] = ", ".join(dict.fromkeys(literals))

    train_meta = {k: meta[k] for k in ("name", "generateName", "namespace") if meta.get(k)}
    if labels or kueue:
        train_meta["labels"] = {**labels, **kueue}
    if annotations:
        train_meta["annotations"] = annotations
    train_spec: dict = {"runtimeRef": {"apiGroup": bundle_catalog.GROUP, "kind": bundle_catalog.KIND, "name": runtime.name},
                        "trainer": derived.trainer}
    template_patch: dict = {}
    if derived.jobset_meta:
        template_patch["metadata"] = derived.jobset_meta
    if derived.patches:
        template_patch["spec"] = {"replicatedJobs": list(derived.patches.values())}
    if template_patch:
        train_spec["runtimePatches"] = [{"manager": PATCH_MANAGER, "trainingRuntimeSpec": {"template": template_patch}}]
    if derived.deadline is not None:
        train_spec["activeDeadlineSeconds"] = derived.deadline
    for key in ("suspend", "managedBy"):
        if key in spec:
            train_spec[key] = spec[key]
    trainjob = {"apiVersion": bundle.API_VERSION, "kind": "TrainJob", "metadata": train_meta, "spec": train_spec}
    predicted = trainer_build.build(runtime.object(gang.gang if gang else None), trainjob)
    _renamed_companions(conversion.companions, derived.renames)
    placed = _placed_services(conversion.companions, derived.pod_places)

    planned = conversion.jobset
    conversion.planned_jobset = planned
    conversion.jobset = predicted
    conversion.layout = BundleLayout(derived, conversion.plan)
    replaced = {**REPLACED_NOTES, **(NODE_REPLACED_NOTES if derived.layout == "node" else {}),
                **({"JS034": "TJ033"} if derived.retries else {}),
                **({c: "TJ045" for c in bundle_gang.REPLACED_NOTES} if gang else {})}
    kept = [_placed_note(_moved(n, derived, planned, predicted), placed) for n in conversion.notes if n.code not in replaced]
    gang_notes = bundle_gang.notes(gang, conversion, options, trainjob, predicted) if gang else []
    conversion.output = [*conversion.companions, trainjob]  # (without a PodGroup Trainer makes instead)
    conversion.notes = kept + notes(conversion, derived, runtime, trainjob, planned) + gang_notes
    if derived.deadline is not None:
        conversion.lifecycle_overrides["activeDeadlineSeconds"] = (
            derived.deadline, "the whole TrainJob, from its creation or last resume")
    if kueue.get(builtin.KUEUE_LABELS[0]):
        conversion.lifecycle_overrides["schedulingPolicy"] = {"queue": str(kueue[builtin.KUEUE_LABELS[0]])}
    builtin.trainjob_manager(conversion, trainjob)
    return kueue


def _renamed_companions(companions: list, renames: dict) -> None:
    """The pod addresses kf2jobset wrote into its own ConfigMaps (an MPI hostfile) point at the pods'
    places in the JobSet Trainer builds."""
    for obj in companions:
        if obj.get("kind") != "ConfigMap" or not renames:
            continue
        data = obj.get("data") or {}
        for key, text in list(data.items()):
            if isinstance(text, str):
                for old, new in renames.items():
                    text = text.replace(old, new)
                data[key] = text


# The Job controller's label of a pod's completion index (Kubernetes >= 1.28): in Trainer's layout a role's pods
# are one Job, so a pod is told apart by it, not by jobset.sigs.k8s.io/job-index (0 for every one of them).
COMPLETION_INDEX_LABEL = "batch.kubernetes.io/job-completion-index"


def _placed_services(companions: list, places: dict) -> dict:
    """JS066's per-pod Services select the pod at its place in the JobSet Trainer builds; returns
    {Service name: (its selector, what the note said of the pod, what it says now)}."""
    out = {}
    for obj in companions:
        selector = (obj.get("spec") or {}).get("selector") or {}
        if obj.get("kind") != "Service" or LABEL_JOB_INDEX not in selector or LABEL_RJOB_NAME not in selector:
            continue
        rjob, j = selector[LABEL_RJOB_NAME], int(selector[LABEL_JOB_INDEX])
        if (rjob, j) not in places:
            continue
        new_rjob, i = places[(rjob, j)]
        obj["spec"]["selector"] = {**selector, LABEL_RJOB_NAME: new_rjob, LABEL_JOB_INDEX: "0", COMPLETION_INDEX_LABEL: str(i)}
        out[obj["metadata"]["name"]] = (obj["spec"]["selector"], f"= {rjob} job-index {j}",
                                        f"= {new_rjob} completion index {i}")
    return out


def _placed_note(note: Note, placed: dict) -> Note:
    """JS066 as the Services now select (see _placed_services)."""
    if note.code != "JS066" or not placed:
        return note
    message = note.message.replace("by its jobset.sigs.k8s.io labels",
                                   f"by its jobset.sigs.k8s.io labels and {COMPLETION_INDEX_LABEL}")
    claims = []
    for c in note.claims:
        name = c.target.split("/", 1)[1] if c.target.startswith("Service/") else None
        if name in placed and c.path == "spec.selector":
            c = replace(c, value=placed[name][0])
        claims.append(c)
    for _, old, new in placed.values():
        message = message.replace(old + ",", new + ",").replace(old + ")", new + ")")
    return replace(note, message=message, claims=tuple(claims))


def _moved(note: Note, derived, planned: dict, predicted: dict) -> Note:
    """A note about kf2jobset's JobSet, its claims pointed where the same things are in Trainer's: the
    container is `node`; in one `node` Job, every replicatedJob's fields are that Job's; an env entry the
    claim holds on the plan is the entry the bundle path made of it (its addresses and indexes in
    Trainer's layout: bundle.py)."""
    olds = v1_container_names(derived.container_names)

    def path(p: str) -> str:
        for old in olds:
            p = p.replace(f"containers[{old}]", f"containers[{NODE}]")
        if derived.layout == "node":
            p = re.sub(r"replicatedJobs\[[^\]*]+\]", f"replicatedJobs[{NODE}]", p)
        return p

    def value(c):
        if c.op == "equals" and isinstance(c.value, dict) and _ENV_ENTRY.search(c.path):
            was = claim.resolve(planned, c.path)
            now = claim.resolve(predicted, path(c.path))
            if was == [c.value] and len(now) == 1:
                return now[0]
        return _value(c, olds)

    def renamed(v):  # pod addresses kf2jobset wrote, in Trainer's layout (also in its ConfigMaps)
        if isinstance(v, str):
            for old, new in derived.renames.items():
                v = v.replace(old, new)
            return v
        return [renamed(x) for x in v] if isinstance(v, list) else v

    message = renamed(note.message)  # (JS065 names the address it wrote)
    if not note.claims:
        return replace(note, message=message)
    claims = tuple(claim.Claim(path(c.path), c.op, renamed(value(c)), c.target) if c.target == "JobSet" else
                   claim.Claim(c.path, c.op, renamed(c.value), c.target) if c.target != "TrainJob" else c
                   for c in note.claims)
    if derived.entry is not None:
        claims = tuple(x for c in claims for x in _entry_argv(c, derived.entry, planned))
    # a retry limit that is the runtime's: TJ033 says it
    changed = {f"spec.replicatedJobs[{r.rjob}].template.spec.backoffLimit" for r in derived.retries}
    claims = tuple(c for c in claims if c.path not in changed)
    return replace(note, message=message, claims=claims)


def _entry_argv(c, entry: str, planned: dict) -> list:
    """The entry role's v1 command and args are one argv in its args now (its command runs them): a claim on
    either, item by item, on that argv."""
    m = re.fullmatch(rf"(spec\.replicatedJobs\[{re.escape(entry)}\]\.template\.spec\.template\.spec\.containers\[[^\]]+\])"
                     r"\.(command|args)(?:\[(\d+)\])?", c.path)
    if c.target != "JobSet" or m is None or c.op not in ("equals", "absent"):
        return [c]
    rj = next(r for r in planned["spec"]["replicatedJobs"] if r["name"] == entry)
    shift = 0 if m.group(2) == "command" else len(_pod(rj)["spec"]["containers"][0].get("command") or [])
    if c.op == "absent":  # no v1 args: nothing follows the command in the argv
        return [claim.absent(f"{m.group(1)}.args[{shift + int(m.group(3) or 0)}]")] if m.group(2) == "args" else [c]
    if m.group(3) is not None:
        return [claim.Claim(f"{m.group(1)}.args[{shift + int(m.group(3))}]", c.op, c.value, c.target)]
    return [claim.Claim(f"{m.group(1)}.args[{shift + i}]", c.op, v, c.target) for i, v in enumerate(c.value or [])]


def _pod(rj: dict) -> dict:
    return rj["template"]["spec"]["template"]


def _value(c, olds):
    if isinstance(c.value, str) and c.path.endswith("containerName"):
        return NODE if c.value in olds else c.value
    return c.value


def v1_container_names(names: dict) -> set:
    """The v1 container names a layout's `node` containers stand for ({node: v1} or {rjob: {node: v1}})."""
    return {v for k, v in names.items() if not isinstance(v, dict)} | {
        n for v in names.values() if isinstance(v, dict) for n in v.values()}


def notes(conversion, derived, runtime, trainjob: dict, planned: dict) -> list[Note]:
    name = trainjob["metadata"].get("name") or "<name>"
    first, role, _, _, _ = derived.rjobs[0]
    n = derived.trainer[NUM_NODES]
    others = [r for r in derived.rjobs[1:]]
    out = [Note(
        "TJ004", "unchanged",
        f"ClusterTrainingRuntime {runtime.name!r} of kf2jobset's bundle ({runtime.why}): spec.trainer carries the image, "
        "command, args, resources, the v1 env and numNodes, runtimePatches the pod fields; the runtime holds the roles "
        "and their restart, retry and success rules",
        target_path="spec.runtimeRef", action="use --trainer-runtime per-job to keep the whole JobSet in a runtime of the job's own",
        claims=(claim.equals("spec.runtimeRef.name", runtime.name, "TrainJob"),
                claim.equals("spec.runtimeRef.kind", bundle_catalog.KIND, "TrainJob")))]
    out.append(Note(
        "TJ025", "prerequisite",
        f"the TrainJob runs on the ClusterTrainingRuntime {runtime.name!r} of kf2jobset's bundle, which the platform "
        "installs once (Trainer's webhook refuses a TrainJob whose runtime does not exist)",
        target_path="spec.runtimeRef",
        action=f"check it exists: kubectl get clustertrainingruntime {runtime.name}; else have it installed: "
               + (derived.gang.gang.command if derived.gang else "kf2jobset runtimes | kubectl apply -f -"),
        claims=(claim.equals("spec.runtimeRef.name", runtime.name, "TrainJob"),)))
    rjob_path = f"spec.replicatedJobs[{first}].template.spec"
    if derived.layout == "node":
        where = (f"the {n} pods are the indexed pods of one Job `{NODE}` (container `{NODE}`), reached as "
                 f"{name}-{NODE}-0-<i>.{name}; index i is v1's rank i, so the addresses in the env name node pods and "
                 "ranks read the completion index")
    else:
        where = (f"the {role} pods are the {n} indexed pods of one Job `{first}` (numNodes), reached as "
                 f"{name}-{first}-0-<i>.{name}, their index read from the completion index"
                 + (f"; {', '.join(r[1] for r in others)} run one pod each, as {name}-<role>-0-0.{name}" if others else "")
                 + f"; every container is `{NODE}`")
    out.append(Note(
        "TJ026", "rewritten", where, target_path="spec.trainer",
        action="change any pod address or container name you wrote yourself (args, config files, code, `kubectl logs -c`)",
        explains=(("hostname", "*"), ("container", "*"), ("dns", "*")),
        claims=(claim.equals(f"{rjob_path}.completions", n), claim.equals(f"{rjob_path}.parallelism", n),
                claim.equals(f"spec.trainer.{NUM_NODES}", n, "TrainJob"))))
    env_path = f"spec.replicatedJobs[*].template.spec.template.spec.containers[{NODE}].env"
    if derived.moved_env or derived.templated_env or derived.everywhere or derived.layout == "roles":
        parts = []
        templated = [*derived.templated_env, *(f"spec.trainer.{f}" for f in derived.templated_fields)]
        if templated:
            parts.append(f"{', '.join(templated)} {'reads' if len(templated) == 1 else 'read'} "
                         f"the role's name from $({bundle.ROLE_VAR}), which the runtime sets per role")
        if derived.everywhere:
            parts.append(f"{', '.join(derived.everywhere)}, which v1 set on one role, is on every role (mpirun alone reads "
                         "it; the other roles' processes ignore it)")
        if derived.moved_env:
            parts.append(f"{', '.join(derived.moved_env)}, set on some roles only, {'is' if len(derived.moved_env) == 1 else 'are'} "
                         "the runtime's")
        parts.append("the runtime's variables come first, then the TrainJob's env in v1's order")
        out.append(Note(
            "TJ027", "rewritten", "; ".join(parts) + " (a TrainJob gives every role the same env, command and args)",
            target_path="spec.trainer.env", explains=(("env", "*order*"), *(("env", n) for n in derived.everywhere)),
            claims=tuple(claim.present(f"{env_path}[{bundle.ROLE_VAR}]") for _ in derived.templated_env[:1])
            + tuple(claim.contains(f"spec.trainer.env[{v}].value", f"$({bundle.ROLE_VAR})", "TrainJob")
                    for v in derived.templated_env),
            unchecked=None if derived.templated_env else _WHY))
    if derived.entry is not None:
        rest = [r[0] for r in derived.rjobs if r[0] != derived.entry]
        out.append(Note(
            "TJ032", "rewritten",
            f"the roles run different commands and a TrainJob gives every role the same: the {derived.entry}'s "
            f"command and args are spec.trainer.args, which its runtime command runs as `{SH} -c 'exec \"$@\"' --`; "
            f"the {', '.join(rest)} command{'s' if len(rest) != 1 else ''} (v1's) "
            f"{'are' if len(rest) != 1 else 'is'} the runtime's, run as `{SH} -c 'exec ...'`, which leaves the "
            "TrainJob's args aside; each process is v1's (sh execs it), so the image needs /bin/sh",
            target_path="spec.trainer.args", explains=(("command", "*"),),
            action="keep /bin/sh in the image; edit the launcher's command in spec.trainer.args",
            claims=(claim.equals(f"spec.replicatedJobs[{derived.entry}].template.spec.template.spec.containers[{NODE}].command",
                                 list(bundle.ENTRY_COMMAND)),
                    claim.absent("spec.trainer.command", "TrainJob"))))
    out += dropped_notes(derived)
    out += builtin_notes.lifetime_notes(conversion.job)
    restart = {rj["name"]: rj["template"]["spec"]["template"]["spec"].get("restartPolicy")
               for rj in runtime.spec["template"]["spec"]["replicatedJobs"]}
    roles: dict = {}
    for rjob, role, _, _, _ in derived.rjobs:
        roles[rjob] = f"{roles[rjob]} and {role}" if rjob in roles else role
    out += bundle_fit.retry_notes(derived.retries, runtime.name, restart, roles)
    out += bundle_fit.port_notes(derived.ports, runtime.name, roles)
    out += bundle_fit.resources_notes(derived.overprovisioned, derived.sized_role, derived.trainer.get("resourcesPerNode"),
                                      derived.layout == "node")
    sized = trainjob["metadata"].get("annotations", {}).get(SIZED_FOR_ANNOTATION)
    if sized:
        out.append(Note(
            "TJ028", "approximated",
            f"{trainjob['metadata']['annotations'][SIZE_LITERALS_ANNOTATION]} are written for numNodes {n}"
            + (f" and one pod of {', '.join(r[1] for r in others)}" if others and derived.layout == "roles" else "")
            + f"; Trainer sets no variable from numNodes, the operator recomputed them when the replicas changed. The "
            f"TrainJob records the count in {SIZED_FOR_ANNOTATION}, and `kf2jobset convert --check` fails on a TrainJob "
            "whose numNodes no longer matches",
            target_path=f"metadata.annotations[{SIZED_FOR_ANNOTATION}]",
            action="to resize, convert the v1 job again at the new size (after --in-place it is in git history before "
                   "the conversion), or edit numNodes and every listed value",
            claims=(claim.equals(f"metadata.annotations[{SIZED_FOR_ANNOTATION}]", sized, "TrainJob"),)))
    prules = [(rj.get("template") or {}).get("spec", {}).get("successPolicy") for rj in predicted_rjobs(conversion)]
    if derived.layout == "node" and any(prules):
        out.append(Note(
            "TJ029", "rewritten",
            f"the {NODE} Job succeeds as soon as index 0 ({derived.rjobs[0][1]} 0) has succeeded (a Job successPolicy), "
            "which ends the TrainJob as v1's master ended the job; the other pods are then stopped",
            target_path=f"spec.replicatedJobs[{NODE}].template.spec.successPolicy",
            claims=(claim.equals(f"spec.replicatedJobs[{NODE}].template.spec.successPolicy.rules[0].succeededIndexes", "0"),)))
    if derived.layout == "node" and (any(rj.get("dependsOn") for rj in planned["spec"]["replicatedJobs"])
                                     or any(n.code == "JS092" for n in conversion.notes)):  # a gang's pods, at once already
        out.append(Note(
            "TJ008", "approximated",
            "every rank starts at once: one Indexed Job holds them all, so the workers cannot wait for the master "
            "(v1's init container); torch's rendezvous waits for the master instead (torchrun and init_process_group "
            "retry the store until their timeout)",
            explains=(("init", "init-pytorch"), ("lifecycle", "start")),
            action="nothing for torchrun or env:// rendezvous; a script that connects once must retry",
            claims=(claim.absent(f"spec.replicatedJobs[{NODE}].dependsOn"), claim.absent("spec.startupPolicy"))))
    if derived.deadline is not None:
        out.append(Note(
            "TJ011", "rewritten",
            f"activeDeadlineSeconds {derived.deadline} is the TrainJob's: counted for the whole job from its creation (or "
            "last resume), then the TrainJob fails with DeadlineExceeded and its JobSet is deleted",
            source_path="spec.runPolicy.activeDeadlineSeconds", target_path="TrainJob spec.activeDeadlineSeconds",
            explains=(("lifecycle", "activeDeadlineSeconds"),),
            claims=(claim.equals("spec.activeDeadlineSeconds", derived.deadline, "TrainJob"),)))
    return out


def default_pull_policy(image: str) -> str:
    """What the API server sets when a container names no imagePullPolicy (k8s.io/kubernetes
    pkg/apis/core/v1 defaults): Always for an image tagged `latest` or not tagged at all, else IfNotPresent."""
    ref = image.split("@", 1)
    if len(ref) == 2:
        return "IfNotPresent"
    last = ref[0].rsplit("/", 1)[-1]
    tag = last.split(":", 1)[1] if ":" in last else "latest"
    return "Always" if tag == "latest" else "IfNotPresent"


def dropped_notes(derived) -> list[Note]:
    """What no TrainJob carries and the job runs on a shared runtime without: the pull policy (the TTL:
    builtin_notes.lifetime_notes, the same on every shared runtime)."""
    out = []
    policy = derived.pull_policy
    if policy:
        default = default_pull_policy(str(derived.trainer.get("image") or ""))
        same = policy == default
        out.append(Note(
            "TJ030", "rewritten" if same else "approximated",
            f"imagePullPolicy {policy}: no TrainJob field carries it, so the API server sets its default for this image, "
            + (f"{default}, the same" if same else
               f"{default}: " + {"Always": "a node that already holds the tag starts from it instead of pulling again "
                                           "(the same image unless the tag was pushed again)",
                                 "Never": "a node without the image pulls it instead of failing the pod",
                                 "IfNotPresent": "every pod start asks the registry for the tag again"}[policy]),
            source_path=derived.pull_source, target_path="spec.trainer.image",
            action=None if same else "pin the image by digest or a tag you never push twice, or use --trainer-runtime per-job",
            claims=(claim.absent(f"spec.replicatedJobs[*].template.spec.template.spec.containers[{NODE}].imagePullPolicy"),)))
    return out


def predicted_rjobs(conversion) -> list:
    return conversion.jobset["spec"]["replicatedJobs"]


class BundleLayout:
    """Where the v1 pods are in the JobSet Trainer builds on a bundle runtime (the report pairs pods by it)."""

    def __init__(self, derived, plan):
        self.derived = derived
        self.container_names = dict(derived.container_names)
        self._segments: dict = {}
        for rjob, _role, rtype, first, pods in derived.rjobs:
            self._segments.setdefault(rtype, []).append((rjob, first, pods))

    @property
    def rjob_names(self) -> dict:
        return {rtype: rjob for rjob, _, rtype, _, _ in self.derived.rjobs}

    @property
    def segments(self) -> dict:
        return {t: [(segs[0][0], 0, sum(p for _, _, p in segs))] if self.derived.layout == "node" else segs
                for t, segs in self._segments.items()}

    @property
    def pod_roles(self) -> dict:
        if self.derived.layout == "node":
            return {NODE: [(role, first, pods) for _, role, _, first, pods in self.derived.rjobs]}
        return {rjob: (role, 0) for rjob, role, _, _, _ in self.derived.rjobs}

    def rjob_names_of(self, rtype: str) -> list[str]:
        return [rjob for rjob, _, t, _, _ in self.derived.rjobs if t == rtype][:1]

    def primary_labels(self, master_role) -> dict:
        """Katib's primaryPodLabels for a trial: pod 0 of the master's replicatedJob (mapping masterRole)."""
        rjob = self.derived.rjobs[0][0]
        if self.derived.layout != "node":
            types = {t: r for r, _, t, _, _ in self.derived.rjobs}
            rjob = next((types[e.rstrip("0")] for e in master_role if e.rstrip("0") in types), rjob)
        return {"jobset.sigs.k8s.io/replicatedjob-name": rjob, "batch.kubernetes.io/job-completion-index": "0"}
