"""Copies of YAML trees for the converter, several times cheaper than copy.deepcopy.

copy.deepcopy of ruamel round-trip objects copies every comment, line/column record and format
object through the generic reduce protocol, and the converter copies each pod template twice; that
was the largest cost left once YAML reading and writing were fast. Here containers are rebuilt
directly: dict/list as dict/list, CommentedMap/CommentedSeq with their flow style and line/column
records. Comments are not copied (the converter strips every comment before writing and places
them by position, text/comments.py). Immutable scalars are shared; a node with an anchor, a tag or
merge keys, and any scalar type other than plain ones and unanchored ruamel strings, is handed to
copy.deepcopy, so those keep every attribute.
"""
from __future__ import annotations

import copy
from typing import Any

_SHARED = (str, int, bool, float, type(None))
_ruamel: dict[str, Any] = {}


def _attrs() -> dict[str, Any]:
    if not _ruamel:
        try:
            from ruamel.yaml.anchor import Anchor
            from ruamel.yaml.comments import (CommentedMap, CommentedSeq, Format, LineCol, Tag,
                                              format_attrib, line_col_attrib, merge_attrib)
            from ruamel.yaml.scalarstring import (DoubleQuotedScalarString, LiteralScalarString,
                                                  SingleQuotedScalarString)
        except ImportError:  # pragma: no cover - ruamel is a dependency
            _ruamel["none"] = True
            return _ruamel
        _ruamel.update(map=CommentedMap, seq=CommentedSeq, Format=Format, LineCol=LineCol,
                       anchor=Anchor.attrib, tag=Tag.attrib, merge=merge_attrib, format=format_attrib,
                       line_col=line_col_attrib,
                       quoted=(DoubleQuotedScalarString, SingleQuotedScalarString, LiteralScalarString))
    return _ruamel


def copy_tree(node: Any) -> Any:
    """A deep copy of a YAML tree as the converter needs it (see the module docstring)."""
    t = type(node)
    if t in _SHARED:
        return node
    if t is dict:
        return {k: copy_tree(v) for k, v in node.items()}
    if t is list:
        return [copy_tree(v) for v in node]
    r = _attrs()
    if t is r.get("map") or t is r.get("seq"):
        if _has_identity(node, r):
            return copy.deepcopy(node)
        if t is r["map"]:
            out = t()
            for k, v in node.items():
                out[k] = copy_tree(v)
        else:
            out = t(copy_tree(v) for v in node)
        fmt = getattr(node, r["format"], None)
        if fmt is not None and fmt._flow_style is not None:
            new_fmt = r["Format"]()
            new_fmt._flow_style = fmt._flow_style
            setattr(out, r["format"], new_fmt)
        lc = getattr(node, r["line_col"], None)
        if lc is not None:
            new_lc = r["LineCol"]()
            new_lc.line, new_lc.col = lc.line, lc.col
            new_lc.data = dict(lc.data) if lc.data is not None else None
            setattr(out, r["line_col"], new_lc)
        return out
    if t in r.get("quoted", ()) and getattr(node, r["anchor"], None) is None and getattr(node, "comment", None) is None:
        return node  # an immutable str subclass with nothing attached
    return copy.deepcopy(node)


def _has_identity(node, r) -> bool:
    """Anchors, tags and merge keys: what deepcopy must carry."""
    anchor = getattr(node, r["anchor"], None)
    if anchor is not None and anchor.value is not None:
        return True
    tag = getattr(node, r["tag"], None)
    if tag is not None and getattr(tag, "value", None) is not None:
        return True
    return bool(getattr(node, r["merge"], None))
