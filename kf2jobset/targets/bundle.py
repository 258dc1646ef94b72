"""`--target trainjob`, bundle path: a job that no built-in runtime keeps runs on a shared
ClusterTrainingRuntime of kf2jobset's compat bundle, with the job itself in the TrainJob.

From the JobSet kf2jobset planned (the v1 contract), `derive` splits what is this job's from what is
the same for every job of its shape (facts: docs/trainjob.md, "What a shared runtime can and cannot do"):
- the runtime: one replicatedJob per v1 role (or one `node` Job holding every rank, where ranks are
  global indexes: PyTorch), each labelled trainer so spec.trainer applies, container `node`; the
  lifecycle (restartPolicy, backoffLimit, podFailurePolicy, success and start rules) and helper env that
  names pods from the JobSet name label and indexes from the completion index;
- the TrainJob: image, command, args, resources and the v1 env (values that differ between roles only
  by the role's name read `$(KF2JOBSET_REPLICA_TYPE)`), `numNodes` = the pods of the role listed first
  (the only count a TrainJob sets; every other role runs one pod), pod fields in runtimePatches.
The runtime derived for a job is compared with the bundle's (bundle_catalog.py): equal, or equal but for
what bundle_fit.py decides is the runtime's (retry limits, declared ports) -> the job runs on that
ClusterTrainingRuntime; else, or where `derive` finds what a shared runtime cannot carry, the default
refuses the job (a per-job runtime on request) and the report says why.
"""
from __future__ import annotations

import copy
import re
import shlex
from dataclasses import dataclass, field

from ..frameworks.base import HELPER_VARS, JOB_INDEX_VAR, JOBSET_NAME_VAR, NAMESPACE_VAR, field_env
from . import builtin, bundle_fit
from .builtin_fields import PATCHABLE_POD
from .trainer_build import ANCESTOR_LABEL, NODE, TRAINER

API_VERSION = "trainer.kubeflow.org/v1alpha1"
ROLE_VAR = "KF2JOBSET_REPLICA_TYPE"
COMPLETION_INDEX = builtin.COMPLETION_INDEX
GLOBAL_INDEX = builtin.GLOBAL_INDEX
GLOBAL_REPLICAS = builtin.GLOBAL_REPLICAS
JOB_INDEX = HELPER_VARS[JOB_INDEX_VAR]
DEFAULT_NETWORK = builtin.DEFAULT_NETWORK
# what a runtime's replicatedJob keeps of the planned Job (the count is Trainer's; the deadline the TrainJob's)
RUNTIME_JOB_FIELDS = ("completionMode", "backoffLimit", "podFailurePolicy")
TRAINER_CONTAINER = ("image", "command", "args", "resources")
PATCHED_CONTAINER = ("volumeMounts", "securityContext")
JOBSET_FIELDS = ("network", "successPolicy", "replicatedJobs", "suspend", "managedBy",
                 *builtin.DROPPED_JOBSET_FIELDS)  # (the TTL: builtin_notes.lifetime_notes)
TEMPLATED = ("command", "args")  # may differ between roles by the role's name
# The JobSet's own annotations kept off the runtime patch: about the TrainJob (the size record) or the job
from ..checks.staleness import SIZE_LITERALS_ANNOTATION, SIZED_FOR_ANNOTATION  # noqa: E402

TRAINJOB_ONLY_ANNOTATIONS = (SIZED_FOR_ANNOTATION, SIZE_LITERALS_ANNOTATION)
_WORD = re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9]")


