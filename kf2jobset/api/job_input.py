"""What a Python caller hands `convert_job`, made the document the CLI reads.

A job built in code is a mapping, an OpenAPI model (kubeflow-training's `KubeflowOrgV1PyTorchJob`,
kubernetes' `V1ObjectMeta`, ...) or a mapping holding models at any depth. Models are serialized by the
rule the Kubernetes client has always applied to request bodies: each attribute of `openapi_types` (or the
older `swagger_types`) written under its `attribute_map` key, unset ones left out, dates in ISO 8601.
The rule is applied here rather than by calling `ApiClient.sanitize_for_serialization`: from kubernetes 36
on, that function serializes the classic generated models (kubeflow-training's) through `to_dict()`, in
snake_case, which no API server reads.

Keys in Python's snake_case (`model.to_dict()`) are refused with the fix: the API server would drop them
as unknown fields, and the job would lose what they held without a word.
"""
from __future__ import annotations

import datetime
import enum
import re
from collections.abc import Mapping
from typing import Any

from ..errors import InputError, Location, Problem

SNAKE_RULE = "snake-case-keys"
_SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
_PASS_THE_MODEL = "pass the model itself (convert_job(model)), not model.to_dict()"


def job_document(job: object) -> dict:
    """A fresh plain dict for `job` (the caller's objects are not modified); InputError for what no
    Kubernetes client could send, TypeError for what is not a job object at all."""
    if isinstance(job, (str, bytes)):
        raise TypeError("convert_job takes a job object (a mapping or an OpenAPI model); "
                        "for YAML or JSON text use convert_yaml")
    doc = _plain(job, (), in_model=False)
    if not isinstance(doc, dict):
        raise TypeError(f"convert_job takes a mapping or an OpenAPI model, not {type(job).__name__}")
    problems = snake_case_problems(doc)
    if problems:
        raise InputError(problems)
    return doc


def _openapi_attributes(value: object) -> list[tuple[str, str]] | None:
    """(Python attribute, JSON key) of an OpenAPI-generated model, or None for anything else."""
    types = getattr(value, "openapi_types", None)
    if not isinstance(types, Mapping):
        types = getattr(value, "swagger_types", None)
    keys = getattr(value, "attribute_map", None)
    if not isinstance(types, Mapping) or not isinstance(keys, Mapping):
        return None
    return [(attr, keys[attr]) for attr in types if attr in keys]


def _plain(value: Any, path: tuple, *, in_model: bool) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, Mapping):
        return {k: _plain(v, path + (k,), in_model=in_model) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v, path + (i,), in_model=in_model) for i, v in enumerate(value)]
    if isinstance(value, (datetime.date, datetime.datetime)):
        # a model's date is sent as the client sends it; a plain one is left as YAML's loader gives it
        return value.isoformat() if in_model else value
    attributes = _openapi_attributes(value)
    if attributes is not None:
        out = {}
        for attr, key in attributes:
            held = getattr(value, attr, None)
            if held is not None:
                out[key] = _plain(held, path + (key,), in_model=True)
        return out
    if isinstance(value, enum.Enum):
        return _plain(value.value, path, in_model=in_model)
    raise InputError(Problem(
        f"a {type(value).__module__}.{type(value).__qualname__} is not a value a Kubernetes object can hold",
        Location(path=path), rule="not-serializable",
        hint="use dicts, lists, strings, numbers, booleans, or OpenAPI models (kubernetes.client, kubeflow.training)"))


def _camel(key: str) -> str:
    first, *rest = key.split("_")
    return first + "".join(part[:1].upper() + part[1:] for part in rest)


def snake_case_problems(doc: dict) -> list[Problem]:
    """Keys spelled as Python attributes where the API names the field in camelCase: the whole job from
    `to_dict()` (`api_version`), or a part of it (`template: pod.to_dict()`). A nested key counts only
    where the job's schema has the camelCase field, so labels, annotations and other maps of the user's
    own keys never do."""
    if "api_version" in doc and "apiVersion" not in doc:
        keys = sorted(k for k in doc if isinstance(k, str) and _SNAKE.fullmatch(k))
        if keys:
            return [_problem((), keys)]
    from ..mappings import convertible_mapping

    mapping = convertible_mapping(doc.get("apiVersion"), doc.get("kind"))
    if mapping is None or not mapping.schema:
        return []
    from ..k8s.crdnulls import schema_at

    problems = []
    stack: list[tuple[tuple, Any]] = [((), doc)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, list):
            stack.extend((path + (i,), v) for i, v in reversed(list(enumerate(node))))
            continue
        if not isinstance(node, dict):
            continue
        snake = [k for k in node if isinstance(k, str) and _SNAKE.fullmatch(k)]
        if snake:
            fields = (schema_at(mapping.schema, path) or {}).get("properties") or {}
            wrong = [k for k in snake if k not in fields and _camel(k) in fields]
            if wrong:
                problems.append(_problem(path, wrong))
        stack.extend((path + (k,), v) for k, v in reversed(list(node.items())))
    return problems


def _problem(path: tuple, keys: list[str]) -> Problem:
    shown = ", ".join(f"{k} ({_camel(k)})" for k in keys[:4]) + (f" and {len(keys) - 4} more" if len(keys) > 4 else "")
    return Problem(f"keys in Python's snake_case where the API reads camelCase: {shown}; model.to_dict() names the "
                   "model's Python attributes, and the API server drops them as unknown fields",
                   Location(path=path), rule=SNAKE_RULE, hint=_PASS_THE_MODEL)
