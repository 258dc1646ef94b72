"""What each stand-in must look like where it lands: found by parsing a rendered variant and reading
kf2jobset's schemas at the place each token sits.

* A scalar token where the job holds an integer (or a quantity) becomes a number; where it holds a
  boolean or one of a set of words (`restartPolicy`), the two token sets write two different values of
  that type, and the conversion of the two is compared line by line (the differing lines are where the
  value went).
* A YAML-lines action stands in as one line: an entry `token: token` in a map of strings (labels,
  annotations, nodeSelector), an item `- {…}` of the list it extends (tolerations, volumes, env …),
  or one field of the object it is the whole value of (`securityContext`, `affinity`, `resources`),
  each written in flow style on one line, holding a token so it is found again. Inside a block scalar
  it is a line of text.

Pure: text and plans in, plans out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urljoin
from ...k8s import podrules
from ...mappings import convertible_mapping
from ...k8s.schemas import BASE_URI, schema_documents, schema_name_for
from ...upgrade import v1_path

TOKEN_RE = re.compile(r"kfq[ab][0-9]{4}z")


@dataclass(frozen=True)
class Seen:
    token: str
    path: tuple
    role: str  # key, value (the whole scalar), part (inside a longer string)
    doc: int  # index of the document in the rendered text
    style: str | None = None  # the scalar's quoting as written ('' plain, '"', "'", '|', '>')


def locate(text: str) -> tuple[list, list]:
    """(documents as (apiVersion, kind), every token occurrence) of a rendered variant."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    docs, seen = [], []
    for i, root in enumerate(yaml.compose_all(text, Loader=loader)):
        head = {}
        if root is not None and type(root).__name__ == "MappingNode":
            head = {k.value: v.value for k, v in root.value
                    if type(k).__name__ == "ScalarNode" and type(v).__name__ == "ScalarNode"}
        docs.append((head.get("apiVersion"), head.get("kind")))
        if root is not None:
            _walk(root, (), i, seen)
    return docs, seen


def _walk(node, path, doc, seen):
    kind = type(node).__name__
    if kind == "MappingNode":
        for k, v in node.value:
            key = getattr(k, "value", None)
            if isinstance(key, str):
                for t in TOKEN_RE.findall(key):
                    seen.append(Seen(t, path + (key,), "key", doc, k.style or ""))
            _walk(v, path + (key,), doc, seen)
    elif kind == "SequenceNode":
        for i, v in enumerate(node.value):
            _walk(v, path + (i,), doc, seen)
    elif kind == "ScalarNode":
        for t in TOKEN_RE.findall(node.value):
            seen.append(Seen(t, path, "value" if node.value == t else "part", doc, node.style or ""))


# ---- kf2jobset's schemas, read at a path -------------------------------------------------------------

def job_path(api_version, kind, path: tuple) -> tuple | None:
    """Where `path` of a document of that apiVersion/kind sits in the job kf2jobset reads it as: itself, or for an
    older apiVersion the v1 field it is upgraded to (None: no one field)."""
    if not (isinstance(api_version, str) and isinstance(kind, str)) or schema_name_for(api_version, kind) is not None:
        return path
    mapping = convertible_mapping(api_version, kind)
    return path if mapping is None else v1_path(mapping, api_version, path)


def schema_at(api_version, kind, path: tuple) -> dict | None:
    """The schema of the value at `path` in a document of that apiVersion/kind (None: unknown); an older
    apiVersion's field has the schema of the v1 field it is read as."""
    name = schema_name_for(api_version, kind) if isinstance(api_version, str) and isinstance(kind, str) else None
    if name is None:
        mapping = convertible_mapping(api_version, kind) if isinstance(api_version, str) and isinstance(kind, str) else None
        path = v1_path(mapping, api_version, path) if mapping is not None else None
        if path is None:
            return None
        name = mapping.schema
    docs = schema_documents()
    base = BASE_URI + name + ".schema.json"
    node = docs.get(base)
    for part in path:
        node, base = _resolved(node, base, docs)
        if not isinstance(node, dict):
            return None
        if isinstance(part, int):
            node = node.get("items")
        else:
            props = node.get("properties") or {}
            node = props.get(part) if part in props else node.get("additionalProperties")
        if not isinstance(node, dict):
            return None
    node, _ = _resolved(node, base, docs)
    return node


def _resolved(node, base: str, docs: dict):
    seen = 0
    while isinstance(node, dict) and "$ref" in node and seen < 20:
        ref = urljoin(base, node["$ref"])
        uri, _, pointer = ref.partition("#")
        doc = docs.get(uri)
        target = doc
        for part in [p for p in pointer.split("/") if p]:
            target = target.get(part) if isinstance(target, dict) else None
        node, base, seen = target, uri, seen + 1
    return node, base


def types(schema: dict | None) -> set:
    t = (schema or {}).get("type")
    return set(t) if isinstance(t, list) else {t} if t else set()


def is_string_map(schema: dict | None) -> bool:
    extra = (schema or {}).get("additionalProperties")
    return "object" in types(schema) and not (schema or {}).get("properties") and isinstance(extra, dict) \
        and "string" in types(extra)


# ---- one-line stand-ins for YAML-lines actions -------------------------------------------------------

