"""JSON Schemas compiled into yes/no checks: the fast path of `schemas.validate`.

jsonschema walks a schema afresh for every instance and builds an error object for every keyword;
a converted JobSet passes ~3,000 keyword checks, so validation cost more than the conversion. Here
each schema is compiled once into nested closures that only answer "valid?". An instance they
accept is valid; anything else (invalid, or a shape they are not sure about) is handed to
jsonschema, which produces the messages. So errors stay jsonschema's, and the two must agree on
validity (tests/test_schema_fast_path.py holds them to it).

Exactly the keywords of Draft 2020-12 used by schemas/ are compiled, with jsonschema's semantics
(bool is not an integer, 1.0 is, `pattern` is re.search, a keyword applies only to instances of its
type) except where the API server decides otherwise, and then as it does (schemas.py uses the same
two functions): `integer` is `is_integer` (int64 range, go-openapi's float rule) and a `pattern`
is read as Go reads it (`go_pattern`); a schema with any other assertion keyword is not compiled (None: always jsonschema).
Instances are read as `normalise` (below) leaves them: a mapping entry whose value is null is
absent. Non-string keys and dates raise Unsure (the slow path normalises them).
"""
from __future__ import annotations

import datetime as _dt
import json
import re
from typing import Any, Callable
from urllib.parse import unquote, urldefrag, urljoin

Check = Callable[[Any], bool]
_DATES = (_dt.date, _dt.datetime)  # the slow path turns them into ISO strings first

# Keywords that assert nothing (annotations) or that another keyword reads.
_IGNORED = frozenset({"$schema", "$id", "$defs", "$comment", "title", "description", "default", "examples",
                      "format", "x-kubernetes-list-map-keys", "deprecated", "readOnly", "writeOnly"})


class Unsure(Exception):
    """The fast path cannot decide this instance exactly; ask jsonschema."""


class NotCompilable(Exception):
    """The schema uses a keyword the fast path does not implement."""


_INT64 = (-(2 ** 63), 2 ** 63 - 1)
_MAX_SAFE = float(2 ** 53 - 1)  # go-openapi/swag maxJSONFloat


def is_integer(v) -> bool:
    """`type: integer` as the API server's OpenAPI validator (kube-openapi) decides it. Its JSON
    decoder keeps an integer literal as int64 when it fits and reads anything else as float64; a
    float64 is an integer when it is whole and within +-(2^53 - 1) (go-openapi/swag's
    IsFloat64AJSONInteger for the type, then a range check that re-parses it as an int64)."""
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        if _INT64[0] <= v <= _INT64[1]:
            return True
        try:
            v = float(v)
        except OverflowError:
            return False
    if not isinstance(v, float):
        return False
    return -_MAX_SAFE <= v <= _MAX_SAFE and v == int(v)


def go_pattern(pattern: str) -> str:
    """A regular expression as Go's RE2 (the API server) reads it, for Python's `re`: `$` outside
    a character class means the end of the text (Python's `$` also matches before a final newline,
    so "a\\n" would pass `^[a-z]+$`)."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "]":  # a leading ] is a literal inside the class
                out.append("[]")
                i += 2
                continue
        elif c == "$":
            c = r"\Z"
        out.append(c)
        i += 1
    return "".join(out)


def _is_number(v) -> bool:
    import numbers

    return not isinstance(v, bool) and isinstance(v, numbers.Number)


_CLASSES = {"object": dict, "array": list, "string": str, "boolean": bool}
_TYPES: dict[str, Callable[[Any], bool]] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": is_integer,
    "number": _is_number,
}


def _equal(one, two) -> bool:
    """jsonschema's `equal`: True is not 1, recursively."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return one == two
    if isinstance(one, list) and isinstance(two, list):
        return len(one) == len(two) and all(_equal(a, b) for a, b in zip(one, two, strict=False))
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(_equal(one[k], two[k]) for k in one)
    if isinstance(one, bool) or isinstance(two, bool):
        return type(one) is type(two) and one == two
    return one == two


