"""Shared vocabulary of the framework profiles.

A profile describes injected env once, in terms of a `Side`:
- `OperatorSide` renders it for one concrete pod, exactly as the v1 operator did (Service names,
  literal ranks);
- `JobSetSide` renders it for a replicatedJob's pod template: addresses built from the JobSet name
  read from the pod's own `jobset-name` label, per-pod values from the downward API and `$(VAR)`
  expansion, so the manifest keeps working when the JobSet is renamed or created by generateName.
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from ..errors import Location, Problem, UnsupportedError
from ..model import DefaultApplied

if TYPE_CHECKING:
    from ..model import TrainingJob
    from ..notes import Note

# Labels the JobSet controller writes on every pod (jobset.md §4.2).
LABEL_JOBSET_NAME = "jobset.sigs.k8s.io/jobset-name"
LABEL_RJOB_NAME = "jobset.sigs.k8s.io/replicatedjob-name"
LABEL_JOB_INDEX = "jobset.sigs.k8s.io/job-index"
LABEL_GLOBAL_INDEX = "jobset.sigs.k8s.io/job-global-index"
# Sum of every replicatedJob's replicas, on every pod since JobSet v0.7 (jobset.md §4.2); replicatedJobs
# are immutable, so it never changes under a running pod and follows a replica edit made before creation.
LABEL_GLOBAL_REPLICAS = "jobset.sigs.k8s.io/global-replicas"

# Helper variables kf2jobset adds before the operator's variables so `$(VAR)` can reference them.
HELPER_PREFIX = "KF2JOBSET_"
JOBSET_NAME_VAR = "KF2JOBSET_JOBSET_NAME"
NAMESPACE_VAR = "KF2JOBSET_NAMESPACE"
JOB_INDEX_VAR = "KF2JOBSET_JOB_INDEX"

# Which releases ran a job the v1.8+ validating webhook refused, when nothing else refused it.
WITHOUT_WEBHOOK = "v1.8+ without the webhook ran it"

HELPER_VARS = {
    JOBSET_NAME_VAR: f"metadata.labels['{LABEL_JOBSET_NAME}']",
    NAMESPACE_VAR: "metadata.namespace",
    JOB_INDEX_VAR: f"metadata.labels['{LABEL_JOB_INDEX}']",
}


# How a value written from the replica counts describes the size (Profile.size_values, read back by
# kf2jobset/checks/size_values.py): HOSTS lists pod addresses as JobSetSide.host writes them, PODS is the job's pod
# count (times the integer of another env of the same container), ROLE one replicatedJob's replicas, SOLO
# holds only while its replicatedJob runs one pod.
HOSTS, PODS, ROLE, SOLO = "hosts", "pods", "role", "solo"


@dataclass(frozen=True)
class SizeValue:
    """A size-derived value a profile writes as a literal, named as the size-literals record names it."""

    name: str
    shape: str
    keys: tuple = ()  # the env names and ConfigMap keys that hold it; () = (name,)
    times: str | None = None  # PODS: the env whose integer multiplies the pod count (PET_NPROC_PER_NODE)
    role: str | None = None  # ROLE: the replicatedJob counted
    counted: str = "pods"  # HOSTS: what one address is, for the message ("workers" is said per replicatedJob)

    @property
    def holders(self) -> tuple:
        return self.keys or (self.name,)

    def recorded(self, entry: str) -> bool:
        """Whether an entry of the size-literals record (`TF_CONFIG (cluster host lists)`) is this value."""
        return entry.split(" (")[0].endswith(self.name)


def env(name: str, value) -> dict:
    return {"name": name, "value": str(value)}


def field_env(name: str, path: str) -> dict:
    return {"name": name, "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": path}}}


def literal_env(template: dict) -> dict:
    """Every container's literal env values of a pod template (init containers too), by name."""
    spec = template.get("spec") or {}
    return {e["name"]: e["value"] for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
            if isinstance(c, dict) for e in c.get("env") or []
            if isinstance(e, dict) and "name" in e and isinstance(e.get("value"), str)}


def escape(text: str) -> str:
    """Make literal text safe inside a Kubernetes env value: `$(` would start a reference."""
    return str(text).replace("$(", "$$(")


