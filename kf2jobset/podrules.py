"""Core Kubernetes object rules the API server applies to what kf2jobset writes: object metadata
(labels, annotations, namespace, generateName), the Job template fields a child Job must pass, the
pod template inside it (container, volume and port names, mount paths, env, resource quantities),
integer ranges (int32/int64 fields), and companion ConfigMaps.

The JobSet CRD schema does not run these (a CRD only checks its OpenAPI schema), but the JobSet
controller creates the child Jobs and pods from these templates, and the API server rejects them
there; metadata is checked on the JobSet itself. The same rules are run on the v1 job's own pod
templates and metadata at the parse boundary (`check_v1_job`): a problem there is *inherited*, the
v1 API server or the operator's pods would have failed on it too.

Pure: dicts in, `Problem`s out. Facts: Kubernetes apimachinery/core validation (label and
qualified-name syntax, 256 KiB annotation total, IANA service names for ports, DNS-1123 labels for
container/volume names, resource quantity syntax).
"""
from __future__ import annotations

import re
from typing import Any

from .errors import Location, Problem

INT32 = (-(2 ** 31), 2 ** 31 - 1)
INT64 = (-(2 ** 63), 2 ** 63 - 1)
ANNOTATIONS_MAX = 256 * 1024  # total bytes of keys + values (apimachinery TotalAnnotationSizeLimitB)
CONFIGMAP_MAX = 1024 * 1024  # total bytes of data + binaryData (core MaxSecretSize/ConfigMap limit)
GENERATE_NAME_SUFFIX = 5

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUB = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_IANA_SVC = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
_CONFIGMAP_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_QUANTITY = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(([eE][+-]?[0-9]+)|(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei))?$")
_STANDARD_RESOURCES = {"cpu", "memory", "ephemeral-storage", "storage", "pods"}

# integer fields of the JobSet (and its pod templates) typed int32 in the API; any other integer is int64
INT32_FIELDS = frozenset({
    "backoffLimit", "backoffLimitPerIndex", "completions", "containerPort", "defaultMode", "failureThreshold",
    "hostPort", "initialDelaySeconds", "maxExpirationSeconds", "maxFailedIndexes", "maxRestarts", "maxSkew",
    "minDomains", "mode", "parallelism", "partition", "periodSeconds", "port", "priority", "replicas",
    "successThreshold", "timeoutSeconds", "ttlSecondsAfterFinished", "weight", "lun",
})
# integer fields that must not be negative (apps/batch/core validation), and those that must be positive.
# (Not terminationGracePeriodSeconds: the API server takes a negative one and gives the pod 1 s,
# seen on the real v1.36 server for the operator's pods and a JobSet's: tests/e2e/test_refusals.py.)
NON_NEGATIVE = frozenset({"backoffLimit", "ttlSecondsAfterFinished", "completions",
                          "parallelism", "replicas", "maxRestarts", "backoffLimitPerIndex", "maxFailedIndexes"})
POSITIVE = frozenset({"activeDeadlineSeconds"})


def _p(path: tuple, message: str, rule: str, hint: str | None = None) -> Problem:
    return Problem(message, Location(path=tuple(path)), rule=rule, hint=hint)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def qualified_name_problem(key: Any) -> str | None:
    """Why `key` is not a valid label/annotation key (prefix/name), or None."""
    if not isinstance(key, str):
        return f"key {key!r} must be a string"
    prefix, _, name = key.rpartition("/")
    if "/" in key and not prefix:
        return f"key {key!r}: prefix part must be non-empty"
    if prefix and (len(prefix) > 253 or not _DNS1123_SUB.match(prefix)):
        return f"key {key!r}: prefix must be a DNS-1123 subdomain of at most 253 characters"
    if not name or len(name) > 63 or not _QUALIFIED_NAME.match(name):
        return (f"key {key!r}: name part must be at most 63 characters of alphanumerics, '-', '_' or '.', "
                "starting and ending with an alphanumeric")
    return None


def check_labels(labels: Any, path: tuple) -> list[Problem]:
    if labels is None:
        return []
    if not isinstance(labels, dict):
        return [_p(path, "labels must be a map of strings", "labels")]
    out = []
    for key, value in labels.items():
        why = qualified_name_problem(key)
        if why:
            out.append(_p(path + (str(key),), f"label {why}", "label-key"))
        if value is None:
            continue
        if not isinstance(value, str):
            out.append(_p(path + (str(key),), f"label value {value!r} must be a string", "label-value"))
        elif len(value) > 63 or not _LABEL_VALUE.match(value):
            out.append(_p(path + (str(key),), f"label value {value[:80]!r} must be at most 63 characters of alphanumerics, "
                                              "'-', '_' or '.', starting and ending with an alphanumeric", "label-value"))
    return out


