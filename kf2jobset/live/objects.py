"""Live objects -> what the converter and the inventory need. Pure: dicts in, dicts/strings out."""
from __future__ import annotations

from typing import Any, Iterable

from ..core.emit import LAST_APPLIED
from ..mappings import mapping_for
from ..notes import CATEGORIES

# Written by the API server (or by controllers), never by the author of the job.
SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "ownerReferences",
    "finalizers",
)
TERMINAL_STATES = ("Succeeded", "Failed")


def clean(obj: dict) -> tuple[dict, list[str]]:
    """The live job as its author wrote it: no status, no server metadata. `obj` is left as it is.

    Only the top level and metadata are new dicts; spec is shared with `obj` (the converter does
    not modify its input, so a deep copy of every listed job would be wasted).
    Returns (document, owners): `owners` describes the dropped ownerReferences ("Trial/x"), which
    tied the v1 job's lifetime to another object; the JobSet is not given them.
    """
    doc = {k: v for k, v in obj.items() if k != "status"}
    meta = doc.get("metadata")
    owners: list[str] = []
    if isinstance(meta, dict):
        for ref in meta.get("ownerReferences") or ():
            if isinstance(ref, dict):
                owners.append(f"{ref.get('kind')}/{ref.get('name')}")
        meta = doc["metadata"] = {k: v for k, v in meta.items() if k not in SERVER_METADATA}
        annotations = meta.get("annotations")
        if isinstance(annotations, dict) and (LAST_APPLIED in annotations or not annotations):
            annotations = {k: v for k, v in annotations.items() if k != LAST_APPLIED}
            if annotations:
                meta["annotations"] = annotations
            else:
                del meta["annotations"]
    return doc, owners


def kubectl_name(obj: dict) -> str:
    """kubectl's `jobset.jobset.x-k8s.io/name` / `configmap/name`."""
    api_version, kind = obj.get("apiVersion", ""), str(obj.get("kind", "")).lower()
    group = api_version.split("/", 1)[0] if "/" in api_version else ""
    return f"{kind}.{group}/{obj['metadata'].get('name')}" if group else f"{kind}/{obj['metadata'].get('name')}"


def job_state(obj: dict) -> str:
    """The v1 job's state from status.conditions, as the operator reports it (`-` before it has any)."""
    status = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    conds = [c for c in status.get("conditions") or () if isinstance(c, dict) and str(c.get("status")) == "True"]
    terminal = [c for c in conds if c.get("type") in TERMINAL_STATES]
    pick = terminal or conds
    if pick:
        # the most recent transition wins; the operator appends, so list order breaks ties
        latest = max(enumerate(pick), key=lambda ic: (str(ic[1].get("lastTransitionTime") or ""), ic[0]))[1]
        return str(latest.get("type") or "-")
    run_policy = (obj.get("spec") or {}).get("runPolicy") or {}
    if run_policy.get("suspend") is True:
        return "Suspended"
    return "-"


def is_suspended(obj: dict) -> bool:
    return ((obj.get("spec") or {}).get("runPolicy") or {}).get("suspend") is True


def replica_counts(obj: dict) -> dict[str, int]:
    """{replica type: replicas} as written (an unset count is the operator's default)."""
    mapping = mapping_for(obj.get("apiVersion"), obj.get("kind"))
    if mapping is None:
        return {}
    specs = (obj.get("spec") or {}).get(mapping.replica_specs_field)
    out: dict[str, int] = {}
    if not isinstance(specs, dict):
        return out
    for rtype, raw in specs.items():
        count = raw.get("replicas") if isinstance(raw, dict) else None
        if not isinstance(count, int) or isinstance(count, bool):
            rule = mapping.rule(rtype) or next((r for r in mapping.replica_types if r.type.lower() == str(rtype).lower()), None)
            count = rule.default_replicas if rule else 1
        out[str(rtype)] = count
    return out


def format_replicas(counts: dict[str, int]) -> str:
    return ",".join(f"{t}={n}" for t, n in counts.items()) or "-"


def worst_note(notes: Iterable[Any]):
    """The note with the most severe category (the first of equals), or None."""
    best, rank = None, -1
    for note in notes:
        r = CATEGORIES.index(note.category) if note.category in CATEGORIES else -1
        if r > rank:
            best, rank = note, r
    return best


def secret_refs(objects: Iterable[dict]) -> list[str]:
    """Names of Secrets the pods cannot start without (volumes, env, envFrom; `optional` ones are skipped)."""
    names: set[str] = set()
    for obj in objects:
        if obj.get("kind") != "JobSet":
            continue
        for rjob in (obj.get("spec") or {}).get("replicatedJobs") or ():
            pod = (((rjob.get("template") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
            names.update(_pod_secrets(pod))
    return sorted(names)


def _pod_secrets(pod: dict) -> set[str]:
    out: set[str] = set()
    for vol in pod.get("volumes") or ():
        sec = vol.get("secret")
        if isinstance(sec, dict) and sec.get("secretName") and not sec.get("optional"):
            out.add(sec["secretName"])
        for src in ((vol.get("projected") or {}).get("sources") or ()):
            sec = src.get("secret") if isinstance(src, dict) else None
            if isinstance(sec, dict) and sec.get("name") and not sec.get("optional"):
                out.add(sec["name"])
    for c in [*(pod.get("initContainers") or ()), *(pod.get("containers") or ())]:
        for env in c.get("env") or ():
            ref = ((env.get("valueFrom") or {}).get("secretKeyRef")) if isinstance(env, dict) else None
            if isinstance(ref, dict) and ref.get("name") and not ref.get("optional"):
                out.add(ref["name"])
        for env_from in c.get("envFrom") or ():
            ref = env_from.get("secretRef") if isinstance(env_from, dict) else None
            if isinstance(ref, dict) and ref.get("name") and not ref.get("optional"):
                out.add(ref["name"])
    return out
