"""What `--scheduler` makes of a v1 job's runPolicy.schedulingPolicy, for the emitter: the chosen scheduler's
objects, and what each scheduler reads from pods that name it themselves. Pure."""
from __future__ import annotations

from .. import claims as claim
from ..model import TrainingJob
from ..notes import Note
from ..options import ConvertOptions
from ..plan import JobSetPlan, gang_without_name
from . import every, scheduler


def scheduler_objects(job: TrainingJob, p: JobSetPlan, options: ConvertOptions, jobset: dict, notes: list[Note]) -> list[dict]:
    chosen = scheduler(options.scheduler)
    others = [s for s in every() if s is not chosen]
    if gang_without_name(job, p, options):
        notes.append(Note("JS095", "dropped", f"the operator's gang scheduler held every job together, named after "
                          f"the job; this one has no name yet (generateName, a Katib trial), so no {options.scheduler} "
                          "gang can be written for it and its pods are scheduled one by one",
                          action="pass --name, or add the gang where the name is known", warn=True,
                          claims=(claim.absent("kind", target="PodGroup"),)))
        for s in [*others, chosen]:
            s.pod_findings(jobset, notes)
        return []
    for s in others:
        s.pod_findings(jobset, notes)
    objects = chosen.objects(job, p, options, jobset, notes)
    chosen.pod_findings(jobset, notes)  # after its own objects: they may have written what it reads
    return objects


def size_literals(jobset: dict) -> list[str]:
    """Counts in the pods that some scheduler reads and a replica edit leaves stale."""
    return [text for s in every() for text in s.size_literals(jobset)]
