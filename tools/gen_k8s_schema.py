#!/usr/bin/env python3
"""Generate schemas/k8s.schema.json from the installed `kubernetes` Python client.

The output is a definitions-only JSON Schema (draft 2020-12): one `$defs` entry per
Kubernetes model reachable from the types that Kubeflow jobs and JobSets embed
(PodTemplateSpec, JobTemplateSpec, JobSpec, ObjectMeta, PersistentVolumeClaim, ...).

Where the facts come from
-------------------------
* Field names and JSON names: each model class's `attribute_map` {attr: jsonName}.
* Field types: each model class's `openapi_types` {attr: type string}. Both type-string
  dialects are understood: 'list[V1Container]' / 'dict(str, str)' (urllib3-era clients)
  and 'List[V1Container]' / 'Dict[str, str]' (pydantic-era clients, >= 35).
* Required fields: what the client itself enforces. Pydantic-era models expose
  `model_fields[attr].is_required()`; older models raise ValueError from the property
  setter (`if self.local_vars_configuration.client_side_validation and x is None`), which
  we detect by reading the setter's source. Either way this is the API's OpenAPI
  `required` list, e.g. Container.name but not Container.image.

Special cases (the client types these loosely or wrongly)
---------------------------------------------------------
* Resource quantities (ResourceList values, emptyDir.sizeLimit, resourceFieldRef.divisor)
  are typed 'str' by the client, but manifests write `cpu: 1`, `nvidia.com/gpu: 1`. The pod
  templates we validate live in CRDs (the Kubeflow jobs, JobSet), whose structural schemas type
  a quantity `x-kubernetes-int-or-string` with the quantity pattern: an integer or a string
  matching QUANTITY_PATTERN. A fractional number (`cpu: 0.5`) is refused there, although a
  built-in Pod would take it (checked on the real API server: tools/validator_vs_apiserver.py).
* IntOrString fields (probe/handler ports) are typed 'object': integer or string.
* Other 'object' fields are free-form ('any', or 'object' when the client says it is a
  mapping); 'datetime' is a string; int32/int64 are both 'integer'.
* Object metadata inside templates that live in a CRD (PodTemplateSpec.metadata,
  JobTemplateSpec.metadata, PersistentVolumeClaimTemplate.metadata) keeps only name,
  namespace, labels, annotations and finalizers: that is what the structural schemas of
  CRDs carry for embedded ObjectMeta, so anything else is an unknown field to the API
  server's strict field validation. `ObjectMeta` itself (top-level metadata) is complete.

* List types: lists the API server keeps unique carry `x-kubernetes-list-type` (and
  `x-kubernetes-list-map-keys`), from the LIST_TYPES table; kf2jobset's validator enforces them.
  Map keys the API server defaults before comparing (port protocol TCP) carry a `default`.

Every object model gets `additionalProperties: false`. No descriptions are emitted.
The output is deterministic (sorted keys, sorted `required`).

Usage:  python tools/gen_k8s_schema.py [--check] [--output PATH]
"""
from __future__ import annotations

import argparse
import inspect
import json
import re
import sys
import typing
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUTPUT = REPO / "schemas" / "k8s.schema.json"
SCHEMA_ID = "https://kf2jobset.dev/schemas/k8s.schema.json"

# Types our other schemas reference (everything reachable from these is emitted).
ROOTS = (
    "V1PodTemplateSpec",
    "V1JobTemplateSpec",
    "V1JobSpec",
    "V1ObjectMeta",
    "V1PersistentVolumeClaim",
    "V1ResourceRequirements",
)