def elastic_policy(spec: dict, replicas: dict) -> tuple[dict | None, list[Problem], list[DefaultApplied]]:
    """spec.elasticPolicy as the operator defaulted it (PyTorchJob, PaddleJob): an unset min/max
    replicas takes the other, both unset the Worker count."""
    if spec.get("elasticPolicy") is None:
        return None, [], []
    elastic = copy.deepcopy(spec["elasticPolicy"])
    problems, defaults = [], []
    if "Worker" not in replicas:
        problems.append(Problem("elasticPolicy needs a Worker replica spec", Location(path=("spec", "elasticPolicy")), rule="elastic"))
    workers = replicas["Worker"].replicas if "Worker" in replicas else 1
    lo, hi = elastic.get("minReplicas"), elastic.get("maxReplicas")
    if lo is None and hi is None:
        elastic["minReplicas"] = elastic["maxReplicas"] = workers
    elif lo is None:
        elastic["minReplicas"] = hi
    elif hi is None:
        elastic["maxReplicas"] = lo
    if (lo, hi) != (elastic["minReplicas"], elastic["maxReplicas"]):
        defaults.append(DefaultApplied(("spec", "elasticPolicy"), f"{elastic['minReplicas']}:{elastic['maxReplicas']}",
                                       "operator fills min/max replicas"))
    return elastic, problems, defaults


class Side:
    """How one world (operator or JobSet) names pods and per-pod values."""

    is_operator: bool

    def lit(self, text) -> str:
        raise NotImplementedError

    def host(self, rtype: str, index: int, form: str = "short") -> str:
        """A pod's address. form: short (same-namespace name), svc (<…>.<ns>.svc), mpi (hostfile FQDN)."""
        raise NotImplementedError

    def job_name(self) -> str:
        raise NotImplementedError

    def index_env(self, name: str) -> dict:
        """The pod's replica index, as a whole env var."""
        raise NotImplementedError

    def index_ref(self) -> str:
        """The pod's replica index, for use inside a larger value."""
        raise NotImplementedError

    def rank_env(self, name: str, offset: int) -> dict:
        """Global rank = replica index + offset, where offset is the framework's rule for rtype."""
        raise NotImplementedError

    def size_env(self, name: str, total: int) -> dict:
        """The job's pod count (v1: the sum of every replica type's replicas), as a whole env var."""
        raise NotImplementedError


@dataclass
class OperatorSide(Side):
    job: "TrainingJob"
    name: str
    namespace: str
    rtype: str
    index: int
    cluster_domain: str | None = None
    is_operator = True

    def lit(self, text) -> str:
        return str(text)

    def host(self, rtype: str, index: int, form: str = "short") -> str:
        base = self.job.mapping.pod_name(self.name, rtype, index)
        domain = f".{self.cluster_domain}" if self.cluster_domain else ""
        if form == "short":
            return base
        if form == "svc":
            return f"{base}.{self.namespace}.svc{domain}"
        if form == "mpi":
            if self.job.mapping.pod_addresses == "podName":
                return base  # v1 hostfile: bare pod names reached through kubectl exec
            return f"{base}.{self.name}.{self.namespace}.svc{domain}"
        raise ValueError(form)

    def job_name(self) -> str:
        return self.name

    def index_env(self, name: str) -> dict:
        return env(name, self.index)

    def index_ref(self) -> str:
        return str(self.index)

    def rank_env(self, name: str, offset: int) -> dict:
        return env(name, self.index + offset)

    def size_env(self, name: str, total: int) -> dict:
        return env(name, total)


