"""`--target trainjob`, built-in path: a PyTorchJob whose pods share one template runs on Trainer's own
`torch-distributed` ClusterTrainingRuntime, written the way a Trainer user writes a TrainJob.

What the runtime gives (Trainer v2.3.0, `pkg/runtime/framework/plugins/torch`, held against the real
controller in tests/e2e/test_trainjob_target.py): one replicatedJob `node` with one Job of `numNodes`
indexed pods (parallelism = completions = numNodes), container `node`, and on it PET_NNODES,
PET_NPROC_PER_NODE, PET_NODE_RANK (the completion index), PET_MASTER_ADDR (`<name>-node-0-0.<name>`),
PET_MASTER_PORT (29500) and port 29500. Nothing else: no MASTER_ADDR, RANK or WORLD_SIZE, no start
order, success when every pod succeeded, Kubernetes' default of 6 retries per Job.

So the v1 contract rides in `spec.trainer`: image, command, args, resources and the v1 env kf2jobset
already built (MASTER_ADDR pointed at node index 0, RANK read from the completion index), and the
pod fields in `runtimePatches`. Completion index i is v1's rank i: the master (or worker 0 of a
worker-only job) is index 0, worker i is index i+1 — which needs every pod to share one template.

The JobSet this module predicts (`predict`) is what Trainer builds; the report compares it with the v1
pods, the validator checks it, and the e2e test holds the prediction against Trainer's own JobSet.
Jobs that do not fit keep the generated TrainingRuntime (trainjob.py), which carries the contract
exactly; `misfits` says why.
"""
from __future__ import annotations

import copy
import math
import re

from ..claims import absent, equals, present
from ..notes import Note
from ..quantity import parse_quantity
from ..runtime.jobset_view import stand_in_name

RUNTIME_NAME = "torch-distributed"
NODE = "node"  # the runtime's replicatedJob and container
TRAINER_PORT = 29500
ANCESTOR_LABEL = "trainer.kubeflow.org/trainjob-ancestor-step"
PATCH_MANAGER = "kf2jobset.dev/convert"  # runtimePatches[].manager: a domain-prefixed path
JOBSET_API = "jobset.x-k8s.io/v1alpha2"
MAX_INT32 = 2147483647
DEFAULT_BACKOFF_LIMIT = 6  # a Job's default, which a built-in runtime's Job keeps
COMPLETION_INDEX = "metadata.annotations['batch.kubernetes.io/job-completion-index']"
GLOBAL_INDEX = "metadata.labels['jobset.sigs.k8s.io/job-global-index']"
# The v1 pod count: one `node` Job holds every pod, so Trainer's JobSet counts them in numNodes instead.
GLOBAL_REPLICAS = "metadata.labels['jobset.sigs.k8s.io/global-replicas']"
JOBSET_NAME = "metadata.labels['jobset.sigs.k8s.io/jobset-name']"
# env the torch plugin writes on the node container and refuses in trainer.env (constants.go)
PET_ENV = ("PET_NNODES", "PET_NPROC_PER_NODE", "PET_NODE_RANK", "PET_MASTER_ADDR", "PET_MASTER_PORT")
TORCHTUNE = ["tune", "run"]  # the plugin rewrites this command
# What a TrainJob may set on a built-in runtime's pods (v2.3 PodSpecPatch), plus what spec.trainer sets
PATCHABLE_POD = ("serviceAccountName", "volumes", "imagePullSecrets", "securityContext", "nodeSelector",
                 "affinity", "tolerations", "schedulingGates", "terminationGracePeriodSeconds")
NODE_CONTAINER = ("name", "image", "command", "args", "env", "resources", "volumeMounts", "securityContext", "ports")
JOBSET_FIELDS = ("replicatedJobs", "network", "successPolicy", "startupPolicy", "suspend", "managedBy")
JOB_FIELDS = ("completionMode", "completions", "parallelism", "backoffLimit", "activeDeadlineSeconds", "template")
DEFAULT_NETWORK = {"enableDNSHostnames": True, "publishNotReadyAddresses": True}
OPERATOR_PORT = "pytorchjob-port"
KUEUE_LABELS = ("kueue.x-k8s.io/queue-name", "kueue.x-k8s.io/priority-class")
_WHY = ("about what Trainer's torch-distributed runtime builds; the predicted JobSet is compared with Trainer's "
        "own in tests/e2e/test_trainjob_target.py")


