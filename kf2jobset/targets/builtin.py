"""`--target trainjob`, built-in path: a v1 job whose pods share one template runs on one of Trainer's own
ClusterTrainingRuntimes (torch-distributed, jax-distributed, xgboost-distributed), written the way a
Trainer user writes a TrainJob. What the three have in common lives here; each runtime's module
(torch_distributed.py, jax_distributed.py, xgboost_distributed.py) describes its ML plugin as a `Plugin`.

What a built-in runtime gives (Trainer v2.3.0, `pkg/runtime/framework/plugins/{jobset,torch,jax,xgboost}`,
held against the real controller in tests/e2e/test_trainjob_target.py): one replicatedJob `node` with one
Job of `numNodes` indexed pods (parallelism = completions = numNodes), container `node` with the image,
command, args, resources and env of `spec.trainer`, the plugin's env and port 29500. Nothing else: no start
order, success when every pod succeeded, Kubernetes' default of 6 retries per Job.

So the v1 contract rides in `spec.trainer`: the v1 env kf2jobset already built, with v1's rank-0 address
pointed at node index 0 and ranks read from the completion index (completion index i is v1's rank i:
the master, or worker 0 of a worker-only job, is index 0, which needs every pod to share one template),
and the pod fields in `runtimePatches`. A value that is the pod count reads the plugin's own count
variable where the plugin writes one ahead of the trainer env (`$(JAX_NUM_PROCESSES)`), so `numNodes`
stays the size knob; a value no variable can carry (a host list) stays literal and the TrainJob records
the numNodes it was written for (`kf2jobset convert --check`, kf2jobset/checks/staleness.py).

Fields a TrainJob cannot carry are decided one by one (`field_decisions`, notes in builtin_notes.py).
"""
from __future__ import annotations

import copy

from ..checks import staleness
from ..core.addresses import FIELDS, configmap_addresses, find, pattern
from ..checks.layout_guard import LAYOUT_ANNOTATION
from ..runtime.jobset_view import stand_in_name
from ..runtime.lifecycle import managed_by_rule
from .builtin_fields import PATCHABLE_POD, field_decisions

NODE = "node"  # the runtime's replicatedJob and container
TRAINER_PORT = 29500  # constants.ContainerTrainerPort
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
PATCH_MANAGER = "kf2jobset.dev/convert"  # runtimePatches[].manager: a domain-prefixed path
TRAINER_API = "trainer.kubeflow.org/v1alpha1"
JOBSET_API = "jobset.x-k8s.io/v1alpha2"
MAX_INT32 = 2147483647
DEFAULT_BACKOFF_LIMIT = 6  # a Job's default, which a built-in runtime's Job keeps
COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
GLOBAL_INDEX = "metadata.labels['jobset.sigs.k8s.io/job-global-index']"
JOB_INDEX = "metadata.labels['jobset.sigs.k8s.io/job-index']"
# The v1 pod count: one `node` Job holds every pod, so Trainer's JobSet counts them in numNodes instead.
GLOBAL_REPLICAS = "metadata.labels['jobset.sigs.k8s.io/global-replicas']"
JOBSET_NAME = "metadata.labels['jobset.sigs.k8s.io/jobset-name']"
NODE_CONTAINER = ("name", "image", "command", "args", "env", "resources", "volumeMounts", "securityContext", "ports")
JOBSET_FIELDS = ("replicatedJobs", "network", "successPolicy", "startupPolicy", "suspend", "managedBy")
# decided from the v1 job on every shared runtime (builtin_notes.lifetime_notes: TJ031)
DROPPED_JOBSET_FIELDS = ("ttlSecondsAfterFinished",)
JOB_FIELDS = ("completionMode", "completions", "parallelism", "backoffLimit", "activeDeadlineSeconds", "template")
DEFAULT_NETWORK = {"enableDNSHostnames": True, "publishNotReadyAddresses": True}
KUEUE_LABELS = ("kueue.x-k8s.io/queue-name", "kueue.x-k8s.io/priority-class")
# The TrainJob's size record (kf2jobset/checks/staleness.py): literals written for this many nodes
SIZED_FOR_NODES = staleness.NUM_NODES


