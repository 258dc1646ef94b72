"""Validate documents against the JSON Schemas in schemas/.

    >>> from kf2jobset.k8s.schemas import validate
    >>> validate({"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "spec": {"tfReplicaz": {}}}, "kubeflow/tfjob")
    [SchemaIssue(path=('spec', 'tfReplicaSpecs'), message="missing required field 'tfReplicaSpecs'"),
     SchemaIssue(path=('spec', 'tfReplicaz'), message="unknown field 'tfReplicaz'")]

Schema names are file names under schemas/ without ".schema.json": "jobset",
"kubeflow/tfjob", "kubeflow/pytorchjob", "kubeflow/xgboostjob", "kubeflow/paddlejob",
"kubeflow/jaxjob", "kubeflow/mxjob", "kubeflow/mpijob-v1", "kubeflow/mpijob-v2beta1". ("k8s" and
"kubeflow/common" only hold definitions that the others reference.)

Before validation the instance is normalised the way the API server's decoder sees it:
mapping entries whose value is null are dropped (the API server treats them as unset),
YAML timestamps become strings, and non-string mapping keys become strings.

jsonschema is imported lazily: importing this module is cheap.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

from kf2jobset.errors import format_path
from kf2jobset.data_dirs import data_dir
from kf2jobset.k8s.jobset_api import API_VERSION, KIND
from kf2jobset.mappings import mapping_for
from kf2jobset.k8s.schemacheck import Compiler, NotCompilable, Unsure, go_pattern, is_integer
from kf2jobset.k8s.schemacheck import normalise as _normalise  # the instance as the API server's decoder sees it

BASE_URI = "https://kf2jobset.dev/schemas/"
SCHEMA_SUFFIX = ".schema.json"


@dataclass(frozen=True)
class SchemaIssue:
    """One schema violation: a JSON path into the instance and a short message."""

    path: tuple[str | int, ...]
    message: str

    @property
    def location(self) -> str:
        """The path written the kubectl way: spec.replicatedJobs[0].template."""
        return format_path(self.path, empty="")

    def __str__(self) -> str:
        return f"{self.location or '<root>'}: {self.message}"


def _path_key(path: tuple[str | int, ...]) -> tuple:
    # ints (list indexes) sort before strings at the same depth; never compare int to str.
    return tuple((0, e, "") if isinstance(e, int) else (1, 0, e) for e in path)


def schema_name_for(api_version: str | None, kind: str | None) -> str | None:
    """The schema name for a document's apiVersion/kind, or None if we have none."""
    if api_version == API_VERSION and kind == KIND:
        return "jobset"

    mapping = mapping_for(api_version, kind)
    return mapping.schema if mapping else None


# --------------------------------------------------------------------------- loading

_lock = threading.Lock()
_registry: Any = None
_validators: dict[str, Any] = {}


def schema_names() -> list[str]:
    """Names accepted by validate() (schemas that describe whole documents)."""
    root = data_dir("schemas")
    names = []
    for p in sorted(root.rglob("*" + SCHEMA_SUFFIX)):
        name = p.relative_to(root).as_posix()[: -len(SCHEMA_SUFFIX)]
        if name not in ("k8s", "kubeflow/common", "report"):  # report: kf2jobset's own output, not a manifest
            names.append(name)
    return names


def _load_registry():
    global _registry
    if _registry is None:
        from referencing import Registry, Resource

        root = data_dir("schemas")
        resources = []
        for p in sorted(root.rglob("*" + SCHEMA_SUFFIX)):
            contents = json.loads(p.read_text(encoding="utf-8"))
            uri = contents.get("$id") or BASE_URI + p.relative_to(root).as_posix()
            resources.append((uri, Resource.from_contents(contents)))
        _registry = Registry().with_resources(resources).crawl()
    return _registry


def _validator(schema_name: str):
    v = _validators.get(schema_name)
    if v is not None:
        return v
    with _lock:
        v = _validators.get(schema_name)
        if v is None:
            registry = _load_registry()
            uri = BASE_URI + schema_name + SCHEMA_SUFFIX
            try:
                schema = registry.contents(uri)
            except Exception:  # referencing.exceptions.NoSuchResource
                raise ValueError(
                    f"unknown schema {schema_name!r}; known: {', '.join(schema_names())}"
                ) from None
            v = _kubernetes_validator_class()(schema, registry=registry)
            _validators[schema_name] = v
    return v


