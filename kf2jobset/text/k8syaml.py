"""How Kubernetes reads a YAML scalar, where that differs from kf2jobset's own (YAML 1.2) reading.

kubectl and the API server decode YAML with a YAML 1.1 resolver (sigs.k8s.io/yaml, built on
go-yaml v2); ruamel.yaml reads YAML 1.2. For plain (unquoted) scalars the two disagree on:

- booleans: `y`, `yes`, `on`, `n`, `no`, `off` (in their lower/Capital/UPPER spellings) are
  booleans to Kubernetes and strings to YAML 1.2;
- integers with a leading zero: `010` is octal (8) to Kubernetes and decimal (10) to YAML 1.2;
  `09` is not valid octal, so Kubernetes falls back to the float 9 (same number).

Quoted scalars are strings for both. The check works on ruamel round-trip trees: a value of the
exact type `str` came from a plain scalar (quoted ones load as ScalarString subclasses when
`preserve_quotes` is on, as in kf2jobset.text.yamlio), and a `ScalarInt` remembers its zero-padded
width. The same rules tell how Kubernetes will read a tree that kf2jobset is about to write,
because the writer keeps plain strings plain and ints at their width.

Pure: no I/O, no ruamel import needed (types are recognised by duck typing).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import InvalidJobError, Location, Problem

TRUE_WORDS = frozenset({"y", "Y", "yes", "Yes", "YES", "on", "On", "ON"})
FALSE_WORDS = frozenset({"n", "N", "no", "No", "NO", "off", "Off", "OFF"})


@dataclass(frozen=True)
class Reading:
    """A scalar that Kubernetes reads differently from YAML 1.2."""

    path: tuple  # path inside the document; a key's own path ends with the key
    text: str  # the scalar as written
    yaml12: Any  # what kf2jobset (YAML 1.2) read
    kubernetes: Any  # what Kubernetes (YAML 1.1) reads
    kind: str  # "bool" | "octal" | "key"

    def describe(self) -> str:
        what = {"bool": "the boolean", "octal": "the number", "key": "the key"}[self.kind]
        k = self.kubernetes
        shown = str(k).lower() if isinstance(k, bool) else repr(k) if self.kind == "key" else str(k)
        mine = f"{self.yaml12!r}" if isinstance(self.yaml12, str) else str(self.yaml12)
        return f"`{self.text}` is {what} {shown} to Kubernetes (YAML 1.1), not {mine}"


def _is_plain_str(value: Any) -> bool:
    return type(value) is str


def bool_reading(text: str) -> bool | None:
    if text in TRUE_WORDS:
        return True
    if text in FALSE_WORDS:
        return False
    return None


def int_text(value: Any) -> str | None:
    """The text a ruamel ScalarInt was written as (zero padding kept), or None."""
    width = getattr(value, "_width", None)
    if width is None or isinstance(value, bool) or not isinstance(value, int):
        return None
    if type(value).__name__ != "ScalarInt":  # OctalInt/HexInt/BinaryInt are read alike
        return None
    digits = str(abs(int(value))).replace("_", "")
    sign = "-" if value < 0 else ""
    return sign + digits.zfill(width - len(sign))


def octal_reading(value: Any) -> tuple[str, int | float] | None:
    """(`010`, 8) for a zero-padded ScalarInt that Kubernetes reads as octal."""
    text = int_text(value)
    if text is None:
        return None
    digits = text.lstrip("+-")
    if len(digits) < 2 or not digits.startswith("0"):
        return None
    sign = -1 if text.startswith("-") else 1
    if all(c in "01234567" for c in digits):
        k8s = sign * int(digits, 8)
    else:
        k8s = sign * int(digits)  # 09: no octal, Kubernetes falls back to the same number (as a float)
    if k8s == int(value):
        return None
    return text, k8s


def readings(tree: Any, path: tuple = ()) -> list[Reading]:
    """Every plain scalar (value or key) in `tree` whose Kubernetes reading differs, in document order."""
    out: list[Reading] = []
    if isinstance(tree, dict):
        for key, value in tree.items():
            if _is_plain_str(key) and bool_reading(key) is not None:
                out.append(Reading(path + (key,), key, key, str(bool_reading(key)).lower(), "key"))
            out += readings(value, path + (key,))
    elif isinstance(tree, list):
        for i, value in enumerate(tree):
            out += readings(value, path + (i,))
    elif _is_plain_str(tree):
        b = bool_reading(tree)
        if b is not None:
            out.append(Reading(path, tree, tree, b, "bool"))
    else:
        o = octal_reading(tree)
        if o is not None:
            out.append(Reading(path, o[0], int(tree), o[1], "octal"))
    return out


def kubernetes_value(tree: Any) -> Any:
    """A plain copy of `tree` with every scalar replaced by what Kubernetes reads."""
    if isinstance(tree, dict):
        out = {}
        for key, value in tree.items():
            if _is_plain_str(key) and bool_reading(key) is not None:
                key = str(bool_reading(key)).lower()
            out[key] = kubernetes_value(value)
        return out
    if isinstance(tree, list):
        return [kubernetes_value(v) for v in tree]
    if _is_plain_str(tree):
        b = bool_reading(tree)
        return tree if b is None else b
    o = octal_reading(tree)
    if o is not None:
        return o[1]
    return tree


# ---- keys: what Kubernetes makes of mapping keys (sigs.k8s.io/yaml)

def as_kubernetes_reads(doc: dict) -> dict:
    """The parse boundary for YAML features Kubernetes reads differently or not at all: complex
    (mapping/sequence) keys are refused as kubectl refuses them; scalar keys that are not strings
    become strings (as sigs.k8s.io/yaml makes them); merge keys (`<<`) are resolved. Either of the
    last two yields plain dicts (comments of that document are not carried over)."""
    plain_needed = False
    stack = [doc]
    while stack:  # paths are only worked out for the error (_complex_key_path)
        node = stack.pop()
        if isinstance(node, dict):
            if type(node) is not dict and getattr(node, "merge", None):
                plain_needed = True
            for key, value in node.items():
                if type(key) is not str:
                    if isinstance(key, (dict, list, tuple)):
                        raise InvalidJobError(Problem("a mapping key must be a scalar (kubectl cannot read this document)",
                                                      Location(path=_complex_key_path(doc)), rule="yaml"))
                    if not isinstance(key, str):
                        plain_needed = True
                if isinstance(value, (dict, list)):
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(v for v in node if isinstance(v, (dict, list)))
    return _plain_keys(doc) if plain_needed else doc


def _complex_key_path(doc) -> tuple:
    """Path of the mapping holding the first complex key found (the order as_kubernetes_reads walks in)."""
    stack = [(doc, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(key, (dict, list, tuple)):
                    return path
                stack.append((value, path + (str(key),)))
        elif isinstance(node, list):
            stack.extend((v, path + (i,)) for i, v in enumerate(node))
    return ()


def _plain_keys(node):
    if isinstance(node, dict):
        return {_key_text(k): _plain_keys(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain_keys(v) for v in node]
    return node


def _key_text(key) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if key is None:
        return "null"
    return str(key)