class Plugin:
    """One of Trainer's ML plugins, and the v1 kind whose jobs it runs."""

    runtime = ""  # the ClusterTrainingRuntime
    profile = ""  # kf2jobset's framework profile of the v1 kind
    replica_types: tuple = ()  # the v1 replica types it takes, in rank order
    operator_port = ""  # the port the v1 operator declared on the default container
    env_first = True  # the plugin's env come before trainer.env (JAX, XGBoost) or after it (torch)
    order_fixed = True  # False: Trainer puts them before or after, fixed only per controller process (XGBoost)
    reserved: tuple = ()  # env names Trainer's webhook refuses in trainer.env (left to the plugin)
    written: tuple = ()  # env names the plugin writes on the node container (a trainer.env entry replaces one)
    family = ""  # how the report names them ("PET_*")
    rank_vars: tuple = ()  # (v1's rank-0 address, the plugin's), (v1's rank, the plugin's): for TJ005
    startup_note = False  # v1 had a start order (torch's init-pytorch): TJ008

    def plugin_env(self, name: str, trainer: dict, job) -> list[dict]:
        """The env the plugin writes for TrainJob `name`."""
        raise NotImplementedError

    def count_var(self, trainer: dict) -> str | None:
        """A variable of the plugin's that holds numNodes, which trainer.env can read as $(VAR)."""
        return None

    def extra_misfits(self, job, options) -> list[str]:
        return []

    def trainer_fields(self, job) -> dict:
        """spec.trainer fields besides image, command, args, env, numNodes, resourcesPerNode."""
        return {}


def interface(plugin: Plugin):
    """misfits(conversion, options), build(conversion, options) and limits(trainjob) of a built-in runtime's
    module (trainjob.BUILTINS), for its plugin."""
    return (lambda conversion, options: misfits(plugin, conversion, options),
            lambda conversion, options: build(plugin, conversion, options), limits)

# ---------------------------------------------------------------------------------------------
# what keeps a job off a built-in runtime


def source_misfits(plugin: Plugin, job, options) -> list[str]:
    """What in the v1 job keeps it off the runtime, read from the job itself."""
    why = []
    types = list(job.replicas)
    if set(types) - set(plugin.replica_types):
        why.append(f"replica types {sorted(set(types) - set(plugin.replica_types))}")
    templates = [job.replicas[t].template for t in types]
    if any(t != templates[0] for t in templates[1:]):
        why.append(f"{' and '.join(types)} templates differ (Trainer runs one template for every node)")
    if options.subdomain:
        why.append(f"--subdomain (Trainer's {plugin.runtime} plugin writes node 0's address with the TrainJob's name)")
    pod = (templates[0] or {}).get("spec") or {}
    why += field_decisions(pod, plugin.operator_port).misfits
    for c in (pod.get("containers") or [])[:1]:
        reserved = sorted({e.get("name") for e in c.get("env") or []} & set(plugin.reserved))
        if reserved:
            why.append(f"env {reserved} (reserved by Trainer's {plugin.runtime} plugin)")
    if _writes_pod_addresses(job, options):
        why.append("v1 pod addresses written in the job or its ConfigMaps (JS065, JS066 name pods by kf2jobset's "
                   "replicatedJobs)")
    return why + plugin.extra_misfits(job, options)


def _writes_pod_addresses(job, options) -> bool:
    rx = pattern(job, options.cluster_domain)
    if rx is None:
        return False
    if options.v1_pod_services or configmap_addresses(job, options.sibling_configmaps, options.cluster_domain):
        return True  # JS066's Services select kf2jobset's replicatedJobs
    for spec in job.replicas.values():
        for field in FIELDS:
            for c in ((spec.template.get("spec") or {}).get(field) or []):
                texts = [e.get("value") for e in c.get("env") or [] if isinstance(e, dict)]
                texts += list(c.get("command") or []) + list(c.get("args") or [])
                if any(find(t, job, options.cluster_domain, rx) for t in texts if isinstance(t, str)):
                    return True
    return False


