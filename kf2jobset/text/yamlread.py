"""ruamel round-trip objects built from libyaml's node graph, for the documents kf2jobset converts.

Every document is composed by libyaml anyway (the strict Kubernetes-style check in yamlio); building
CommentedMap/CommentedSeq from those nodes costs a fraction of ruamel's pure-Python scanner and
parser, which was a third of a conversion. The result is what ruamel's round-trip loader
(`preserve_quotes`) returns: quoted scalars as Single/DoubleQuotedScalarString, literal blocks as
LiteralScalarString, plain scalars resolved as YAML 1.2 by ruamel's own resolver, flow or block
style on each collection, and the line/column of every key, value and item (`lc`), which error
positions and comment carry-over read. Comments are not attached: conversion drops them from the
objects and text/comments.py places them by position instead.

Whatever could differ from ruamel's result is refused (NotReadable) and the caller loads with
ruamel: tags, anchors and aliases, directives, folded blocks, comments on a block scalar's header,
floats, timestamps, numbers ruamel keeps in a formatted type (`010`, `1_000`, `0x1F`), and text
that is not ASCII (column counting). tests/test_yamlread.py compares both loaders.
"""
from __future__ import annotations

import re
from typing import Any

_T = "tag:yaml.org,2002:"
_DECIMAL = re.compile(r"-?[1-9][0-9]*\Z")
# an anchor or alias indicator starts a token: after a space, a flow indicator or a line start
_ANCHOR_OR_ALIAS = re.compile(r"(?:^|[\s\[\]{},])[&*][^\s\[\]{},]", re.M)
_TAG_OR_DIRECTIVE = re.compile(r"(?:^|[\s\[\]{},])!|^%", re.M)
_ruamel: dict[str, Any] = {}


class NotReadable(Exception):
    """The document has something only ruamel's loader reproduces; load it with ruamel."""


def _types() -> dict[str, Any]:
    if not _ruamel:
        from ruamel.yaml.comments import CommentedMap, CommentedSeq
        from ruamel.yaml.nodes import ScalarNode
        from ruamel.yaml.resolver import VersionedResolver
        from ruamel.yaml.scalarint import ScalarInt
        from ruamel.yaml.scalarstring import (DoubleQuotedScalarString, LiteralScalarString,
                                              SingleQuotedScalarString)

        _ruamel.update(map=CommentedMap, seq=CommentedSeq, resolver=VersionedResolver(), ScalarNode=ScalarNode,
                       ScalarInt=ScalarInt, DQ=DoubleQuotedScalarString, SQ=SingleQuotedScalarString,
                       LIT=LiteralScalarString)
    return _ruamel


def may_read(text: str) -> bool:
    """Cheap text checks that rule a document out before any work."""
    return text.isascii() and not _TAG_OR_DIRECTIVE.search(text) and not _ANCHOR_OR_ALIAS.search(text)


def build(root, text: str) -> Any:
    """The ruamel round-trip object for one composed libyaml node (PyYAML node classes)."""
    import yaml

    r = _types()
    builder = _Builder(r, text, yaml.ScalarNode, yaml.SequenceNode, yaml.MappingNode)
    return builder.node(root)


class _Builder:
    def __init__(self, r, text, scalar_node, sequence_node, mapping_node):
        self.r = r
        self.lines = None
        self.text = text
        self.scalar_node, self.sequence_node, self.mapping_node = scalar_node, sequence_node, mapping_node
        self.seen: set[int] = set()
        self.plain_cache: dict[str, Any] = {}
        self.resolve = r["resolver"].resolve
        self.ruamel_scalar = r["ScalarNode"]

    def node(self, n) -> Any:
        if id(n) in self.seen:
            raise NotReadable("alias")
        self.seen.add(id(n))
        cls = type(n)
        if cls is self.scalar_node:
            return self.scalar(n)
        if cls is self.mapping_node:
            m = self.r["map"]()
            mark = n.start_mark
            m._yaml_set_line_col(mark.line, mark.column)
            for key_node, value_node in n.value:
                if type(key_node) is not self.scalar_node:
                    raise NotReadable("complex key")
                key = self.scalar(key_node)
                if key is None:
                    raise NotReadable("null key")
                if type(value_node) is self.scalar_node and not value_node.value and not value_node.style:
                    # an empty value: ruamel places it at the next token, libyaml after the colon
                    raise NotReadable("empty value")
                m[key] = self.node(value_node)
                km, vm = key_node.start_mark, value_node.start_mark
                m._yaml_set_kv_line_col(key, [km.line, km.column, vm.line, vm.column])
            self._style(m, n)
            return m
        if cls is self.sequence_node:
            s = self.r["seq"]()
            mark = n.start_mark
            s._yaml_set_line_col(mark.line, mark.column)
            for i, child in enumerate(n.value):
                if type(child) is self.scalar_node and not child.value and not child.style:
                    raise NotReadable("empty item")
                s.append(self.node(child))
                cm = child.start_mark
                s._yaml_set_idx_line_col(i, [cm.line, cm.column])
            self._style(s, n)
            return s
        raise NotReadable("unknown node")

    @staticmethod
    def _style(data, n) -> None:
        if len(data) == 0:
            return  # ruamel leaves an empty collection's style unset
        if n.flow_style is True:
            data.fa.set_flow_style()
        elif n.flow_style is False:
            data.fa.set_block_style()

    def scalar(self, n) -> Any:
        style = n.style
        value = n.value
        if style is None or style == "":
            found = self.plain_cache.get(value, self)
            if found is self:
                found = self.plain_cache[value] = self._plain(value)
            return found
        if style == '"':
            return self.r["DQ"](value)
        if style == "'":
            return self.r["SQ"](value)
        if style == "|":
            header = self._line(n.start_mark.line)[n.start_mark.column:]
            if "#" in header:
                raise NotReadable("comment on a block scalar header")
            return self.r["LIT"](value)
        raise NotReadable(f"scalar style {style!r}")

    def _line(self, number: int) -> str:
        if self.lines is None:
            self.lines = self.text.splitlines()
        return self.lines[number] if number < len(self.lines) else ""

    def _plain(self, value: str) -> Any:
        tag = self.resolve(self.ruamel_scalar, value, (True, False))
        if tag == _T + "str":
            return value
        if tag == _T + "null":
            return None
        if tag == _T + "bool":
            return value.lower() == "true"
        if tag == _T + "int":
            if _DECIMAL.match(value):
                return int(value)
            if value == "0":
                return self.r["ScalarInt"](0, width=1, underscore=None, anchor=None)
        raise NotReadable(f"plain scalar read as {tag}")
