"""Go text/template as Helm runs it, read into a tree kf2jobset can render with stand-ins.

What Go's lexer does (text/template/parse, Go 1.2x): actions are `{{ ... }}`; `{{- ` trims every
white-space character (newlines included) before the action, ` -}}` every one after it (the dash
needs a space beside it: `{{-3}}` is the number -3); `{{/* ... */}}` is a comment; strings ("...",
`...`, '.') may hold `}}`. Control actions nest: if / else if / else / end, with (else), range
(else), define ... end. The trims are applied to the text beside each action, so a Text node holds
exactly what Helm writes.

The tree keeps each action's own text (the pipeline) so that a converted template can write it back.
Pure: text in, nodes out; a `TemplateError` names the line of what it cannot read.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

_SPACE = " \t\r\n"


class TemplateError(Exception):
    def __init__(self, message: str, line: int):
        super().__init__(f"line {line}: {message}")
        self.message, self.line = message, line


@dataclass
class Action:
    """One `{{ ... }}` as written."""

    start: int  # offset of `{{`
    end: int  # offset after `}}`
    body: str  # between the delimiters and trim markers, stripped
    trim_left: bool
    trim_right: bool
    line: int  # 1-based line of `{{`

    @property
    def word(self) -> str:
        m = re.match(r"[A-Za-z]+", self.body)
        return m.group(0) if m else ""

    @property
    def is_comment(self) -> bool:
        return self.body.startswith("/*")


def lex(text: str) -> list:
    """Text strings and Actions in order, the trims applied to the strings."""
    out: list = []
    pos = 0
    while True:
        at = text.find("{{", pos)
        if at < 0:
            out.append(text[pos:])
            break
        out.append(text[pos:at])
        action = _action(text, at)
        if action.trim_left and isinstance(out[-1], str):
            out[-1] = out[-1].rstrip(_SPACE)
        out.append(action)
        pos = action.end
        if action.trim_right:
            while pos < len(text) and text[pos] in _SPACE:
                pos += 1
    return out


def _action(text: str, at: int) -> Action:
    line = text.count("\n", 0, at) + 1
    i = at + 2
    trim_left = text.startswith("-", i) and i + 1 < len(text) and text[i + 1] in _SPACE
    if trim_left:
        i += 1
    j = i
    while j < len(text) and text[j] in _SPACE:
        j += 1
    if text.startswith("/*", j):  # a comment: up to `*/` then the closing delimiter
        close = text.find("*/", j + 2)
        if close < 0:
            raise TemplateError("unclosed comment", line)
        k = close + 2
        m = re.compile(r"(\s+-)?\}\}").match(text, k)
        if not m:
            raise TemplateError("comment ends without }}", line)
        return Action(at, m.end(), text[j:k], trim_left, bool(m.group(1)), line)
    k = j
    quote = None
    while k < len(text):
        c = text[k]
        if quote:
            if c == "\\" and quote != "`":
                k += 2
                continue
            if c == quote:
                quote = None
        elif c in "\"'`":
            quote = c
        elif text.startswith("}}", k):
            body = text[i:k]
            trim_right = len(body) >= 2 and body.endswith("-") and body[-2] in _SPACE
            if trim_right:
                body = body[:-1]
            return Action(at, k + 2, body.strip(), trim_left, trim_right, line)
        k += 1
    raise TemplateError("unclosed action", line)


# ---- the tree ---------------------------------------------------------------------------------------

@dataclass
class Text:
    text: str


@dataclass
class Out:
    """An action that writes its pipeline's value."""

    action: Action
    pipeline: str


@dataclass
class Silent:
    """An action that writes nothing: a variable declared or assigned, a comment, break/continue, a define."""

    action: Action
    source: str  # what to write back: the action's body (a define: its whole text)


@dataclass
class Branch:
    keyword: str  # if, else if, else, with, range, else with
    header: str  # the pipeline after the keyword ('' for else)
    action: Action
    body: list = field(default_factory=list)


