"""What the report says about a TrainJob on a built-in runtime: the findings every built-in shares (the
`node` Job, success, retries, deadline, sizes, the fields a TrainJob cannot carry), with the evidence the
report's comparison of the v1 pods with the predicted JobSet attaches. Each plugin's own findings (its env
and port) come from its module."""
from __future__ import annotations

import re

from ..checks import staleness
from ..claims import absent, equals
from ..frameworks import profile
from ..notes import Note
from .builtin import COMPLETION_INDEX, DEFAULT_BACKOFF_LIMIT, NODE, SIZED_FOR_NODES, Plugin
from .builtin_fields import POD_DEFAULTS, field_decisions

NODE_POD = f"spec.replicatedJobs[{NODE}].template.spec.template"
NODE_CONTAINER_PATH = f"{NODE_POD}.spec.containers[{NODE}]"
NODE_ENV = f"{NODE_CONTAINER_PATH}.env"

# JobSet notes that still hold on the JobSet Trainer builds, and those this path replaces.
KEPT_NOTES = re.compile(r"^(JS001|JS002|JS030|JS031|JS040|JS042|JS051|JS080|JS003|UP\d+|K8S\d+|TPL\d+|RT\d+)$")
# What every shared runtime (built-in or bundle) says instead of the JobSet's TTL and cleanup notes
LIFETIME_NOTES = {"JS032": "TJ031", "JS036": "TJ036"}
REPLACED_NOTES = {"JS004": "TJ005", "PT001": "TJ008", "JS033": "TJ011", "JS041": "TJ003", "JS021": "TJ021",
                  "JS034": "TJ022", "XGB001": "TJ010", **LIFETIME_NOTES}
# About kf2jobset's JobSet only: on the built-in path Trainer builds the JobSet, the pod count is numNodes
# and the size-derived env is written for it (TJ016, TJ017).
JOBSET_ONLY_NOTES = {"SZ001", "SZ002"}
IN_PLACE = ("OnFailure", "Always")


def rank0(job) -> str:
    return "the master" if "Master" in job.replicas else "worker 0"


def notes(plugin: Plugin, conversion, trainjob: dict, predicted: dict) -> list[Note]:
    """What differs from the JobSet kf2jobset would write (the v1 contract)."""
    job = conversion.job
    name = trainjob["metadata"].get("name") or "<name>"
    nodes = trainjob["spec"]["trainer"]["numNodes"]
    (addr, addr_plugin), (rank, rank_plugin) = plugin.rank_vars
    order = (f"appends its {plugin.family} variables after the trainer env" if not plugin.env_first else
             f"writes its {plugin.family} variables before the trainer env" if plugin.order_fixed else
             f"writes its {plugin.family} variables before or after the trainer env (Trainer v2.3 runs its PlainML "
             "plugin on this runtime too, in an order fixed when its controller starts)")
    out = [Note(
        "TJ005", "rewritten",
        f"the pods are the {nodes} indexed pods of one Job `node` (container `node`), reached as "
        f"{name}-node-0-<i>.{name}; index i is v1's rank i ({rank0(job)} is 0), so {addr} and {addr_plugin} name "
        f"node 0 and {rank} and {rank_plugin} read the completion index; Trainer {order}",
        target_path="spec.trainer",
        action="change any pod address or container name you wrote yourself (args, config files, code, "
               "`kubectl logs -c`)",
        explains=(("hostname", "*"), ("container", "*"), ("dns", "*"), ("env", "*order*")),
        claims=(equals(f"spec.replicatedJobs[{NODE}].template.spec.completions", nodes),
                equals(f"{NODE_ENV}[{rank_plugin}].valueFrom.fieldRef.fieldPath", COMPLETION_INDEX)))]

    rule = profile(job.mapping.profile).operator_success(job)
    if rule[0] != "all" or {t.lower() for t in job.replicas} - set(rule[1]):
        out.append(Note(
            "TJ009", "approximated",
            f"the TrainJob completes when all {nodes} pods have succeeded; v1 completed when {rank0(job)} did "
            "(other pods then went on or were cleaned up)",
            explains=(("lifecycle", "success"),),
            action="nothing for jobs whose ranks finish together; else use --trainer-runtime per-job",
            claims=(absent("spec.successPolicy"),)))
    out += _retry_notes(job)
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
        f"the TrainJob runs on the ClusterTrainingRuntime {plugin.runtime!r}, which Trainer installs with its "
        "default runtimes",
        target_path="spec.runtimeRef",
        action=f"check it exists: kubectl get clustertrainingruntime {plugin.runtime}",
        claims=(equals("spec.runtimeRef.name", plugin.runtime, "TrainJob"),)))
    out += size_notes(plugin, trainjob)
    out += field_notes(plugin, conversion)
    out += lifetime_notes(job)
    return out