# minimal valid instances of the list items and objects charts fill with toYaml/include (a field holds
# the token); anything else found by walking the schema for a string field
_KNOWN = {
    "io.k8s.api.core.v1.Volume": "{{name: {t}, emptyDir: {{}}}}",
    "io.k8s.api.core.v1.VolumeMount": "{{name: {t}, mountPath: /{t}}}",
    "io.k8s.api.core.v1.EnvVar": "{{name: {t}, value: {t}}}",
    "io.k8s.api.core.v1.Toleration": "{{key: {t}, operator: Exists}}",
    "io.k8s.api.core.v1.LocalObjectReference": "{{name: {t}}}",
    "io.k8s.api.core.v1.EnvFromSource": "{{configMapRef: {{name: {t}}}}}",
    "io.k8s.api.core.v1.HostAlias": "{{ip: 127.0.0.1, hostnames: [{t}]}}",
    "io.k8s.api.core.v1.TopologySpreadConstraint":
        "{{maxSkew: 1, topologyKey: {t}, whenUnsatisfiable: ScheduleAnyway}}",
}


def block_line(parent: dict | None, whole_value: bool, item: bool) -> str | None:
    """The one stand-in line (with `{t}` for the token, `{T}` upper-cased) for YAML lines that extend or
    fill a value of schema `parent` (None: no stand-in can be written there)."""
    if parent is None:
        return None
    if is_string_map(parent):
        return "{t}: {t}"
    if "array" in types(parent) or item:
        flow = _flow(parent.get("items") if "array" in types(parent) else parent)
        return f"- {flow}" if flow else None
    if whole_value and "object" in types(parent):
        for name, prop in sorted((parent.get("properties") or {}).items(), key=lambda kv: _field_order(kv[0])):
            flow = _flow(prop, depth=1)
            if flow:
                return f"{name}: {flow}"
    return None


def _field_order(name: str) -> tuple:
    preferred = ("seLinuxOptions", "nodeAffinity", "claims", "capabilities", "labels")
    return (preferred.index(name) if name in preferred else len(preferred), name)


def _flow(schema, depth: int = 0) -> str | None:
    """A flow-style value of the schema holding the token, or None."""
    if not isinstance(schema, dict) or depth > 4:
        return None
    ref = schema.get("$ref", "")
    name = ref.rpartition("/")[2]
    if name in _KNOWN:
        return _KNOWN[name]
    node, _ = _resolved(schema, BASE_URI + "k8s.schema.json", schema_documents())
    if not isinstance(node, dict):
        return None
    if is_string_map(node):
        return "{{{t}: {t}}}"
    if types(node) == {"string"} and not node.get("enum") and not node.get("format"):
        return "{t}"
    if "array" in types(node):
        inner = _flow(node.get("items"), depth + 1)
        return f"[{inner}]" if inner else None
    if "object" in types(node):
        required = node.get("required") or []
        props = node.get("properties") or {}
        names = required or [n for n, _ in sorted(props.items(), key=lambda kv: _field_order(kv[0]))]
        for pname in names:
            inner = _flow(props.get(pname), depth + 1)
            if inner:
                if required and len(required) > 1:
                    return None  # more than one field needed: not written here
                return f"{{{{{pname}: {inner}}}}}"
    return None


def scalar_kind(schema: dict | None) -> str:
    """How a scalar token stands in at a place of that schema: string, number, boolean, or enum."""
    t = types(schema)
    if not t or "string" in t and "integer" not in t and not (schema or {}).get("enum"):
        return "string"
    if "integer" in t or "number" in t:
        return "number"
    if t == {"boolean"}:
        return "boolean"
    if (schema or {}).get("enum"):
        return "enum"
    return "string"


def choices(schema: dict | None, path: tuple) -> tuple:
    """The words a field takes when it is one of a few (a boolean, an enum of the schema, or one of the API
    server's enums kf2jobset checks: imagePullPolicy, dnsPolicy, protocol, terminationMessagePolicy)."""
    if types(schema) == {"boolean"}:
        return ("true", "false")
    enum = (schema or {}).get("enum")
    if enum and len(enum) > 1 and all(isinstance(e, str) for e in enum):
        return tuple(enum)
    last = path[-1] if path else None
    table = {"imagePullPolicy": podrules.IMAGE_PULL_POLICIES, "dnsPolicy": podrules.DNS_POLICIES,
             "protocol": podrules.PROTOCOLS, "terminationMessagePolicy": podrules.TERMINATION_MESSAGE_POLICIES}
    return tuple(table.get(last, ()))


# a plain scalar of numbers joined by colons, alone on its line after a key or a dash
_NUMBERS_AND_COLONS = re.compile(r"^([ \t]*(?:-[ \t]+)?(?:[\w./-]+:[ \t]+)?)([0-9]+(?::[0-9]+)+)[ \t]*$", re.M)


def quoted_colon_numbers(text: str, numbers: set) -> str:
    """Plain scalars of numbers and colons that hold a number stand-in (`601:613`, a PyTorch node range), in
    double quotes: YAML 1.1 reads such a scalar as a base-60 integer for some values (`1:4`), where the writer
    quotes it; quoted, it is the same string for every value."""
    def quoted(m: re.Match) -> str:
        held = any(part in numbers for part in m.group(2).split(":"))
        return f'{m.group(1)}"{m.group(2)}"' if held else m.group(0)

    return _NUMBERS_AND_COLONS.sub(quoted, text) if ":" in text else text