@dataclass
class Derived:
    runtime_spec: dict  # mlPolicy + template: what identifies the runtime
    trainer: dict
    patches: dict  # rjob name -> its runtimePatches replicatedJob entry
    jobset_meta: dict  # labels/annotations for the runtime patch's template metadata
    layout: str  # "roles" | "node"
    rjobs: list  # [(runtime rjob name, role (lower case), v1 replica type, first index, pods)]
    deadline: int | None = None
    moved_env: list = field(default_factory=list)  # env kept on some roles only: in the runtime
    templated_env: list = field(default_factory=list)  # env whose role name reads $(KF2JOBSET_REPLICA_TYPE)
    templated_fields: list = field(default_factory=list)  # command, args: likewise
    entry: str | None = None  # the role whose command is spec.trainer.args (the others': the runtime's)
    everywhere: list = field(default_factory=list)  # env of one role's, on every role (ANY_ROLE_ENV)
    renames: dict = field(default_factory=dict)  # pod addresses of kf2jobset's layout -> Trainer's
    pod_places: dict = field(default_factory=dict)  # kf2jobset's (rjob, job-index) -> Trainer's (rjob, completion index)
    size_literals: list = field(default_factory=list)  # env written for the pod count
    container_names: dict = field(default_factory=dict)  # v1 container name per role
    pull_policy: str | None = None  # the v1 imagePullPolicy no TrainJob carries (the API server's default applies)
    pull_source: str | None = None  # where the v1 job says it
    overprovisioned: list = field(default_factory=list)  # roles that run the sized role's resources (bundle_fit)
    sized_role: str | None = None  # the role numNodes sizes, whose resources every role runs
    retries: list = field(default_factory=list)  # retry limits that are the runtime's (bundle_fit.RetryChange)
    ports: list = field(default_factory=list)  # declared ports that are the runtime's (bundle_fit.PortChange)
    gang: object = None  # bundle_gang.JobGang: the gang scheduler the pods name (a flavour of the bundle)


class Misfit(Exception):
    """Why the job cannot run on a shared runtime (each reason a phrase for the report)."""

    def __init__(self, reasons: list[str]):
        super().__init__("; ".join(reasons))
        self.reasons = reasons


def _pod(rj: dict) -> dict:
    return ((rj.get("template") or {}).get("spec") or {}).get("template") or {}


def _job(rj: dict) -> dict:
    return (rj.get("template") or {}).get("spec") or {}


def derive(conversion, options) -> Derived:
    """The shared runtime's spec and the TrainJob's parts for this job, or Misfit."""
    jobset = conversion.jobset
    spec = jobset.get("spec") or {}
    rjobs = spec.get("replicatedJobs") or []
    plan = conversion.plan
    why: list[str] = []
    if options.subdomain:
        why.append("--subdomain (a shared runtime's pods are named under the TrainJob's name)")
    extra = sorted(set(spec) - set(JOBSET_FIELDS))
    if extra:
        why.append(f"JobSet fields {extra} (a TrainJob cannot set them on a shared runtime)")
    if (spec.get("network") or {}) not in ({}, DEFAULT_NETWORK):
        why.append("a JobSet network other than the default")
    split = sorted({r.rtype for r in plan.rjobs if sum(1 for o in plan.rjobs if o.rtype == r.rtype) > 1})
    if split:
        why.append(f"replica type {split[0]} spans two replicatedJobs (its pod 0 has one of its own)")
    for rj in rjobs:
        why += _pod_misfits(rj)
    for key in ("image", *TEMPLATED):
        if len({repr(_main(rj).get(key)) for rj in rjobs}) > 1 and not (
                key in TEMPLATED and (_templated_list(rjobs, key) or _dispatch(jobset, rjobs))):
            why.append(f"the roles run different {key} (a TrainJob gives every role the same)")
    # resources: resourcesPerNode reaches every trainer role and a runtime patch has none (Trainer v2.3.0):
    # every role runs the sized role's, where none asked for more (bundle_fit.py)
    sized = _scaling(rjobs)
    res_why, over = bundle_fit.resources_fit(
        (sized["name"], _main(sized).get("resources")),
        [(rj["name"], _main(rj).get("resources")) for rj in rjobs
         if rj is not sized and _main(rj).get("resources") != _main(sized).get("resources")])
    why += res_why
    if _dispatch(jobset, rjobs) and not _dispatch(jobset, rjobs)[0]:
        why.append(_dispatch(jobset, rjobs)[1])
    if len({_main(rj).get("imagePullPolicy") for rj in rjobs}) > 1:
        why.append("the roles pull their images differently (imagePullPolicy)")
    if any(n.code in ("JS052", "JS053", "JS054") for n in conversion.notes):
        why.append("selectors on the operator's labels (JS052-JS054) pick pods by the JobSet's per-Job labels")
    if why:
        raise Misfit(why)
    if over:
        rjobs = _with_resources(rjobs, _main(sized).get("resources"))
    uses_rank = any(_reads(rj, GLOBAL_INDEX) for rj in rjobs)
    derived = (_derive_node if uses_rank else _derive_roles)(conversion, jobset, rjobs)
    derived.overprovisioned = over
    derived.sized_role = sized["name"]
    derived.pull_policy = _main(rjobs[0]).get("imagePullPolicy")
    if derived.pull_policy:
        spec0 = conversion.job.replicas[plan.rjobs[0].rtype]
        cs = (spec0.template.get("spec") or {}).get("containers") or []
        i = next((k for k, c in enumerate(cs) if c.get("name") == _main(rjobs[0]).get("name")), 0)
        derived.pull_source = (f"spec.{conversion.job.mapping.replica_specs_field}.{spec0.source_key}"
                               f".template.spec.containers[{i}].imagePullPolicy")
    return derived


