"""A direct YAML writer for the objects kf2jobset dumps, byte for byte what ruamel's round-trip
dumper writes with the same settings (width 4096, `yamlio.Style` indentation), at a fraction of the
cost: ruamel builds a node graph, an event stream and an emitter state machine for every document,
and that was the largest single cost of a conversion.

It covers the shapes conversions produce: block and flow mappings and sequences, str (plain,
quoted as ruamel would quote it, or kept single/double-quoted or literal as the source had it),
int, bool, and null mapping values. Anything else raises NotWritable and the caller dumps with
ruamel: comments attached to the objects, anchors and aliases (an object reached twice), tags,
floats and ruamel's formatted numbers, multi-line quoted strings, literal blocks that need
indentation or keep-chomping indicators, lines long enough for ruamel to fold, a sequence directly
inside a sequence, and indentation styles other than the two `detect_style` finds.
tests/test_yamlwriter.py holds the writer to ruamel over every golden output and generated trees.

Scalar decisions reuse ruamel's own pieces (its scalar analysis and its YAML 1.2 resolver), cached
per string, so quoting cannot drift from what ruamel would choose.
"""
from __future__ import annotations

from typing import Any

WIDTH = 4096  # yamlio.dump_documents' ruamel width
_SAFE_LINE = WIDTH - 64  # below this ruamel never folds a scalar or wraps a flow collection


class NotWritable(Exception):
    """The object has something only ruamel's dumper writes faithfully."""


_STR_TAG = "tag:yaml.org,2002:str"
_analysis_cache: dict[str, Any] = {}
_plain_str_cache: dict[str, bool] = {}
_ruamel: dict[str, Any] = {}


def _load_ruamel() -> dict[str, Any]:
    if not _ruamel:
        from ruamel.yaml.anchor import Anchor
        from ruamel.yaml.comments import Comment, CommentedMap, CommentedSeq, Format, Tag, merge_attrib
        from ruamel.yaml.emitter import Emitter
        from ruamel.yaml.nodes import ScalarNode
        from ruamel.yaml.resolver import VersionedResolver
        from ruamel.yaml.scalarstring import (DoubleQuotedScalarString, LiteralScalarString,
                                              SingleQuotedScalarString)

        class _AnalysisSettings:
            """What Emitter.analyze_scalar reads from the emitter, as YAML() configures it for dumping."""

            class serializer:  # noqa: N801 - mimics the attribute the analysis reads
                use_version = None

            allow_unicode = True
            unicode_supplementary = True
            allow_space_break = None

        _ruamel.update(
            analyze=lambda s: Emitter.analyze_scalar(_AnalysisSettings, s),
            resolver=VersionedResolver(), ScalarNode=ScalarNode,
            comment_attr=Comment.attrib, format_attr=Format.attrib, anchor_attr=Anchor.attrib,
            tag_attr=Tag.attrib, merge_attr=merge_attrib, CommentedMap=CommentedMap, CommentedSeq=CommentedSeq,
            DQ=DoubleQuotedScalarString, SQ=SingleQuotedScalarString, LIT=LiteralScalarString,
        )
    return _ruamel


def _analysis(s: str):
    a = _analysis_cache.get(s)
    if a is None:
        a = _analysis_cache[s] = _ruamel["analyze"](s)
    return a


def _plain_is_str(s: str) -> bool:
    """Would `s`, written plain, read back as a string (YAML 1.2, as ruamel's dumper checks)?"""
    v = _plain_str_cache.get(s)
    if v is None:
        r = _ruamel
        v = _plain_str_cache[s] = r["resolver"].resolve(r["ScalarNode"], s, (True, False)) == _STR_TAG
    return v


_DOUBLE_OK = frozenset(chr(c) for c in range(0x20, 0x7F))


def _double_quoted(s: str) -> str:
    for ch in s:
        if ch not in _DOUBLE_OK:
            o = ord(ch)
            # printable non-ASCII is written as is (allow_unicode); anything else needs ruamel's escapes
            if not (0xA0 <= o <= 0xD7FF or 0xE000 <= o <= 0xFFFD) or o == 0xFEFF:
                raise NotWritable("character needing an escape")
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


