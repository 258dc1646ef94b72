"""Where each part of a converted document went among its outputs (a job, a Katib Experiment, an
AppWrapper or a List): the path map repo mode's comment placement follows. Core knowledge (which
objects a conversion writes, and in which order), so it lives above the text layer that uses it."""
from __future__ import annotations

from typing import Any

from ..core.convert import is_job
from ..sources.katib_trials import KATIB_EXPERIMENT
from ..targets import comment_relocation
from ..text.comment_targets import JobPlace, PathMap

def path_map(data: Any, result, options) -> PathMap:
    """Source->target prefixes for one converted document (a job, a Katib Experiment or a List)."""
    pm = PathMap()
    if is_job(data):
        if result.conversions:
            place = _place(result.conversions[0], (), 0, (), result.outputs[0])

            place.relocate = comment_relocation(result.conversions[0], options)
            pm.jobs.append(place)
        return pm
    if isinstance(data, dict) and (data.get("apiVersion"), data.get("kind")) == KATIB_EXPERIMENT:
        pm.same.append(((), 0, ()))
        for conv, path in zip(result.conversions, result.embedded_paths, strict=False):
            pm.jobs.append(_place(conv, path, 0, path, result.outputs[0]))
        return pm
    from ..sources.appwrapper import COMPONENTS, is_appwrapper

    if is_appwrapper(data):
        pm.same.append(((), 0, ()))
        placed = {path[2]: conv for path, conv in zip(result.embedded_paths, result.conversions, strict=False)}
        j = 0  # a converted component's companions become components of their own after it
        for i in range(len(data["spec"]["components"])):
            conv = placed.get(i)
            pm.same.append(((*COMPONENTS, i), 0, (*COMPONENTS, j)))
            if conv is not None:
                for rewritten in ("podSets", "podSetInfos"):
                    pm.same.append(((*COMPONENTS, i, rewritten), -1, ()))
                pm.jobs.append(_place(conv, (*COMPONENTS, i, "template"), 0, (*COMPONENTS, j, "template"), conv.jobset))
                j += len(conv.companions)
            j += 1
        return pm
    if isinstance(data, dict) and data.get("kind") == "List" and isinstance(data.get("items"), list):
        out_items = result.outputs[0].get("items") if result.outputs else None
        if not isinstance(out_items, list):
            return pm
        pm.same.append(((), 0, ()))  # apiVersion, kind, metadata of the List itself
        convs = iter(result.conversions)
        j = 0
        for i, item in enumerate(data["items"]):
            if is_job(item):
                conv = next(convs, None)
                if conv is None or j >= len(out_items) or out_items[j] is not conv.jobset:
                    pm.same.append((("items",), -1, ()))  # lost track: drop comments of the items
                    return pm
                pm.jobs.append(_place(conv, ("items", i), 0, ("items", j), conv.jobset))
                j += len(conv.objects)
            else:
                if j >= len(out_items) or out_items[j] is not item:
                    pm.same.append((("items",), -1, ()))
                    return pm
                pm.same.append((("items", i), 0, ("items", j)))
                j += 1
        return pm
    return pm


def _place(conv, source_prefix, output, target_prefix, jobset_holder) -> JobPlace:
    planned = conv.planned_jobset if conv.planned_jobset is not None else conv.jobset  # the plan's replicatedJobs
    names = [rj.get("name") for rj in (planned.get("spec") or {}).get("replicatedJobs") or []]
    index = {}
    for rtype, spec in conv.job.replicas.items():
        name = conv.plan.rjob_names.get(rtype)
        if name in names:
            index[spec.source_key] = names.index(name)
    return JobPlace(source_prefix, output, target_prefix, conv.job.mapping.replica_specs_field, index)
