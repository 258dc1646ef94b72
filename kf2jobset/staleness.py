"""Converted JobSets (and TrainJobs) whose replica counts were edited away from the sizes their literals were
written for.

kf2jobset records, on a JobSet whose size-derived values are literal (kf2jobset/sizes.py, SZ002), the
replica count of every replicatedJob (`kf2jobset.dev/sized-for`) and the values
(`kf2jobset.dev/size-literals`). `convert --check` (and so the pre-commit hook) reads every JobSet that
carries the record, also after the last v1 job of the tree is gone, and lists those whose replicas
no longer match it: their TF_CONFIG, hostfile, ... still describe the old size. A TrainJob on a runtime of
kf2jobset's bundle records `numNodes=N` the same way (its literals sit in spec.trainer.env).

Light to import (the hook reads every staged file): the YAML reader is loaded only for a file that holds
a record.
"""
from __future__ import annotations

from dataclasses import dataclass

SIZED_FOR_ANNOTATION = "kf2jobset.dev/sized-for"
SIZE_LITERALS_ANNOTATION = "kf2jobset.dev/size-literals"
NUM_NODES = "numNodes"  # the one size a TrainJob on a bundle runtime records (`numNodes=N`)


def sized_for(jobset: dict) -> str:
    """`rjob=replicas,...` in replicatedJob order: what the literals were written for."""
    return ",".join(f"{r['name']}={r.get('replicas', 1)}" for r in jobset["spec"]["replicatedJobs"])


def parse_sized_for(text: str) -> dict[str, int] | None:
    """The recorded counts, or None when the annotation is not one kf2jobset wrote."""
    out: dict[str, int] = {}
    for part in str(text).split(","):
        name, sep, count = part.strip().partition("=")
        if not sep or not name or not count.strip().isdigit():
            return None
        out[name] = int(count)
    return out or None


@dataclass(frozen=True)
class Resized:
    line: int  # 1-based line of the JobSet document
    label: str  # JobSet NAME (APIVERSION)
    changes: tuple  # ((replicatedJob, recorded, now), ...)
    literals: str
    source: str | None  # the v1 job it was converted from (kf2jobset.dev/source)

    def message(self) -> str:
        moved = ", ".join(f"{name} {was} -> {now if now is not None else 'removed'}" for name, was, now in self.changes)
        how = (f"convert the v1 job ({self.source}) again with the new replicas" if self.source else
               "convert the v1 job again with the new replicas")
        what = "numNodes" if [c[0] for c in self.changes] == [NUM_NODES] else "replicas"
        return (f"{what} changed since conversion ({moved}), but {self.literals} still describe the old size: "
                f"{how}, or edit those values and {SIZED_FOR_ANNOTATION} together")


def may_hold_record(text: str) -> bool:
    return SIZED_FOR_ANNOTATION in text


def resized_jobsets(text: str) -> list[Resized]:
    """Every JobSet of the stream whose replicas differ from its recorded sizes (unparsable documents
    and anything kf2jobset did not record are left to the rest of the run)."""
    from .yamlio import first_content_line, parse_documents, position

    out = []
    for doc in parse_documents(text, select=may_hold_record, without_comments=True):
        data = doc.data
        if doc.error is not None or not isinstance(data, dict) or data.get("kind") not in ("JobSet", "TrainJob"):
            continue
        meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
        ann = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
        recorded = parse_sized_for(ann.get(SIZED_FOR_ANNOTATION, ""))
        spec = data.get("spec") if isinstance(data.get("spec"), dict) else {}
        if data.get("kind") == "TrainJob":  # a TrainJob on a bundle runtime records numNodes=N
            trainer = spec.get("trainer") if isinstance(spec.get("trainer"), dict) else {}
            if recorded is None or set(recorded) != {NUM_NODES}:
                continue
            now = {NUM_NODES: trainer.get(NUM_NODES)}
            changes = tuple((k, was, now[k]) for k, was in recorded.items() if now[k] != was)
            if changes:
                name = meta.get("name") or meta.get("generateName") or "(unnamed)"
                line = position(data, ("spec", "trainer", NUM_NODES), doc.start_line)[0] if NUM_NODES in trainer else None
                out.append(Resized(line or doc.start_line + first_content_line(doc.text) + 1,
                                   f"TrainJob {name} ({data.get('apiVersion')})", changes,
                                   str(ann.get(SIZE_LITERALS_ANNOTATION) or "the size-derived values"),
                                   ann.get("kf2jobset.dev/source")))
            continue
        rjobs = spec.get("replicatedJobs")
        if recorded is None or not isinstance(rjobs, list):
            continue
        now = {r.get("name"): r.get("replicas", 1) for r in rjobs if isinstance(r, dict)}
        changes = tuple((name, was, now.get(name)) for name, was in recorded.items() if now.get(name) != was)
        changes += tuple((name, 0, count) for name, count in now.items() if name not in recorded)
        if not changes:
            continue
        name = meta.get("name") or meta.get("generateName") or "(unnamed)"
        edited = next((i for i, r in enumerate(rjobs) if isinstance(r, dict) and r.get("name") == changes[0][0]), None)
        line = position(data, ("spec", "replicatedJobs", edited, "replicas"), doc.start_line)[0] if edited is not None else None
        out.append(Resized(line or doc.start_line + first_content_line(doc.text) + 1,
                           f"JobSet {name} ({data.get('apiVersion')})", changes,
                           str(ann.get(SIZE_LITERALS_ANNOTATION) or "the size-derived values"),
                           ann.get("kf2jobset.dev/source")))
    return out
