"""List-map and list-set uniqueness (`x-kubernetes-list-type`), as the API server enforces it.

The lists under test are derived from schemas/jobset.schema.json itself (following its $refs into
k8s.schema.json), so a list added to the schema is tested without touching this file; the real
JobSet CRD (sigs.k8s.io/jobset@v0.12.0, config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml) holds the
schema's list declarations to account.
"""
from __future__ import annotations

import json

import pytest

from kf2jobset.k8s.schemas import validate

from . import upstream


def _our_schema_lists() -> dict[str, tuple[str, tuple, dict]]:
    """dotted path ('spec.replicatedJobs[].name' style) -> (list type, map keys, item schema)."""
    from kf2jobset.k8s.schemas import BASE_URI, _load_registry

    registry = _load_registry()
    resolver = registry.resolver(base_uri=BASE_URI + "jobset.schema.json")
    out: dict = {}

    def deref(node, res):
        while isinstance(node, dict) and "$ref" in node:
            resolved = res.lookup(node["$ref"])
            node, res = resolved.contents, resolved.resolver
        return node, res

    def walk(node, res, path, depth):
        node, res = deref(node, res)
        if not isinstance(node, dict) or depth > 30:
            return
        if node.get("x-kubernetes-list-type") in ("map", "set"):
            item, _ = deref(node.get("items") or {}, res)
            out[path] = (node["x-kubernetes-list-type"], tuple(node.get("x-kubernetes-list-map-keys") or ()), item)
        for key, sub in (node.get("properties") or {}).items():
            if key != "status":
                walk(sub, res, f"{path}.{key}" if path else key, depth + 1)
        if "items" in node:
            walk(node["items"], res, path + "[]", depth + 1)

    root = resolver.lookup(BASE_URI + "jobset.schema.json")
    walk(root.contents, root.resolver, "", 0)
    return out


LISTS = _our_schema_lists()


def test_the_schema_declares_the_lists_the_api_server_keeps_unique():
    # A floor, so an accidental loss of the declarations cannot pass silently.
    must = {"env": ("map", ("name",)), "volumes": ("map", ("name",)), "volumeMounts": ("map", ("mountPath",)),
            "containers": ("map", ("name",)), "initContainers": ("map", ("name",)),
            "ports": ("map", ("containerPort", "protocol")), "replicatedJobs": ("map", ("name",))}
    found = {p.rsplit(".", 1)[-1]: (t, k) for p, (t, k, _) in LISTS.items()}
    for name, decl in must.items():
        assert found.get(name) == decl, name
    assert len(LISTS) >= 25


def _sample(schema: dict):
    t = schema.get("type")
    t = t[0] if isinstance(t, list) else t
    if "enum" in schema:
        return schema["enum"][0]
    return {"integer": 7, "number": 7, "boolean": True, "object": {}}.get(t, "x")


def _plant(doc: dict, dotted: str, items: list) -> tuple:
    """Create the path in `doc` (one element per `[]`) and put `items` in the list; its path."""
    node, path = doc, []
    parts = dotted.replace("[]", ".[]").split(".")
    for n, part in enumerate(parts):
        last = n == len(parts) - 1
        if part == "[]":
            node = node[0]
            path.append(0)
            continue
        nxt = parts[n + 1] if not last else None
        if last:
            node[part] = items
        elif nxt == "[]":
            node.setdefault(part, [{}])
        else:
            node.setdefault(part, {})
        node = node[part]
        path.append(part)
    return tuple(path)


@pytest.mark.parametrize("dotted", sorted(LISTS))
def test_every_unique_list_in_the_schema_is_enforced(dotted):
    list_type, keys, item_schema = LISTS[dotted]
    if list_type == "map":
        props = item_schema.get("properties") or {}
        item = {k: _sample(props.get(k) or {}) for k in keys}
    else:
        item = _sample(item_schema.get("items") or item_schema)
    other = {k: (v + 1 if isinstance(v, int) and not isinstance(v, bool) else f"{v}y") for k, v in item.items()} \
        if isinstance(item, dict) else "other"
    doc = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "t"}, "spec": {}}
    path = _plant(doc, dotted, [item, other, json.loads(json.dumps(item))])
    dups = [i for i in validate(doc, "jobset") if "Duplicate value" in i.message]
    assert [i.path for i in dups] == [path + (2,)], dups
    shown = json.dumps(item, sort_keys=True, separators=(",", ":"))
    assert dups[0].message == f"Duplicate value: {shown}"


def test_distinct_items_are_not_duplicates():
    doc = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "t"}, "spec": {}}
    _plant(doc, "spec.replicatedJobs[].template.spec.template.spec.containers[].ports",
           [{"containerPort": 80}, {"containerPort": 80, "protocol": "UDP"}, {"containerPort": 81}])
    assert not [i for i in validate(doc, "jobset") if "Duplicate" in i.message]


def test_a_defaulted_map_key_is_compared_with_its_default():
    # The API server defaults protocol to TCP before it compares: these two ports are the same.
    doc = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "t"}, "spec": {}}
    path = _plant(doc, "spec.replicatedJobs[].template.spec.template.spec.containers[].ports",
                  [{"containerPort": 80}, {"containerPort": 80, "protocol": "TCP"}])
    dups = [i for i in validate(doc, "jobset") if "Duplicate" in i.message]
    assert [(i.path, i.message) for i in dups] == [(path + (1,), 'Duplicate value: {"containerPort":80,"protocol":"TCP"}')]


def _crd_lists() -> dict[str, tuple[str, tuple]]:
    from ruamel.yaml import YAML

    crd = YAML(typ="safe").load(upstream.jobset_crd().read_text())
    out: dict = {}

    def walk(node, path):
        if not isinstance(node, dict):
            return
        if node.get("x-kubernetes-list-type") in ("map", "set"):
            out[path] = (node["x-kubernetes-list-type"], tuple(node.get("x-kubernetes-list-map-keys") or ()))
        for key, sub in (node.get("properties") or {}).items():
            if key != "status":
                walk(sub, f"{path}.{key}" if path else key)
        if "items" in node:
            walk(node["items"], path + "[]")

    walk(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"], "")
    return out


def test_our_list_declarations_match_the_real_jobset_crd():
    real = _crd_lists()
    ours = {p: (t, k) for p, (t, k, _) in LISTS.items()}
    missing = {p: d for p, d in real.items() if ours.get(p) != d}
    assert not missing, f"lists the real CRD keeps unique that our schema does not (or with other keys): {missing}"
    # Ours may declare more only where the CRD (an older Kubernetes) lacks the field altogether.
    extra = sorted(set(ours) - set(real))
    assert len(extra) <= 4, extra