@dataclass
class Block:
    """if / with / range with their branches; `end` is the closing action."""

    kind: str  # if, with, range
    branches: list  # [Branch]
    end: Action | None = None

    @property
    def line(self) -> int:
        return self.branches[0].action.line


@dataclass
class Define:
    name: str
    body: list
    action: Action
    end: Action | None = None


_DECL = re.compile(r"^\$[A-Za-z0-9_]*\s*(?:,\s*\$[A-Za-z0-9_]*\s*)?:?=")
_DEFINE = re.compile(r'^define\s+"([^"]+)"\s*$')


def parse(text: str) -> list:
    """The template's nodes (Text, Out, Silent, Block, Define) at the top level."""
    root: list = []
    stack: list = []  # open Blocks / Defines
    current = root
    for piece in lex(text):
        if isinstance(piece, str):
            if piece:
                current.append(Text(piece))
            continue
        a = piece
        word = a.word
        if a.is_comment:
            current.append(Silent(a, a.body))
        elif word in ("if", "with", "range") and not _DECL.match(a.body):
            block = Block(word, [Branch(word, a.body[len(word):].strip(), a)])
            current.append(block)
            stack.append(block)
            current = block.branches[0].body
        elif word == "else":
            current = _open_else(a, stack)
        elif word == "end" and a.body == "end":
            if not stack:
                raise TemplateError("end without an open block", a.line)
            top = stack.pop()
            top.end = a
            current = _body_of(stack[-1]) if stack else root
        elif word == "define":
            d = _define(a)
            current.append(d)
            stack.append(d)
            current = d.body
        else:
            current.append(_leaf(a))
    if stack:
        raise TemplateError(f"{{{{ {_opening(stack[-1])} }}}} is never closed with {{{{ end }}}}", _line_of(stack[-1]))
    return root


def _open_else(a: Action, stack: list) -> list:
    """An `else` (`else if`, `else with`) opens the next branch of the innermost block: its body."""
    if not stack or not isinstance(stack[-1], Block):
        raise TemplateError("else outside if/with/range", a.line)
    rest = a.body[4:].strip()
    keyword, header = "else", ""
    for k in ("if", "with"):
        if rest == k or rest.startswith(k + " ") or rest.startswith(k + "\t"):
            keyword, header = f"else {k}", rest[len(k):].strip()
    branch = Branch(keyword, header, a)
    stack[-1].branches.append(branch)
    return branch.body


def _define(a: Action) -> Define:
    """A `define "name"`, its body still empty."""
    m = _DEFINE.match(a.body)
    if not m:
        raise TemplateError(f"cannot read {{{{ {a.body} }}}}", a.line)
    return Define(m.group(1), [], a)


def _leaf(a: Action):
    """An action that opens and closes nothing: silent (break, continue, a declaration) or written out."""
    if a.word == "block":
        raise TemplateError("{{ block }} is not supported", a.line)
    if a.word in ("break", "continue") and a.body == a.word:
        return Silent(a, a.body)
    if _DECL.match(a.body):
        return Silent(a, a.body)
    return Out(a, a.body)


def _body_of(node) -> list:
    return node.branches[-1].body if isinstance(node, Block) else node.body


def _opening(node) -> str:
    return node.branches[0].action.body if isinstance(node, Block) else node.action.body


def _line_of(node) -> int:
    return node.branches[0].action.line if isinstance(node, Block) else node.action.line


def walk(nodes: list):
    """Every node, depth first (the bodies of blocks and defines too)."""
    for n in nodes:
        yield n
        if isinstance(n, Block):
            for b in n.branches:
                yield from walk(b.body)
        elif isinstance(n, Define):
            yield from walk(n.body)


def defines(nodes: list) -> dict:
    """name -> Define, at any depth (Helm collects every define of every template file)."""
    return {n.name: n for n in walk(nodes) if isinstance(n, Define)}


# ---- pipelines --------------------------------------------------------------------------------------