def _scaling(rjobs: list) -> dict:
    """The role numNodes sizes: the one with the most pods (workers on a tie)."""
    return max(rjobs, key=lambda r: (r.get("replicas", 1), r["name"] == "worker"))


def _with_resources(rjobs: list, resources: dict | None) -> list:
    out = copy.deepcopy(rjobs)
    for rj in out:
        c = _main(rj)
        c.pop("resources", None)
        if resources:
            c["resources"] = copy.deepcopy(resources)
    return out


def _main(rj: dict) -> dict:
    cs = (_pod(rj).get("spec") or {}).get("containers") or []
    return cs[0] if cs else {}


def _pod_misfits(rj: dict) -> list[str]:
    why = []
    job = _job(rj)
    extra = sorted(set(job) - set(RUNTIME_JOB_FIELDS) - {"completions", "parallelism", "activeDeadlineSeconds", "template"})
    if extra:
        why.append(f"Job fields {extra} on {rj['name']}")
    if job.get("completions", 1) != 1 or job.get("parallelism", 1) != 1:
        why.append(f"{rj['name']} runs several pods per Job")
    if set(rj) - {"name", "replicas", "template", "dependsOn"}:
        why.append(f"replicatedJob fields {sorted(set(rj) - {'name', 'replicas', 'template', 'dependsOn'})} on {rj['name']}")
    if (rj.get("template") or {}).get("metadata"):
        pass  # Job labels and annotations: runtimePatches
    pod = _pod(rj).get("spec") or {}
    extra = sorted(set(pod) - set(PATCHABLE_POD) - {"containers", "restartPolicy"})
    if extra:
        why.append(f"pod fields {extra} on {rj['name']} (not settable through runtimePatches)")
    if pod.get("initContainers") or len(pod.get("containers") or []) != 1:
        why.append("init or sidecar containers (their images would sit in the runtime)")
    for c in (pod.get("containers") or [])[:1]:
        extra = sorted(set(c) - set(TRAINER_CONTAINER) - set(PATCHED_CONTAINER) - {"name", "env", "ports", "imagePullPolicy"})
        if extra:
            why.append(f"container fields {extra} (a TrainJob cannot set them)")
        for e in c.get("env") or []:
            if (e.get("valueFrom") or {}).get("resourceFieldRef", {}).get("containerName") not in (None, c.get("name")):
                why.append(f"env {e.get('name')} reads another container's resources")
    return list(dict.fromkeys(why))