# Canonical OpenAPI names. Client class names drop the API group, so the groups of the
# non-core types we reach are listed here; any other `V1*` class is core/v1. Classes with
# another prefix must be listed (the generator refuses to guess).
CORE_V1 = "io.k8s.api.core.v1."
META_V1 = "io.k8s.apimachinery.pkg.apis.meta.v1."
BATCH_V1 = "io.k8s.api.batch.v1."
SCHEDULING_V1ALPHA3 = "io.k8s.api.scheduling.v1alpha3."
NON_CORE_NAMES = {
    "V1ObjectMeta": META_V1 + "ObjectMeta",
    "V1LabelSelector": META_V1 + "LabelSelector",
    "V1LabelSelectorRequirement": META_V1 + "LabelSelectorRequirement",
    "V1ManagedFieldsEntry": META_V1 + "ManagedFieldsEntry",
    "V1OwnerReference": META_V1 + "OwnerReference",
    "V1JobSpec": BATCH_V1 + "JobSpec",
    "V1JobTemplateSpec": BATCH_V1 + "JobTemplateSpec",
    "V1JobSchedulingConfiguration": BATCH_V1 + "JobSchedulingConfiguration",
    "V1PodFailurePolicy": BATCH_V1 + "PodFailurePolicy",
    "V1PodFailurePolicyOnExitCodesRequirement": BATCH_V1 + "PodFailurePolicyOnExitCodesRequirement",
    "V1PodFailurePolicyOnPodConditionsPattern": BATCH_V1 + "PodFailurePolicyOnPodConditionsPattern",
    "V1PodFailurePolicyRule": BATCH_V1 + "PodFailurePolicyRule",
    "V1SuccessPolicy": BATCH_V1 + "SuccessPolicy",
    "V1SuccessPolicyRule": BATCH_V1 + "SuccessPolicyRule",
    "CoreV1ResourceClaim": CORE_V1 + "ResourceClaim",
    "V1alpha3TopologyConstraint": SCHEDULING_V1ALPHA3 + "TopologyConstraint",
    "V1alpha3WorkloadPodGroupDisruptionMode": SCHEDULING_V1ALPHA3 + "WorkloadPodGroupDisruptionMode",
    "V1alpha3WorkloadPodGroupGangSchedulingPolicy": SCHEDULING_V1ALPHA3 + "WorkloadPodGroupGangSchedulingPolicy",
    "V1alpha3WorkloadPodGroupResourceClaim": SCHEDULING_V1ALPHA3 + "WorkloadPodGroupResourceClaim",
    "V1alpha3WorkloadPodGroupSchedulingConstraints": SCHEDULING_V1ALPHA3 + "WorkloadPodGroupSchedulingConstraints",
    "V1alpha3WorkloadPodGroupSchedulingPolicy": SCHEDULING_V1ALPHA3 + "WorkloadPodGroupSchedulingPolicy",
}

QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
RESOURCE_LIST = CORE_V1 + "ResourceList"
# The pattern controller-gen writes for resource.Quantity (the same in the JobSet, Training Operator
# and mpi-operator CRDs); `pattern` applies to strings only, so integers pass as they are.
QUANTITY_PATTERN = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
EMBEDDED_META = "kf2jobset.EmbeddedObjectMeta"

# (class, attribute) -> replacement kind
QUANTITY_MAPS = {
    ("V1ResourceRequirements", "limits"),
    ("V1ResourceRequirements", "requests"),
    ("V1VolumeResourceRequirements", "limits"),
    ("V1VolumeResourceRequirements", "requests"),
    ("V1PodSpec", "overhead"),
    ("V1PersistentVolumeClaimStatus", "capacity"),
    ("V1PersistentVolumeClaimStatus", "allocated_resources"),
}
QUANTITY_SCALARS = {
    ("V1EmptyDirVolumeSource", "size_limit"),
    ("V1ResourceFieldSelector", "divisor"),
}
# Known IntOrString fields; pydantic-era clients also reveal them as Union[int, str].
INT_OR_STRING_FIELDS = {
    ("V1HTTPGetAction", "port"),
    ("V1TCPSocketAction", "port"),
}
# Lists the API server keeps unique (Go `+listType=map` / `+listType=set`): a duplicate key is a
# `Duplicate value` error on CRD-embedded pod templates. Facts from the Kubernetes API types, as the
# JobSet and Kubeflow CRDs declare them (a test holds this table against the real JobSet CRD).
# (class, attribute) -> ("map", keys) | ("set", ()). Keys absent from an item take these defaults:
_CONTAINER_LISTS = {
    "env": ("map", ("name",)),
    "ports": ("map", ("containerPort", "protocol")),
    "volume_devices": ("map", ("devicePath",)),
    "volume_mounts": ("map", ("mountPath",)),
}
LIST_TYPES = {
    **{("V1Container", a): t for a, t in _CONTAINER_LISTS.items()},
    **{("V1EphemeralContainer", a): t for a, t in _CONTAINER_LISTS.items()},
    ("V1PodSpec", "containers"): ("map", ("name",)),
    ("V1PodSpec", "init_containers"): ("map", ("name",)),
    ("V1PodSpec", "ephemeral_containers"): ("map", ("name",)),
    ("V1PodSpec", "volumes"): ("map", ("name",)),
    ("V1PodSpec", "host_aliases"): ("map", ("ip",)),
    ("V1PodSpec", "image_pull_secrets"): ("map", ("name",)),
    ("V1PodSpec", "resource_claims"): ("map", ("name",)),
    ("V1PodSpec", "scheduling_gates"): ("map", ("name",)),
    ("V1PodSpec", "topology_spread_constraints"): ("map", ("topologyKey", "whenUnsatisfiable")),
    ("V1ResourceRequirements", "claims"): ("map", ("name",)),
    ("V1PodFailurePolicyOnExitCodesRequirement", "values"): ("set", ()),
    ("V1ContainerRestartRuleOnExitCodes", "values"): ("set", ()),
}
# Map keys the API server defaults before it compares items (ContainerPort.protocol: TCP).
LIST_KEY_DEFAULTS = {("V1ContainerPort", "protocol"): "TCP", ("V1LocalObjectReference", "name"): ""}

