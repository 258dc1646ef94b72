"""Patches as data: apply RFC 6902 JSON patches and kustomize-style strategic merge patches to plain
objects, map v1 job paths to JobSet paths, and compute a patch from two objects.

Strategic merge on custom resources follows real kustomize (v5.7, held to it by
tests/test_kustomize_real.py): with no schema for a CRD, maps merge key by key, `null` deletes a key,
and every list — replicatedJobs, containers, env — is replaced whole. So kf2jobset never writes a
strategic merge patch for a JobSet: it writes JSON6902 operations, with `test` guards on the names
of the list elements they index into.
"""
from __future__ import annotations

import copy
from typing import Any


class PatchError(Exception):
    pass


# ---- JSON pointers --------------------------------------------------------------------------------

def parse_pointer(ptr: str) -> list[str]:
    if ptr == "":
        return []
    if not ptr.startswith("/"):
        raise PatchError(f"not a JSON pointer: {ptr!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in ptr.split("/")[1:]]


def format_pointer(parts) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


# ---- RFC 6902 -------------------------------------------------------------------------------------

def _walk(doc, parts):
    node = doc
    for p in parts:
        if isinstance(node, dict):
            if p not in node:
                raise PatchError(f"no such member {p!r}")
            node = node[p]
        elif isinstance(node, list):
            node = node[_index(node, p, allow_end=False)]
        else:
            raise PatchError(f"cannot descend into a scalar at {p!r}")
    return node


def _index(seq: list, part: str, allow_end: bool) -> int:
    if part == "-" and allow_end:
        return len(seq)
    if not part.isdigit() or (len(part) > 1 and part.startswith("0")):
        raise PatchError(f"bad array index {part!r}")
    i = int(part)
    if i > len(seq) or (i == len(seq) and not allow_end):
        raise PatchError(f"array index {i} out of range")
    return i


def _add(doc, parts, value):
    if not parts:
        return copy.deepcopy(value)
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, dict):
        parent[last] = copy.deepcopy(value)
    elif isinstance(parent, list):
        parent.insert(_index(parent, last, allow_end=True), copy.deepcopy(value))
    else:
        raise PatchError("cannot add to a scalar")
    return doc


def _remove(doc, parts):
    if not parts:
        raise PatchError("cannot remove the whole document")
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, dict):
        if last not in parent:
            raise PatchError(f"no such member {last!r}")
        return parent.pop(last)
    if isinstance(parent, list):
        return parent.pop(_index(parent, last, allow_end=False))
    raise PatchError("cannot remove from a scalar")


def apply_json_patch(doc: Any, ops: list) -> Any:
    doc = copy.deepcopy(doc)
    if not isinstance(ops, list):
        raise PatchError("a JSON patch is a list of operations")
    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError("an operation needs `op` and `path`")
        kind, parts = op["op"], parse_pointer(op["path"])
        if kind == "add":
            doc = _add(doc, parts, op.get("value"))
        elif kind == "remove":
            _remove(doc, parts)
        elif kind == "replace":
            _walk(doc, parts)
            if parts:
                _remove(doc, parts)
            doc = _add(doc, parts, op.get("value"))
        elif kind in ("move", "copy"):
            src = parse_pointer(op.get("from", ""))
            value = copy.deepcopy(_walk(doc, src))
            if kind == "move":
                _remove(doc, src)
            doc = _add(doc, parts, value)
        elif kind == "test":
            if _walk(doc, parts) != op.get("value"):
                raise PatchError(f"test failed at {op['path']}")
        else:
            raise PatchError(f"unknown op {kind!r}")
    return doc


# ---- strategic merge (kustomize, schema-less) -------------------------------------------------------