class Writer:
    def __init__(self, mapping: int = 2, sequence: int = 4, offset: int = 2):
        if mapping != 2 or sequence - offset != 2 or offset < 0:
            raise NotWritable("indentation style")
        r = _load_ruamel()
        self.offset = offset
        self.out: list[str] = []
        self.seen: set[int] = set()
        self._comment, self._format = r["comment_attr"], r["format_attr"]
        self._anchor, self._tag, self._merge = r["anchor_attr"], r["tag_attr"], r["merge_attr"]
        self._dq, self._sq, self._lit = r["DQ"], r["SQ"], r["LIT"]

    # ---- checks on collections

    def _is_flow(self, node) -> bool:
        """Flow style as the round-trip representer decides it (block unless marked flow), after
        refusing what this writer does not reproduce on a collection."""
        if id(node) in self.seen:
            raise NotWritable("object reached twice (ruamel writes an anchor and an alias)")
        self.seen.add(id(node))
        if type(node) is dict or type(node) is list:
            return False
        ca = getattr(node, self._comment, None)
        if ca is not None and (ca.comment or ca.end or getattr(ca, "pre", None)):
            raise NotWritable("comments on a collection")
        anchor = getattr(node, self._anchor, None)
        if anchor is not None and anchor.value is not None:
            raise NotWritable("anchor")
        tag = getattr(node, self._tag, None)
        if tag is not None and getattr(tag, "value", None) is not None:
            raise NotWritable("tag")
        if getattr(node, self._merge, None):
            raise NotWritable("merge key")
        fa = getattr(node, self._format, None)
        return bool(fa is not None and fa._flow_style)

    # ---- comments (as text/comment_attach.attach places them: lines above a key or item, one at a line's end)

    def _item_comments(self, node) -> dict:
        ca = getattr(node, self._comment, None)
        return ca.items if ca is not None and ca.items else {}

    def _pre_lines(self, tokens) -> None:
        """Comment lines above a key or item: at their own column; a blank line stays blank."""
        for t in tokens:
            value = t.value
            self.out.append("\n" if value.startswith("\n") else " " * t.column + value)

    @staticmethod
    def _eol(line: str, token) -> str:
        """A line with an end-of-line comment at the comment's column (at least one space before it)."""
        value = token.value
        if not value.strip() or value.startswith("\n") or value.endswith("\n"):
            raise NotWritable("unusual end-of-line comment")
        return line + " " * max(token.column - len(line.rsplit("\n", 1)[-1]), 1) + value

    # ---- scalars

    def _scalar(self, v, *, flow: bool, key: bool) -> str:
        t = type(v)
        if t is str or t is self._dq or t is self._sq:
            return self._string(v, t, flow, key)
        if key:
            raise NotWritable("non-string key")
        if t is bool:
            return "true" if v else "false"
        if t is int:
            return str(v)
        raise NotWritable(f"scalar of type {t.__name__}")

    def _string(self, s: str, t, flow: bool, key: bool) -> str:
        if t is not str:
            anchor = getattr(s, self._anchor, None)
            if anchor is not None and anchor.value is not None:
                raise NotWritable("anchor")
        if key and len(s) >= 120:
            raise NotWritable("long key (ruamel writes a complex key)")
        a = _analysis(s)
        if a.multiline:
            raise NotWritable("multi-line quoted string")
        if t is str:
            if _plain_is_str(s) and not (key and a.empty) and (a.allow_flow_plain if flow else a.allow_block_plain):
                return s
            if a.allow_double_quoted and "'" in s:
                return _double_quoted(s)
        if t is not self._dq and a.allow_single_quoted:
            return "'" + s.replace("'", "''") + "'"
        return _double_quoted(s)

    def _literal(self, s, indent: int) -> str:
        """`|` or `|-` and the block's lines, for a literal string written as a block value."""
        if getattr(s, "comment", None):
            raise NotWritable("comment on a block scalar")
        anchor = getattr(s, self._anchor, None)
        if anchor is not None and anchor.value is not None:
            raise NotWritable("anchor")
        if not s or s[0] in " \n" or s.endswith("\n\n"):
            raise NotWritable("literal block needing an indentation or keep indicator")
        for ch in s:
            if not ("\x20" <= ch <= "\x7e" or ch == "\n"):
                raise NotWritable("literal block with special characters")
        header = "|" if s.endswith("\n") else "|-"
        body = s[:-1] if s.endswith("\n") else s
        pad = " " * indent
        lines = [(pad + line) if line else "" for line in body.split("\n")]
        if indent + max(len(line) for line in body.split("\n")) > _SAFE_LINE:
            raise NotWritable("long line")
        return header + "\n" + "\n".join(lines) + "\n"

    # ---- flow collections

    def _flow(self, node) -> str:
        if isinstance(node, (dict, list)) and self._item_comments(node):
            raise NotWritable("comments inside a flow collection")
        if isinstance(node, dict):
            self._is_flow(node)
            parts = []
            for k, v in node.items():
                if v is None:
                    raise NotWritable("null in a flow mapping")
                parts.append(self._scalar(k, flow=True, key=True) + ": " + self._flow(v))
            return "{" + ", ".join(parts) + "}"
        if isinstance(node, list):
            self._is_flow(node)
            if any(isinstance(v, (dict, list)) for v in node):
                # ruamel may drop a mapping's braces, and writes "[ []]" for a sequence first in a sequence
                raise NotWritable("collection inside a flow sequence")
            return "[" + ", ".join(self._flow(v) for v in node) + "]"
        if type(node) is self._lit:
            raise NotWritable("literal block inside a flow collection")
        if node is None:
            raise NotWritable("null in a flow collection")
        return self._scalar(node, flow=True, key=False)

    # ---- block collections

    def mapping(self, node, col: int, first_prefix: str) -> None:
        out = self.out
        pad = " " * col
        prefix = first_prefix
        comments = self._item_comments(node)
        for k, v in node.items():
            key = self._scalar(k, flow=False, key=True)
            eol = self._key_comments(comments[k], prefix) if comments and k in comments else None
            head = prefix + key + ":"
            prefix = pad
            if isinstance(v, dict) or isinstance(v, list):
                self._mapping_collection(head, eol, v, col)
            elif eol is not None and (v is None or type(v) is self._lit):
                raise NotWritable("comment after a null or a block scalar")
            elif v is None:
                out.append(head + "\n")
            elif type(v) is self._lit:
                out.append(head + " " + self._literal(v, col + 2))
            else:
                line = head + " " + self._scalar(v, flow=False, key=False)
                if len(line) > _SAFE_LINE:
                    raise NotWritable("long line")
                out.append((line if eol is None else self._eol(line, eol)) + "\n")

    def _key_comments(self, entry, prefix: str):
        """Writes the comment lines above a mapping key; returns its end-of-line comment (None: none)."""
        if entry[0] is not None or (len(entry) > 3 and entry[3] is not None):
            raise NotWritable("comment in an unusual slot")
        if entry[1]:
            if prefix.endswith("- "):
                raise NotWritable("comment above the first key of a sequence item")
            self._pre_lines(entry[1])
        return entry[2] if len(entry) > 2 else None

    def _mapping_collection(self, head: str, eol, v, col: int) -> None:
        """A mapping value that is a collection: in flow style on the key's line (empty ones too), else as
        a block below it."""
        out = self.out
        if not v or self._is_flow(v):
            if eol is not None:
                raise NotWritable("comment after a flow collection")
            if not v:
                line = head + (" {}" if isinstance(v, dict) else " []")
            else:
                self.seen.discard(id(v))
                line = head + " " + self._flow(v)
            if len(line) > _SAFE_LINE:
                raise NotWritable("long line")
            out.append(line + "\n")
        elif isinstance(v, dict):
            out.append((head if eol is None else self._eol(head, eol)) + "\n")
            self.mapping(v, col + 2, " " * (col + 2))
        else:
            out.append((head if eol is None else self._eol(head, eol)) + "\n")
            self.sequence(v, col + self.offset)

    def sequence(self, node, dash_col: int) -> None:
        out = self.out
        prefix = " " * dash_col + "- "
        content = dash_col + 2
        comments = self._item_comments(node)
        for i, v in enumerate(node):
            eol = None
            if comments and i in comments:
                entry = comments[i]
                if any(e is not None for e in entry[2:]):
                    raise NotWritable("comment in an unusual slot")
                if entry[1]:
                    self._pre_lines(entry[1])
                eol = entry[0]
                if eol is not None and (isinstance(v, (dict, list)) or v is None or type(v) is self._lit):
                    raise NotWritable("end-of-line comment on a collection or block item")
            if isinstance(v, dict) or isinstance(v, list):
                if not v:
                    self._is_flow(v)
                    out.append(prefix + ("{}\n" if isinstance(v, dict) else "[]\n"))
                elif self._is_flow(v):
                    self.seen.discard(id(v))
                    line = prefix + self._flow(v)
                    if len(line) > _SAFE_LINE:
                        raise NotWritable("long line")
                    out.append(line + "\n")
                elif isinstance(v, dict):
                    self.mapping(v, content, prefix)
                else:
                    raise NotWritable("sequence inside a sequence")
            elif v is None:
                raise NotWritable("null sequence item")
            elif type(v) is self._lit:
                out.append(prefix + self._literal(v, content))
            else:
                line = prefix + self._scalar(v, flow=False, key=False)
                if len(line) > _SAFE_LINE:
                    raise NotWritable("long line")
                out.append((line if eol is None else self._eol(line, eol)) + "\n")


def write_document(obj: Any, mapping: int = 2, sequence: int = 4, offset: int = 2) -> str:
    """The document ruamel would dump for `obj` (a mapping), without the leading `---`. Raises NotWritable."""
    if not isinstance(obj, dict) or not obj:
        raise NotWritable("document is not a non-empty mapping")
    w = Writer(mapping, sequence, offset)
    if w._is_flow(obj):
        raise NotWritable("flow-style document")
    w.mapping(obj, 0, "")
    return "".join(w.out)