def lifetime_notes(job) -> list[Note]:
    """TJ031, TJ036: what deletes a finished TrainJob and its pods, the same on every shared runtime. Trainer
    v2.3 has no TrainJob TTL, sets no JobSet TTL and deletes nothing of a finished TrainJob (its reconciler
    stops at the finished condition); the JobSet it owns deletes its still-active Jobs when it finishes, and
    goes, with its Jobs and pods, when the TrainJob is deleted (owner reference)."""
    rp = job.run_policy
    said = []  # (code, category, v1 field, lifecycle rule, message, action)
    if rp.ttl_seconds_after_finished is not None:
        said.append((
            "TJ031", "dropped", "ttlSecondsAfterFinished", "ttl",
            f"ttlSecondsAfterFinished {rp.ttl_seconds_after_finished}: a TrainJob has no TTL (Trainer v2.3) and a shared "
            "runtime cannot hold this job's, so nothing deletes the finished TrainJob or its finished pods, and "
            "creating the job again under its name fails until it is deleted; v1 deleted the job that long after "
            "it finished",
            "delete finished TrainJobs (kubectl delete trainjob <name>) or let the platform's cleanup do it; "
            "--trainer-runtime per-job deletes the JobSet and its pods after the TTL (the TrainJob stays)"))
    if rp.clean_pod_policy == "All":
        said.append((
            "TJ036", "approximated", "cleanPodPolicy", "cleanPodPolicy",
            "cleanPodPolicy All: v1 deleted every pod when the job finished; the TrainJob's JobSet deletes only its "
            "still-running pods (its active Jobs) and the finished pods stay, with their logs, until the TrainJob "
            "is deleted (Trainer v2.3 deletes nothing of a finished TrainJob and sets no TTL)",
            "delete the TrainJob when its pods are no longer needed (kubectl delete trainjob <name>): its "
            "JobSet, Jobs and pods go with it"))
    return [Note(code, category, message, source_path=f"spec.runPolicy.{field}", explains=(("lifecycle", rule),),
                 action=action, claims=(absent("spec.ttlSecondsAfterFinished"),))
            for code, category, field, rule, message, action in said]


def _retry_notes(job) -> list[Note]:
    rp = job.run_policy
    in_place = [t for t, s in job.replicas.items() if s.restart_policy in IN_PLACE]
    out = []
    if in_place and rp.backoff_limit is None:
        out.append(Note(
            "TJ010", "approximated",
            f"a failing pod is retried in place up to {DEFAULT_BACKOFF_LIMIT} times, then the Job and the "
            "TrainJob fail (Kubernetes' default backoffLimit, which a built-in runtime keeps); v1 restarted "
            "it without limit",
            explains=(("lifecycle", "backoffLimit"), ("lifecycle", "failure")),
            action="use --trainer-runtime per-job to keep unlimited restarts",
            claims=(absent(f"spec.replicatedJobs[{NODE}].template.spec.backoffLimit"),)))
    for policy, v1 in (("Never", "failed the job at a pod's first failure"),
                       ("ExitCode", "restarted a pod that exited with a retryable code (128 and above: a signal, "
                                    "an eviction) and failed the job on any other")):
        types = [t for t, s in job.replicas.items() if s.restart_policy == policy]
        if not types:
            continue
        out.append(Note(
            "TJ021", "approximated",
            f"restartPolicy {policy} ({', '.join(types)}): v1 {v1}; on a built-in runtime every pod restarts in "
            f"place (restartPolicy OnFailure) and the TrainJob fails after {DEFAULT_BACKOFF_LIMIT} restarts in all "
            "(a TrainJob can set neither)",
            source_path=f"spec.{job.mapping.replica_specs_field}.{types[0]}.restartPolicy",
            explains=(*(("restartPolicy", t) for t in types), ("lifecycle", "failure"), ("lifecycle", "backoffLimit")),
            action="nothing for a script that fails the same way each time (it fails after the retries); to keep "
                   "v1's rule use --trainer-runtime per-job",
            claims=(equals(f"{NODE_POD}.spec.restartPolicy", "OnFailure"),
                    absent(f"spec.replicatedJobs[{NODE}].template.spec.podFailurePolicy"))))
    if rp.backoff_limit is not None:
        out.append(Note(
            "TJ022", "approximated",
            f"runPolicy.backoffLimit {rp.backoff_limit}: v1 failed the job after {rp.backoff_limit} restarts of its "
            f"pods in all; the built-in runtime's one Job fails after {DEFAULT_BACKOFF_LIMIT} (Kubernetes' default, "
            "which no TrainJob field can change), counted over all its pods the same way",
            source_path="spec.runPolicy.backoffLimit",
            explains=(("lifecycle", "backoffLimit"), ("lifecycle", "failure")),
            action="use --trainer-runtime per-job to keep the limit",
            claims=(absent(f"spec.replicatedJobs[{NODE}].template.spec.backoffLimit"),)))
    return out