def split_pipeline(pipeline: str) -> list[str]:
    """The commands of a pipeline (`a | b | c`), outside strings and parentheses."""
    parts, depth, cur = [], 0, ""
    for quoted, text in segments(pipeline):
        if quoted:
            cur += text
            continue
        for c in text:
            depth += {"(": 1, ")": -1}.get(c, 0)
            if c == "|" and depth == 0:
                parts.append(cur.strip())
                cur = ""
            else:
                cur += c
    parts.append(cur.strip())
    return parts


_INDENT_CALL = re.compile(r"^(n?indent)\s+(\d+)$")
_INDENT_PREFIX = re.compile(r"^(n?indent)\s+(\d+)\s+(.+)$", re.S)


@dataclass(frozen=True)
class Indented:
    """A pipeline that ends by indenting its value: `SOURCE | nindent 4`, `indent 4 (SOURCE)`."""

    source: str
    function: str  # indent, nindent, or '' (the value as it is)
    width: int

    def written(self, width: int) -> str:
        if not self.function:
            return self.source
        return f"{self.source} | {self.function} {width}"


def indented(pipeline: str) -> Indented:
    parts = split_pipeline(pipeline)
    m = _INDENT_CALL.match(parts[-1])
    if m and len(parts) > 1:
        return Indented(" | ".join(parts[:-1]), m.group(1), int(m.group(2)))
    if len(parts) == 1:
        m = _INDENT_PREFIX.match(parts[0])
        if m:
            inner = m.group(3).strip()
            if inner.startswith("(") and inner.endswith(")") and _balanced(inner[1:-1]):
                inner = inner[1:-1].strip()
            return Indented(inner, m.group(1), int(m.group(2)))
    return Indented(pipeline, "", 0)


def _balanced(s: str) -> bool:
    depth = 0
    for c in s:
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth < 0:
            return False
    return depth == 0


_INCLUDE = re.compile(r'^(?:include|template)\s+"([^"]+)"\s+(.+)$', re.S)


def helper_call(source: str) -> tuple[str, str] | None:
    """(name, argument) of `include "name" ARG` / `template "name" ARG`."""
    m = _INCLUDE.match(source.strip())
    return (m.group(1), m.group(2).strip()) if m else None


# ---- rewriting references to the root --------------------------------------------------------------

_DOT_FIELD = re.compile(r"(?<![\w$)\].])\.(?=[A-Za-z_])")
_LONE_DOT = re.compile(r"(?<![\w$)\].])\.(?![\w.])")


def segments(code: str) -> list[tuple[bool, str]]:
    """The pipeline cut into (is a string literal, text) runs: "...", `...` and '.' are strings."""
    out, i, quote, start = [], 0, None, 0
    while i < len(code):
        c = code[i]
        if quote:
            if c == "\\" and quote != "`":
                i += 2
                continue
            if c == quote:
                out.append((True, code[start:i + 1]))
                quote, start = None, i + 1
        elif c in "\"'`":
            out.append((False, code[start:i]))
            quote, start = c, i
        i += 1
    out.append((quote is not None, code[start:]))
    return [(q, t) for q, t in out if t]


def rooted(pipeline: str) -> str:
    """The pipeline with `.X` read from the root (`$.X`) and a lone `.` as `$`, outside strings:
    what it means at the top of a template, written so it means the same inside with/range."""
    return "".join(t if q else _LONE_DOT.sub("$", _DOT_FIELD.sub("$.", t)) for q, t in segments(pipeline))


def uses_dot(pipeline: str) -> bool:
    return rooted(pipeline) != pipeline


_VARIABLE = re.compile(r"\$[A-Za-z0-9_]+")


def variables(pipeline: str) -> set[str]:
    """`$name` variables a pipeline reads (outside strings); `$` alone is the root, always in scope."""
    return {v for q, t in segments(pipeline) if not q for v in _VARIABLE.findall(t)}


def declared(source: str) -> set[str]:
    """Variables a `$x := ...` (or `range $k, $v := ...`) declares."""
    m = re.match(r"^\s*(\$[A-Za-z0-9_]*)\s*(?:,\s*(\$[A-Za-z0-9_]*)\s*)?:=", source)
    return {v for v in (m.group(1), m.group(2)) if v} if m else set()