def _present(instance: dict):
    """(key, value) pairs as the normalised instance has them: null values dropped."""
    for k, v in dict.items(instance):  # not the subclass's view: ruamel's CommentedMap iterates slowly
        if v is None:
            continue
        if not isinstance(k, str) or isinstance(v, _DATES):
            raise Unsure
        yield k, v


class Compiler:
    """Compiles schemas of one registry ({uri: contents}); `$ref`s are resolved lazily, so recursive
    definitions compile."""

    def __init__(self, documents: dict[str, Any]):
        self.documents = documents
        self._compiled: dict[tuple[str, int], Check] = {}

    def compile_uri(self, uri: str) -> Check:
        base, fragment = urldefrag(uri)
        return self.compile(self._resolve_pointer(self.documents[base], fragment), base)

    def _resolve_pointer(self, doc, fragment: str):
        node = doc
        for part in [p for p in fragment.split("/") if p]:
            part = unquote(part).replace("~1", "/").replace("~0", "~")
            node = node[int(part)] if isinstance(node, list) else node[part]
        return node

    def resolve_ref(self, ref: str, base: str) -> tuple[Any, str]:
        target = urljoin(base, ref)
        doc_uri, fragment = urldefrag(target)
        if doc_uri not in self.documents:
            raise NotCompilable(f"unknown $ref {ref}")
        return self._resolve_pointer(self.documents[doc_uri], fragment), doc_uri

    def compile(self, schema, base: str) -> Check:
        key = (base, id(schema))
        found = self._compiled.get(key)
        if found is not None:
            return found
        if schema is True:
            check: Check = lambda v: True  # noqa: E731
        elif schema is False:
            check = lambda v: False  # noqa: E731
        elif isinstance(schema, dict):
            # Placeholder first: a recursive $ref reaching this schema calls through it.
            cell: list[Check] = []
            self._compiled[key] = lambda v: cell[0](v)
            check = self._compile_object(schema, base)
            cell.append(check)
        else:
            raise NotCompilable(f"schema of type {type(schema).__name__}")
        self._compiled[key] = check
        return check

    def _compile_object(self, schema: dict, base: str) -> Check:
        base = urljoin(base, schema["$id"]) if isinstance(schema.get("$id"), str) else base
        type_classes = self._type_classes(schema["type"]) if "type" in schema else None
        type_test = self._k_type(schema["type"], schema, base) if "type" in schema and type_classes is None else None
        required = tuple(schema.get("required") or ())
        properties = self._object_properties(schema, base) \
            if any(k in schema for k in ("properties", "additionalProperties", "patternProperties")) else None
        rest = self._other_keywords(schema, base)

        # One function per schema, keywords inlined: calls and generators dominate the cost.
        def check(v):
            if type_classes is not None:
                if not isinstance(v, type_classes):
                    return False
            elif type_test is not None and not type_test(v):
                return False
            if isinstance(v, dict):
                for name in required:
                    if dict.get(v, name) is None:
                        return False
                if properties is not None and not properties(v):
                    return False
            for c in rest:
                if not c(v):
                    return False
            return True

        if "type" in schema and not required and properties is None and not rest:
            return self._k_type(schema["type"], schema, base)
        return check

    def _other_keywords(self, schema: dict, base: str) -> tuple[Check, ...]:
        """A check for each asserting keyword the object checker does not inline; NotCompilable for one
        the fast path does not implement."""
        others: list[Check] = []
        for keyword, value in schema.items():
            if keyword in _IGNORED or (keyword.startswith("x-") and keyword != "x-kubernetes-list-type"):
                continue
            if keyword in ("type", "required", "properties", "additionalProperties", "patternProperties"):
                continue  # compiled into the object checker
            maker = getattr(self, "_k_" + keyword.replace("-", "_").replace("$", ""), None)
            if maker is None:
                raise NotCompilable(keyword)
            others.append(maker(value, schema, base))
        return tuple(others)

    # ---- keywords

    def _k_ref(self, ref, schema, base) -> Check:
        # Compiled now: a recursive definition meets compile()'s placeholder instead of looping.
        target, target_base = self.resolve_ref(ref, base)
        return self.compile(target, target_base)

    def _type_classes(self, value):
        """The Python classes `type` means, when isinstance alone decides it (not for numbers: bool)."""
        names = value if isinstance(value, list) else [value]
        if all(n in _CLASSES for n in names):
            return tuple(_CLASSES[n] for n in names)
        return None

    def _k_type(self, value, schema, base) -> Check:
        names = value if isinstance(value, list) else [value]
        try:
            tests = tuple(_TYPES[n] for n in names)
        except KeyError as exc:
            raise NotCompilable(f"type {exc}") from None
        if len(tests) == 1:
            return tests[0]
        return lambda v: any(t(v) for t in tests)

    def _k_const(self, value, schema, base) -> Check:
        if isinstance(value, str):
            return lambda v: isinstance(v, str) and v == value
        return lambda v: _equal(v, value)

    def _k_enum(self, value, schema, base) -> Check:
        if all(isinstance(e, str) for e in value):
            allowed = frozenset(value)
            return lambda v: isinstance(v, str) and v in allowed
        values = list(value)
        return lambda v: any(_equal(v, e) for e in values)

    def _k_required(self, value, schema, base) -> Check:
        names = tuple(value)
        return lambda v: not isinstance(v, dict) or all(dict.get(v, n) is not None for n in names)

    def _k_minProperties(self, value, schema, base) -> Check:
        return lambda v: not isinstance(v, dict) or sum(1 for _ in _present(v)) >= value

    def _k_minimum(self, value, schema, base) -> Check:
        return lambda v: not _is_number(v) or v >= value

    def _k_maximum(self, value, schema, base) -> Check:
        return lambda v: not _is_number(v) or v <= value

    def _k_maxItems(self, value, schema, base) -> Check:
        return lambda v: not isinstance(v, list) or len(v) <= value

    def _k_minItems(self, value, schema, base) -> Check:
        return lambda v: not isinstance(v, list) or len(v) >= value

    def _k_maxLength(self, value, schema, base) -> Check:
        return lambda v: not isinstance(v, str) or len(v) <= value

    def _k_minLength(self, value, schema, base) -> Check:
        return lambda v: not isinstance(v, str) or len(v) >= value

    def _k_pattern(self, value, schema, base) -> Check:
        search = re.compile(go_pattern(value)).search
        return lambda v: not isinstance(v, str) or search(v) is not None

    def _k_items(self, value, schema, base) -> Check:
        if "prefixItems" in schema:
            raise NotCompilable("prefixItems")
        item = self.compile(value, base)

        def check(v):
            if not isinstance(v, list):
                return True
            for x in v:
                if isinstance(x, _DATES):
                    raise Unsure
                if not item(x):
                    return False
            return True

        return check

    def _k_anyOf(self, value, schema, base) -> Check:
        subs = tuple(self.compile(s, base) for s in value)
        return lambda v: any(s(v) for s in subs)

    def _k_oneOf(self, value, schema, base) -> Check:
        subs = tuple(self.compile(s, base) for s in value)
        return lambda v: sum(1 for s in subs if s(v)) == 1

    def _k_allOf(self, value, schema, base) -> Check:
        subs = tuple(self.compile(s, base) for s in value)
        return lambda v: all(s(v) for s in subs)

    def _k_x_kubernetes_list_type(self, list_type, schema, base) -> Check:
        if list_type == "set":
            return _unique_set
        if list_type != "map":
            return lambda v: True
        keys = tuple(schema.get("x-kubernetes-list-map-keys") or [])
        defaults = self._key_defaults(schema, keys, base)

        def check(v):
            if not isinstance(v, list):
                return True
            seen = set()
            for item in v:
                if not isinstance(item, dict):
                    continue
                marker = _simple_map_key(item, keys, defaults)
                if marker is None:
                    marker = _json_map_key(item, keys, defaults)
                if marker in seen:
                    return False
                seen.add(marker)
            return True

        return check

    def _key_defaults(self, schema, keys, base) -> dict:
        items = schema.get("items") or {}
        if isinstance(items, dict) and "$ref" in items:
            try:
                items, _ = self.resolve_ref(items["$ref"], base)
            except (NotCompilable, KeyError, IndexError, ValueError):
                return {}
        props = (items.get("properties") or {}) if isinstance(items, dict) else {}
        return {k: props[k]["default"] for k in keys if "default" in (props.get(k) or {})}

    def _object_properties(self, schema, base) -> Check:
        props = {name: self.compile(sub, base) for name, sub in (schema.get("properties") or {}).items()}
        patterns = [(re.compile(go_pattern(p)).search, self.compile(sub, base))
                    for p, sub in (schema.get("patternProperties") or {}).items()]
        extra_schema = schema.get("additionalProperties", True)
        extra = None if extra_schema is True else self.compile(extra_schema, base)

        def check(v):
            for k, value in dict.items(v):  # not the subclass's view: ruamel's CommentedMap iterates slowly
                if value is None:
                    continue  # absent once normalised
                if not isinstance(k, str) or isinstance(value, _DATES):
                    raise Unsure
                sub = props.get(k)
                matched = False
                for search, pattern_check in patterns:
                    if search(k):
                        matched = True
                        if not pattern_check(value):
                            return False
                if sub is not None:
                    if not sub(value):
                        return False
                elif extra is not None and not matched and not extra(value):
                    return False
            return True

        return check



