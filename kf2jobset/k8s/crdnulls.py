"""Nulls in a custom resource, as the API server stores them: `key:` with no value.

Before it validates a custom resource, the API server (apiextensions-apiserver: schema/defaulting
`PruneNonNullableNullsWithoutDefaults`, then `Default`, run by customresource_handler.go after the
pruning of unknown fields) removes every mapping entry whose value is null when the CRD schema of
that field is not `nullable` and has no `default`; a null field that has a default gets the default.
A null *list item* is neither pruned nor defaulted away (unless the item schema has a default): the
validation that follows refuses it. A field the schema does not describe (an unknown field, which
the pruning before removed anyway, or one under `x-kubernetes-preserve-unknown-fields`) keeps its null.

The v1 CRDs (github.com/kubeflow/training-operator@v1.9.4 manifests/base/crds, mpi-operator@v0.8.2 manifests/base)
mark no field `nullable` and none `x-kubernetes-preserve-unknown-fields`, and every default they
carry (a port's protocol TCP, a reference's name "", runPolicy.suspend false, slotsPerWorker 1, ...)
is also what they give the field when it is absent. So under `spec` (and a pod template's metadata)
a null map value is exactly an absent key: the job was stored without it. Top-level `metadata` is
not read through the CRD schema (the API server decodes it as ObjectMeta) and is left alone here.

kf2jobset's strict schemas (schemas/) describe the same fields, so they say which nulls the CRD
schema decides (`schema_at`) and what a field holds (an object or list, where a null means none, or
a value, where a null means the value the user meant was never set).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urldefrag, urljoin
from .schemas import BASE_URI, SCHEMA_SUFFIX, schema_documents

TOP_LEVEL_KEPT = ("apiVersion", "kind", "metadata")  # not pruned through the CRD schema
UNKNOWN = None  # schema_at: the schema does not describe the path


@dataclass(frozen=True)
class NullField:
    """One `key:` with no value that the API server drops: its path, what the field holds."""

    path: tuple
    holds: str  # "object", "list" or "value"
    default: Any = None  # the CRD default the API server put in its place (the same as for an absent key)


def null_paths(doc: dict) -> list[tuple]:
    """Paths of null mapping values (list items excluded) outside the top-level fields the CRD
    schema does not decide, in document order."""
    out: list[tuple] = []

    def walk(node, path):
        if isinstance(node, dict):
            for k, v in node.items():
                if not path and k in TOP_LEVEL_KEPT:
                    continue
                if v is None:
                    out.append(path + (k,))
                else:
                    walk(v, path + (k,))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, path + (i,))

    walk(doc, ())
    return out


def schema_at(schema_name: str, path: tuple) -> dict | None:
    """The schema of the value at `path` in a document of `schema_name` ($refs followed), `{}` where
    the schema leaves the value free-form, or UNKNOWN (None) where it does not describe the path."""
    docs = schema_documents()
    base = BASE_URI + schema_name + SCHEMA_SUFFIX
    schema = docs.get(base)
    if schema is None:
        return UNKNOWN
    schema, base = _resolve(docs, schema, base)
    for part in path:
        if not schema:
            return {}  # free-form: anything below is the user's
        if isinstance(part, int):
            items = schema.get("items")
            if not isinstance(items, dict):
                return UNKNOWN if items is False else {}
            schema = items
        else:
            props = schema.get("properties") or {}
            if part in props:
                schema = props[part]
            else:
                extra = schema.get("additionalProperties", True)
                if extra is False:
                    return UNKNOWN
                schema = extra if isinstance(extra, dict) else {}
        schema, base = _resolve(docs, schema, base)
    return schema


def _resolve(docs: dict, schema: dict, base: str) -> tuple[dict, str]:
    seen = 0
    while isinstance(schema, dict) and "$ref" in schema and seen < 20:
        uri, fragment = urldefrag(urljoin(base, schema["$ref"]))
        node: Any = docs.get(uri)
        for part in [p for p in fragment.split("/") if p]:
            node = node[part] if isinstance(node, dict) else None
        schema, base, seen = node if isinstance(node, dict) else {}, uri, seen + 1
    return schema, base


def holds(schema: dict) -> str:
    """What a field of this schema holds: an object, a list, or a value (a string, number, boolean,
    quantity; or free-form, where a null meant *something*)."""
    types = schema.get("type")
    types = types if isinstance(types, list) else [types]
    if types == ["object"]:
        return "object"
    if types == ["array"]:
        return "list"
    return "value"


def pruned_nulls(doc: dict, schema_name: str) -> tuple[list[NullField], list[tuple]]:
    """The nulls the API server drops from this custom resource, and the null fields it prunes as
    unknown (the schema does not describe them): ([NullField], [path])."""
    nulls: list[NullField] = []
    unknown: list[tuple] = []
    for path in null_paths(doc):
        schema = schema_at(schema_name, path)
        if schema is UNKNOWN:
            unknown.append(path)
        elif schema.get("nullable"):
            continue  # kept as null (no v1 CRD field is nullable)
        else:
            nulls.append(NullField(path, holds(schema), schema.get("default")))
    return nulls, unknown


def remove_paths(doc: dict, paths: list[tuple]) -> None:
    """Delete each path's last key from its mapping (in place)."""
    for path in paths:
        node = doc
        for part in path[:-1]:
            node = node[part]
        node.pop(path[-1], None)
