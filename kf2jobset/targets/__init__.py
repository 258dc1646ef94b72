"""Output targets: what a converted job is written as.

The core always builds the JobSet that carries the v1 pod contract (emit.py) and validates it; a
target then decides which objects the user gets. A target is a `Target` in `REGISTRY` (its name is
the --target choice, choices.TARGETS) and a module under targets/ with

    finish(conversion, options) -> None

which sets `conversion.output` (the objects written, in apply order) and adds its notes, and, for a
target that does not write the core's JobSet as is, `relocate_path(conversion)` (where a path of
that JobSet went among its objects) and, if it shares objects between jobs, `share_runtimes(outputs)`.
Front ends ask `target_of(options)` what the target does and never compare its name themselves.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from typing import Callable


def _no_parameters(options) -> dict:
    return {}


@dataclass(frozen=True)
class Target:
    name: str
    module: str  # the module with finish (and relocate_path, share_runtimes), imported when a job converts
    kind_written: str  # what each job becomes
    # the core's JobSet is the user's object: comments stay on it, its name's length rules are the user's
    writes_the_jobset: bool
    # may stand where a v1 job is held inside another object (an AppWrapper's component, an Argo step, a
    # Katib trial template in a ConfigMap)
    embeddable: bool
    shares_objects: bool = False  # objects several jobs name (one TrainingRuntime per namespace and name)
    report_parameters: Callable = field(default=_no_parameters)  # the report's record of the target's options

    def finish(self, conversion, options):
        import_module(self.module).finish(conversion, options)
        return conversion

    def relocate_path(self, conversion):
        """Where a JobSet path of the plan's JobSet went among the target's objects: a function path ->
        (output index, path) | None, or None when the JobSet is written as is."""
        if self.writes_the_jobset or conversion.output is None:
            return None
        return import_module(self.module).relocate_path(conversion)

    def share(self, outputs: list[list[dict]]) -> None:
        """One copy of each object several jobs of a file (or a ResourceList) name."""
        if self.shares_objects:
            import_module(self.module).share_runtimes(outputs)


def _trainer_parameters(options) -> dict:
    return {"target": options.target, "trainerVersion": "v{}.{}".format(*options.trainer_version),
            "trainerRuntime": options.trainer_runtime}


REGISTRY: dict[str, Target] = {t.name: t for t in (
    Target("jobset", f"{__name__}.jobset", "JobSet", writes_the_jobset=True, embeddable=True),
    Target("trainjob", f"{__name__}.trainjob", "TrainJob", writes_the_jobset=False, embeddable=False,
           shares_objects=True, report_parameters=_trainer_parameters),
)}


def target_of(options) -> Target:
    return REGISTRY[options.target]


def apply_target(conversion, options):
    """The conversion with the objects of `options.target`."""
    return target_of(options).finish(conversion, options)


def comment_relocation(conversion, options):
    """Where a JobSet path of the plan's JobSet went among the target's objects, for repo mode's comment
    placement (Target.relocate_path)."""
    return target_of(options).relocate_path(conversion)
