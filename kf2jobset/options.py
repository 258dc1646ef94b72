"""Conversion options: everything the user decides, in one frozen value passed down the pipeline."""
from __future__ import annotations

import re
from dataclasses import dataclass

# the options' choices and defaults (the first of each list) are spelled in choices.py, which the CLI
# reads without loading this module
from .choices import (DEFAULT_GANG_SCHEDULER_NAME, LATEST_JOBSET_VERSION, MPI_HOSTFILE_MODES, SCHEDULERS,  # noqa: F401
                      TARGETS, TRAINER_RUNTIMES, TRAINER_VERSIONS)
from .errors import UsageError

OLDEST_JOBSET_VERSION = (0, 6)  # job-global-index label (used for ranks) first appears in v0.6.0

# First JobSet release whose v1alpha2 API has the feature (jobset.md §1).
FEATURE_VERSIONS = {
    "dependsOn": (0, 8),
    "ttlSecondsAfterFinished": (0, 5),
    "managedBy": (0, 5),
    "startupPolicy": (0, 4),
    "job-global-index": (0, 6),
    "global-replicas": (0, 7),
}



def parse_trainer_version(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", text.strip())
    if not m:
        raise UsageError(f"--trainer-version {text!r}: expected a version such as v2.3 or 2.3.0")
    return int(m.group(1)), int(m.group(2))


def parse_version(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", text.strip())
    if not m:
        raise UsageError(f"--jobset-version {text!r}: expected a version such as v0.12 or 0.8.1")
    version = (int(m.group(1)), int(m.group(2)))
    if version < OLDEST_JOBSET_VERSION:
        raise UsageError(
            f"--jobset-version {text}: JobSet releases before v0.6 lack the "
            "jobset.sigs.k8s.io/job-global-index label that carries ranks; use v0.6 or newer"
        )
    if version > LATEST_JOBSET_VERSION:
        raise UsageError(
            f"--jobset-version {text}: kf2jobset knows JobSet releases up to v{LATEST_JOBSET_VERSION[0]}."
            f"{LATEST_JOBSET_VERSION[1]} (API jobset.x-k8s.io/v1alpha2) and can neither use nor check what a newer "
            f"release adds; pass v{LATEST_JOBSET_VERSION[0]}.{LATEST_JOBSET_VERSION[1]} (newer controllers serve it too)"
        )
    return version


@dataclass(frozen=True)
class ConvertOptions:
    """Everything the user decides about a conversion. Each field is a keyword of the Python API
    (`convert_job`, `convert_yaml`, `kf2jobset.live`) and a flag of the CLI (`FLAGS`: the name with dashes).

    jobset_version: the JobSet release written for, (0, 12) or "v0.12"; features a release lacks are refused.
    scheduler: where runPolicy.schedulingPolicy goes: "none" (named and left out), "kueue", "volcano",
        "scheduler-plugins", "yunikorn".
    gang_scheduler_name: with scheduler="scheduler-plugins", the schedulerName the operator gave the pods
        (its --gang-scheduler-name).
    name: the JobSet's (or TrainJob's) name instead of the job's; one job only.
    subdomain: pin network.subdomain (the headless Service's name) instead of the JobSet's name.
    keep_kubeflow_labels: keep the static training.kubeflow.org/* pod labels.
    ssh_secret: MPI: the existing kubernetes.io/ssh-auth Secret the pods mount (default <jobset>-ssh).
    accept_mpi_ssh: MPIJob kubeflow.org/v1: accept the switch from kubectl exec to SSH (a breaking change).
    mpi_hostfile: "auto", "configmap" (a ConfigMap naming the pods) or "generated" (written at start).
    cluster_domain: the operator's CUSTOM_CLUSTER_DOMAIN (--cluster-domain), if it had one.
    katib: also convert the jobs of Katib Experiments' trial templates.
    target: what a job becomes: "jobset" or "trainjob" (a Kubeflow Trainer v2 TrainJob).
    trainer_version: target="trainjob": the Trainer API written, (2, 3) or "v2.3".
    trainer_runtime: target="trainjob": "auto" (a shared runtime that keeps the job, else refused) or
        "per-job" (a TrainingRuntime of the job's own that keeps the v1 contract exactly).
    v1_pod_services: offer v1's per-pod Services for every pod (addresses in code or images).

    katib_trial_templates, sibling_configmaps, selector_peers: filled from the rest of a file, not by callers.
    """

    jobset_version: tuple[int, int] = LATEST_JOBSET_VERSION
    scheduler: str = SCHEDULERS[0]  # where schedulingPolicy goes: SCHEDULERS
    # --scheduler scheduler-plugins: the operator's --gang-scheduler-name, the schedulerName it gave pods
    gang_scheduler_name: str = DEFAULT_GANG_SCHEDULER_NAME
    name: str | None = None  # JobSet name override (single job only)
    subdomain: str | None = None  # pin network.subdomain instead of the JobSet name
    keep_kubeflow_labels: bool = False
    ssh_secret: str | None = None  # MPI: name of an existing kubernetes.io/ssh-auth Secret
    accept_mpi_ssh: bool = False  # MPIJob v1: accept the kubectl-exec -> SSH switch
    mpi_hostfile: str = MPI_HOSTFILE_MODES[0]  # configmap | generated | auto (configmap when the name is known)
    cluster_domain: str | None = None  # the operator's CUSTOM_CLUSTER_DOMAIN / --cluster-domain
    katib: bool = False  # convert jobs embedded in Katib Experiments' trialTemplate.trialSpec
    target: str = TARGETS[0]  # what the output is: jobset | trainjob (kf2jobset/targets)
    trainer_version: tuple[int, int] = TRAINER_VERSIONS[-1]  # --target trainjob: the Trainer API written
    trainer_runtime: str = TRAINER_RUNTIMES[0]  # --target trainjob: auto | per-job (TRAINER_RUNTIMES)
    # --katib: trial templates held in ConfigMaps elsewhere in the run (katib_configmaps.TrialTemplate), so that
    # Experiments naming them are updated too; repo mode fills it, not the user
    katib_trial_templates: tuple = ()
    # ConfigMaps of the file being converted (their parsed objects): the v1 pod addresses they name get
    # companion Services (kf2jobset/core/addresses.py); pipeline.convert_text fills it, not the user
    sibling_configmaps: tuple = ()
    v1_pod_services: bool = False  # offer v1's per-pod Services for every pod (addresses in code, images)
    # objects of the same file that may select the job's pods (selectorfix.Peer: Services, PDBs,
    # NetworkPolicies, PodMonitors); the pipeline fills it, not the user
    selector_peers: tuple = ()

    def has(self, feature: str) -> bool:
        return self.jobset_version >= FEATURE_VERSIONS[feature]

    def __post_init__(self):
        if self.scheduler not in SCHEDULERS:
            raise UsageError(f"--scheduler {self.scheduler!r}: choose one of {', '.join(SCHEDULERS)}")
        if self.gang_scheduler_name != DEFAULT_GANG_SCHEDULER_NAME and self.scheduler != "scheduler-plugins":
            raise UsageError("--gang-scheduler-name is the operator's flag for scheduler-plugins: use it with "
                             "--scheduler scheduler-plugins")
        if not self.gang_scheduler_name or self.gang_scheduler_name.lower() == "volcano":
            raise UsageError(f"--gang-scheduler-name {self.gang_scheduler_name!r}: the operator took that name for "
                             "Volcano (use --scheduler volcano)" if self.gang_scheduler_name else
                             "--gang-scheduler-name: a scheduler name is needed")
        if self.target not in TARGETS:
            raise UsageError(f"--target {self.target!r}: choose one of {', '.join(TARGETS)}")
        if self.trainer_version not in TRAINER_VERSIONS:
            known = ", ".join(f"v{a}.{b}" for a, b in TRAINER_VERSIONS)
            raise UsageError(f"--trainer-version v{self.trainer_version[0]}.{self.trainer_version[1]}: kf2jobset writes "
                             f"and has checked the TrainJob API of Kubeflow Trainer {known} only (the API changes "
                             "between minor releases)")
        if self.trainer_runtime not in TRAINER_RUNTIMES:
            raise UsageError(f"--trainer-runtime {self.trainer_runtime!r}: choose one of {', '.join(TRAINER_RUNTIMES)}")
        if self.trainer_runtime == "generated":  # the name before the bundle
            object.__setattr__(self, "trainer_runtime", "per-job")
        if self.mpi_hostfile not in MPI_HOSTFILE_MODES:
            raise UsageError(f"--mpi-hostfile {self.mpi_hostfile!r}: choose one of {', '.join(MPI_HOSTFILE_MODES)}")


# ConvertOptions field -> the flag that sets it (clioptions.py); fields the pipeline fills have none
FLAGS = {"jobset_version": "--jobset-version", "scheduler": "--scheduler", "gang_scheduler_name": "--gang-scheduler-name",
         "name": "--name", "subdomain": "--subdomain", "keep_kubeflow_labels": "--keep-kubeflow-labels",
         "ssh_secret": "--ssh-secret", "accept_mpi_ssh": "--accept-mpi-ssh", "mpi_hostfile": "--mpi-hostfile",
         "cluster_domain": "--cluster-domain", "v1_pod_services": "--v1-pod-services", "katib": "--katib",
         "target": "--target", "trainer_version": "--trainer-version", "trainer_runtime": "--trainer-runtime"}


def shared_subdomain(options: ConvertOptions, namespaces: list) -> UsageError | None:
    """--subdomain names the JobSet's headless Service: two JobSets of one namespace under it share one Service,
    which JobSet creates for the first and reuses as it is (its selector: the first JobSet's pods), so the second's
    addresses never resolve. ``namespaces``: one per converted job (None: the namespace it is applied in)."""
    if not options.subdomain:
        return None
    seen: set = set()
    for ns in namespaces:
        if ns in seen:
            return UsageError(f"--subdomain {options.subdomain!r} would be the Service of several JobSets in "
                              f"{'namespace ' + ns if ns else 'one namespace'} (JobSet reuses the first one's, and "
                              "the others' addresses never resolve): convert one job at a time with it")
        seen.add(ns)
    return None


# what a flag's mention may be followed by as its value (else what follows is prose): the option's choices
_CHOICES = {"scheduler": SCHEDULERS, "mpi_hostfile": MPI_HOSTFILE_MODES, "target": TARGETS, "trainer_runtime": TRAINER_RUNTIMES}
_VERSION_VALUE = re.compile(r"v?\d+\.\d+(?:\.\d+)?")
_QUOTED_OR_PLACEHOLDER = re.compile(r"'[^']*'|\"[^\"]*\"|[A-Z][A-Z0-9_]*\b")
# a shell command quoted in a message (`kf2jobset runtimes --gang volcano | kubectl apply -f -`) keeps its flags
_COMMAND = re.compile(r"kf2jobset [a-z]+[^|;()`]*")


def keyword_spelling(text: str, flags: dict[str, str] | None = None) -> str:
    """`text` with each mention of a conversion flag spelled as the Python API's keyword, for errors and notes
    that reach a Python caller: `--trainer-runtime per-job` -> `trainer_runtime='per-job'`, `--accept-mpi-ssh`
    -> `accept_mpi_ssh=True`, `--ssh-secret NAME` -> `ssh_secret='NAME'`, `use --name` -> `use name=...`. A value
    is read only where it is one: the option's choice, a quoted value, a capitalised placeholder, a version.
    Left as written: flags inside a quoted `kf2jobset ...` command, and the operator's own flags (`the operator's
    --gang-scheduler-name`). `flags`: a front end's own flags, {flag as written: its Python spelling}."""
    by_flag = {flag: field for field, flag in FLAGS.items()} | dict(flags or {})
    if "--" not in text:
        return text
    pattern = re.compile(r"(?<![\w-])(" + "|".join(sorted(map(re.escape, by_flag), key=len, reverse=True)) + r")(?![\w-])")
    commands = [m.span() for m in _COMMAND.finditer(text)]
    out, last = [], 0
    for m in pattern.finditer(text):
        start, end = m.span()
        before = text[:start]
        if any(a <= start < b for a, b in commands) or before.endswith(("operator's ", "that ")):
            continue
        field = by_flag[m.group(1)]
        default = getattr(ConvertOptions, field, None)
        if m.group(1) in (flags or {}):
            spelled = field
        elif isinstance(default, bool):
            spelled = f"{field}=True"
        else:
            value, end = _value_after(text, end, field)
            spelled = f"{field}={value}" if value is not None else f"{field}=..."
        out += [text[last:start], spelled]
        last = end
    return "".join(out) + text[last:]


def _value_after(text: str, end: int, field: str) -> tuple[str | None, int]:
    """The value written after a flag (`--x v`, `--x=v`) as a Python literal, and where it ends."""
    if end >= len(text) or text[end] not in " =":
        return None, end
    rest = text[end + 1:]
    token = re.match(r"[^\s,;:)(]+", rest)
    quoted = _QUOTED_OR_PLACEHOLDER.match(rest)
    if quoted:
        raw = quoted.group(0)
        return (raw if raw[0] in "'\"" else repr(raw)), end + 1 + len(raw)
    if token and (token.group(0) in _CHOICES.get(field, ()) or
                  field.endswith("_version") and _VERSION_VALUE.fullmatch(token.group(0))):
        return repr(token.group(0)), end + 1 + len(token.group(0))
    return None, end


def command_line(options: ConvertOptions) -> list[str]:
    """The flags that give ``options`` (those off their default, in the CLI's spelling): what a hint telling
    the user to run kf2jobset again must repeat, or the run writes another output (a JobSet for a TrainJob)."""
    default = ConvertOptions()
    out: list[str] = []
    for field, flag in FLAGS.items():
        value = getattr(options, field)
        if value == getattr(default, field) or value is None:
            continue
        if isinstance(value, bool):
            out.append(flag)
        elif isinstance(value, tuple):  # a release: (major, minor)
            out += [flag, "v{}.{}".format(*value)]
        else:
            out += [flag, str(value)]
    return out
