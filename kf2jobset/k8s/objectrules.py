"""Core Kubernetes rules every object kf2jobset writes must pass, whatever its kind: object metadata
(labels, annotations, namespace, generateName), integer ranges (int32/int64 fields, non-negative
fields) and resource quantity syntax. The pod and Job rules built on them are in podrules.py; this
module is the lower layer both the JobSet checks and the v1 job checks share.

Pure: dicts in, `Problem`s out. Facts: Kubernetes apimachinery validation (label and qualified-name
syntax, 256 KiB annotation total, DNS-1123/1035 names, quantity syntax).
"""
from __future__ import annotations

import re
from typing import Any

from ..errors import Location, Problem
from .quantity import parse_quantity

INT32 = (-(2 ** 31), 2 ** 31 - 1)
INT64 = (-(2 ** 63), 2 ** 63 - 1)
ANNOTATIONS_MAX = 256 * 1024  # total bytes of keys + values (apimachinery TotalAnnotationSizeLimitB)
GENERATE_NAME_SUFFIX = 5

DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS1123_SUB = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")

# integer fields of the JobSet (and its pod templates) typed int32 in the API; any other integer is int64
INT32_FIELDS = frozenset({
    "backoffLimit", "backoffLimitPerIndex", "completions", "containerPort", "defaultMode", "failureThreshold",
    "hostPort", "initialDelaySeconds", "maxExpirationSeconds", "maxFailedIndexes", "maxRestarts", "maxSkew",
    "minDomains", "mode", "parallelism", "partition", "periodSeconds", "port", "priority", "replicas",
    "successThreshold", "timeoutSeconds", "ttlSecondsAfterFinished", "weight", "lun",
})
# integer fields that must not be negative (apps/batch/core validation), and those that must be positive
# (terminationGracePeriodSeconds and the JobSet's maxRestarts may be negative: the real v1.36 server and
# JobSet v0.12 take them, tests/e2e/test_refusals.py and tools/validator_vs_apiserver.py; a pod's
# activeDeadlineSeconds must be positive, a Job's only non-negative: check_pod_template.)
NON_NEGATIVE = frozenset({"backoffLimit", "ttlSecondsAfterFinished", "completions", "activeDeadlineSeconds",
                          "parallelism", "backoffLimitPerIndex", "maxFailedIndexes"})  # (replicas: validate.py, by version)
POSITIVE: frozenset = frozenset()


def problem_at(path: tuple, message: str, rule: str, hint: str | None = None) -> Problem:
    return Problem(message, Location(path=tuple(path)), rule=rule, hint=hint)


def is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def qualified_name_problem(key: Any) -> str | None:
    """Why `key` is not a valid label/annotation key (prefix/name), or None."""
    if not isinstance(key, str):
        return f"key {key!r} must be a string"
    prefix, _, name = key.rpartition("/")
    if "/" in key and not prefix:
        return f"key {key!r}: prefix part must be non-empty"
    if prefix and (len(prefix) > 253 or not DNS1123_SUB.fullmatch(prefix)):
        return f"key {key!r}: prefix must be a DNS-1123 subdomain of at most 253 characters"
    if not name or len(name) > 63 or not _QUALIFIED_NAME.fullmatch(name):
        return (f"key {key!r}: name part must be at most 63 characters of alphanumerics, '-', '_' or '.', "
                "starting and ending with an alphanumeric")
    return None


def check_labels(labels: Any, path: tuple) -> list[Problem]:
    if labels is None:
        return []
    if not isinstance(labels, dict):
        return [problem_at(path, "labels must be a map of strings", "labels")]
    out = []
    for key, value in labels.items():
        why = qualified_name_problem(key)
        if why:
            out.append(problem_at(path + (str(key),), f"label {why}", "label-key"))
        if value is None:
            continue
        if not isinstance(value, str):
            out.append(problem_at(path + (str(key),), f"label value {value!r} must be a string", "label-value"))
        elif len(value) > 63 or not _LABEL_VALUE.fullmatch(value):
            out.append(problem_at(path + (str(key),), f"label value {value[:80]!r} must be at most 63 characters of alphanumerics, "
                                              "'-', '_' or '.', starting and ending with an alphanumeric", "label-value"))
    return out