def jobset_misfits(plugin: Plugin, jobset: dict) -> list[str]:
    """What in the JobSet kf2jobset built (the v1 contract) a built-in runtime cannot reproduce. The Job and
    pod fields that carry v1's restart rules (restartPolicy, backoffLimit, podFailurePolicy) are decided
    from the v1 job instead (TJ010, TJ021, TJ022), and so is its TTL (TJ031)."""
    why = []
    spec = jobset.get("spec") or {}
    extra = sorted(set(spec) - set(JOBSET_FIELDS) - set(DROPPED_JOBSET_FIELDS))
    if extra:
        why.append(f"JobSet fields {extra} (a built-in runtime's JobSet has only Trainer's)")
    if (spec.get("network") or {}) not in ({}, DEFAULT_NETWORK):
        why.append("a JobSet network other than the default")
    rjobs = spec.get("replicatedJobs") or []
    jobs = [(r.get("template") or {}).get("spec") or {} for r in rjobs]
    pods = [j.get("template") or {} for j in jobs]
    for r, j in zip(rjobs, jobs, strict=False):
        extra = sorted(set(j) - set(JOB_FIELDS) - {"podFailurePolicy"})
        if extra or set(r) - {"name", "replicas", "template", "dependsOn"}:
            why.append(f"Job fields {extra or sorted(set(r) - {'name', 'replicas', 'template', 'dependsOn'})} "
                       f"on {r.get('name')} (not settable on a built-in runtime's Job)")
        if j.get("completions", 1) != 1 or j.get("parallelism", 1) != 1:
            why.append(f"{r.get('name')} runs several pods per Job")

    def restart_free(p):  # the pod template without the restart rule decided from the v1 job
        return {**p, "spec": {k: v for k, v in (p.get("spec") or {}).items() if k != "restartPolicy"}}
    if any(restart_free(p) != restart_free(pods[0]) for p in pods[1:]):
        why.append("the replicatedJobs' pod templates differ")
    if any((r.get("template") or {}).get("metadata") != (rjobs[0].get("template") or {}).get("metadata") for r in rjobs):
        why.append("the replicatedJobs' Job labels differ")
    if len({j.get("activeDeadlineSeconds") for j in jobs}) > 1:
        why.append("the replicatedJobs' deadlines differ")
    pod = (pods[0] if pods else {}).get("spec") or {}
    decided = field_decisions(pod, plugin.operator_port)
    why += decided.misfits
    for c in (pod.get("containers") or [])[:1]:
        for e in c.get("env") or []:
            ref = ((e.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath") or ""
            allowed = (GLOBAL_INDEX, JOBSET_NAME, GLOBAL_REPLICAS) + ((JOB_INDEX,) if len(rjobs) == 1 else ())
            if "jobset.sigs.k8s.io/" in ref and ref not in allowed:
                why.append(f"env {e.get('name')} reads {ref}, which means something else in one `node` Job")
    return why


def misfits(plugin: Plugin, conversion, options) -> list[str]:
    why = source_misfits(plugin, conversion.job, options)
    said_templates = any("templates differ (Trainer runs" in w for w in why)
    for w in jobset_misfits(plugin, conversion.jobset):
        if w not in why and not (said_templates and w.startswith("the replicatedJobs' pod templates differ")):
            why.append(w)
    if any(n.code in ("JS052", "JS053", "JS054") for n in conversion.notes):
        # a selector on the operator's labels needs them on the pod templates, or picks pods by the JobSet's
        # per-Job labels (job-index, job-global-index), which mean something else in one `node` Job
        why.append("selectors on the operator's labels (JS052-JS054) need the replicatedJobs of the v1 replica types")
    return list(dict.fromkeys(why))


# ---------------------------------------------------------------------------------------------
# the TrainJob, and the JobSet Trainer builds from it


def node_index(jobset: dict) -> dict:
    """(replicatedJob, job index) of the JobSet kf2jobset built -> the completion index of that pod in
    the one `node` Job: replicatedJobs in order, as the job-global-index numbers them (= v1's rank)."""
    out, n = {}, 0
    for r in jobset["spec"]["replicatedJobs"]:
        for j in range(r.get("replicas", 1)):
            out[(r["name"], j)] = n
            n += 1
    return out


def trainer_env(plugin: Plugin, env: list[dict], index: dict, trainer: dict, literals) -> tuple[list[dict], list[str], list[str]]:
    """The v1 env kf2jobset built, for `spec.trainer.env`: the plugin's reserved variables are left to it, ranks
    come from the completion index, addresses of a replicatedJob's pod point at its node pod. A pod count
    reads the plugin's count variable when there is one ahead of the trainer env, else stays literal.
    Returns (env, names that follow numNodes, names written for this numNodes)."""
    nodes = str(len(index))
    count = plugin.count_var(trainer) if plugin.env_first and plugin.order_fixed else None
    out, follows, fixed = [], [], []
    for e in env:
        if e.get("name") in plugin.reserved:
            continue
        e = copy.deepcopy(e)
        ref = (e.get("valueFrom") or {}).get("fieldRef")
        counts_pods = (ref is not None and ref.get("fieldPath") == GLOBAL_REPLICAS) or (
            e.get("name") in literals and e.get("value") == nodes)
        if counts_pods:
            if count:
                out.append({"name": e["name"], "value": f"$({count})"})
                follows.append(e["name"])
            else:
                out.append({"name": e["name"], "value": nodes})
                fixed.append(e["name"])
            continue
        if e.get("name") in literals:
            fixed.append(e["name"])
        if ref is not None:
            if ref.get("fieldPath") in (GLOBAL_INDEX, JOB_INDEX):  # (job-index: only with one replicatedJob)
                ref["fieldPath"] = COMPLETION_INDEX
            ref.pop("apiVersion", None)  # Trainer copies fieldPath only
        if isinstance(e.get("value"), str):
            for (rjob, j), i in index.items():
                e["value"] = e["value"].replace(f"-{rjob}-{j}-0.", f"-{NODE}-0-{i}.")
        out.append(e)
    return out, follows, fixed


def build(plugin: Plugin, conversion, options) -> tuple[dict, dict]:
    """The TrainJob, and the JobSet Trainer builds from it (before the API server's defaulting)."""
    jobset = conversion.jobset
    meta = jobset.get("metadata") or {}
    spec = jobset["spec"]
    rjobs = spec["replicatedJobs"]
    job_spec = rjobs[0]["template"]["spec"]
    pod = copy.deepcopy(job_spec["template"])
    pod_spec = pod.get("spec") or {}
    container = pod_spec["containers"][0]
    index = node_index(jobset)
    nodes = len(index)
    # the plan's records describe its replicatedJobs; Trainer builds its own (one "node"): neither copies over
    record = (staleness.SIZED_FOR_ANNOTATION, staleness.SIZE_LITERALS_ANNOTATION, LAYOUT_ANNOTATION)
    # the plan's literal names, as "NAME" or "NAME (what it counts)"
    written = [n.strip() for n in str((meta.get("annotations") or {}).get(record[1], "")).split(",") if n.strip()]
    literals = {n.split(" (", 1)[0]: n for n in written}

    sizes = {"numNodes": nodes, **({"resourcesPerNode": container["resources"]} if container.get("resources") else {})}
    env, _, fixed = trainer_env(plugin, container.get("env") or [], index, sizes, literals)  # (the count may need the GPUs)
    trainer: dict = {k: container[k] for k in ("image", "command", "args") if k in container}
    if env:
        trainer["env"] = env
    trainer.update(sizes)
    trainer.update(plugin.trainer_fields(conversion.job))

    labels = dict(meta.get("labels") or {})
    kueue = {k: labels.pop(k) for k in KUEUE_LABELS if k in labels}
    # the plan's size record describes its replicatedJobs: the TrainJob gets its own, for numNodes
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in record}
    pod_patch = {k: pod_spec[k] for k in PATCHABLE_POD if k in pod_spec}
    node_patch = {k: container[k] for k in ("volumeMounts", "securityContext") if k in container}
    if node_patch:
        pod_patch["containers"] = [{"name": NODE, **node_patch}]
    job_meta = (rjobs[0].get("template") or {}).get("metadata")
    rjob_patch: dict = {}
    if job_meta:
        rjob_patch["metadata"] = job_meta
    pod_template_patch = {k: v for k, v in (("metadata", pod.get("metadata")), ("spec", pod_patch)) if v}
    if pod_template_patch:
        rjob_patch["spec"] = {"template": pod_template_patch}
    template_patch: dict = {}
    jobset_meta = {k: v for k, v in (("labels", labels), ("annotations", annotations)) if v}
    if jobset_meta:
        template_patch["metadata"] = jobset_meta  # Trainer copies no TrainJob label to the JobSet
    if rjob_patch:
        template_patch["spec"] = {"replicatedJobs": [{"name": NODE, "template": rjob_patch}]}

    train_meta = {k: meta[k] for k in ("name", "generateName", "namespace") if meta.get(k)}
    if labels or kueue:
        train_meta["labels"] = {**labels, **kueue}
    train_annotations = dict(annotations)
    if fixed:  # the size record, on the TrainJob only (numNodes is its size)
        train_annotations[staleness.SIZED_FOR_ANNOTATION] = f"{SIZED_FOR_NODES}={nodes}"
        train_annotations[staleness.SIZE_LITERALS_ANNOTATION] = ", ".join(literals.get(n, n) for n in fixed)
    if train_annotations:
        train_meta["annotations"] = train_annotations
    train_spec: dict = {"runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime",
                                       "name": plugin.runtime},
                        "trainer": trainer}
    if template_patch:
        train_spec["runtimePatches"] = [{"manager": PATCH_MANAGER, "trainingRuntimeSpec": {"template": template_patch}}]
    deadline = job_spec.get("activeDeadlineSeconds")
    if deadline is not None:
        train_spec["activeDeadlineSeconds"] = deadline
    for key in ("suspend", "managedBy"):
        if key in spec:
            train_spec[key] = spec[key]
    trainjob = {"apiVersion": TRAINER_API, "kind": "TrainJob", "metadata": train_meta, "spec": train_spec}
    return trainjob, predict(plugin, trainjob, pod, container, labels, annotations, conversion.job)


