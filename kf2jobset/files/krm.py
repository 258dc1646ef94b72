"""kustomize / KRM function: a `ResourceList` (config.kubernetes.io/v1) in, a `ResourceList` out.

Every v1 Kubeflow job in `items` is replaced, in place, by what `convert` writes for it (its JobSet and
companions, or its TrainJob and runtime); every other item passes through as it came, bookkeeping
annotations included. Pure: text in, text out; the shell (`kf2jobset krm`) reads stdin, turns the
function config into options and prints. Errors become `results` (severity error) and no items.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..core.document_routing import convert_document
from ..core.emit import Conversion
from ..errors import InputError, Kf2JobSetError, Location, Problem, UsageError, format_path
from ..options import ConvertOptions
from ..targets import target_of
from ..text.yamlio import dump_documents, parse_documents

RESOURCE_LIST = ("config.kubernetes.io/v1", "ResourceList")

# The function runtime's bookkeeping (kyaml kioutil): where an item came from. A job's outputs get it
# back from convert_document (kf2jobset/core/renderer_annotations.py).
_PATH = ("config.kubernetes.io/path", "internal.config.kubernetes.io/path")
_INDEX = ("config.kubernetes.io/index", "internal.config.kubernetes.io/index")


@dataclass
class KrmRun:
    """The ResourceList to print, what was converted (for warnings) and the errors (exit non-zero)."""

    output: str
    conversions: list[Conversion] = field(default_factory=list)
    errors: list[Kf2JobSetError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def read_resource_list(text: str) -> dict:
    """The one ResourceList document on stdin. Raises InputError."""
    docs = [d for d in parse_documents(text, "<stdin>") if d.error is not None or d.data is not None]
    for d in docs:
        if d.error is not None:
            raise d.error
    if len(docs) != 1 or not isinstance(docs[0].data, dict):
        raise InputError(Problem(f"expected one {RESOURCE_LIST[1]} ({RESOURCE_LIST[0]}) document on stdin, got {len(docs)} documents",
                                 Location("<stdin>")))
    rl = docs[0].data
    if (rl.get("apiVersion"), rl.get("kind")) != RESOURCE_LIST or not isinstance(rl.get("items", []) or [], list):
        raise InputError(Problem(f"not a {RESOURCE_LIST[0]} {RESOURCE_LIST[1]} with a list of items "
                                 f"(apiVersion {rl.get('apiVersion')!r}, kind {rl.get('kind')!r})", Location("<stdin>")))
    return rl


def function_config_data(rl: dict) -> dict[str, str]:
    """`functionConfig.data` (a ConfigMap's, or any config's `data` mapping) as key -> text. Raises UsageError."""
    fc = rl.get("functionConfig")
    if fc is None:
        return {}
    data = fc.get("data") if isinstance(fc, dict) else None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise UsageError(Problem("must be a mapping of option names to values", Location(path=("functionConfig", "data"))))
    out = {}
    for key, value in data.items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        if not isinstance(key, str) or isinstance(value, (dict, list)) or value is None:
            raise UsageError(Problem("expected a text value", Location(path=("functionConfig", "data", str(key)))))
        out[key] = str(value)
    return out


def transform(rl: dict, options: ConvertOptions) -> KrmRun:
    """Convert the jobs among `rl['items']`; the output keeps the items' order."""
    items = rl.get("items") or []
    out_items, conversions, errors, warnings, converted, results = [], [], [], [], [], []
    from ..core.selectorfix import edit_peer_objects, peers_in

    peers = peers_in(items)
    if peers:  # the list's Services, PDBs, NetworkPolicies, PodMonitors may select a job's pods (selectorfix)
        import dataclasses

        options = dataclasses.replace(options, selector_peers=peers)
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            out_items.append(item)
            continue
        res = convert_document(item, options)
        where = _where(item, i)
        for err in res.errors:
            errors.append(err.located(file=where.file, document=where.document))
            results += [_result(p, item) for p in errors[-1].problems]
        for emb in res.unconverted:
            warnings.append(f"{where.file}: {emb.message()}")
        if not res.changed:
            out_items.append(item)
            continue
        conversions += res.conversions
        converted.append(res.outputs)
        out_items.append(res.outputs)
    if errors:
        return KrmRun(_dump([], results), errors=errors)
    edit_peer_objects(out_items, [e for c in conversions for e in c.peer_edits])
    target_of(options).share(converted)  # e.g. one TrainingRuntime per namespace and name across the list
    flat = [o for x in out_items for o in (x if isinstance(x, list) else [x])]
    return KrmRun(_dump(flat, []), conversions=conversions, warnings=warnings)


def _where(item: dict, i: int) -> Location:
    ann = (item.get("metadata") or {}).get("annotations") if isinstance(item.get("metadata"), dict) else None
    ann = ann if isinstance(ann, dict) else {}
    path = next((ann[k] for k in _PATH if isinstance(ann.get(k), str)), None)
    index = next((ann[k] for k in _INDEX if isinstance(ann.get(k), str) and ann[k].isdigit()), None)
    name = _ref(item)
    label = f"items[{i}] ({item.get('kind')} {name.get('namespace', '') + '/' if name.get('namespace') else ''}{name.get('name')})"
    if path is not None:
        label = f"{path} {label}"
    return Location(file=label, document=int(index) if index is not None and path is not None else None)


def _ref(item: dict) -> dict:
    meta = item.get("metadata") if isinstance(item.get("metadata"), dict) else {}
    ref = {"apiVersion": item.get("apiVersion"), "kind": item.get("kind"), "name": meta.get("name")}
    if meta.get("namespace"):
        ref["namespace"] = meta["namespace"]
    return {k: v for k, v in ref.items() if v is not None}


def _result(problem: Problem, item: dict) -> dict:
    """One kyaml framework.Result: message, severity, resourceRef, field.path, file."""
    result = {"message": str(problem), "severity": "error", "resourceRef": _ref(item)}
    if problem.location.path:
        result["field"] = {"path": format_path(problem.location.path)}
    ann = (item.get("metadata") or {}).get("annotations") if isinstance(item.get("metadata"), dict) else None
    path = next((ann[k] for k in _PATH if isinstance(ann.get(k), str)), None) if isinstance(ann, dict) else None
    if path is not None:
        result["file"] = {"path": path}
        if problem.location.document:
            result["file"]["index"] = problem.location.document
    return result


def error_output(err: Kf2JobSetError) -> str:
    """The ResourceList written when the input or the function config is unusable: no items, results."""
    return _dump([], [{"message": str(p), "severity": "error"} for p in err.problems])


def _dump(items: list, results: list) -> str:
    out = {"apiVersion": RESOURCE_LIST[0], "kind": RESOURCE_LIST[1], "items": items}
    if results:
        out["results"] = results
    return dump_documents([out])