@dataclass
class JobSetSide(Side):
    """Renders for a pod template. `static_name` set = literal names (for ConfigMap content)."""

    job: "TrainingJob"
    rtype: str
    rjob_names: dict  # replica type -> replicatedJob name
    global_offsets: dict  # replica type -> job-global-index of its first Job
    subdomain: str | None = None  # pinned network.subdomain; None = the JobSet name
    segments: dict | None = None  # replica type -> [(rjob name, first replica index, replicas)] (plan.segments)
    first_index: int = 0  # replica index of the rendered replicatedJob's job-index 0
    cluster_domain: str | None = None
    static_name: str | None = None
    static_namespace: str | None = None
    size_follows: bool = False  # global-replicas counts exactly the v1 pods (EmitContext.size_follows)
    needs: list = field(default_factory=list)  # helper variables used, in first-use order
    sized: list = field(default_factory=list)  # (name, literal) of each size value written, in order
    is_operator = False

    def _need(self, var: str) -> str:
        if var not in self.needs:
            self.needs.append(var)
        return f"$({var})"

    def lit(self, text) -> str:
        return escape(text)

    def job_name(self) -> str:
        return escape(self.static_name) if self.static_name else self._need(JOBSET_NAME_VAR)

    def _namespace(self) -> str:
        return escape(self.static_namespace) if self.static_namespace else self._need(NAMESPACE_VAR)

    def host(self, rtype: str, index: int, form: str = "short") -> str:
        js = self.job_name()
        sub = escape(self.subdomain) if self.subdomain else js
        # One pod per child Job: the pod is completion index 0 of Job <jobset>-<rjob>-<index>.
        rjob, job_index = self.locate(rtype, index)
        base = f"{js}-{rjob}-{job_index}-0.{sub}"
        if form == "short" or (self.static_name and not self.static_namespace):
            return base  # a manifest without a namespace: the short name resolves wherever it is applied
        domain = f".{escape(self.cluster_domain)}" if self.cluster_domain else ""
        return f"{base}.{self._namespace()}.svc{domain}"

    @staticmethod
    def pods_named(text: str, jobset_names=()) -> list[tuple[str, int, int]]:
        """(replicatedJob, job-index, pod index) of each pod address in `text` as host() writes it
        (`<jobset>-<rjob>-<job-index>-<pod>.`), the JobSet named by the pod's label or as one of
        `jobset_names`; a per-pod reference ($(KF2JOBSET_JOB_INDEX)) names no one pod."""
        # the longest name first: `halo-mpich-worker-0-0` is a pod of JobSet halo-mpich, not of a JobSet halo
        names = [re.escape(f"$({JOBSET_NAME_VAR})"),
                 *(re.escape(n) for n in sorted({n for n in jobset_names if n}, key=len, reverse=True))]
        pattern = rf"(?<![\w.-])(?:{'|'.join(names)})-([a-z0-9](?:[-a-z0-9]*[a-z0-9])?)-(\d+)-(\d+)\."
        return [(m.group(1), int(m.group(2)), int(m.group(3))) for m in re.finditer(pattern, str(text))]

    def locate(self, rtype: str, index: int) -> tuple[str, int]:
        """(replicatedJob name, job-index) of a replica type's pod `index`."""
        segments = (self.segments or {}).get(rtype, ())
        if not isinstance(index, int):  # a per-pod reference such as $(KF2JOBSET_JOB_INDEX)
            if len(segments) > 1:
                raise AssertionError(f"{rtype} spans {len(segments)} replicatedJobs: a per-pod index cannot name its pods")
            return self.rjob_names[rtype], index
        for name, first, count in segments:
            if first <= index < first + count:
                return name, index - first
        return self.rjob_names[rtype], index

    def index_env(self, name: str) -> dict:
        if self.first_index:
            raise AssertionError(f"{self.rtype}: a per-pod index cannot be read from job-index in a split replicatedJob")
        return field_env(name, HELPER_VARS[JOB_INDEX_VAR])

    def index_ref(self) -> str:
        if self.first_index:
            raise AssertionError(f"{self.rtype}: a per-pod index cannot be read from job-index in a split replicatedJob")
        return self._need(JOB_INDEX_VAR)

    def rank_env(self, name: str, offset: int) -> dict:
        # job-global-index = replicas of the replicatedJobs listed before + job-index (jobset.md §4.2).
        # The plan orders replicatedJobs so that this equals the operator's rank; check it here.
        actual = self.global_offsets[self.rtype]
        if actual != offset:
            raise AssertionError(
                f"replicatedJob order gives {self.rtype} a global offset {actual}, the operator used {offset}"
            )
        return field_env(name, f"metadata.labels['{LABEL_GLOBAL_INDEX}']")

    def size_env(self, name: str, total: int) -> dict:
        # The label equals v1's count only while every replicatedJob holds v1 pods, one per child Job.
        self.sized.append((name, None if self.size_follows else str(total)))
        if self.size_follows:
            return field_env(name, f"metadata.labels['{LABEL_GLOBAL_REPLICAS}']")
        return env(name, total)

    def helper_env(self) -> list[dict]:
        return [field_env(v, HELPER_VARS[v]) for v in HELPER_VARS if v in self.needs]