EMBEDDED_META_FIELDS = ("annotations", "finalizers", "labels", "name", "namespace")
EMBEDDED_META_OWNERS = {"V1PodTemplateSpec", "V1JobTemplateSpec", "V1PersistentVolumeClaimTemplate"}

_MODEL_RE = re.compile(r"^(?:Core)?V\d\w*$")


def canonical_name(cls_name: str) -> str:
    if cls_name in NON_CORE_NAMES:
        return NON_CORE_NAMES[cls_name]
    m = re.match(r"^V1([A-Z]\w*)$", cls_name)
    if not m:
        raise SystemExit(f"gen_k8s_schema: no API group known for client model {cls_name}; add it to NON_CORE_NAMES")
    return CORE_V1 + m.group(1)


def _ref(name: str) -> dict:
    return {"$ref": f"#/$defs/{name}"}


def _models():
    from kubernetes.client import models

    return models


def required_attrs(cls) -> set[str]:
    """Attributes the client refuses to leave unset."""
    fields = getattr(cls, "model_fields", None)
    if isinstance(fields, dict):  # pydantic-era client
        return {attr for attr, info in fields.items() if info.is_required()}
    required = set()
    for attr in cls.openapi_types:
        prop = getattr(cls, attr, None)
        setter = getattr(prop, "fset", None)
        if setter is None:
            continue
        src = inspect.getsource(setter)
        if re.search(rf"client_side_validation and {re.escape(attr)} is None", src):
            required.add(attr)
    return required


def _union_members(ann) -> set:
    """Flatten Optional/Union/Annotated into the set of member types (None dropped)."""
    if typing.get_origin(ann) is typing.Annotated:
        return _union_members(typing.get_args(ann)[0])
    if typing.get_origin(ann) is typing.Union:
        out: set = set()
        for arg in typing.get_args(ann):
            out |= _union_members(arg)
        return out
    return set() if ann is type(None) else {ann}


def _is_int_or_string_annotation(cls, attr: str) -> bool:
    fields = getattr(cls, "model_fields", None)
    if not isinstance(fields, dict) or attr not in fields:
        return False
    return _union_members(fields[attr].annotation) == {int, str}


def _is_mapping_annotation(cls, attr: str) -> bool:
    fields = getattr(cls, "model_fields", None)
    if not isinstance(fields, dict) or attr not in fields:
        return False
    return any(typing.get_origin(t) is dict for t in _union_members(fields[attr].annotation))


def type_schema(type_str: str, deps: list[str]) -> dict:
    """JSON Schema for one client type string; model names are appended to deps."""
    t = type_str.strip()
    m = re.fullmatch(r"(?:list|List)\[(.+)\]", t)
    if m:
        return {"type": "array", "items": type_schema(m.group(1), deps)}
    m = re.fullmatch(r"dict\(str, (.+)\)|Dict\[str, (.+)\]", t)
    if m:
        return {"type": "object", "additionalProperties": type_schema(m.group(1) or m.group(2), deps)}
    simple = {
        "str": {"type": "string"},
        "int": {"type": "integer"},
        "bool": {"type": "boolean"},
        "float": {"type": "number"},
        "datetime": {"type": "string", "format": "date-time"},
        "date": {"type": "string", "format": "date"},
        "object": {},
    }
    if t in simple:
        return dict(simple[t])
    if _MODEL_RE.match(t):
        deps.append(t)
        return _ref(canonical_name(t))
    raise SystemExit(f"gen_k8s_schema: unsupported client type string {type_str!r}")