def _reads(rj: dict, field_path: str) -> bool:
    return any(((e.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath") == field_path
               for e in _main(rj).get("env") or [])


# ---------------------------------------------------------------------------------------------
# one `node` Job holding every rank (pod i = v1's global rank i)


def _derive_node(conversion, jobset, rjobs) -> Derived:
    pods = [copy.deepcopy(_pod(rj)) for rj in rjobs]
    for p in pods:
        p.pop("metadata", None)
    jobs = [{k: copy.deepcopy(v) for k, v in _job(rj).items() if k in RUNTIME_JOB_FIELDS} for rj in rjobs]
    index, n = _global_ranks(rjobs)
    renames = {f"-{rjob}-{j}-0.": f"-{NODE}-0-{i}." for (rjob, j), i in index.items()}
    rjobs = _argv_renamed(rjobs, renames)
    envs = [_env(_main(rj).get("env") or [], renames, n, (GLOBAL_INDEX,)) for rj in rjobs]
    for p, e in zip(pods, envs, strict=False):
        p["spec"]["containers"][0]["env"] = e[0]
    why = _roles_differ(rjobs, pods, jobs)
    job = copy.deepcopy(jobs[0])
    why += _rank_success(jobset["spec"], rjobs, job)
    if why:
        raise Misfit(why)
    container = _main(rjobs[0])
    env, literals = envs[0]
    trainer_env = [e for e in env if e.get("name") != JOBSET_NAME_VAR]
    _rename_exit_rule(job, container.get("name"))
    rjob = {"name": NODE, "replicas": 1, "template": {
        "metadata": {"labels": {ANCESTOR_LABEL: TRAINER}},
        "spec": {**job, "template": {"spec": _node_pod_spec(container, env, pods[0])}}}}
    template_spec = {"network": dict(DEFAULT_NETWORK), "successPolicy": {"operator": "All", "targetReplicatedJobs": [NODE]},
                     "replicatedJobs": [rjob]}
    trainer = _trainer(container, trainer_env, n)
    roles = []
    for rj, (role, first) in zip(rjobs, (conversion.plan.pod_roles[r["name"]] for r in rjobs), strict=False):
        roles.append((NODE, role, _rtype(conversion, rj["name"]), first, rj.get("replicas", 1)))
    patch = _patch(rjobs[0], NODE)
    return Derived(runtime_spec={"mlPolicy": {"numNodes": 1}, "template": {"spec": template_spec}},
                   trainer=trainer, patches={NODE: patch} if patch else {}, jobset_meta=_jobset_meta(jobset),
                   layout="node", rjobs=roles, deadline=_job(rjobs[0]).get("activeDeadlineSeconds"), renames=renames,
                   pod_places={k: (NODE, i) for k, i in index.items()},
                   size_literals=literals, container_names={NODE: container.get("name")})


def _global_ranks(rjobs: list) -> tuple[dict, int]:
    """v1's global rank of each pod, (replicatedJob, job index) -> rank, and the number of pods."""
    index, n = {}, 0
    for rj in rjobs:
        for j in range(rj.get("replicas", 1)):
            index[(rj["name"], j)] = n
            n += 1
    return index, n


def _roles_differ(rjobs: list, pods: list, jobs: list) -> list[str]:
    """Why the roles cannot share one Indexed Job: what one template, one set of Job rules, one set of labels
    and one deadline cannot say."""
    why = []
    if any(p != pods[0] for p in pods[1:]):
        why.append("the roles' pod templates differ (one Indexed Job holds every rank, so one template serves all)")
    if any(j != jobs[0] for j in jobs[1:]):
        why.append("the roles' restart and retry rules differ (one Indexed Job holds every rank)")
    metas = [(rj.get("template") or {}).get("metadata") for rj in rjobs] + [_pod(rj).get("metadata") for rj in rjobs]
    if any(m != metas[0] for m in metas[1: len(rjobs)]) or any(m != metas[len(rjobs)] for m in metas[len(rjobs):]):
        why.append("the roles' labels or annotations differ")
    if len({repr(_job(rj).get("activeDeadlineSeconds")) for rj in rjobs}) > 1:
        why.append("the roles' deadlines differ")
    return why


def _rank_success(spec: dict, rjobs: list, job: dict) -> list[str]:
    """The JobSet's success policy as ranks of the one Job (set on `job`); why it cannot be one."""
    why = []
    targets = (spec.get("successPolicy") or {}).get("targetReplicatedJobs") or [r["name"] for r in rjobs]
    if set(targets) != {r["name"] for r in rjobs}:
        if targets == [rjobs[0]["name"]] and rjobs[0].get("replicas", 1) == 1:
            job["successPolicy"] = {"rules": [{"succeededIndexes": "0"}]}  # v1: the master (rank 0) decides
        else:
            why.append(f"success when {targets} succeed, which is no set of ranks of one Job")
    if (spec.get("successPolicy") or {}).get("operator", "All") != "All":
        why.append("a success rule on any pod")
    return why


def _node_pod_spec(container: dict, env: list, pod: dict) -> dict:
    """The runtime's pod: a `node` container with the ports, and the JobSet name variable when the job reads it
    (the trainer's env carries the rest)."""
    node = {"name": NODE}
    if container.get("ports"):
        node["ports"] = copy.deepcopy(container["ports"])
    if any(e.get("name") == JOBSET_NAME_VAR for e in env):
        node["env"] = [field_env(JOBSET_NAME_VAR, HELPER_VARS[JOBSET_NAME_VAR])]
    return {"restartPolicy": (pod["spec"]).get("restartPolicy", "OnFailure"), "containers": [node]}


def _env(env: list, renames: dict, total: int, index_paths: tuple) -> tuple[list, list]:
    """The planned env as Trainer's layout needs it: indexes (`index_paths`) read from the completion index,
    pod addresses renamed to the pod's place (`renames`), the pod count a literal (no downward field has it)."""
    out, literals = [], []
    for e in env:
        e = copy.deepcopy(e)
        ref = (e.get("valueFrom") or {}).get("fieldRef")
        if ref is not None:
            if ref.get("fieldPath") == GLOBAL_REPLICAS:
                out.append({"name": e["name"], "value": str(total)})
                literals.append(e["name"])
                continue
            if ref.get("fieldPath") in index_paths:
                ref["fieldPath"] = COMPLETION_INDEX
            ref.pop("apiVersion", None)
        if isinstance(e.get("value"), str):
            for old, new in renames.items():
                e["value"] = e["value"].replace(old, new)
        out.append(e)
    return out, literals


# ---------------------------------------------------------------------------------------------
# one replicatedJob per role: the first sized by numNodes, every other one pod


def _derive_roles(conversion, jobset, rjobs) -> Derived:
    why = []
    scaling = _scaling(rjobs)
    fixed = [r for r in rjobs if r is not scaling]
    big = [f"{r['name']} ({r.get('replicas', 1)})" for r in fixed if r.get("replicas", 1) != 1]
    if big:
        why.append(f"more than one pod in {', '.join(big)} besides {scaling['name']} (a TrainJob sizes one role; "
                   "a shared runtime runs one pod of every other role)")
    if scaling.get("dependsOn"):
        why.append(f"{scaling['name']} waits for {[d['name'] for d in scaling['dependsOn']]} (the role sized by "
                   "numNodes is listed first, and JobSet lets no first replicatedJob wait)")
    if len({repr(_job(rj).get("activeDeadlineSeconds")) for rj in rjobs}) > 1:
        why.append("the roles' deadlines differ")
    if why:
        raise Misfit(why)
    rename = {f"-{scaling['name']}-{j}-0.": f"-{scaling['name']}-0-{j}." for j in range(scaling.get("replicas", 1))}
    rjobs = _argv_renamed(rjobs, rename)
    ordered = [next(r for r in rjobs if r["name"] == o["name"]) for o in (scaling, *fixed)]
    scaling = ordered[0]
    fields: list[str] = []
    envs, literals = {}, []
    total = sum(r.get("replicas", 1) for r in rjobs)
    for rj in ordered:
        # one Job per role: a pod's index within its role is its completion index
        envs[rj["name"]], lit = _env(_main(rj).get("env") or [], rename, total, (JOB_INDEX,))
        literals += [x for x in lit if x not in literals]
    trainer_env, runtime_env, templated, moved, everywhere = _split_env(ordered, envs)
    runtime_rjobs = []
    container = _main(scaling)
    dispatch = _dispatch(jobset, rjobs)
    entry = dispatch[0] if dispatch else None
    for rj in ordered:
        node = {"name": NODE}
        if entry is not None:
            node["command"] = list(ENTRY_COMMAND) if rj["name"] == entry else [SH, "-c", "exec " + shlex.join(_argv(rj))]
        ports = _main(rj).get("ports")
        if ports:
            node["ports"] = copy.deepcopy(ports)
        node["env"] = runtime_env[rj["name"]]
        job = {k: copy.deepcopy(v) for k, v in _job(rj).items() if k in RUNTIME_JOB_FIELDS}
        _rename_exit_rule(job, _main(rj).get("name"))
        pod_spec = {"restartPolicy": (_pod(rj).get("spec") or {}).get("restartPolicy", "OnFailure"), "containers": [node]}
        item = {"name": rj["name"], "replicas": 1}
        if rj.get("dependsOn"):
            item["dependsOn"] = copy.deepcopy(rj["dependsOn"])
        item["template"] = {"metadata": {"labels": {ANCESTOR_LABEL: TRAINER}},
                            "spec": {**job, "template": {"spec": pod_spec}}}
        runtime_rjobs.append(item)
    spec = jobset["spec"]
    template_spec = {"network": dict(DEFAULT_NETWORK)}
    if spec.get("successPolicy"):
        template_spec["successPolicy"] = copy.deepcopy(spec["successPolicy"])
    template_spec["replicatedJobs"] = runtime_rjobs
    trainer = _trainer(container, trainer_env, scaling.get("replicas", 1))
    if entry is not None:  # the entry role's argv rides in args; each role's command is the runtime's
        trainer.pop("command", None)
        trainer["args"] = _argv(next(rj for rj in rjobs if rj["name"] == entry))
    else:
        for key in TEMPLATED:
            if len({repr(_main(rj).get(key)) for rj in rjobs}) > 1:
                trainer[key] = _templated_list(ordered, key)
                fields.append(key)
    patches = {rj["name"]: p for rj in ordered if (p := _patch(rj, rj["name"]))}
    roles = [(rj["name"], conversion.plan.pod_roles[rj["name"]][0], _rtype(conversion, rj["name"]), 0, rj.get("replicas", 1))
             for rj in ordered]
    return Derived(runtime_spec={"mlPolicy": {"numNodes": 1}, "template": {"spec": template_spec}},
                   trainer=trainer, patches=patches, jobset_meta=_jobset_meta(jobset), layout="roles", rjobs=roles,
                   deadline=_job(scaling).get("activeDeadlineSeconds"), moved_env=moved, templated_env=templated,
                   templated_fields=fields, entry=entry, everywhere=everywhere, renames=rename,
                   pod_places={(rj["name"], j): (rj["name"], j) for rj in ordered for j in range(rj.get("replicas", 1))},
                   size_literals=literals, container_names=_container_names(ordered))


def _split_env(ordered: list, envs: dict) -> tuple[list, dict, list, list, list]:
    """(trainer env, runtime env per role, names templated with the role, names kept on some roles only,
    names of one role's that go to every role: ANY_ROLE_ENV)."""
    helpers = {JOBSET_NAME_VAR: HELPER_VARS[JOBSET_NAME_VAR], NAMESPACE_VAR: HELPER_VARS[NAMESPACE_VAR],
               JOB_INDEX_VAR: COMPLETION_INDEX}
    runtime = {rj["name"]: [field_env(n, p) for n, p in helpers.items()] for rj in ordered}
    for rj in ordered:
        runtime[rj["name"]].append({"name": ROLE_VAR, "value": _role(rj)})
    names = []
    for rj in ordered:
        for e in envs[rj["name"]]:
            if e.get("name") not in names and e.get("name") not in helpers:
                names.append(e.get("name"))
    trainer, templated, moved, everywhere, why = [], [], [], [], []
    trainer_names = set()
    for name in names:
        values = {rj["name"]: next((e for e in envs[rj["name"]] if e.get("name") == name), None) for rj in ordered}
        present = [k for k, v in values.items() if v is not None]
        if len(present) < len(ordered) and name in ANY_ROLE_ENV and len(present) == 1:
            trainer.append(values[present[0]])
            everywhere.append(name)
            trainer_names.add(name)
            continue
        if len(present) < len(ordered):
            for k in present:
                runtime[k].append(values[k])
            moved.append(name)
            continue
        first = values[ordered[0]["name"]]
        if all(v == first for v in values.values()):
            trainer.append(first)
        else:
            t = _template(values, {rj["name"]: _role(rj) for rj in ordered})
            if t is None:
                why.append(f"env {name} differs between roles in more than the role's name (a TrainJob's env is "
                           "the same for every role)")
                continue
            trainer.append(t)
            templated.append(name)
        trainer_names.add(name)
    for rj in ordered:
        for e in runtime[rj["name"]]:
            refs = set(re.findall(r"(?<!\$)\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)", str(e.get("value", ""))))
            if refs & trainer_names:
                why.append(f"env {e.get('name')} of {rj['name']} only reads {sorted(refs & trainer_names)[0]} "
                           "(a runtime's variable cannot read the TrainJob's)")
    if why:
        raise Misfit(list(dict.fromkeys(why)))
    return trainer, runtime, templated, moved, everywhere


def _role(rj: dict) -> str:
    return rj["name"]


# A role's own command in a shared runtime: sh runs it, ignoring the args the TrainJob gives every role;
# the role the job's success waits on (an MPI launcher) runs the TrainJob's args as its command.
SH = "/bin/sh"
ENTRY_COMMAND = [SH, "-c", 'exec "$@"', "--"]
# Env v1 set on some roles only that may go to every role: read by mpirun alone (the workers' sshd ignores
# it, and the sessions mpirun opens through ssh start from sshd's environment)
ANY_ROLE_ENV = ("OMPI_MCA_orte_set_default_slots",)


def _argv(rj: dict) -> list | None:
    c = _main(rj)
    return [*c["command"], *(c.get("args") or [])] if c.get("command") else None


def _dispatch(jobset: dict, rjobs: list) -> tuple | None:
    """Where the roles run different commands that no role name explains: (entry role, None) when one role
    decides the job's success (the launcher) and every role names its command; else (None, why). None when
    the commands do not differ."""
    if len({repr(_argv(rj)) for rj in rjobs}) < 2 or _templated_list(rjobs, "command") or _templated_list(rjobs, "args"):
        return None
    targets = ((jobset.get("spec") or {}).get("successPolicy") or {}).get("targetReplicatedJobs") or []
    entry = next((rj for rj in rjobs if [rj["name"]] == targets and rj.get("replicas", 1) == 1), None)
    if entry is None:
        return None, "the roles run different commands and no one role decides the job's success"
    if any(_argv(rj) is None for rj in rjobs):
        return None, "a role with a command of its own beside one that runs its image's entrypoint"
    return entry["name"], None


def _templated_list(rjobs: list, key: str) -> list | None:
    """The roles' command or args as one list whose items differ, where they do, by the role's name."""
    lists = {rj["name"]: _main(rj).get(key) for rj in rjobs}
    if any(v is None for v in lists.values()) or len({len(v) for v in lists.values()}) != 1 or len(rjobs) < 2:
        return None
    out = []
    for i in range(len(next(iter(lists.values())))):
        item = _template({k: {"name": key, "value": v[i]} for k, v in lists.items()}, {rj["name"]: _role(rj) for rj in rjobs})
        if item is None:
            return None
        out.append(item["value"])
    return out


def _template(values: dict, roles: dict) -> dict | None:
    """One env entry for every role: where the roles' values differ, each differs by its role's name."""
    if any("value" not in v or set(v) != {"name", "value"} for v in values.values()):
        return None
    words = {k: _WORD.findall(v["value"]) for k, v in values.items()}
    lengths = {len(w) for w in words.values()}
    if len(lengths) != 1:
        return None
    out = []
    for i, first in enumerate(next(iter(words.values()))):
        column = {k: w[i] for k, w in words.items()}
        if len(set(column.values())) == 1:
            out.append(first)
        elif all(column[k] == roles[k] for k in column):
            out.append(f"$({ROLE_VAR})")
        else:
            return None
    return {"name": next(iter(values.values()))["name"], "value": "".join(out)}


# ---------------------------------------------------------------------------------------------
# shared pieces


def _renamed(text, renames: dict):
    if isinstance(text, str):
        for old, new in renames.items():
            text = text.replace(old, new)
    return text


def _argv_renamed(rjobs: list, renames: dict) -> list:
    """The replicatedJobs with the pod addresses in their command and args (JS065's) in Trainer's layout."""
    out = copy.deepcopy(rjobs)
    for rj in out:
        c = _main(rj)
        for key in ("command", "args"):
            if c.get(key):
                c[key] = [_renamed(x, renames) for x in c[key]]
    return out


def _container_names(rjobs: list) -> dict:
    """The v1 container each `node` runs: {node: name} when every role's has one name, else per
    replicatedJob {rjob: {node: name}} (an MPI launcher and its workers)."""
    names = {rj["name"]: _main(rj).get("name") for rj in rjobs}
    if len(set(names.values())) == 1:
        return {NODE: next(iter(names.values()))}
    return {rjob: {NODE: name} for rjob, name in names.items()}


def _rtype(conversion, rjob: str) -> str:
    return next(r.rtype for r in conversion.plan.rjobs if r.name == rjob)


def _rename_exit_rule(job: dict, container: str | None) -> None:
    for rule in (job.get("podFailurePolicy") or {}).get("rules") or []:
        codes = rule.get("onExitCodes") or {}
        if codes.get("containerName") == container:
            codes["containerName"] = NODE


def _trainer(container: dict, env: list, nodes: int) -> dict:
    trainer = {k: copy.deepcopy(container[k]) for k in ("image", "command", "args") if k in container}
    if env:
        trainer["env"] = env
    trainer["numNodes"] = nodes
    if container.get("resources"):
        trainer["resourcesPerNode"] = copy.deepcopy(container["resources"])
    return trainer


def _patch(rj: dict, name: str) -> dict | None:
    """runtimePatches entry for one replicatedJob: Job and pod metadata, pod fields, the node container's mounts."""
    pod = _pod(rj)
    pod_spec = pod.get("spec") or {}
    patch_spec = {k: copy.deepcopy(pod_spec[k]) for k in PATCHABLE_POD if k in pod_spec}
    node = {k: copy.deepcopy(_main(rj)[k]) for k in PATCHED_CONTAINER if k in _main(rj)}
    if node:
        patch_spec["containers"] = [{"name": NODE, **node}]
    pod_patch = {k: v for k, v in (("metadata", copy.deepcopy(pod.get("metadata"))), ("spec", patch_spec)) if v}
    entry: dict = {}
    job_meta = (rj.get("template") or {}).get("metadata")
    if job_meta:
        entry["metadata"] = copy.deepcopy(job_meta)
    if pod_patch:
        entry["spec"] = {"template": pod_patch}
    return {"name": name, "template": entry} if entry else None


def _jobset_meta(jobset: dict) -> dict:
    meta = jobset.get("metadata") or {}
    labels = {k: v for k, v in (meta.get("labels") or {}).items() if k not in builtin.KUEUE_LABELS}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in TRAINJOB_ONLY_ANNOTATIONS}
    return {k: v for k, v in (("labels", labels), ("annotations", annotations)) if v}