def source_misfits(job, options) -> list[str]:
    """What in the v1 job keeps it off torch-distributed, read from the job itself."""
    why = []
    if job.framework.get("elasticPolicy"):
        why.append("elasticPolicy (Trainer has no elastic training)")
    types = list(job.replicas)
    if set(types) - {"Master", "Worker"}:
        why.append(f"replica types {sorted(set(types) - {'Master', 'Worker'})}")
    templates = [job.replicas[t].template for t in types]
    if any(t != templates[0] for t in templates[1:]):
        why.append("Master and Worker templates differ (Trainer runs one template for every node)")
    if any(job.replicas[t].restart_policy not in ("OnFailure", "Always") for t in types):
        why.append("restartPolicy Never/ExitCode (a built-in runtime's Jobs retry with Kubernetes' defaults)")
    rp = job.run_policy
    if rp.backoff_limit is not None or rp.ttl_seconds_after_finished is not None:
        why.append("runPolicy.backoffLimit/ttlSecondsAfterFinished (Job and JobSet fields a TrainJob cannot set)")
    if options.subdomain:
        why.append("--subdomain (Trainer's torch plugin writes the master address with the TrainJob's name)")
    pod = (templates[0] or {}).get("spec") or {}
    extra = sorted(set(pod) - set(PATCHABLE_POD) - {"containers", "restartPolicy"})
    if extra:
        why.append(f"pod fields {extra} (not settable through runtimePatches)")
    if pod.get("initContainers") or len(pod.get("containers") or []) != 1:
        why.append("init or sidecar containers (a TrainJob can add none)")
    for c in (pod.get("containers") or [])[:1]:
        extra = sorted(set(c) - set(NODE_CONTAINER))
        if extra:
            why.append(f"container fields {extra} (not settable on the node container)")
        reserved = sorted({e.get("name") for e in c.get("env") or []} & set(PET_ENV))
        if reserved:
            why.append(f"env {reserved} (reserved by Trainer's torch plugin)")
        if c.get("command") == TORCHTUNE:
            why.append("command `tune run` (Trainer's torch plugin rewrites it for torchtune)")
    if _writes_pod_addresses(job, options):
        why.append("v1 pod addresses written in the job or its ConfigMaps (JS065, JS066 name pods by kf2jobset's "
                   "replicatedJobs)")
    nproc = str(job.framework.get("nprocPerNode", "auto"))
    if nproc != "auto" and not nproc.isdigit():
        why.append(f"nprocPerNode {nproc!r} (Trainer takes a number of processes, or derives one)")
    return why


def _writes_pod_addresses(job, options) -> bool:
    from ..addresses import FIELDS, configmap_addresses, find, pattern

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