def model_schema(cls_name: str, deps: list[str]) -> dict:
    models = _models()
    cls = getattr(models, cls_name)
    props: dict[str, dict] = {}
    for attr, type_str in cls.openapi_types.items():
        key = (cls_name, attr)
        json_name = cls.attribute_map[attr]
        if key in QUANTITY_MAPS:
            if not re.fullmatch(r"dict\(str, str\)|Dict\[str, str\]", type_str):
                raise SystemExit(f"gen_k8s_schema: {cls_name}.{attr} is {type_str}, expected a str map")
            props[json_name] = _ref(RESOURCE_LIST)
        elif key in QUANTITY_SCALARS:
            if type_str != "str":
                raise SystemExit(f"gen_k8s_schema: {cls_name}.{attr} is {type_str}, expected str")
            props[json_name] = _ref(QUANTITY)
        elif key in INT_OR_STRING_FIELDS or (type_str == "object" and _is_int_or_string_annotation(cls, attr)):
            props[json_name] = _ref(INT_OR_STRING)
        elif attr == "metadata" and cls_name in EMBEDDED_META_OWNERS:
            props[json_name] = _ref(EMBEDDED_META)
        elif type_str == "object" and _is_mapping_annotation(cls, attr):
            props[json_name] = {"type": "object"}
        else:
            props[json_name] = type_schema(type_str, deps)
        if key in LIST_TYPES:
            list_type, keys = LIST_TYPES[key]
            props[json_name]["x-kubernetes-list-type"] = list_type
            if keys:
                props[json_name]["x-kubernetes-list-map-keys"] = list(keys)
        if key in LIST_KEY_DEFAULTS:
            props[json_name]["default"] = LIST_KEY_DEFAULTS[key]
    schema: dict = {"type": "object", "additionalProperties": False, "properties": props}
    required = sorted(cls.attribute_map[a] for a in required_attrs(cls))
    if required:
        schema["required"] = required
    return schema


def _check_special_cases() -> None:
    models = _models()
    for cls_name, attr in QUANTITY_MAPS | QUANTITY_SCALARS | INT_OR_STRING_FIELDS | set(LIST_TYPES) | set(LIST_KEY_DEFAULTS):
        cls = getattr(models, cls_name, None)
        if cls is None or attr not in cls.openapi_types:
            raise SystemExit(f"gen_k8s_schema: special case {cls_name}.{attr} not in this client")


def build() -> dict:
    _check_special_cases()
    version = metadata.version("kubernetes")
    defs: dict[str, dict] = {}
    seen: set[str] = set()
    pending = list(ROOTS)
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        deps: list[str] = []
        defs[canonical_name(name)] = model_schema(name, deps)
        pending.extend(d for d in deps if d not in seen)

    meta = defs[canonical_name("V1ObjectMeta")]
    defs[EMBEDDED_META] = {
        "type": "object",
        "additionalProperties": False,
        "properties": {k: meta["properties"][k] for k in EMBEDDED_META_FIELDS},
    }
    defs[QUANTITY] = {"type": ["integer", "string"], "pattern": QUANTITY_PATTERN}
    defs[INT_OR_STRING] = {"type": ["integer", "string"]}
    defs[RESOURCE_LIST] = {"type": "object", "additionalProperties": _ref(QUANTITY)}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "$comment": (
            f"Generated by tools/gen_k8s_schema.py from kubernetes client {version}. Do not edit; "
            "regenerate with `python tools/gen_k8s_schema.py`. Definitions only. "
            f"{EMBEDDED_META} is the metadata that CRD schemas keep for embedded templates."
        ),
        "$defs": defs,
    }


def render(schema: dict) -> str:
    return json.dumps(schema, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--check", action="store_true", help="fail if the output file is out of date")
    args = parser.parse_args(argv)
    schema = build()
    text = render(schema)
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is out of date; run python tools/gen_k8s_schema.py", file=sys.stderr)
            return 1
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output} ({len(schema['$defs'])} definitions)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