def _clean(value):
    """A new subtree: kustomize drops null fields from it."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def apply_smp(dest: Any, patch: Any) -> Any:
    """A strategic merge patch as kustomize applies it to a custom resource: kustomize has no schema
    for CRDs (v1 jobs, JobSets), so maps merge, `null` deletes, and every list is replaced whole
    (checked against real kustomize v5.7 in tests/test_kustomize_real.py)."""
    if isinstance(patch, dict) and isinstance(dest, dict):
        out = copy.deepcopy(dest)
        for key, value in patch.items():
            if isinstance(key, str) and key.startswith("$"):
                raise PatchError(f"strategic merge directive {key} is not supported")
            if value is None:
                out.pop(key, None)
            elif key in out:
                out[key] = apply_smp(out[key], value)
            else:
                out[key] = _clean(value)
        return out
    return _clean(copy.deepcopy(patch))


# ---- computing a patch ----------------------------------------------------------------------------

def json_diff(a: Any, b: Any, path=(), atomic: frozenset = frozenset()) -> list[dict]:
    """RFC 6902 operations turning `a` into `b` (replace whole lists whose length changed, and the
    lists at the `atomic` paths — tuples of strings — whenever they differ)."""
    if path in atomic and isinstance(b, list):
        return [] if a == b else [{"op": "replace", "path": format_pointer(path), "value": b}]
    if isinstance(a, dict) and isinstance(b, dict):
        ops = []
        for key in a:
            if key not in b:
                ops.append({"op": "remove", "path": format_pointer(path + (key,))})
        for key, value in b.items():
            if key not in a:
                ops.append({"op": "add", "path": format_pointer(path + (key,)), "value": value})
            else:
                ops += json_diff(a[key], value, path + (key,), atomic)
        return ops
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        ops = []
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            ops += json_diff(x, y, path + (str(i),), atomic)
        return ops
    if a == b and type(a) is type(b):
        return []
    return [{"op": "replace", "path": format_pointer(path), "value": b}]


def guard_ops(doc: Any, ops: list) -> list:
    """`test` operations that pin, for every list index an operation walks through, the `name` of the
    element it expects there (replicatedJobs, containers, env …): if the base is later reordered,
    kustomize stops with an error instead of patching the wrong element."""
    tests: list[dict] = []
    seen: set = set()
    for op in ops:
        node, prefix = doc, []
        for part in parse_pointer(op.get("path", "")):
            if isinstance(node, list):
                try:
                    node = node[int(part)]
                except (ValueError, IndexError):
                    break
                prefix.append(part)
                if isinstance(node, dict) and isinstance(node.get("name"), str):
                    path = format_pointer(prefix + ["name"])
                    if path not in seen:
                        seen.add(path)
                        tests.append({"op": "test", "path": path, "value": node["name"]})
            elif isinstance(node, dict) and part in node:
                node = node[part]
                prefix.append(part)
            else:
                break
    # Values kf2jobset derives from replica counts (WORLD_SIZE, PET_NNODES, TF_CONFIG ...) are patched
    # as literals: pin the base's counts, so a later change of the base stops the build instead of
    # leaving a stale world size in the overlay.
    if any("/env/" in op.get("path", "") for op in ops) and isinstance(doc, dict):
        for i, rj in enumerate(((doc.get("spec") or {}).get("replicatedJobs")) or []):
            if isinstance(rj, dict) and "replicas" in rj:
                tests.append({"op": "test", "path": f"/spec/replicatedJobs/{i}/replicas", "value": rj["replicas"]})
    return tests


# ---- v1 job paths -> JobSet paths -----------------------------------------------------------------

# Pod-template fields kf2jobset fills in: replacing them wholesale would drop what it added.
_FILLED = (("spec",), ("spec", "containers"), ("spec", "restartPolicy"), ("metadata",))
_FILLED_IN_CONTAINER = ("env", "ports")


def map_job_path(parts: list, specs_field: str, index_of) -> list | None:
    """A path inside a v1 job -> the same information's path in its JobSet; None if it has none that
    a patch could reach mechanically. `index_of(replica key)` gives the replicatedJob index."""
    if not parts:
        return None
    if parts[0] == "metadata":
        return list(parts)
    if parts[:2] == ["spec", specs_field]:
        if len(parts) < 4:
            return None
        idx = index_of(parts[2])
        if idx is None:
            return None
        rest = parts[3:]
        base = ["spec", "replicatedJobs", str(idx)]
        if rest == ["replicas"]:
            return base + ["replicas"]
        if rest[0] == "template" and len(rest) > 1:
            inner = rest[1:]
            if tuple(inner) in _FILLED:
                return None
            if inner[:2] == ["spec", "containers"] and (len(inner) == 3 or (len(inner) == 4 and inner[3] in _FILLED_IN_CONTAINER)):
                return None
            return base + ["template", "spec", "template"] + inner
        return None
    if parts[:2] == ["spec", "runPolicy"] and len(parts) == 3 and parts[2] in ("ttlSecondsAfterFinished", "suspend"):
        return ["spec", parts[2]]
    return None
