"""Markdown docs: v1 jobs in fenced YAML code blocks, converted where they are written.

A block is converted when its info string's first word is `yaml` or `yml`, or it has none (an
untagged block that is not YAML is left as it is: program output, or a heredoc, listed when it names
a job). Fences are CommonMark's: three or more backticks or tildes, closed by the same character at
least as many times; an indented fence (a list item) has its indentation taken off the block's lines
before they are read, and put back on the converted lines. Every byte outside a converted block
stays; inside it, the pipeline's rules apply (only converted documents change, companions follow
their JobSet as extra documents). A block whose job cannot be converted fails the whole file, with
the .md file's own line and column. Blocks in other languages (a shell heredoc `kubectl apply -f - <<EOF`,
JSON) are never rewritten: a job in them is listed by `--check` as `embedded`; so is a block with Helm
actions (`Helm-skipped`). Pure: text in, a FileResult out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .. import categories
from ..errors import Location, Problem
from ..text.filenames import is_doc_name as is_markdown
from ..files.pipeline import FileResult, convert_source, convert_text
from ..text.classify import TEMPLATE_RE, has_job_evidence, kinds_in, may_hold_job

YAML_INFO = ("yaml", "yml", "")  # "" = untagged
SHELL_INFO = ("sh", "bash", "shell", "console", "zsh", "shell-session", "shellsession", "terminal")

_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\n|\r)|[^\r\n]+\Z")
_OPEN_RE = re.compile(r"( *)(`{3,}|~{3,})(.*)")


@dataclass
class Fence:
    first: int  # 0-based index of the block's first content line
    end: int  # index after its last content line (the closing fence's line, or the number of lines)
    indent: int  # the opening fence's indentation, taken off each content line
    info: str  # first word of the info string, lower-case ("" untagged)


def fences(lines: list[str]) -> list[Fence]:
    out = []
    i = 0
    while i < len(lines):
        m = _OPEN_RE.fullmatch(lines[i].rstrip("\r\n"))
        if not m or (m.group(2)[0] == "`" and "`" in m.group(3)):
            i += 1
            continue
        indent, marker = len(m.group(1)), m.group(2)
        word = m.group(3).strip().split(None, 1)
        info = word[0].lower().strip("{}.") if word else ""
        close = re.compile(rf" *{re.escape(marker[0])}{{{len(marker)},}}[ \t]*")
        j = i + 1
        while j < len(lines) and not close.fullmatch(lines[j].rstrip("\r\n")):
            j += 1
        out.append(Fence(i + 1, j, indent, info))
        i = j + 1
    return out


@dataclass
class MarkdownResult(FileResult):
    """A FileResult over the documents of every converted block, placed at the .md file's lines;
    `left_lines`: what --check lists from blocks that are never rewritten (shell, Helm)."""

    left_lines: list = field(default_factory=list)


def convert_markdown(text: str, path: str, options) -> MarkdownResult:
    result = MarkdownResult(path=path, text=text)
    lines = _LINE_RE.findall(text)
    replaced: list[tuple[Fence, str]] = []
    for fence in fences(lines):
        body = [_dedent(line, fence.indent) for line in lines[fence.first:fence.end]]
        content = "".join(body)
        if not may_hold_job(content, options.katib):
            continue
        if fence.info not in YAML_INFO or ("{{" in content and _helm(content)):  # Helm actions: not YAML
            if has_job_evidence(content, options.katib):
                result.left_lines += _unconverted(path, content, fence)
            continue
        block = convert_text(content, path, options)
        if block.errors and _not_yaml(block) and (not fence.info or not has_job_evidence(content, options.katib)):
            # not YAML and naming no job: left alone; an untagged block that names one (a heredoc) is listed
            if has_job_evidence(content, options.katib):
                result.left_lines += _unconverted(path, content, fence)
            continue
        _shift(block, fence)
        result.documents += block.documents
        result.results += block.results
        result.errors += block.errors
        result.dropped_comments += block.dropped_comments
        if block.changed:
            replaced.append((fence, block.new_text))
    if result.errors or not replaced:
        return result
    pieces, at = [], 0
    for fence, new in replaced:
        pieces += lines[at:fence.first]
        pieces.append(_indent(new, fence.indent))
        at = fence.end
    pieces += lines[at:]
    result.new_text = "".join(pieces)
    return result


def convert_file_text(text: str, path: str, options) -> FileResult:
    """A manifest or, by its name, a Markdown file: what repo mode and `report` convert."""
    return convert_markdown(text, path, options) if is_markdown(path) else convert_source(text, path, options)


def _helm(content: str) -> bool:
    return bool(TEMPLATE_RE.search(content))


def _dedent(line: str, indent: int) -> str:
    stripped = line.lstrip(" ")
    return line[min(indent, len(line) - len(stripped)):]


def _indent(text: str, indent: int) -> str:
    if not indent:
        return text
    pad = " " * indent
    return "".join(line if line in ("\n", "\r\n", "\r") else pad + line for line in _LINE_RE.findall(text))


def _not_yaml(block: FileResult) -> bool:
    """Every error is a document that did not parse, and no document that did holds a job."""
    parse_errors = {id(doc.error) for doc in block.documents if doc.error is not None}
    return all(id(err) in parse_errors for err in block.errors) and not any(r.conversions or r.errors for r in block.results)


def _shift(block: FileResult, fence: Fence) -> None:
    """Positions inside the block -> positions in the .md file (lines after the fence, columns past its indentation)."""
    for doc in block.documents:
        doc.start_line += fence.first
    moved = {}  # a parse error is both a document's and the file's: the same object (run.py pairs them by identity)
    for doc in block.documents:
        if doc.error is not None:
            new = type(doc.error)([_moved(p, fence) for p in doc.error.problems])
            moved[id(doc.error)] = new
            doc.error = new
    block.errors = [moved.get(id(err)) or type(err)([_moved(p, fence) for p in err.problems]) for err in block.errors]


def _moved(p: Problem, fence: Fence) -> Problem:
    loc = p.location
    if loc.line is None:
        return p
    # no document number: it would count the block's documents, and the line says where it is
    return Problem(p.message, Location(loc.file, None, loc.line + fence.first,
                                       None if loc.column is None else loc.column + fence.indent, loc.path), p.rule, p.hint)


def _unconverted(path: str, content: str, fence: Fence) -> list[tuple[str, str]]:
    """--check lines for jobs in a block that is never rewritten, at the .md file's lines."""
    if not fence.info and not ("{{" in content and _helm(content)):
        category, why = categories.EMBEDDED, ("in an untagged block that is not YAML (a shell heredoc?): never rewritten; convert "
                                               "the YAML (kf2jobset convert - reads stdin) and paste it back")
    elif fence.info in YAML_INFO:
        category, why = categories.HELM, "a YAML block with Helm template actions: not converted; render it first, then edit the block"
    elif fence.info in SHELL_INFO:
        category, why = categories.EMBEDDED, (f"in a ```{fence.info} block (a shell heredoc?): never rewritten; convert the "
                                               "YAML (kf2jobset convert - reads stdin) and paste it back")
    else:
        category, why = categories.EMBEDDED, f"in a ```{fence.info} block: never rewritten; convert it by hand"

    out = []
    for line, kind in kinds_in(content):
        out.append((category, f"{path}:{fence.first + line}: {kind}: {category}: {why}"))
    return out