@dataclass
class EmitContext:
    """What a profile may read while shaping the JobSet side."""

    job: "TrainingJob"
    options: object
    jobset_name: str | None
    rjob_names: dict
    global_offsets: dict
    notes: list
    companions: list = field(default_factory=list)
    segments: dict | None = None  # replica type -> [(rjob name, first replica index, replicas)]
    sized: dict = field(default_factory=dict)  # env name -> literal written, or None where it follows the size
    start_order: bool = True  # False when a gang scheduler's PodGroup made the plan drop dependsOn (JS092)
    # files written at pod start from the pod count (the MPI hostfile): (path, the claim that they read it)
    follows_files: list = field(default_factory=list)

    def side(self, rtype: str, static: bool = False, first_index: int = 0) -> JobSetSide:
        opts = self.options
        return JobSetSide(
            job=self.job,
            rtype=rtype,
            rjob_names=self.rjob_names,
            global_offsets=self.global_offsets,
            subdomain=opts.subdomain,
            cluster_domain=opts.cluster_domain,
            static_name=self.jobset_name if static else None,
            static_namespace=self.job.namespace if static else None,
            segments=self.segments,
            first_index=first_index,
            size_follows=self.size_follows and not static,
        )

    @property
    def size_follows(self) -> bool:
        """The global-replicas label is v1's pod count: the JobSet release sets it (v0.7+) and the
        replicatedJobs hold exactly the v1 pods, one per child Job (the plan's layout)."""
        if not self.options.has("global-replicas") or not self.segments:
            return False
        planned = sum(count for segs in self.segments.values() for _, _, count in segs)
        return planned == self.job.total_replicas()

    def note(self, note: "Note") -> None:
        self.notes.append(note)


