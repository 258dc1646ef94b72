"""Converted objects an edit left stale, by the three checks that read them: sizes (`resized`, staleness.py), the
replicatedJobs' layout (`reshaped`, layout_guard.py), the name or namespace (`renamed`, name_binding.py).
`convert --check` lists them, every other mode warns; the stream is parsed once for the three.

Light to import (the hook reads every staged file): the checks and the YAML reader load only for a file that
may hold such an object.
"""
from __future__ import annotations

from . import staleness


def may_hold_edit(text: str) -> bool:
    """A file that may hold a converted object an edit left stale (any of the three checks)."""
    from .name_binding import may_hold_record as may_hold_names

    return staleness.may_hold_record(text) or may_hold_names(text)


def edited_objects(text: str) -> list:
    """Every converted object of the stream an edit left stale, each with its `category` and `listing(path)`: sizes
    (resized), the replicatedJobs' layout (reshaped, layout_guard.py), the name or namespace (renamed,
    name_binding.py). The stream is parsed once for the three; a rename the size check names is not said again."""
    if not may_hold_edit(text):
        return []
    from . import layout_guard, name_binding
    from ..text.yamlio import parse_documents

    selects = (staleness.select, layout_guard.select, name_binding.select)
    parsed = parse_documents(text, select=lambda t: any(s(t) for s in selects), without_comments=True)
    wrapped = wrapped_components(parsed)
    parsed = parsed + [held for _, _, held in wrapped]
    resized = staleness.resized_jobsets(text, parsed) if staleness.may_hold_record(text) else []
    resized += [*podsets_drift(wrapped)]
    renames = frozenset(r.label for r in resized if r.renamed)
    reshaped = layout_guard.reshaped_jobsets(text, renames, parsed) if layout_guard.may_hold_layout(text) else []
    renamed = name_binding.renamed_jobsets(text, parsed) if name_binding.may_hold_record(text) else []
    return [*resized, *reshaped, *renamed]


def wrapped_components(parsed: list) -> list:
    """(AppWrapper document, component index, the component's template as a document of its own) for every
    AppWrapper v1beta2 component: a wrapped JobSet and its companions (the MPI hostfile ConfigMap) are checked
    like top-level ones, at their own lines."""
    import dataclasses

    from ..sources.appwrapper import is_appwrapper

    out = []
    for doc in parsed:
        if doc.error is None and is_appwrapper(doc.data):
            for i, comp in enumerate(doc.data["spec"]["components"]):
                if isinstance(comp, dict) and isinstance(comp.get("template"), dict):
                    out.append((doc, i, dataclasses.replace(doc, data=comp["template"])))
    return out


def podsets_drift(wrapped: list):
    """AppWrapper components whose declared podSets no longer match the wrapped JobSet kf2jobset wrote: the
    AppWrapper webhook checks a JobSet's podSets against those it infers (replicas x pods per Job, paths, see
    appwrapper.py), and Kueue reserves what they say."""
    from ..sources.appwrapper import jobset_podsets
    from ..text.yamlio import position

    for doc, i, held in wrapped:
        jobset, comp = held.data, doc.data["spec"]["components"][i]
        meta = jobset.get("metadata") if isinstance(jobset.get("metadata"), dict) else {}
        ann = meta.get("annotations") if isinstance(meta.get("annotations"), dict) else {}
        declared = comp.get("podSets")
        if jobset.get("kind") != "JobSet" or not ann.get(staleness.SOURCE_ANNOTATION) or not isinstance(declared, list):
            continue
        try:
            inferred = jobset_podsets(jobset)
        except (TypeError, ValueError, AttributeError):
            continue  # a JobSet the size check or the API server names
        said = [(ps.get("path"), ps.get("replicas")) for ps in declared if isinstance(ps, dict)]
        runs = [(ps["path"], ps["replicas"]) for ps in inferred]
        if said == runs:
            continue
        names = [rj.get("name") for rj in jobset["spec"]["replicatedJobs"]]
        if len(said) != len(runs):
            found = (f"podSets list {len(said)} pod sets, the JobSet has {len(runs)} replicatedJobs",)
        else:
            found = tuple(f"podSets[{k}] says {n} pods at {path} for replicatedJob {names[k]}, the JobSet runs {pods} at {at}"
                          if path != at else f"podSets[{k}] says {n} pods for replicatedJob {names[k]}, the JobSet runs {pods}"
                          for k, ((path, n), (at, pods)) in enumerate(zip(said, runs, strict=False)) if (path, n) != (at, pods))
        line = position(doc.data, ("spec", "components", i, "podSets"), doc.start_line)[0] or held.start()[0]
        name = meta.get("name") or "(unnamed)"
        yield staleness.Resized(line, f"JobSet {name} ({jobset.get('apiVersion')}) in AppWrapper component {i}",
                                (), found + ("an AppWrapper's podSets must describe the pods its JobSet makes (its webhook checks them "
                                         "against those it infers for a JobSet; Kueue reserves what they say)",),
                                ann.get(staleness.SOURCE_ANNOTATION), podsets=True)