def _kubernetes_validator_class():
    """Draft 2020-12 plus the API server's list semantics (`x-kubernetes-list-type`), its idea of an
    integer (int64, or a float go-openapi calls whole) and Go's reading of `pattern` ($ is the end)."""
    from jsonschema import Draft202012Validator, validators

    checker = Draft202012Validator.TYPE_CHECKER.redefine("integer", lambda _checker, v: is_integer(v))
    return validators.extend(Draft202012Validator, {"x-kubernetes-list-type": _list_type, "pattern": _pattern},
                             type_checker=checker)


def _pattern(validator, pattern, instance, schema):
    import re

    from jsonschema.exceptions import ValidationError

    if isinstance(instance, str) and not re.search(go_pattern(pattern), instance):
        yield ValidationError(f"{instance!r} does not match {pattern!r}")


def _list_type(validator, list_type, instance, schema):
    """`map` lists are unique on their `x-kubernetes-list-map-keys`, `set` lists on the whole item
    (`atomic` lists may repeat). Like the API server, each repeat is reported at its own index and
    keys the server defaults (a port's protocol) are compared with the default filled in."""
    if not isinstance(instance, list) or list_type not in ("map", "set"):
        return
    from jsonschema.exceptions import ValidationError

    keys = schema.get("x-kubernetes-list-map-keys") or []
    defaults = _key_defaults(validator, schema, keys) if list_type == "map" else {}
    seen: set = set()
    for i, item in enumerate(instance):
        if list_type == "map":
            if not isinstance(item, dict):
                continue  # the item's own schema reports the type
            ident = {k: item.get(k, defaults.get(k)) for k in keys if k in item or k in defaults}
        else:
            ident = item
        marker = json.dumps(ident, sort_keys=True, separators=(",", ":"), default=str)
        if marker in seen:
            yield ValidationError(f"Duplicate value: {marker}", path=(i,), instance=item)
        seen.add(marker)


def _key_defaults(validator, schema, keys) -> dict:
    """The `default` of each map key in the list's item schema (following one $ref)."""
    items = schema.get("items") or {}
    if "$ref" in items:
        try:
            items = validator._resolver.lookup(items["$ref"]).contents
        except Exception:  # an unresolvable ref is reported by the $ref keyword itself
            return {}
    props = items.get("properties") or {}
    return {k: props[k]["default"] for k in keys if "default" in (props.get(k) or {})}


# --------------------------------------------------------------------------- validation


def validate(instance: dict, schema_name: str) -> list[SchemaIssue]:
    """Validate `instance` against schemas/<schema_name>.schema.json; [] when valid.

    A compiled yes/no check answers first (schemacheck); only an instance it does not accept
    goes through jsonschema, which finds and words the errors."""
    check = _fast_check(schema_name)
    if check is not None:
        try:
            if check(instance):
                return []
        except Unsure:
            pass
    return _validate_slowly(instance, schema_name)


_fast_checks: dict[str, Any] = {}
_documents: dict[str, Any] | None = None


def schema_documents() -> dict[str, Any]:
    """{$id or file URI: contents} of every schema file (what the registry holds, without `referencing`)."""
    global _documents
    if _documents is None:
        root = data_dir("schemas")
        docs = {}
        for p in sorted(root.rglob("*" + SCHEMA_SUFFIX)):
            contents = json.loads(p.read_text(encoding="utf-8"))
            docs[contents.get("$id") or BASE_URI + p.relative_to(root).as_posix()] = contents
        _documents = docs
    return _documents


def _fast_check(schema_name: str):
    """The compiled check of one schema, built once per process; None if it cannot be compiled."""
    if schema_name in _fast_checks:
        return _fast_checks[schema_name]

    with _lock:
        if schema_name not in _fast_checks:
            uri = BASE_URI + schema_name + SCHEMA_SUFFIX
            docs = schema_documents()
            check = None
            if uri in docs:
                try:
                    check = Compiler(docs).compile_uri(uri)
                except NotCompilable:
                    check = None
            _fast_checks[schema_name] = check
    return _fast_checks[schema_name]


