"""Converted JobSets (and TrainJobs) whose sizes were edited away from the sizes their literals were written for.

kf2jobset records, on a JobSet whose size-derived values are literal (kf2jobset/sizes.py, SZ002), the
replica count of every replicatedJob (`kf2jobset.dev/sized-for`) and the values
(`kf2jobset.dev/size-literals`); on a TrainJob of a built-in runtime, `numNodes=N` (TJ017). `convert
--check` (and so the pre-commit hook) reads every JobSet and TrainJob that carries the record, also after
the last v1 job of the tree is gone, and lists those whose sizes no longer match it: their TF_CONFIG,
WORKER_ADDRS, ... still describe the old size. A TrainJob on a runtime of kf2jobset's bundle records
`numNodes=N` the same way (TJ028; its literals sit in spec.trainer.env). Every other mode (`convert` to
stdout, `--in-place`, `--out-dir`, `report`) says the same as a warning: `listing` is the one wording.

Light to import (the hook reads every staged file): the YAML reader is loaded only for a file that holds
a record.
"""
from __future__ import annotations

from dataclasses import dataclass

from .categories import RESIZED

SIZED_FOR_ANNOTATION = "kf2jobset.dev/sized-for"
SIZE_LITERALS_ANNOTATION = "kf2jobset.dev/size-literals"
NUM_NODES = "numNodes"  # the one size a TrainJob records (`numNodes=N`), built-in or bundle runtime


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
    sizes: str = "replicas"  # what was edited: a JobSet's replicas, a TrainJob's numNodes

    def listing(self, path: str) -> str:
        """`FILE:LINE: KIND NAME (APIVERSION): resized: ...`, as --check lists it and the other modes warn."""
        return f"{path}:{self.line}: {self.label}: {RESIZED}: {self.message()}"

    def message(self) -> str:
        moved = ", ".join(f"{name} {was} -> {now if now is not None else 'removed'}" for name, was, now in self.changes)
        how = (f"convert the v1 job ({self.source}) again with the new replicas" if self.source else
               "convert the v1 job again with the new replicas")
        return (f"{self.sizes} changed since conversion ({moved}), but {self.literals} still describe the old size: "
                f"{how}, or edit those values and {SIZED_FOR_ANNOTATION} together")


def may_hold_record(text: str) -> bool:
    return SIZED_FOR_ANNOTATION in text


def _sizes(data: dict):
    """(sizes now by name, the path of the first size, what they are called), or None: a JobSet's
    replicas per replicatedJob, a TrainJob's numNodes (1 when unset: the default of the built-in and bundle runtimes)."""
    spec = data.get("spec") if isinstance(data.get("spec"), dict) else {}
    if data.get("kind") == "TrainJob":
        trainer = spec.get("trainer") if isinstance(spec.get("trainer"), dict) else {}
        return {NUM_NODES: trainer.get(NUM_NODES, 1)}, lambda _: ("spec", "trainer", NUM_NODES), NUM_NODES
    rjobs = spec.get("replicatedJobs")
    if data.get("kind") != "JobSet" or not isinstance(rjobs, list):
        return None
    now = {r.get("name"): r.get("replicas", 1) for r in rjobs if isinstance(r, dict)}
    index = {r.get("name"): i for i, r in enumerate(rjobs) if isinstance(r, dict)}
    return now, lambda name: ("spec", "replicatedJobs", index[name], "replicas") if name in index else None, "replicas"


def resized_jobsets(text: str) -> list[Resized]:
    """Every JobSet (or TrainJob) of the stream whose sizes differ from its recorded sizes (unparsable
    documents and anything kf2jobset did not record are left to the rest of the run)."""
    from .yamlio import parse_documents, position

    out = []
    for doc in parse_documents(text, select=may_hold_record, without_comments=True):
        data = doc.data
        if doc.error is not None or not isinstance(data, dict):
            continue
        meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
        ann = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
        recorded = parse_sized_for(ann.get(SIZED_FOR_ANNOTATION, ""))
        sizes = _sizes(data)
        if recorded is None or sizes is None:
            continue
        now, path_of, called = sizes
        changes = tuple((name, was, now.get(name)) for name, was in recorded.items() if now.get(name) != was)
        changes += tuple((name, 0, count) for name, count in now.items() if name not in recorded)
        if not changes:
            continue
        name = meta.get("name") or meta.get("generateName") or "(unnamed)"
        path = path_of(changes[0][0])
        line = position(data, path, doc.start_line)[0] if path is not None else None
        out.append(Resized(line or doc.start()[0],
                           f"{data.get('kind')} {name} ({data.get('apiVersion')})", changes,
                           str(ann.get(SIZE_LITERALS_ANNOTATION) or "the size-derived values"),
                           ann.get("kf2jobset.dev/source"), called))
    return out