def _unique_set(v) -> bool:
    """x-kubernetes-list-type set: no two items alike once normalised."""
    if not isinstance(v, list):
        return True
    seen = set()
    for item in v:
        marker = json.dumps(normalise(item), sort_keys=True, separators=(",", ":"), default=str)
        if marker in seen:
            return False
        seen.add(marker)
    return True


def _simple_map_key(item: dict, keys: tuple, defaults: dict) -> tuple | None:
    """A list-map item's key values when each is a string or an integer: the same duplicates as their JSON
    text, without encoding it (the common case). None when a key holds anything else."""
    ident = {}
    for k in keys:  # as on the normalised item: a null key is absent, then defaulted
        value = dict.get(item, k)
        if value is None:
            if k not in defaults:
                continue
            value = defaults[k]
        if isinstance(value, str):
            ident[k] = (0, str(value))
        elif isinstance(value, int) and not isinstance(value, bool):
            ident[k] = (1, int(value))
        else:
            if isinstance(value, _DATES):
                raise Unsure  # normalised to text, it could equal another item's string
            return None
    return tuple(sorted(ident.items()))


def _json_map_key(item: dict, keys: tuple, defaults: dict) -> str:
    """A list-map item's key values, normalised, as JSON text (never equal to a `_simple_map_key` tuple)."""
    ident = {}
    for k in keys:
        value = dict.get(item, k)
        if value is not None:
            ident[k] = normalise(value)
        elif k in defaults:
            ident[k] = defaults[k]
    return json.dumps(ident, sort_keys=True, separators=(",", ":"), default=str)


def normalise(value: Any) -> Any:
    """The instance as the API server's decoder sees it: null mapping values dropped, dates as ISO
    strings, keys as strings."""
    if isinstance(value, dict):
        return {_key(k): normalise(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    if isinstance(value, _DATES):
        return value.isoformat()
    return value


def _key(k: Any) -> str:
    if isinstance(k, str):
        return k
    if isinstance(k, bool):
        return "true" if k else "false"
    return str(k)