def size_notes(plugin: Plugin, trainjob: dict) -> list[Note]:
    trainer = trainjob["spec"]["trainer"]
    nodes = trainer["numNodes"]
    count = plugin.count_var(trainer) if plugin.env_first and plugin.order_fixed else None
    follows = [e["name"] for e in trainer.get("env") or [] if count and e.get("value") == f"$({count})"]
    ann = trainjob["metadata"].get("annotations") or {}
    fixed = ann.get(staleness.SIZE_LITERALS_ANNOTATION)
    out = []
    if follows:
        out.append(Note(
            "TJ016", "rewritten",
            f"{', '.join(follows)} {'reads' if len(follows) == 1 else 'read'} $({count}), which Trainer's "
            f"{plugin.runtime} plugin sets from numNodes ahead of the trainer env: numNodes is the size, and a "
            "numNodes edit needs no other change",
            target_path="spec.trainer.numNodes",
            claims=tuple(equals(f"spec.trainer.env[{n}].value", f"$({count})", "TrainJob") for n in follows)))
    if fixed:
        record = ann[staleness.SIZED_FOR_ANNOTATION]
        out.append(Note(
            "TJ017", "approximated",
            f"{fixed} {'is' if ',' not in fixed else 'are'} written for {nodes} nodes (no variable Trainer sets "
            f"can carry {'it' if ',' not in fixed else 'them'}); the operator recomputed "
            f"{'it' if ',' not in fixed else 'them'} when the replicas changed. The TrainJob records the count "
            f"in {staleness.SIZED_FOR_ANNOTATION} ({record}), and `kf2jobset convert --check` fails on a TrainJob "
            "whose numNodes no longer matches",
            target_path=f"metadata.annotations[{staleness.SIZED_FOR_ANNOTATION}]",
            action="to resize, convert the v1 job again at the new size (after --in-place it is in git history before "
                   "the conversion), or edit every listed value with numNodes",
            claims=(equals(f"metadata.annotations[{staleness.SIZED_FOR_ANNOTATION}]", f"{SIZED_FOR_NODES}={nodes}",
                           "TrainJob"),)))
    return out


_PULL = {("Always", "IfNotPresent"): "a node that already has an image of that tag runs it without asking the "
                                     "registry (a tag pushed again runs the old image there)",
         ("IfNotPresent", "Always"): "the kubelet asks the registry at every start (it must be reachable; a tag "
                                     "pushed again runs the new image)",
         ("Never", "IfNotPresent"): "a node without the image pulls it (v1's pod failed there with ErrImageNeverPull)"}


def field_notes(plugin: Plugin, conversion) -> list[Note]:
    """TJ018-TJ020: the fields a TrainJob cannot carry that do not keep the job off the built-in runtime."""
    pod = ((next(iter(conversion.job.replicas.values())).template or {}).get("spec")) or {}
    decided = field_decisions(pod, plugin.operator_port)
    out = []
    if decided.defaults:
        shown = ", ".join(f"{k} {str(v).lower() if isinstance(v, bool) else v}" for k, v in decided.defaults)
        out.append(Note(
            "TJ018", "unchanged",
            f"{shown}: left out of the TrainJob, which cannot carry {'it' if len(decided.defaults) == 1 else 'them'}; "
            "the API server fills in the same value (Kubernetes' defaults)",
            claims=tuple(absent(f"{NODE_POD}.spec.{k}") if k in POD_DEFAULTS else
                         absent(f"{NODE_CONTAINER_PATH}.{k}") for k, _ in decided.defaults)))
    if decided.pull:
        written, default = decided.pull
        image = ((pod.get("containers") or [{}])[0]).get("image")
        gets = (f"Kubernetes' default for {image}, {default}" if default else
                "Kubernetes' default for the image filled in (Always for a `:latest` or untagged image, else IfNotPresent)")
        why = _PULL.get((written, default), "")
        out.append(Note(
            "TJ019", "approximated",
            f"imagePullPolicy {written} is not carried (a TrainJob cannot set it): the node gets {gets}"
            + (f"; {why}" if why else ""),
            source_path=f"spec.{conversion.job.mapping.replica_specs_field}.{next(iter(conversion.job.replicas))}"
                        ".template.spec.containers[0].imagePullPolicy",
            action="pin the image by digest or a tag you never push again, or use --trainer-runtime per-job to "
                   "keep imagePullPolicy",
            claims=(absent(f"{NODE_CONTAINER_PATH}.imagePullPolicy"),)))
    if decided.ports:
        names = [str(p.get("name") or p.get("containerPort")) for p in decided.ports]
        out.append(Note(
            "TJ020", "approximated",
            f"port{'s' if len(names) > 1 else ''} {', '.join(names)} you declared {'are' if len(names) > 1 else 'is'} "
            "not declared on the node container (a TrainJob cannot declare ports); a declared port is "
            "informational: the process listens on it the same, and peers reach it by number",
            explains=tuple(("port", n) for n in names),
            action="a Service or probe that names the port (targetPort: NAME) must use its number",
            claims=tuple(absent(f"{NODE_CONTAINER_PATH}.ports[name={p['name']}]") for p in decided.ports if p.get("name")),
            unchecked=None if any(p.get("name") for p in decided.ports) else
            "about declared ports, which the report's comparison of the pods shows (aspect port)"))
    return out
