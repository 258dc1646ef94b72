"""`kf2jobset resize`: a converted JobSet set to new replica counts, with every value kf2jobset wrote from the
old counts rewritten for the new ones, and nothing else touched.

The profile that wrote the size-bound values writes them again: the v1 job is rebuilt from the JobSet
(kf2jobset/resize/rebuild.py) and converted at the sizes its values were written for (the `kf2jobset.dev/
sized-for` record, else its replicas) and at the new sizes; what differs between the two conversions (the
replicas, TF_CONFIG's host lists, the hostfile ConfigMap, the records, the gang's minMember and minResources,
...) is what a resize changes (kf2jobset/resize/delta.py). Each such value on the JobSet and its companions
must still be what the conversion at the old size wrote: one the user edited away, or removed, is named and the
resize refused, as is a size the v1 job could not have had (the operator's rules, checked by the converter) and
a layout the new size changes (a replicatedJob that appears or disappears: convert the v1 job again). Pure: the
edits are returned as (document, path, value); kf2jobset/commands/resize_command.py writes them into the text.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import InvalidJobError, Kf2JobSetError, RejectedJobSetError, UnsupportedError
from ..checks.staleness import SIZED_FOR_ANNOTATION, parse_sized_for
from .delta import MISSING, Named, changes, equal, locate, spell, value_at
from .rebuild import Rebuilt, rebuild, refusal


@dataclass(frozen=True)
class ResizeRequest:
    replicas: tuple = ()  # ((TYPE, N), ...): a v1 replica type or a replicatedJob name, any case
    num_nodes: int | None = None  # a TrainJob's numNodes
    elastic_max: int | None = None  # an elastic job's new maxReplicas (PET_NNODES min:max)


@dataclass(frozen=True)
class ValueEdit:
    document: int  # index in the stream given
    path: tuple  # keys and indexes in that document
    value: object


@dataclass
class Resize:
    document: int  # the resized object's index
    label: str  # `JobSet NAME`
    was: dict  # v1 type -> replicas before
    now: dict  # v1 type -> replicas after
    edits: list = field(default_factory=list)  # ValueEdit


def resizable(doc) -> bool:
    """A JobSet kf2jobset wrote (its source record)."""
    from ..checks.staleness import SOURCE_ANNOTATION

    meta = doc.get("metadata") if isinstance(doc, dict) else None
    ann = meta.get("annotations") if isinstance(meta, dict) else None
    return doc.get("kind") == "JobSet" and isinstance(ann, dict) and SOURCE_ANNOTATION in ann


def resize(stream: list, index: int, request: ResizeRequest) -> Resize:
    """The edits that resize the JobSet `stream[index]` as `request` asks; raises UnsupportedError naming why not."""
    jobset = stream[index]
    others = [d for i, d in enumerate(stream) if i != index]
    built = rebuild(jobset, others)
    was = _written_for(jobset, built)
    now = _requested(built, request, was)
    _check_elastic(built, now, request)
    first_refusal = None
    for options in [built.options, *built.alternatives]:
        try:
            return _resize_under(stream, index, request, built, options, was, now)
        except _Mismatch as err:  # values written under other options, or edited by the user
            first_refusal = first_refusal or err.refusal
    raise first_refusal


class _Mismatch(Exception):
    def __init__(self, refusal: UnsupportedError):
        super().__init__(str(refusal))
        self.refusal = refusal


def _resize_under(stream: list, index: int, request: ResizeRequest, built: Rebuilt, options, was: dict, now: dict) -> Resize:
    from ..core.convert import convert_job

    try:
        before = convert_job(built.at(was), options)
    except Kf2JobSetError as err:
        raise refusal(built.label, "the job it was converted from cannot be rebuilt from it (" + _said(err) + ")") from None
    try:
        after = convert_job(built.at(now, request.elastic_max), options)
    except (InvalidJobError, UnsupportedError, RejectedJobSetError) as err:
        raise refusal(built.label, f"{_sizes(now)} is a size the {built.job['kind']} could not have had: {_said(err)}") from None
    out = Resize(index, built.label, was, now)
    _apply(out, stream, index, stream[index], before.jobset, after.jobset, built, "")
    for old, new in zip(before.companions, after.companions, strict=False):
        delta = changes(old, new)
        if not delta:
            continue
        where = next((i for i, d in enumerate(stream) if isinstance(d, dict) and d.get("kind") == old.get("kind")
                      and (d.get("metadata") or {}).get("name") == (old.get("metadata") or {}).get("name")), None)
        if where is None:
            raise refusal(built.label, f"its {old.get('kind')} {(old.get('metadata') or {}).get('name')} holds values "
                          "written for the old size and is not among the documents given: give its file too")
        _apply(out, stream, where, stream[where], old, new, built, f"{old.get('kind')} {old['metadata'].get('name')} ")
    return out


def _said(err: Kf2JobSetError) -> str:
    return "; ".join(p.message + (f" ({spell(p.location.path)})" if p.location.path else "") for p in err.problems)


def _sizes(sizes: dict) -> str:
    return ", ".join(f"{t}={n}" for t, n in sizes.items())


def _written_for(jobset: dict, built: Rebuilt) -> dict:
    """v1 type -> the replicas the values were written for: the size record, else the replicas now."""
    ann = (jobset.get("metadata") or {}).get("annotations") or {}
    recorded = parse_sized_for(ann.get(SIZED_FOR_ANNOTATION, "")) if ann.get(SIZED_FOR_ANNOTATION) else None
    sizes = dict(built.sizes)
    if recorded:
        for rtype, names in built.types.items():
            if all(n in recorded for n in names):
                sizes[rtype] = sum(recorded[n] for n in names)
    return sizes


def _requested(built: Rebuilt, request: ResizeRequest, was: dict) -> dict:
    now = dict(was)
    for key, count in request.replicas:
        rtype = next((t for t, names in built.types.items() if key.lower() == t.lower() or key in names), None)
        if rtype is None:
            known = ", ".join(f"{t} (replicatedJob {'/'.join(n)})" for t, n in built.types.items())
            raise refusal(built.label, f"--replicas {key}={count}: it has no such replica type; it has {known}")
        now[rtype] = count
    return now


def _check_elastic(built: Rebuilt, now: dict, request: ResizeRequest) -> None:
    elastic = built.job["spec"].get("elasticPolicy")
    if not isinstance(elastic, dict):
        if request.elastic_max is not None:
            raise refusal(built.label, "--elastic-max: it is not an elastic job (no PET_NNODES bound min:max)")
        return
    bound = request.elastic_max if request.elastic_max is not None else elastic.get("maxReplicas")
    workers = now.get("Worker", 0)
    if request.elastic_max is None and isinstance(bound, int) and workers > bound:
        raise refusal(built.label, f"{workers} workers exceed the elastic bound its pods were written for (PET_NNODES "
                      f"{elastic.get('minReplicas')}:{bound}): torchrun's rendezvous admits at most {bound} nodes, so a "
                      "worker past it cannot join", hint=f"pass --elastic-max {workers} (or more) to move the bound")
    if isinstance(bound, int) and workers > bound:
        raise refusal(built.label, f"--elastic-max {bound} is below the {workers} workers asked for")
    if request.elastic_max is not None and request.elastic_max < (elastic.get("minReplicas") or 0):
        raise refusal(built.label, f"--elastic-max {request.elastic_max} is below the bound's minimum "
                      f"({elastic.get('minReplicas')})")


def _replicas_path(path: tuple) -> bool:
    return len(path) == 4 and path[:2] == ("spec", "replicatedJobs") and isinstance(path[2], Named) \
        and path[3] == "replicas"


def _apply(out: Resize, stream: list, index: int, doc: dict, old: dict, new: dict, built: Rebuilt, what: str) -> None:
    for change in changes(old, new):
        name = f"{what}{describe(change.path)}"
        if change.old is MISSING or change.new is MISSING:
            appears = "appears" if change.old is MISSING else "goes away"
            raise refusal(built.label, f"{name} {appears} at {_sizes(out.now)}: the new size changes the layout kf2jobset "
                          "wrote; convert the v1 job again at the new size")
        plain = locate(doc, change.path)
        if plain is None:
            raise refusal(built.label, f"{name}, which kf2jobset wrote for {_sizes(out.was)}, is gone (removed since the "
                          "conversion): resize rewrites only the values it wrote",)
        found = value_at(doc, plain)
        if not _replicas_path(change.path) and not equal(found, change.old):
            raise _Mismatch(refusal(built.label, f"{name} is not the value kf2jobset wrote for {_sizes(out.was)} (edited since the "
                          f"conversion): {_differ(found, change.old)}; resize rewrites only values it wrote", plain,
                                   hint="put the value back and resize, or edit it to the new size by hand"))
        out.edits.append(ValueEdit(index, plain, change.new))


def _differ(found, written) -> str:
    """Where a found value leaves what kf2jobset wrote: both around their first difference."""
    a, b = (found if isinstance(found, str) else repr(found)), (written if isinstance(written, str) else repr(written))
    at = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
    start = max(0, at - 40)

    def cut(text: str) -> str:
        return ("..." if start else "") + repr(text[start:at + 60]) + ("..." if len(text) > at + 60 else "")
    return f"found {cut(a)}, kf2jobset wrote {cut(b)}"


def describe(path: tuple) -> str:
    """A size-bound value as a user finds it: `env TF_CONFIG of container tensorflow in replicatedJob chief`."""
    named = [p.name for p in path if isinstance(p, Named)]
    if len(named) == 3 and "env" in path:
        return f"env {named[2]} of container {named[1]} in replicatedJob {named[0]}"
    return spell(path)