def check_annotations(annotations: Any, path: tuple) -> list[Problem]:
    if annotations is None:
        return []
    if not isinstance(annotations, dict):
        return [problem_at(path, "annotations must be a map of strings", "annotations")]
    out = []
    total = 0
    for key, value in annotations.items():
        why = qualified_name_problem(key.lower() if isinstance(key, str) else key)  # checked lower-cased, as apimachinery does
        if why:
            out.append(problem_at(path + (str(key),), f"annotation {why}", "annotation-key"))
        if value is not None and not isinstance(value, str):
            out.append(problem_at(path + (str(key),), f"annotation value must be a string, not {type(value).__name__}", "annotation-value"))
        total += len(str(key).encode()) + len(str(value if value is not None else "").encode())
    if total > ANNOTATIONS_MAX:
        out.append(problem_at(path, f"annotations total {total} bytes, more than the 262144 (256 KiB) the API server accepts",
                      "annotations-size"))
    return out


def check_object_meta(meta: Any, path: tuple, *, dns1035_generate_name: bool = False) -> list[Problem]:
    """labels, annotations, namespace and generateName of an object (name rules live with the object)."""
    if meta is None:
        return []
    if not isinstance(meta, dict):
        return [problem_at(path, "metadata must be a map", "metadata")]
    out = check_labels(meta.get("labels"), path + ("labels",)) + check_annotations(meta.get("annotations"), path + ("annotations",))
    ns = meta.get("namespace")
    if ns not in (None, "") and (not isinstance(ns, str) or len(ns) > 63 or not DNS1123_LABEL.fullmatch(ns)):
        out.append(problem_at(path + ("namespace",), f"namespace {ns!r} must be a DNS-1123 label (a-z, 0-9, '-', at most 63)", "namespace"))
    gen = meta.get("generateName")
    if gen not in (None, "") and not meta.get("name"):
        pattern = _DNS1035 if dns1035_generate_name else DNS1123_SUB
        sample = f"{gen}x" if isinstance(gen, str) else None  # the random suffix makes a trailing '-' fine
        if sample is None or not pattern.fullmatch(sample) or len(gen) + GENERATE_NAME_SUFFIX > (63 if dns1035_generate_name else 253):
            what = "a DNS-1035 label prefix (lower-case letters, digits, '-', starting with a letter)" if dns1035_generate_name \
                else "a DNS-1123 subdomain prefix"
            out.append(problem_at(path + ("generateName",), f"generateName {gen!r} must be {what}, with room for 5 random characters",
                          "generate-name"))
    return out


def check_numbers(obj: Any, path: tuple = (), key: str | None = None) -> list[Problem]:
    """Integer ranges: int32 fields, int64 elsewhere, non-negative and positive fields."""
    if _numbers_fine(obj, key):
        return []  # the usual case, decided without building paths
    return _number_problems(obj, path, key)


def _numbers_fine(obj: Any, key: str | None) -> bool:
    """check_numbers would find nothing (same rules, no paths, no messages)."""
    stack = [(obj, key)]
    push, pop = stack.append, stack.pop
    while stack:
        node, k = pop()
        if isinstance(node, dict):
            for kk, v in node.items():
                if type(v) is not str:  # most leaves are strings: skip them without a stack entry
                    push((v, kk if isinstance(kk, str) else None))
        elif isinstance(node, list):
            for v in node:
                if type(v) is not str:
                    push((v, None))
        elif isinstance(node, str):
            continue
        elif is_int(node):
            lo, hi = INT32 if k in INT32_FIELDS else INT64
            if not lo <= node <= hi or (k in NON_NEGATIVE and node < 0) or (k in POSITIVE and node < 1):
                return False
        elif isinstance(node, float) and (node != node or node in (float("inf"), float("-inf"))):
            return False
    return True


def _number_problems(obj: Any, path: tuple = (), key: str | None = None) -> list[Problem]:
    out: list[Problem] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _number_problems(v, path + (k,), k if isinstance(k, str) else None)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _number_problems(v, path + (i,), None)
    elif is_int(obj):
        lo, hi = INT32 if key in INT32_FIELDS else INT64
        if not lo <= obj <= hi:
            out.append(problem_at(path, f"{obj} is outside the {'int32' if key in INT32_FIELDS else 'int64'} range of this field",
                          "integer-range"))
        elif key in NON_NEGATIVE and obj < 0:
            out.append(problem_at(path, f"{key} must not be negative, got {obj}", "non-negative"))
        elif key in POSITIVE and obj < 1:
            out.append(problem_at(path, f"{key} must be a positive integer, got {obj}", "positive"))
    elif isinstance(obj, float) and (obj != obj or obj in (float("inf"), float("-inf"))):
        out.append(problem_at(path, f"{obj} is not a number the API accepts", "integer-range"))
    return out


def quantity_problem(value: Any) -> str | None:
    amount = parse_quantity(value)
    if amount is None:
        return f"quantity {value!r} is not a Kubernetes quantity (e.g. 500m, 2, 1.5Gi)"
    if amount < 0:
        return f"quantity {value!r} must not be negative"
    return None

