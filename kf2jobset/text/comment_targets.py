"""Where a source field's comments go among a converted document's outputs: a map from source paths to
(output index, path), made by kf2jobset.files.output_paths for each converted document and read by
comment_attach. The mapping of a v1 job's own fields onto its JobSet lives here (`job_path`); a
target that writes other objects relocates those JobSet paths (JobPlace.relocate)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

@dataclass
class JobPlace:
    """One converted job: where it was in the source document and where its JobSet went."""

    source_prefix: tuple
    output: int  # index in the document's output objects
    target_prefix: tuple
    specs_field: str
    rjob_index: dict  # source replica key (as written) -> index in spec.replicatedJobs
    # a target that writes other objects than the JobSet (TrainJob): JobSet path -> (output offset, path)
    relocate: Any = None


@dataclass
class PathMap:
    jobs: list[JobPlace] = field(default_factory=list)
    # (source prefix, output index, target prefix) for parts carried over as they were (Katib
    # experiment fields, untouched List items); the longest prefix wins.
    same: list[tuple[tuple, int, tuple]] = field(default_factory=list)

    def target(self, path: tuple) -> tuple[int, tuple] | None:
        for job in sorted(self.jobs, key=lambda j: -len(j.source_prefix)):
            n = len(job.source_prefix)
            if path[:n] == job.source_prefix:
                rel = _job_rel(path[n:], job)
                if rel is not None and job.relocate is not None:
                    moved = job.relocate(rel)
                    return None if moved is None else (job.output + moved[0], job.target_prefix + moved[1])
                return None if rel is None else (job.output, job.target_prefix + rel)
        for src, out, tgt in sorted(self.same, key=lambda s: -len(s[0])):
            if path[:len(src)] == src:
                return out, tgt + path[len(src):]
        return None


_RUN_POLICY_MOVES = {"ttlSecondsAfterFinished": ("spec", "ttlSecondsAfterFinished"), "suspend": ("spec", "suspend")}


def _job_rel(rel: tuple, job: JobPlace) -> tuple | None:
    if not rel:
        return ()  # the job itself is the JobSet
    if len(rel) >= 2 and rel[0] == "spec" and rel[1] == job.specs_field:
        if len(rel) == 2:
            return ("spec", "replicatedJobs")
        idx = job.rjob_index.get(rel[2])
        if idx is None:
            return None
        base = ("spec", "replicatedJobs", idx)
        rest = rel[3:]
        if not rest:
            return base
        if rest[0] == "replicas" and len(rest) == 1:
            return base + ("replicas",)
        if rest[0] == "template":
            return base + ("template", "spec", "template") + rest[1:]
        if rest == ("restartPolicy",):
            return base + ("template", "spec", "template", "spec", "restartPolicy")
        return None
    if len(rel) >= 2 and rel[:2] == ("spec", "runPolicy"):
        if len(rel) == 3 and rel[2] in _RUN_POLICY_MOVES:
            return _RUN_POLICY_MOVES[rel[2]]
        return None
    if rel[:1] in (("apiVersion",), ("kind",), ("metadata",), ("spec",)) and (rel[0] != "spec" or len(rel) == 1):
        return rel
    return None