def jobset_misfits(jobset: dict) -> list[str]:
    """What in the JobSet kf2jobset built (the v1 contract) a built-in runtime cannot reproduce."""
    why = []
    spec = jobset.get("spec") or {}
    extra = sorted(set(spec) - set(JOBSET_FIELDS))
    if extra:
        why.append(f"JobSet fields {extra} (a built-in runtime's JobSet has only Trainer's)")
    if (spec.get("network") or {}) not in ({}, DEFAULT_NETWORK):
        why.append("a JobSet network other than the default")
    rjobs = spec.get("replicatedJobs") or []
    jobs = [(r.get("template") or {}).get("spec") or {} for r in rjobs]
    pods = [j.get("template") or {} for j in jobs]
    for r, j in zip(rjobs, jobs):
        extra = sorted(set(j) - set(JOB_FIELDS))
        if extra or set(r) - {"name", "replicas", "template", "dependsOn"}:
            why.append(f"Job fields {extra or sorted(set(r) - {'name', 'replicas', 'template', 'dependsOn'})} "
                       f"on {r.get('name')} (not settable on a built-in runtime's Job)")
        if j.get("completions", 1) != 1 or j.get("parallelism", 1) != 1:
            why.append(f"{r.get('name')} runs several pods per Job")
        if j.get("backoffLimit", MAX_INT32) != MAX_INT32:
            why.append(f"a retry limit on {r.get('name')} (Job backoffLimit cannot be set on a built-in runtime)")
    if any(p != pods[0] for p in pods[1:]):
        why.append("the replicatedJobs' pod templates differ")
    if any((r.get("template") or {}).get("metadata") != (rjobs[0].get("template") or {}).get("metadata") for r in rjobs):
        why.append("the replicatedJobs' Job labels differ")
    if len({j.get("activeDeadlineSeconds") for j in jobs}) > 1:
        why.append("the replicatedJobs' deadlines differ")
    pod = (pods[0] if pods else {}).get("spec") or {}
    extra = sorted(set(pod) - set(PATCHABLE_POD) - {"containers", "restartPolicy"})
    if extra:
        why.append(f"pod fields {extra} (not settable through runtimePatches)")
    if pod.get("restartPolicy", "OnFailure") != "OnFailure":
        why.append(f"pod restartPolicy {pod.get('restartPolicy')}")
    containers = pod.get("containers") or []
    if len(containers) != 1:
        why.append("init or sidecar containers (a TrainJob can add none)")
    for c in containers[:1]:
        extra = sorted(set(c) - set(NODE_CONTAINER))
        if extra:
            why.append(f"container fields {extra} (not settable on the node container)")
        ports = c.get("ports") or []
        if any(p.get("name") != OPERATOR_PORT for p in ports):
            why.append("container ports the user declared (a TrainJob cannot declare ports)")
        for e in c.get("env") or []:
            ref = ((e.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath") or ""
            if "jobset.sigs.k8s.io/" in ref and ref not in (GLOBAL_INDEX, JOBSET_NAME, GLOBAL_REPLICAS):
                why.append(f"env {e.get('name')} reads {ref}, which means something else in one `node` Job")
    return why


def misfits(conversion, options) -> list[str]:
    why = source_misfits(conversion.job, options)
    said_templates = any(w.startswith("Master and Worker templates differ") for w in why)
    for w in jobset_misfits(conversion.jobset):
        if w not in why and not (said_templates and w.startswith("the replicatedJobs' pod templates differ")):
            why.append(w)
    if any(n.code in ("JS052", "JS053", "JS054") for n in conversion.notes):
        # a selector on the operator's labels needs them on the pod templates, or picks pods by the JobSet's
        # per-Job labels (job-index, job-global-index), which mean something else in one `node` Job
        why.append("selectors on the operator's labels (JS052-JS054) need the replicatedJobs of the v1 replica types")
    return list(dict.fromkeys(why))


# ---------------------------------------------------------------------------------------------
# the TrainJob, and the JobSet Trainer builds from it


def _node_index(jobset: dict) -> dict:
    """(replicatedJob, job index) of the JobSet kf2jobset built -> the completion index of that pod in
    the one `node` Job: replicatedJobs in order, as the job-global-index numbers them (= v1's rank)."""
    out, n = {}, 0
    for r in jobset["spec"]["replicatedJobs"]:
        for j in range(r.get("replicas", 1)):
            out[(r["name"], j)] = n
            n += 1
    return out


def _trainer_env(env: list[dict], index: dict) -> list[dict]:
    """The v1 env kf2jobset built, for `spec.trainer.env`: the PET_* Trainer writes itself are left to it,
    ranks come from the completion index, addresses of a replicatedJob's pod point at its node pod."""
    out = []
    for e in env:
        if e.get("name") in PET_ENV:
            continue
        e = copy.deepcopy(e)
        ref = (e.get("valueFrom") or {}).get("fieldRef")
        if ref is not None and ref.get("fieldPath") == GLOBAL_REPLICAS:
            out.append({"name": e["name"], "value": str(len(index))})  # numNodes, written beside it
            continue
        if ref is not None:
            if ref.get("fieldPath") == GLOBAL_INDEX:
                ref["fieldPath"] = COMPLETION_INDEX
            ref.pop("apiVersion", None)  # Trainer copies fieldPath only
        if isinstance(e.get("value"), str):
            for (rjob, j), i in index.items():
                e["value"] = e["value"].replace(f"-{rjob}-{j}-0.", f"-{NODE}-0-{i}.")
        out.append(e)
    return out


def nproc_per_node(job, resources: dict) -> str:
    """PET_NPROC_PER_NODE as Trainer's torch plugin sets it: the number given, else "auto" with a GPU
    (any resource whose name contains "gpu", requests before limits), else the CPUs (requests before
    limits, rounded up as Go's Quantity.Value does), at least 1."""
    nproc = str(job.framework.get("nprocPerNode", "auto"))
    if nproc.isdigit():
        return nproc

    def first(kind_of):
        for part in ("requests", "limits"):
            for name, q in (resources.get(part) or {}).items():
                if kind_of(str(name)):
                    value = parse_quantity(q)
                    if value:
                        return math.ceil(value)
        return 0
    if first(lambda n: "gpu" in n.lower()):
        return "auto"
    return str(max(1, first(lambda n: n == "cpu")))


def build(conversion, options) -> tuple[dict, dict]:
    """The TrainJob, and the JobSet Trainer builds from it (before the API server's defaulting)."""
    jobset = conversion.jobset
    meta = jobset.get("metadata") or {}
    spec = jobset["spec"]
    rjobs = spec["replicatedJobs"]
    job_spec = rjobs[0]["template"]["spec"]
    pod = copy.deepcopy(job_spec["template"])
    pod_spec = pod.get("spec") or {}
    container = pod_spec["containers"][0]
    index = _node_index(jobset)
    nodes = len(index)
    env = _trainer_env(container.get("env") or [], index)

    trainer: dict = {k: container[k] for k in ("image", "command", "args") if k in container}
    if env:
        trainer["env"] = env
    trainer["numNodes"] = nodes
    if container.get("resources"):
        trainer["resourcesPerNode"] = container["resources"]
    nproc = str(conversion.job.framework.get("nprocPerNode", "auto"))
    if nproc.isdigit():
        trainer["numProcPerNode"] = int(nproc)

    labels = dict(meta.get("labels") or {})
    kueue = {k: labels.pop(k) for k in KUEUE_LABELS if k in labels}
    annotations = dict(meta.get("annotations") or {})
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
    if annotations:
        train_meta["annotations"] = annotations
    train_spec: dict = {"runtimeRef": {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime",
                                       "name": RUNTIME_NAME},
                        "trainer": trainer}
    if template_patch:
        train_spec["runtimePatches"] = [{"manager": PATCH_MANAGER, "trainingRuntimeSpec": {"template": template_patch}}]
    deadline = job_spec.get("activeDeadlineSeconds")
    if deadline is not None:
        train_spec["activeDeadlineSeconds"] = deadline
    for key in ("suspend", "managedBy"):
        if key in spec:
            train_spec[key] = spec[key]
    trainjob = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": train_meta,
                "spec": train_spec}
    return trainjob, predict(trainjob, pod, container, labels, annotations, conversion.job)


# The TrainJob CRD's limits on spec.trainer (Trainer v2.3.0): lists of at most 128, an image of at most 500
TRAINER_LIST_MAX = 128
IMAGE_MAX = 500


def trainer_limits(trainjob: dict) -> list[str]:
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


def predict(trainjob: dict, pod: dict, container: dict, labels: dict, annotations: dict, job) -> dict:
    """The JobSet Trainer v2.3 builds for `trainjob` on torch-distributed (plugins/jobset, plugins/torch):
    the runtime's one `node` replicatedJob, sized and filled from spec.trainer, patched, with the PET_*;
    with the two defaults JobSet's webhook adds that the pods depend on (completionMode, restartPolicy)."""
    # Trainer writes the TrainJob's name into PET_MASTER_ADDR; one named at creation (generateName, a
    # Katib trial) is predicted under the stand-in name the report's model gives it
    name = stand_in_name(trainjob["metadata"])
    trainer = trainjob["spec"]["trainer"]
    nodes = trainer["numNodes"]
    resources = trainer.get("resourcesPerNode") or {}
    node = {"name": NODE, **{k: trainer[k] for k in ("image", "command", "args") if k in trainer}}
    node["env"] = [*(trainer.get("env") or []),
                   {"name": "PET_NNODES", "value": str(nodes)},
                   {"name": "PET_NPROC_PER_NODE", "value": nproc_per_node(job, resources)},
                   {"name": "PET_NODE_RANK", "valueFrom": {"fieldRef": {"fieldPath": COMPLETION_INDEX}}},
                   {"name": "PET_MASTER_ADDR", "value": f"{name}-{NODE}-0-0.{name}"},
                   {"name": "PET_MASTER_PORT", "value": str(TRAINER_PORT)}]
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


# ---------------------------------------------------------------------------------------------
# what the report says


def notes(conversion, trainjob: dict, predicted: dict, planned_env: list[dict]) -> list[Note]:
    """What differs from the JobSet kf2jobset would write (the v1 contract: `planned_env` is its env), with
    evidence the report's comparison of the v1 pods with the predicted JobSet's pods attaches."""
    v1_nproc = next((e.get("value") for e in planned_env if e.get("name") == "PET_NPROC_PER_NODE"), None)
    name = trainjob["metadata"].get("name") or "<name>"
    nodes = trainjob["spec"]["trainer"]["numNodes"]
    types = list(conversion.job.replicas)
    rank0 = "the master" if "Master" in types else "worker 0"
    node_env = f"spec.replicatedJobs[{NODE}].template.spec.template.spec.containers[{NODE}].env"
    pet_nproc = next(e["value"] for e in predicted["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
                     ["containers"][0]["env"] if e["name"] == "PET_NPROC_PER_NODE")
    out = [
        Note("TJ005", "rewritten",
             f"the pods are the {nodes} indexed pods of one Job `node` (container `node`), reached as "
             f"{name}-node-0-<i>.{name}; index i is v1's rank i ({rank0} is 0), so MASTER_ADDR and "
             "PET_MASTER_ADDR name node 0 and RANK and PET_NODE_RANK read the completion index; Trainer "
             "appends its PET_* variables after the trainer env",
             target_path="spec.trainer",
             action="change any pod address or container name you wrote yourself (args, config files, code, "
                    "`kubectl logs -c`)",
             explains=(("hostname", "*"), ("container", "*"), ("dns", "*"), ("env", "*order*")),
             claims=(equals(f"spec.replicatedJobs[{NODE}].template.spec.completions", nodes),
                     equals(f"{node_env}[PET_NODE_RANK].valueFrom.fieldRef.fieldPath", COMPLETION_INDEX))),
        Note("TJ006", "rewritten",
             f"PET_MASTER_PORT is {TRAINER_PORT} and the node container declares port {TRAINER_PORT} "
             "(Trainer's torch plugin; it refuses any other value); MASTER_PORT keeps v1's port, so a script "
             "reading either finds a free port on node 0, and torchrun uses PET_MASTER_PORT",
             target_path=f"{node_env}[PET_MASTER_PORT]",
             explains=(("env", "PET_MASTER_PORT"), ("port", "*")),
             claims=(equals(f"{node_env}[PET_MASTER_PORT].value", str(TRAINER_PORT)),)),
        Note("TJ008", "approximated",
             "every node starts at once: the operator's init-pytorch container (workers waited until the master "
             "resolved) has no place in a built-in runtime; torch's rendezvous waits for the master instead "
             "(torchrun and init_process_group retry the store until their timeout)",
             explains=(("init", "init-pytorch"), ("lifecycle", "start")),
             action="nothing for torchrun or env:// rendezvous; a script that connects once must retry",
             claims=(absent(f"spec.replicatedJobs[{NODE}].dependsOn"), absent("spec.startupPolicy"))),
        Note("TJ009", "approximated",
             f"the TrainJob completes when all {nodes} pods have succeeded; v1 completed when {rank0} did "
             "(other pods then went on or were cleaned up)",
             explains=(("lifecycle", "success"),),
             action="nothing for DDP jobs, whose ranks finish together; else use --trainer-runtime per-job",
             claims=(absent("spec.successPolicy"),)),
        Note("TJ010", "approximated",
             f"a failing pod is retried in place up to {DEFAULT_BACKOFF_LIMIT} times, then the Job and the "
             "TrainJob fail (Kubernetes' default backoffLimit, which a built-in runtime keeps); v1 restarted "
             "it without limit",
             explains=(("lifecycle", "backoffLimit"), ("lifecycle", "failure")),
             action="use --trainer-runtime per-job to keep unlimited restarts",
             claims=(absent(f"spec.replicatedJobs[{NODE}].template.spec.backoffLimit"),)),
    ]
    v1_names = {e.get("name") for e in planned_env}
    unset = [n for n in PET_ENV if n not in v1_names]
    if unset:
        out.append(Note(
            "TJ013", "rewritten",
            f"{', '.join(unset)}: set by Trainer's torch plugin on every node; v1 did not set them for this job "
            "(torchrun reads them; other scripts ignore them)",
            target_path=node_env, explains=tuple(("env", n) for n in unset),
            claims=tuple(present(f"{node_env}[{n}]") for n in unset)))
    if pet_nproc != v1_nproc:
        out.append(Note(
            "TJ007", "approximated",
            f"PET_NPROC_PER_NODE is {pet_nproc!r} (Trainer derives it from the node's CPU or GPU resources); "
            f"v1 set {v1_nproc!r}, with which torchrun started one process per visible device or CPU",
            target_path=f"{node_env}[PET_NPROC_PER_NODE]",
            explains=(("env", "PET_NPROC_PER_NODE"),),
            action="set nprocPerNode in the v1 job (a number) to choose the processes per node",
            claims=(equals(f"{node_env}[PET_NPROC_PER_NODE].value", pet_nproc),)))
    if "activeDeadlineSeconds" in trainjob["spec"]:
        out.append(Note(
            "TJ011", "rewritten",
            f"activeDeadlineSeconds {trainjob['spec']['activeDeadlineSeconds']} is the TrainJob's: counted for "
            "the whole job from its creation (or last resume), then the TrainJob fails with DeadlineExceeded "
            "and its JobSet is deleted",
            source_path="spec.runPolicy.activeDeadlineSeconds", target_path="TrainJob spec.activeDeadlineSeconds",
            explains=(("lifecycle", "activeDeadlineSeconds"),),
            claims=(equals("spec.activeDeadlineSeconds", trainjob["spec"]["activeDeadlineSeconds"], "TrainJob"),)))
    out.append(Note(
        "TJ012", "prerequisite",
        f"the TrainJob runs on the ClusterTrainingRuntime {RUNTIME_NAME!r}, which Trainer installs with its "
        "default runtimes",
        target_path="spec.runtimeRef",
        action=f"check it exists: kubectl get clustertrainingruntime {RUNTIME_NAME}",
        claims=(equals("spec.runtimeRef.name", RUNTIME_NAME, "TrainJob"),)))
    return out


# JobSet notes that still hold on the JobSet Trainer builds, and those this path replaces.
KEPT_NOTES = re.compile(r"^(JS002|JS030|JS031|JS040|JS042|JS051|JS080|JS003|UP\d+|K8S\d+|TPL\d+|RT\d+)$")
REPLACED_NOTES = {"JS004": "TJ005", "PT001": "TJ008", "JS033": "TJ011", "JS041": "TJ003"}
# About kf2jobset's JobSet only: on the built-in path Trainer builds the JobSet, the pod count is numNodes
# and the size-derived env is written for it (_trainer_env).
JOBSET_ONLY_NOTES = {"SZ001"}


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