def check_annotations(annotations: Any, path: tuple) -> list[Problem]:
    if annotations is None:
        return []
    if not isinstance(annotations, dict):
        return [_p(path, "annotations must be a map of strings", "annotations")]
    out = []
    total = 0
    for key, value in annotations.items():
        why = qualified_name_problem(key)
        if why:
            out.append(_p(path + (str(key),), f"annotation {why}", "annotation-key"))
        if value is not None and not isinstance(value, str):
            out.append(_p(path + (str(key),), f"annotation value must be a string, not {type(value).__name__}", "annotation-value"))
        total += len(str(key).encode()) + len(str(value if value is not None else "").encode())
    if total > ANNOTATIONS_MAX:
        out.append(_p(path, f"annotations total {total} bytes, more than the 262144 (256 KiB) the API server accepts",
                      "annotations-size"))
    return out


def check_object_meta(meta: Any, path: tuple, *, dns1035_generate_name: bool = False) -> list[Problem]:
    """labels, annotations, namespace and generateName of an object (name rules live with the object)."""
    if meta is None:
        return []
    if not isinstance(meta, dict):
        return [_p(path, "metadata must be a map", "metadata")]
    out = check_labels(meta.get("labels"), path + ("labels",)) + check_annotations(meta.get("annotations"), path + ("annotations",))
    ns = meta.get("namespace")
    if ns not in (None, "") and (not isinstance(ns, str) or len(ns) > 63 or not _DNS1123_LABEL.match(ns)):
        out.append(_p(path + ("namespace",), f"namespace {ns!r} must be a DNS-1123 label (a-z, 0-9, '-', at most 63)", "namespace"))
    gen = meta.get("generateName")
    if gen not in (None, "") and not meta.get("name"):
        pattern = _DNS1035 if dns1035_generate_name else _DNS1123_SUB
        sample = f"{gen}x" if isinstance(gen, str) else None  # the random suffix makes a trailing '-' fine
        if sample is None or not pattern.match(sample) or len(gen) + GENERATE_NAME_SUFFIX > (63 if dns1035_generate_name else 253):
            what = "a DNS-1035 label prefix (lower-case letters, digits, '-', starting with a letter)" if dns1035_generate_name \
                else "a DNS-1123 subdomain prefix"
            out.append(_p(path + ("generateName",), f"generateName {gen!r} must be {what}, with room for 5 random characters",
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
        elif _is_int(node):
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
    elif _is_int(obj):
        lo, hi = INT32 if key in INT32_FIELDS else INT64
        if not lo <= obj <= hi:
            out.append(_p(path, f"{obj} is outside the {'int32' if key in INT32_FIELDS else 'int64'} range of this field",
                          "integer-range"))
        elif key in NON_NEGATIVE and obj < 0:
            out.append(_p(path, f"{key} must not be negative, got {obj}", "non-negative"))
        elif key in POSITIVE and obj < 1:
            out.append(_p(path, f"{key} must be a positive integer, got {obj}", "positive"))
    elif isinstance(obj, float) and (obj != obj or obj in (float("inf"), float("-inf"))):
        out.append(_p(path, f"{obj} is not a number the API accepts", "integer-range"))
    return out


def quantity_problem(value: Any) -> str | None:
    if _is_int(value):
        return None if value >= 0 else f"quantity {value} must not be negative"
    if isinstance(value, float):
        return None if value >= 0 and value == value and value != float("inf") else f"quantity {value} is invalid"
    if not isinstance(value, str) or not _QUANTITY.match(value):
        return f"quantity {value!r} is not a Kubernetes quantity (e.g. 500m, 2, 1.5Gi)"
    if value.startswith("-"):
        return f"quantity {value!r} must not be negative"
    return None


def _quantity_value(value: Any) -> float | None:
    if _is_int(value) or isinstance(value, float):
        return float(value)
    m = _QUANTITY.match(str(value))
    if not m:
        return None
    suffixes = {"m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
                "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60}
    text = str(value)
    for suffix in sorted(suffixes, key=len, reverse=True):
        if text.endswith(suffix) and not text.endswith("e" + suffix):
            return float(text[: -len(suffix)]) * suffixes[suffix]
    try:
        return float(text)
    except ValueError:
        return None


def _resource_name_problem(name: Any) -> str | None:
    if not isinstance(name, str):
        return f"resource name {name!r} must be a string"
    if name in _STANDARD_RESOURCES or name.startswith(("hugepages-", "requests.", "limits.")):
        return None
    why = qualified_name_problem(name)
    if why:
        return f"resource name {why}"
    if "/" not in name:
        return f"resource name {name!r} is not a standard resource; extended resources are domain-prefixed (e.g. nvidia.com/gpu)"
    return None


def _check_resources(res: Any, path: tuple) -> list[Problem]:
    if not isinstance(res, dict):
        return []
    out = []
    values: dict = {}
    for part in ("limits", "requests"):
        block = res.get(part)
        if not isinstance(block, dict):
            continue
        for name, value in block.items():
            where = path + (part, str(name))
            why = _resource_name_problem(name)
            if why:
                out.append(_p(where, why, "resource-name"))
                continue
            why = quantity_problem(value)
            if why:
                out.append(_p(where, why, "quantity"))
                continue
            number = _quantity_value(value)
            values[(part, name)] = number
            extended = "/" in name and not name.startswith("kubernetes.io/") and not name.startswith("requests.")
            if extended and number is not None and number != int(number):
                out.append(_p(where, f"extended resource {name} must be a whole number, got {value!r}", "quantity"))
    for (part, name), number in values.items():
        if part != "requests" or number is None:
            continue
        limit = values.get(("limits", name))
        if limit is not None and number > limit:
            out.append(_p(path + ("requests", name), f"request {name} must be less than or equal to its limit", "resources"))
        extended = "/" in name and not name.startswith("kubernetes.io/")
        if extended and limit is not None and number != limit:
            out.append(_p(path + ("requests", name), f"extended resource {name}: request must equal the limit", "resources"))
    return out


def _env_name_problem(name: Any) -> str | None:
    if not isinstance(name, str) or not name:
        return f"env name {name!r} must be a non-empty string"
    if "=" in name or not (name.isascii() and name.isprintable()):
        return f"env name {name!r} must be printable ASCII characters other than '='"
    return None


_ENV_SOURCES = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef")


def _check_container(c: Any, path: tuple, volumes: set) -> list[Problem]:
    if not isinstance(c, dict):
        return [_p(path, "a container must be a map", "container")]
    out = []
    port_names: dict = {}  # unique within a container; two containers of a pod may share one (the real API server)
    name = c.get("name")
    if not isinstance(name, str) or len(name) > 63 or not _DNS1123_LABEL.match(name):
        out.append(_p(path + ("name",), f"container name {name!r} must be a DNS-1123 label (a-z, 0-9, '-', at most 63)",
                      "container-name"))
    for i, port in enumerate(c.get("ports") or []):
        ppath = path + ("ports", i)
        if not isinstance(port, dict):
            continue
        number = port.get("containerPort")
        if not _is_int(number) or not 1 <= number <= 65535:
            out.append(_p(ppath + ("containerPort",), f"containerPort {number!r} must be between 1 and 65535", "port-number"))
        host = port.get("hostPort")
        if host is not None and (not _is_int(host) or not 0 <= host <= 65535):
            out.append(_p(ppath + ("hostPort",), f"hostPort {host!r} must be between 0 and 65535", "port-number"))
        pname = port.get("name")
        if pname not in (None, ""):
            if not isinstance(pname, str) or len(pname) > 15 or not _IANA_SVC.match(pname) or "--" in pname \
                    or not re.search("[a-z]", pname):
                out.append(_p(ppath + ("name",), f"port name {pname!r} must be an IANA service name (at most 15 lower-case "
                                                 "letters, digits and '-', with a letter, no '--')", "port-name"))
            elif pname in port_names:
                out.append(_p(ppath + ("name",), f"port name {pname!r} is used twice in the container", "port-name"))
            else:
                port_names[pname] = ppath
    for i, env in enumerate(c.get("env") or []):
        epath = path + ("env", i)
        if not isinstance(env, dict):
            continue
        why = _env_name_problem(env.get("name"))
        if why:
            out.append(_p(epath + ("name",), why, "env-name"))
        source = env.get("valueFrom")
        if source is not None:
            if env.get("value") not in (None, ""):
                out.append(_p(epath, "env may not have both value and valueFrom", "env-value-from"))
            count = sum(1 for s in _ENV_SOURCES if isinstance(source, dict) and source.get(s) is not None)
            if count != 1:
                out.append(_p(epath + ("valueFrom",), f"valueFrom must name exactly one source ({', '.join(_ENV_SOURCES[:4])}), "
                                                      f"got {count}", "env-value-from"))
    for i, mount in enumerate(c.get("volumeMounts") or []):
        mpath = path + ("volumeMounts", i)
        if not isinstance(mount, dict):
            continue
        vname = mount.get("name")
        if vname not in volumes:
            out.append(_p(mpath + ("name",), f"volumeMount {vname!r} names no volume of the pod", "volume-mount"))
        mp = mount.get("mountPath")
        if not isinstance(mp, str) or not mp:  # (duplicates: list-map keys, checked by the schema)
            out.append(_p(mpath + ("mountPath",), "volumeMount needs a mountPath", "volume-mount"))
        sub = mount.get("subPath")
        if isinstance(sub, str) and (sub.startswith("/") or ".." in sub.split("/")):
            out.append(_p(mpath + ("subPath",), f"subPath {sub!r} must be a relative path without '..'", "volume-mount"))
    out += _check_resources(c.get("resources"), path + ("resources",))
    return out


def check_pod_template(template: Any, path: tuple, added_volumes: tuple = ()) -> list[Problem]:
    """A pod template (metadata + spec) as core validation checks it when the Job creates pods.
    `added_volumes`: names the operator added to the pod before creating it (mountable by the user)."""
    if not isinstance(template, dict):
        return []
    out = check_object_meta(template.get("metadata"), path + ("metadata",))
    spec = template.get("spec")
    if not isinstance(spec, dict):
        return out
    spath = path + ("spec",)
    volumes: set = set(added_volumes)
    for i, vol in enumerate(spec.get("volumes") or []):
        if not isinstance(vol, dict):
            continue
        vname = vol.get("name")
        if not isinstance(vname, str) or len(vname) > 63 or not _DNS1123_LABEL.match(vname):
            out.append(_p(spath + ("volumes", i, "name"), f"volume name {vname!r} must be a DNS-1123 label", "volume-name"))
        if vname in added_volumes:
            out.append(_p(spath + ("volumes", i, "name"), f"volume name {vname!r} is the one the operator adds to these "
                          "pods, so the pod would list it twice", "volume-name"))
        volumes.add(vname)  # (duplicate names: a list-map key, checked by the schema)
        sources = [k for k, v in vol.items() if k != "name" and v is not None]
        if len(sources) > 1:
            out.append(_p(spath + ("volumes", i), f"a volume has one source, this one has {len(sources)} ({', '.join(map(str, sources))})",
                          "volume-source"))
    for field in ("initContainers", "containers"):  # (duplicate container names: list-map keys, the schema)
        for i, c in enumerate(spec.get(field) or []):
            out += _check_container(c, spath + (field, i), volumes)
    for field in ("hostname", "subdomain"):
        value = spec.get(field)
        if value not in (None, "") and (not isinstance(value, str) or len(value) > 63 or not _DNS1123_LABEL.match(value)):
            out.append(_p(spath + (field,), f"{field} {value!r} must be a DNS-1123 label", field))
    # (schedulerName is not checked: the API server takes any string there, tests/e2e/test_refusals.py)
    for field in ("serviceAccountName", "priorityClassName"):
        value = spec.get(field)
        if value not in (None, "") and (not isinstance(value, str) or len(value) > 253 or not _DNS1123_SUB.match(value)):
            out.append(_p(spath + (field,), f"{field} {value!r} must be a DNS-1123 subdomain", field))
    out += check_labels(spec.get("nodeSelector"), spath + ("nodeSelector",))
    return out


def check_jobset_objects(jobset: dict) -> list[Problem]:
    """The core rules on a JobSet: its metadata, numbers, and each child Job's template and pods."""
    out = check_object_meta(jobset.get("metadata"), ("metadata",), dns1035_generate_name=True)
    out += check_numbers(jobset.get("spec"), ("spec",))
    spec = jobset.get("spec") or {}
    for i, rj in enumerate(spec.get("replicatedJobs") or []):
        if not isinstance(rj, dict):
            continue
        template = rj.get("template") or {}
        tpath = ("spec", "replicatedJobs", i, "template")
        out += check_object_meta(template.get("metadata"), tpath + ("metadata",))
        job_spec = template.get("spec") or {}
        out += check_pod_template(job_spec.get("template"), tpath + ("spec", "template"))
    return out


def check_configmap(cm: dict, path: tuple = ()) -> list[Problem]:
    """A companion ConfigMap as the API server validates it."""
    meta = cm.get("metadata") or {}
    out = []
    name = meta.get("name")
    if not isinstance(name, str) or len(name) > 253 or not _DNS1123_SUB.match(name):
        out.append(_p(path + ("metadata", "name"), f"ConfigMap name {name!r} must be a DNS-1123 subdomain", "configmap-name"))
    out += check_object_meta(meta, path + ("metadata",))
    total = 0
    for field in ("data", "binaryData"):
        block = cm.get(field)
        if block is None:
            continue
        if not isinstance(block, dict):
            out.append(_p(path + (field,), f"{field} must be a map", "configmap-data"))
            continue
        for key, value in block.items():
            if not isinstance(key, str) or len(key) > 253 or not _CONFIGMAP_KEY.match(key) or key in (".", ".."):
                out.append(_p(path + (field, str(key)), f"ConfigMap key {key!r} must be alphanumerics, '-', '_' or '.'", "configmap-key"))
            if not isinstance(value, str):
                out.append(_p(path + (field, str(key)), "ConfigMap values must be strings", "configmap-data"))
                continue
            total += len(value.encode())
    if total > CONFIGMAP_MAX:
        out.append(_p(path + ("data",), f"ConfigMap data is {total} bytes, more than 1 MiB", "configmap-size"))
    return out


INHERITED = " (inherited: the v1 API server or the operator's pods rejected this too)"


def _operator_pod_name(job_name: str, rtype: str) -> str:
    """The name the Training Operator (and mpi-operator) gives pod 0 of a replica type: job-type-0,
    the type lower-cased, '/' made '-'."""
    return f"{job_name}-{rtype.lower()}-0".replace("/", "-")


def check_v1_job(doc: dict, mapping) -> list[Problem]:
    """The same rules on a v1 job's pods as the operator made them (its template plus the volumes
    the operator added, under the names it gave them): what fails here failed under v1 too
    (inherited). Replica specs the operator made no pods for (mapping `unknownReplicaTypes: ignore`)
    get only the numeric checks. See `run_policy_problems` for spec.runPolicy."""
    field = mapping.replica_specs_field
    meta = doc.get("metadata")
    out = check_object_meta(meta, ("metadata",))
    name = (meta.get("name") if isinstance(meta, dict) else None) or "x"
    spec = doc.get("spec") or {}
    specs = spec.get(field)
    if isinstance(specs, dict):
        for key, raw in specs.items():
            if isinstance(raw, dict):
                rpath = ("spec", field, key)
                out += check_numbers(raw.get("template"), rpath + ("template",))
                if key not in mapping.known_types and mapping.unknown_replica_types == "ignore":
                    continue
                pod = _operator_pod_name(str(name), str(key))
                if len(pod) <= 253 and not _DNS1123_SUB.match(pod):
                    out.append(_p(rpath, f"replica type {key!r}: the operator names its pods {pod[:-2]}-<index>, which is "
                                         "not a DNS-1123 subdomain", "replica-type-name"))
                out += check_pod_template(raw.get("template"), rpath + ("template",), mapping.operator_volumes.get(key, ()))
    for p in out:
        p.message += INHERITED
    return out + run_policy_problems(doc)[0]


def run_policy_problems(doc: dict) -> tuple[list[Problem], list[Problem]]:
    """Numbers of spec.runPolicy, which the JobSet's child Jobs carry, as (what v1 refused too, what
    only the JobSet refuses). Facts from the real operator (tests/e2e/test_refusals.py): the v1 CRD
    rejects a number outside its int32/int64 field; a negative backoffLimit is accepted, but the
    operator fails the job at once, before it creates a pod; a non-positive activeDeadlineSeconds is
    accepted and the pods are created (the job then fails at its deadline)."""
    inherited, jobset_only = [], []
    for p in check_numbers((doc.get("spec") or {}).get("runPolicy"), ("spec", "runPolicy")):
        if p.rule == "integer-range":
            p.message += INHERITED
            inherited.append(p)
        elif p.location.path[-1] == "backoffLimit":
            p.message += " (inherited: the v1 operator failed such a job at once, before creating a pod)"
            inherited.append(p)
        else:
            p.message += " (the JobSet carries it, and the API server rejects it there; the v1 operator accepted it)"
            jobset_only.append(p)
    return inherited, jobset_only