# The TrainJob CRD's limits on spec.trainer (Trainer v2.3.0): lists of at most 128, an image of at most 500
TRAINER_LIST_MAX = 128
IMAGE_MAX = 500


def limits(trainjob: dict) -> list[str]:
    """What in spec.trainer the TrainJob CRD would refuse (the generated runtime has no such limits)."""
    trainer = trainjob["spec"]["trainer"]
    why = [f"{len(trainer[k])} {k} entries (spec.trainer.{k} holds at most {TRAINER_LIST_MAX})"
           for k in ("command", "args", "env") if len(trainer.get(k) or []) > TRAINER_LIST_MAX]
    if len(trainer.get("image") or "") > IMAGE_MAX:
        why.append(f"an image name over {IMAGE_MAX} characters")
    names = [e.get("name") for e in trainer.get("env") or []]
    if len(names) != len(set(names)):
        why.append("an env name set twice (spec.trainer.env is a map by name)")
    return why


def upsert_env(env: list[dict], more: list[dict]) -> list[dict]:
    """Trainer's apply.UpsertEnvVars: an entry of that name is replaced where it stands, else appended."""
    out = list(env)
    for e in more:
        at = next((i for i, x in enumerate(out) if x.get("name") == e.get("name")), None)
        if at is None:
            out.append(e)
        else:
            out[at] = e
    return out


