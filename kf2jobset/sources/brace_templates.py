"""Manifests written as `{{ }}` templates outside Helm charts: a file a Go program fills in with text/template
(`image: {{.Image}}`, `replicas: {{ .Workers }}`), or a Jinja file that Ansible or a script renders (`*.yaml.j2`,
`namespace: {{ namespace }}`, `{% if %}` blocks). What ran was the rendered text.

A placeholder standing where a YAML scalar stands is carried as envsubst and Argo placeholders are: each is
swapped for a `${KF2JOBSET_TPL_n}` stand-in before the text is read, so kf2jobset/sources/envsubst.py decides where it
may sit (two conversions with different stand-ins must agree), and swapped back after. The output is the same
kind of template, each placeholder as written: one written plain stays plain (the engine fills in text before
YAML is read), one the JobSet holds in a new place is quoted.

What decides which text the file has cannot be carried: Jinja statements (`{% for %}`) and comments, Go's
control actions (`{{ if }}`, `{{ range }}`, `{{ end }}`, `{{/* */}}`, `{{ $x := }}`), actions that trim the
text around them (`{{-`, `-}}`) and actions alone on a line (they write YAML lines). A document holding one
is refused, like a placeholder where the conversion needs the value, naming the engine, the construct or
placeholder, its line or field, and the route: render, then convert. Inside a block scalar (a script, a
ConfigMap value) every action is text and is carried.

Argo objects read their own `{{...}}` (kf2jobset/sources/argo_steps.py), and Helm charts are converted at the source
(kf2jobset/chart/): neither comes here. Pure: text in, text and reworded problems/notes out.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from .argo_steps import argo_notes, argo_problem, put_back
from ..errors import Location, Problem
from ..notes import Note
from ..text.classify import HELM_ACTION_RE

GO = "Go text/template"
JINJA = "Jinja"
HELM = "Helm"
RULE = "template"
JINJA_SUFFIXES = (".j2", ".jinja", ".jinja2")

_ACTION = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}")  # one line each
_GO_FIELD = re.compile(r"\{\{-?\s*[.$]")  # `{{.X}}`, `{{ $v }}`: Go names data with a dot or a variable
_GO_CONTROL = re.compile(r"\{\{-?\s*(?:(?:if|else|end|range|with|define|template|block|break|continue)\b|/\*|\$\w*\s*:?=)")
_BLOCK_START = re.compile(r"(?:^|[:\-]\s)\s*[|>][-+0-9]*\s*(?:#.*)?$")  # `key: |`, `- >-`
_TOKEN = "KF2JOBSET_TPL_{}"
_LINE_TOKEN = "#KF2JOBSET_TPL_LINE_{}"
_PLAIN = re.compile(r"(?m)^(?P<lead>[ \t]*(?:- +)*(?:[^\s#'\"{][^:#\n]*: +)?)(?P<value>\{\{[^\n]*?\}\})(?P<end>[ \t]+#[^\n]*)?(?P<nl>\r?)$")


def engine_of(text: str, path: str) -> str | None:
    """The engine a file is a template for, or None: no `{{ }}` / `{% %}` outside comment lines, or an Argo
    object (Argo reads its own placeholders)."""
    if "{{" not in text and "{%" not in text:
        return None
    if "argoproj.io/" in text:
        return None
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    actions = _ACTION.findall(body)
    if not actions:
        return None
    if any(HELM_ACTION_RE.match(a) for a in actions):
        return HELM
    if path.endswith(JINJA_SUFFIXES) or any(a.startswith(("{%", "{#")) for a in actions):
        return JINJA
    return GO if any(_GO_FIELD.match(a) or _GO_CONTROL.match(a) for a in actions) else JINJA


@dataclass(frozen=True)
class Construct:
    """Template text that decides which text the file has (refused), where it is (1-based)."""
    line: int
    column: int
    text: str


@dataclass
class Swapped:
    text: str  # the file with stand-ins, line for line
    back: dict  # token -> placeholder as written
    lines: dict  # line stand-in -> the line's text as written (a control alone on its line)
    constructs: list  # Construct, in file order
    plain: set  # placeholders written as a plain scalar of their own (kept plain when put back)


def _is_construct(action: str, alone: bool) -> bool:
    return (action.startswith(("{%", "{#")) or bool(_GO_CONTROL.match(action)) or action.startswith("{{-")
            or action.endswith("-}}") or alone)


def swap(text: str) -> Swapped:
    """Every action swapped for a stand-in; a line holding only constructs becomes a comment line."""
    out = Swapped("", {}, {}, [], set())
    tokens: dict[str, str] = {}

    def token_for(spelling: str) -> str:
        if spelling not in tokens:
            n = len(tokens) + 1
            while _TOKEN.format(n) in text:
                n += 1000
            tokens[spelling] = _TOKEN.format(n)
            out.back[_TOKEN.format(n)] = spelling
        return "${" + tokens[spelling] + "}"

    lines = text.splitlines(keepends=True)
    block_indent = None  # inside a block scalar: lines indented deeper than its key
    for number, line in enumerate(lines, 1):
        body = line.rstrip("\r\n")
        indent = len(body) - len(body.lstrip(" "))
        if block_indent is not None and body.strip() and indent <= block_indent:
            block_indent = None
        if "{" in body and not body.lstrip().startswith("#"):
            actions = list(_ACTION.finditer(body))
            if block_indent is None and actions:
                alone = not _ACTION.sub("", body).strip()
                found = [Construct(number, m.start() + 1, m.group(0)) for m in actions if _is_construct(m.group(0), alone)]
                out.constructs += found
                if alone and found:
                    stand_in = _LINE_TOKEN.format(len(out.lines) + 1)
                    out.lines[stand_in] = body.strip()
                    line = body[:indent] + stand_in + line[len(body):]
                    body = None
            if body is not None and actions:
                line = _ACTION.sub(lambda m: token_for(m.group(0)), body) + line[len(body):]
        if block_indent is None and body is not None and _BLOCK_START.search(body):
            block_indent = indent
        out.text += line
    out.plain = {m.group("value") for m in _PLAIN.finditer(text)}
    return out


def restore_text(text: str, swapped: Swapped) -> str:
    """Text with every stand-in put back as written; a placeholder the JobSet holds as a plain scalar
    it was not written as is quoted (it means the same text once filled in, as long as it is a string)."""
    for stand_in, original in swapped.lines.items():
        text = text.replace(stand_in, original)
    text = put_back(text, swapped.back)

    def quote(m) -> str:
        if m.group("value") in swapped.plain or m.group("lead").strip().endswith("replicas:"):
            return m.group(0)
        return m.group("lead") + json.dumps(m.group("value"), ensure_ascii=False) + (m.group("end") or "") + m.group("nl")

    return _PLAIN.sub(quote, text)


def forward(engine: str) -> str:
    how = {HELM: "helm template CHART", GO: "run the program that fills it in",
           JINJA: "e.g. jinja2 FILE VALUES.yaml, or Ansible's template module"}[engine]
    return (f"render the template first ({how}), convert the rendered file with kf2jobset convert -, and carry the "
            "changes back into the template; or write the value into the template")


def problem(p: Problem, swapped: Swapped, engine: str) -> Problem:
    """A problem of the conversion with stand-ins, said of the template's placeholders."""
    p = argo_problem(p, swapped.back, f"{engine} placeholder", forward(engine), RULE)
    message = p.message
    for stand_in, original in swapped.lines.items():
        message = message.replace(stand_in, original)
    return Problem(message, p.location, p.rule, p.hint)


