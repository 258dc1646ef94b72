"""What every gang scheduler module gives the conversion, for the JobSet target and the TrainJob target alike.

A scheduler module (kf2jobset/schedulers/<name>.py, listed in choices.SCHEDULER_FLAVOURS) defines SCHEDULER, an
instance of a subclass of Scheduler. The class attributes describe it (light to read: the `--check` of a
converted file reads them without converting anything); the methods do the work. Pure."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..choices import SCHEDULER_FLAVOURS
from ..errors import Problem, UnsupportedError

if TYPE_CHECKING:
    from ..model import TrainingJob
    from ..notes import Note
    from ..options import ConvertOptions


@dataclass(frozen=True)
class PodGroupKind:
    """The gang object a scheduler reads and how each pod names the one it belongs to."""
    api_version: str
    where: str  # "labels" or "annotations" of the pod
    key: str

    @property
    def group(self) -> str:
        return self.api_version.split("/")[0]

    @property
    def mark(self) -> str:
        """The pod's reference as a path below the pod template's metadata."""
        return f"{self.where}[{self.key}]"


class Scheduler:
    name = ""  # the --scheduler value
    # The operator's gang was named after every job, with or without a schedulingPolicy: a job with no name
    # yet cannot have it written.
    named_after_every_job = False
    podgroup: PodGroupKind | None = None  # the gang object kf2jobset writes beside a JobSet, if any
    # The schedulerName values v1 users ran it under (the first: its bundle flavour's default).
    pod_scheduler_names: tuple[str, ...] = ()
    # Trainer's podGroupPolicy for the flavour's runtimes (None: Trainer makes no gang for this scheduler).
    trainer_pod_group_policy: dict | None = None
    # Trainer's per-job runtime takes over the companion PodGroup where its own would be the operator's.
    trainer_adopts_podgroup = False
    # the pod template annotation Trainer's plugin reads the gang's queue from (runtimePatches metadata)
    trainer_queue_annotation: str | None = None

    @property
    def flavour(self) -> str | None:
        """The bundle's flavour for pods this scheduler places (`kf2jobset runtimes --gang`): its registry line."""
        return SCHEDULER_FLAVOURS.get(self.name)

    def runs_as(self, options: ConvertOptions) -> str | None:
        """The schedulerName this scheduler's pods get under these options."""
        return self.pod_scheduler_names[0] if self.pod_scheduler_names else None

    def objects(self, job: TrainingJob, p: Any, options: ConvertOptions, jobset: dict,
                notes: list[Note]) -> list[dict]:
        """runPolicy.schedulingPolicy as this scheduler reads it: the JobSet's pod templates edited in place;
        returns the objects to write beside the JobSet. `p` is the plan.JobSetPlan (not imported: the planner
        reads this module's attributes)."""
        return []

    def require_name(self, p: Any, rule: str, what: str = "its PodGroup") -> str:
        """The JobSet's name, which this scheduler's gang is named after; a job with none is refused."""
        if not p.name:
            raise UnsupportedError(Problem(f"--scheduler {self.name} needs a JobSet name for {what}; this job has none "
                                           "(use --name)", rule=rule))
        return p.name

    def pod_findings(self, jobset: dict, notes: list[Note]) -> None:
        """What the converted pods tell of this scheduler when they name it themselves, whatever --scheduler said."""

    def size_literals(self, jobset: dict) -> list[str]:
        """Values in the pods that hold a replica count (recorded for --check)."""
        return []

    def trainer_notes(self, scheduler_name: str) -> list[Note]:
        """What the TrainJob target says of a job on this scheduler's flavour, where Trainer makes no gang of it."""
        return []