def _validate_slowly(instance: dict, schema_name: str) -> list[SchemaIssue]:
    """jsonschema over the normalised instance: every error, worded for users."""
    validator = _validator(schema_name)
    doc = _normalise(instance)
    issues: set[SchemaIssue] = set()
    for error in validator.iter_errors(doc):
        issues.update(_issues_from(error))
    return sorted(issues, key=lambda i: (_path_key(i.path), i.message))


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return type(value).__name__


def _show(value: Any, limit: int = 40) -> str:
    """A short rendering of an instance value for messages."""
    kind = _json_type(value)
    if kind == "string":
        text = value if len(value) <= limit else value[: limit - 3] + "..."
        return f"string {text!r}"
    if kind == "boolean":
        return f"boolean {'true' if value else 'false'}"
    if kind in ("integer", "number"):
        return f"{kind} {value!r}"
    return kind


def _enum_value(v: Any) -> str:
    if v == "":
        return '""'
    if isinstance(v, str):
        return v
    return json.dumps(v)


# keyword -> message, for the keywords whose message needs only the schema's value and the instance
_MESSAGES = {
    "type": lambda value, inst: f"expected {' or '.join(value if isinstance(value, list) else [value])}, got {_show(inst)}",
    "enum": lambda value, inst: "must be one of: " + ", ".join(_enum_value(v) for v in value),
    "const": lambda value, inst: f"must be {_enum_value(value)}, got {_show(inst)}",
    "minimum": lambda value, inst: f"must be >= {value}, got {inst!r}",
    "maximum": lambda value, inst: f"must be <= {value}, got {inst!r}",
    "maxItems": lambda value, inst: f"must have at most {value} items, got {len(inst)}",
    "minItems": lambda value, inst: f"must have at least {value} items, got {len(inst)}",
    "maxLength": lambda value, inst: "must be empty" if value == 0 else f"must be at most {value} characters long",
    "minLength": lambda value, inst: f"must be at least {value} characters long",
}


def _issues_from(error) -> list[SchemaIssue]:
    path = tuple(error.absolute_path)
    kind = error.validator
    value = error.validator_value
    inst = error.instance

    if kind == "additionalProperties" and isinstance(inst, dict):
        allowed = set(error.schema.get("properties", {}))
        extras = sorted(k for k in inst if k not in allowed)
        return [SchemaIssue(path + (k,), f"unknown field {k!r}") for k in extras]
    if kind == "required" and isinstance(inst, dict):
        return [
            SchemaIssue(path + (name,), f"missing required field {name!r}")
            for name in value
            if name not in inst
        ]
    if kind in _MESSAGES:
        return [SchemaIssue(path, _MESSAGES[kind](value, inst))]
    if kind == "pattern":
        if error.schema.get("type") == ["integer", "string"]:  # resource.Quantity (k8s.schema.json)
            return [SchemaIssue(path, f"{inst!r} is not a Kubernetes quantity (e.g. 500m, 2, 1.5Gi)")]
        return [SchemaIssue(path, f"must match the pattern {value}")]
    if kind in ("anyOf", "oneOf"):
        issues = _alternatives_issues(error, path)
        if issues is not None:
            return issues
    if kind == "x-kubernetes-list-type":
        return [SchemaIssue(path, error.message)]
    if kind is None:  # a `false` schema
        return [SchemaIssue(path, "not allowed here")]
    message = error.message if len(error.message) <= 120 else error.message[:117] + "..."
    return [SchemaIssue(path, message)]


def _alternatives_issues(error, path: tuple) -> list[SchemaIssue] | None:
    """anyOf/oneOf: "one of ... is required" when every alternative only requires a field, else the issues
    of the alternative that came closest; None when there is neither (the error's own message says it)."""
    alternatives = [s for s in error.validator_value if isinstance(s, dict)]
    if alternatives and all(set(s) == {"required"} for s in alternatives):
        names = [n for s in alternatives for n in s["required"]]
        return [SchemaIssue(path, "one of " + ", ".join(repr(n) for n in names) + " is required")]
    if error.context:
        from jsonschema.exceptions import best_match

        return _issues_from(best_match(error.context))
    return None