class Profile:
    """Base profile: no env, no extras. Subclasses override what their framework needs."""

    name = "base"
    # The framework name kf2jobset's TrainingRuntimes carry (their names, Trainer's framework label): the
    # profile's own name unless Trainer spells it otherwise.
    trainer_framework = ""
    # The profile writes the job's pod names into a file its pods read (the MPI hostfile): a job converted
    # under a name other than its own (a Katib trial on a shared runtime) needs that name to be a stand-in.
    pod_names_in_files = False

    def env(self, job: "TrainingJob", rtype: str, side: Side) -> list[dict]:
        return []

    @property
    def runtime_framework(self) -> str:
        return self.trainer_framework or self.name

    def spec_fields(self, spec: dict, replicas: dict) -> tuple[dict, list[Problem], list]:
        """The kind's own spec fields with the operator's defaults (training-operator.md §1.2 steps 1, 4, 5):
        (job.framework, problems, DefaultApplied list). `replicas`: type -> parsed ReplicaSpec."""
        return {}, [], []

    def webhook_rejections(self, job: "TrainingJob") -> list[tuple[str, str, str]]:
        """The v1.8+ validating webhook's rules on the kind's own spec fields, beyond what its mapping
        states (parse.v1_webhook_rejections): (field path, reason, which releases ran it anyway)."""
        return []

    def operator_files(self, job: "TrainingJob", side_of) -> dict:
        """Files the operator mounted into the pods (name -> content, None = not compared);
        `side_of(rtype, index)` is that pod's OperatorSide."""
        return {}

    def jobset_files(self, js, companions: list) -> dict:
        """The same files as the JobSet's pods find them (`js`: runtime.jobset_view.JobSetWorld)."""
        return {}

    # The literal values the profile may write from the replica counts, and how each describes the size:
    # `--check` reads them back on a converted JobSet (kf2jobset/checks/size_values.py). Names as size_literals gives them.
    size_values: tuple = ()

    def size_literals(self, job: "TrainingJob") -> list[str]:
        """Values written from the replica counts that no pod label can carry (host lists, products):
        a replica edit leaves them stale, so the JobSet records its sizes and `--check` guards them."""
        return []

    # pod template annotations the profile reads (MXNet's tuner-server-key): kept when a job is rebuilt from its pods
    template_annotations: tuple = ()

    def fields_from_pods(self, pods: dict, stream: list) -> tuple[dict, dict]:
        """The kind's spec fields, and the conversion options, that the size-bound values were written under, as
        the converted pods show them (`pods`: v1 type -> the JobSet's pod template; `stream`: the documents
        beside the JobSet): (spec fields, ConvertOptions fields). `kf2jobset resize` rebuilds the job from them
        and checks what they give against the values found."""
        return {}, {}

    def solo_first(self, job: "TrainingJob") -> str | None:
        """A replica type whose pod 0 needs a pod template of its own (so a replicatedJob of its own)."""
        return None

    def operator_pod(self, job: "TrainingJob", rtype: str, index: int, pod: dict, side: OperatorSide) -> None:
        """Add what the operator put on the pod besides env (init containers, volumes, commands)."""
    def jobset_pod(self, job: "TrainingJob", rtype: str, template: dict, ctx: EmitContext) -> None:
        """Shape the JobSet pod template besides env (volumes, mounts, probes)."""

    def companions(self, job: "TrainingJob", ctx: EmitContext) -> list[dict]:
        return []

    def notes(self, job: "TrainingJob", ctx: EmitContext) -> None:
        """Record mapping notes for fields with no exact JobSet equivalent."""
    # ---- what the operator did with the job (runtime.lifecycle); tokens are described there ----

    def operator_success(self, job: "TrainingJob") -> tuple:
        """Who decided success under the operator: ("all"|"any", (roles...)[, extra]) or ("never",).
        Every kind states its own: there is no safe default."""
        raise UnsupportedError(Problem(f"framework profile {self.name!r} does not say how {job.kind} succeeded under "
                                       "the operator (Profile.operator_success)", rule="profile"))

    def success_note(self, job: "TrainingJob", case: str | None, targets: list[str]) -> "Note":
        """The note for a success rule the mapping marks `exact: false`; `case` is the rule's `note:`.
        A profile whose mapping has such a rule words it; there is no generic wording."""
        raise UnsupportedError(Problem(f"framework profile {self.name!r} does not explain the inexact success rule "
                                       f"{case!r} of {job.kind} (Profile.success_note)", Location(path=()),
                                       rule="profile"))

    def operator_start(self, job: "TrainingJob", rtype: str):
        """The common reconciler creates every replica's pods at once."""
        return "at-once"

    def operator_failure(self, job: "TrainingJob", rtype: str, policy: str) -> str:
        """The common reconciler: ExitCode retries only exit codes >= 128, Never fails the job, the others
        let the pod be replaced."""
        if policy == "ExitCode":
            # The exit code read is the default-named container's; a type without one (JS060) gave the
            # magic 0xbeef, a retryable code, on every failure (common pod reconcile, v1.5-v1.9).
            name = job.mapping.default_container
            unread = name and job.mapping.without_default_ran is not None and \
                not any(c.get("name") == name for c in job.replicas[rtype].containers)
            return "recreate" if unread else "exit-code"
        if policy == "Never":
            return "fail-job"
        return "recreate"

    def operator_retries(self, job: "TrainingJob", rtype: str, policy: str):
        """How many failures the job absorbs before it fails: None = unlimited, 0 = none."""
        bl = job.run_policy.backoff_limit
        failure = self.operator_failure(job, rtype, policy)
        if failure in ("fail-job", "ignored", "stuck") and policy in ("Never", "ExitCode"):
            return 0
        if policy == "ExitCode":
            # Retries go through pod re-creation, which resets restartCount: unbounded unless backoffLimit is 0.
            return 0 if bl == 0 else None
        if bl is None:
            return None
        return (int(bl), "container restarts, summed over the whole job")

    def operator_job_rules(self, job: "TrainingJob", rules: dict) -> None:
        """Adjust job-level rules (cleanup, deadline, TTL) where this operator differs from the common one."""
