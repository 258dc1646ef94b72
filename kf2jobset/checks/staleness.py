"""Converted JobSets (and TrainJobs) whose size-derived values no longer describe their sizes.

kf2jobset records, on a JobSet whose size-derived values are literal (kf2jobset/checks/sizes.py, SZ002), the
replica count of every replicatedJob (`kf2jobset.dev/sized-for`) and the values
(`kf2jobset.dev/size-literals`); on a TrainJob, `numNodes=N` (TJ017, TJ028). `convert --check` (and so the
pre-commit hook) reads every JobSet and TrainJob kf2jobset wrote (`kf2jobset.dev/source`), also after the
last v1 job of the tree is gone, and lists those whose values describe other sizes than the object's:
the values themselves are read back (kf2jobset/checks/size_values.py), so editing or deleting the record alone
changes nothing; the record decides only for values no reader covers. Every other mode (`convert` to
stdout, `--in-place`, `--out-dir`, `report`) says the same as a warning: `listing` is the one wording.

Light to import (the hook reads every staged file): the YAML reader and the profiles are loaded only for
a file kf2jobset wrote.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..categories import RESIZED

SIZED_FOR_ANNOTATION = "kf2jobset.dev/sized-for"
SIZE_LITERALS_ANNOTATION = "kf2jobset.dev/size-literals"
SOURCE_ANNOTATION = "kf2jobset.dev/source"  # the v1 job a JobSet or TrainJob was converted from
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
    category: ClassVar[str] = RESIZED
    line: int  # 1-based line of the JobSet document
    label: str  # JobSet NAME (APIVERSION)
    changes: tuple  # ((replicatedJob, recorded, now), ...): the sizes edited since the record
    found: tuple  # what the values describe against the object ("TF_CONFIG lists 3 worker pods, the JobSet runs 5")
    source: str | None  # the v1 job it was converted from (kf2jobset.dev/source)
    sizes: str = "replicas"  # what was edited: a JobSet's replicas, a TrainJob's numNodes
    renamed: tuple = ()  # values that name the pods of a replicatedJob the JobSet no longer has
    podsets: bool = False  # `found` is about the podSets of the AppWrapper that wraps it (edit_checks.podsets_drift)

    def listing(self, path: str) -> str:
        """`FILE:LINE: KIND NAME (APIVERSION): resized: ...`, as --check lists it and the other modes warn."""
        return f"{path}:{self.line}: {self.label}: {RESIZED}: {self.message(path)}"

    def message(self, path: str | None = None) -> str:
        moved = ", ".join(f"{name} {was} -> {now if now is not None else 'removed'}" for name, was, now in self.changes)
        said = "; ".join([*self.renamed, *self.found])
        if moved:
            said = f"{self.sizes} changed since conversion ({moved}), but {said}"
        fixes = []
        if self.podsets:
            return (f"{'; '.join(self.found)}: set each podSet's replicas to the pods its replicatedJob runs (replicas x "
                    f"parallelism) and its tas-sub-group-count annotation to the replicas, or drop the podSets (the "
                    f"controller infers them for a JobSet)")
        if self.renamed:
            fixes.append("rename the replicatedJob back, or edit those values to name its pods under the new name")
        if self.found:
            where = f"{self.source}; " if self.source else ""
            fixes.append(f"to resize, {self._resize_command(path)}convert the v1 job ({where}after convert --in-place it is "
                         f"in git history before the conversion) again at the new size, or edit every value listed to the "
                         f"new size (and {SIZED_FOR_ANNOTATION}, the record of the conversion, with them)")
        return f"{said}: {'; '.join(fixes)}"


    def _resize_command(self, path: str | None) -> str:
        """`kf2jobset resize` with the sizes the JobSet now runs, which rewrites every value listed (a JobSet's)."""
        if self.sizes != "replicas":
            return ""
        sizes = " ".join(f"--replicas {name}={now}" for name, _, now in self.changes if now is not None)
        return f"run `kf2jobset resize {path or 'FILE'} {sizes or '--replicas TYPE=N'}` (it rewrites them all), or "


def may_hold_record(text: str) -> bool:
    """A document kf2jobset wrote (its source record) or one carrying a size record."""
    return SOURCE_ANNOTATION in text or SIZED_FOR_ANNOTATION in text


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


def _stale(data: dict, ann: dict, configmaps: dict):
    """(changes, found, renamed, the replicatedJob to point at) of one JobSet or TrainJob, or None."""
    from .size_values import Reading, profile_of, read_sizes

    sizes = _sizes(data)
    if sizes is None:
        return None
    now, _, _ = sizes
    recorded = parse_sized_for(ann.get(SIZED_FOR_ANNOTATION, "")) or {}
    source = ann.get(SOURCE_ANNOTATION)
    profile = profile_of(source) if source else None
    v1_name = str(source).split(" ")[1] if source and len(str(source).split(" ")) > 1 else None
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    entries = [e.strip() for e in str(ann.get(SIZE_LITERALS_ANNOTATION) or "").split(",") if e.strip()]
    reading = read_sizes(data, configmaps, profile, (meta.get("name"), v1_name), entries) if profile else Reading()
    changes = tuple((name, was, now.get(name)) for name, was in recorded.items() if now.get(name) != was)
    changes += tuple((name, 0, count) for name, count in now.items() if recorded and name not in recorded)
    renamed = tuple(reading.renamed)
    if reading.renamed:  # a rename is said as one, not as a replicatedJob removed and another added
        changes = tuple(c for c in changes if c[0] in recorded and c[0] in now)
        added = [n for n in now if recorded and n not in recorded]
        if len(reading.gone) == 1 and len(added) == 1:  # the record tells which one it became
            renamed = (f"replicatedJob {reading.gone[0]} is now {added[0]}, but {renamed[0]}", *renamed[1:])
            reading.first = reading.first or added[0]
    # Recorded values no declared value reads (a PodGroup's minMember, TF_CONFIG not set for one replica):
    # only the record can tell that they were written for other sizes.
    declared = profile.size_values if profile else ()
    unread = [e for e in entries if not any(v.recorded(e) and v.name in reading.read for v in declared)]
    found = list(reading.stale)
    if changes and (unread or not entries):
        names = ", ".join(unread) or "the size-derived values"
        were = "was" if len(unread) == 1 else "were"
        them = "it" if len(unread) == 1 else "them"
        # Only the record tells: say what it says, not that the values are stale (they may be edited already).
        found.append(f"{names} {were} recorded for the old size ({SIZED_FOR_ANNOTATION}) and cannot be read here to tell "
                     f"whether {them} follow{'s' if len(unread) == 1 else ''}")
    if not found and not reading.renamed:
        return None
    return changes, tuple(found), renamed, (changes[0][0] if changes else reading.first)


def select(text: str) -> bool:
    return may_hold_record(text) or "ConfigMap" in text  # the companions a JobSet's pods mount (the MPI hostfile)


def resized_jobsets(text: str, parsed: list | None = None) -> list[Resized]:
    """Every JobSet (or TrainJob) kf2jobset wrote whose size-derived values no longer describe its sizes
    (unparsable documents and anything kf2jobset did not write are left to the rest of the run)."""
    from ..text.yamlio import parse_documents, position, selected_documents

    docs = selected_documents(parsed, select) if parsed is not None else parse_documents(text, select=select, without_comments=True)
    configmaps = {}
    for doc in docs:  # the companions a JobSet's pods mount (the MPI hostfile)
        data = doc.data
        if doc.error is None and isinstance(data, dict) and data.get("kind") == "ConfigMap" \
                and isinstance(data.get("metadata"), dict) and isinstance(data.get("data"), dict):
            configmaps[data["metadata"].get("name")] = data["data"]
    out = []
    for doc in docs:
        data = doc.data
        if doc.error is not None or not isinstance(data, dict) or data.get("kind") not in ("JobSet", "TrainJob"):
            continue
        meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
        ann = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
        if not (ann.get(SOURCE_ANNOTATION) or ann.get(SIZED_FOR_ANNOTATION)):
            continue
        stale = _stale(data, ann, configmaps)
        if stale is None:
            continue
        changes, found, renamed, at = stale
        name = meta.get("name") or meta.get("generateName") or "(unnamed)"
        _, path_of, called = _sizes(data)
        path = path_of(at) if at is not None else None
        line = position(data, path, doc.start_line)[0] if path is not None else None
        out.append(Resized(line or doc.start()[0],
                           f"{data.get('kind')} {name} ({data.get('apiVersion')})", changes, found,
                           ann.get(SOURCE_ANNOTATION), called, renamed))
    return out