def construct_problem(constructs: list, engine: str, file: str, document: int) -> Problem:
    first = constructs[0]
    shown = "; ".join(f"{c.text} (line {c.line})" for c in constructs[:4]) + ("; ..." if len(constructs) > 4 else "")
    return Problem(f"{engine} template text {shown} decides which lines the file has, which kf2jobset cannot convert "
                   "as it is (only placeholders that stand for a scalar are carried)",
                   Location(file, document, first.line, first.column), RULE, forward(engine))


def notes(conv_notes: list, swapped: Swapped, engine: str, held: list[str]) -> list:
    """The notes with the placeholders put back, and TPL004 when the JobSet still holds some (`held`)."""
    out = argo_notes(conv_notes, swapped.back, f"{engine} placeholder")
    if held:
        shown = ", ".join(held[:8]) + (", ..." if len(held) > 8 else "")
        out.append(Note("TPL004", "unchanged", f"the JobSet, like the job, is a template for {engine}: it still holds {shown}, "
                        "carried as written", source_path="metadata", warn=True,
                        action="render it as the job was rendered, then apply the result",
                        unchecked="says which placeholders the JobSet text holds; tests/test_brace_templates.py renders "
                                  "them and validates the result"))
    return out


def held_placeholders(objects_text: str, swapped: Swapped) -> list[str]:
    """The placeholders (as written) whose stand-ins the converted objects still hold."""
    return [spelling for token, spelling in swapped.back.items() if token in objects_text]