def predict(plugin: Plugin, trainjob: dict, pod: dict, container: dict, labels: dict, annotations: dict, job) -> dict:
    """The JobSet Trainer v2.3 builds for `trainjob` on the plugin's runtime (plugins/jobset, the ML plugin):
    the runtime's one `node` replicatedJob, sized and filled from spec.trainer, patched, with the plugin's
    env; with the two defaults JobSet's webhook adds that the pods depend on (completionMode, restartPolicy)."""
    # Trainer writes the TrainJob's name into node 0's address; one named at creation (generateName, a
    # Katib trial) is predicted under the stand-in name the report's model gives it
    name = stand_in_name(trainjob["metadata"])
    trainer = trainjob["spec"]["trainer"]
    nodes = trainer["numNodes"]
    resources = trainer.get("resourcesPerNode") or {}
    node = {"name": NODE, **{k: trainer[k] for k in ("image", "command", "args") if k in trainer}}
    own = plugin.plugin_env(name, trainer, job)
    # torch upserts trainer.env before its PET_*; JAX and XGBoost write theirs, then the JobSet builder
    # upserts trainer.env (a name the user set replaces the plugin's value where it stands)
    node["env"] = upsert_env(own, trainer.get("env") or []) if plugin.env_first else [*(trainer.get("env") or []), *own]
    node["ports"] = [{"containerPort": TRAINER_PORT}]
    if resources:
        node["resources"] = resources
    for k in ("volumeMounts", "securityContext"):
        if k in container:
            node[k] = container[k]
    pod_spec = {k: v for k, v in (pod.get("spec") or {}).items() if k in PATCHABLE_POD}
    pod_spec["containers"] = [node]
    pod_template = {"spec": pod_spec}
    if pod.get("metadata"):
        pod_template = {"metadata": pod["metadata"], **pod_template}
    patch = ((trainjob["spec"].get("runtimePatches") or [{}])[0].get("trainingRuntimeSpec") or {}).get("template") or {}
    job_meta = ((((patch.get("spec") or {}).get("replicatedJobs") or [{}])[0].get("template") or {}).get("metadata")) or {}
    rjob_meta = {**job_meta, "labels": {ANCESTOR_LABEL: "trainer", **(job_meta.get("labels") or {})}}
    meta = {k: trainjob["metadata"][k] for k in ("name", "generateName", "namespace") if k in trainjob["metadata"]}
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    pod_spec["restartPolicy"] = "OnFailure"  # JobSet's defaulting webhook, on the way in
    spec: dict = {"replicatedJobs": [{"name": NODE, "replicas": 1, "template": {
        "metadata": rjob_meta, "spec": {"completionMode": "Indexed", "parallelism": nodes, "completions": nodes,
                                        "template": pod_template}}}]}
    if "suspend" in trainjob["spec"]:
        spec["suspend"] = trainjob["spec"]["suspend"]
    return {"apiVersion": JOBSET_API, "kind": "JobSet", "metadata": meta, "spec": spec}


class NodeLayout:
    """Where the v1 pods are in the JobSet Trainer builds: all in the `node` Job, in rank order (the
    report pairs pods by it; see Conversion.pods)."""

    def __init__(self, jobset: dict, plan):
        self.segments_in_order = []  # (role, first replica index, pods), as completion indexes run
        types: dict = {}
        for r in jobset["spec"]["replicatedJobs"]:
            role, first = plan.pod_roles[r["name"]]
            self.segments_in_order.append((role, first, r.get("replicas", 1)))
        for r in plan.rjobs:
            types.setdefault(r.rtype, 0)
            types[r.rtype] += r.replicas
        self.types = types
        first = jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
        self.container_names = {NODE: first["name"]}  # the node container runs the v1 default container

    @property
    def rjob_names(self) -> dict:
        return {t: NODE for t in self.types}

    @property
    def segments(self) -> dict:
        return {t: [(NODE, 0, n)] for t, n in self.types.items()}

    @property
    def pod_roles(self) -> dict:
        return {NODE: list(self.segments_in_order)}

    def rjob_names_of(self, rtype: str) -> list[str]:
        return [NODE] if rtype in self.types else []


def trainjob_manager(conversion, trainjob: dict) -> None:
    """The TrainJob's spec.managedBy decides who runs the job (MultiKueue dispatches the TrainJob, Trainer's
    controller skips it), not the JobSet Trainer would build from it: the report's lifecycle reads it there."""
    managed = (trainjob.get("spec") or {}).get("managedBy")
    if managed:
        conversion.lifecycle_overrides["managedBy"] = managed_by_rule(managed, "trainer.kubeflow.org/trainjob-controller")
