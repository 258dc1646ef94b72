"""A chart template that renders v1 jobs, rewritten into one that renders what kf2jobset writes for them.

The promise, for every values set: `helm template` of the converted chart equals `helm template` of
the original piped through `kf2jobset convert -`. It is kept by construction and checked:

1. The template is read as Go's text/template reads it (gotemplate.py) and cut into documents at the
   `---` lines outside any block; documents that name no v1 job stay byte for byte.
2. Every choice Helm makes from the values is a region (skeleton.py); each variant of the choices is
   rendered with stand-ins for the values (standins.py picks their shape) and converted by the same
   pipeline as the post-renderer (pipeline.convert_text), twice, with two sets of stand-ins: after
   putting the actions back, both must be the same text (the conversion only carried the values).
3. The variants' conversions are merged line by line (merge.py): lines that differ between the
   alternatives of a region are wrapped in that region's own control actions; anything the merge
   cannot place is refused with the construct, the file and the line, naming the post-renderer.
4. The stand-ins are replaced by the template's actions (restore.py), indentation of YAML-lines
   actions following the lines they now sit in.

Pure: texts in (the template and the chart's helper files), text or errors out.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...errors import Kf2JobSetError, Location, Problem, UnsupportedError
from ...text.classify import kinds_in, may_hold_job
from . import gotemplate as gt

from .build import convert_chunk
from .refusal import POST_RENDERER, RULE, Refusal


@dataclass
class TemplateResult:
    path: str
    text: str
    new_text: str | None = None
    errors: list = field(default_factory=list)  # Kf2JobSetError
    conversions: list = field(default_factory=list)  # the base variant's conversions (for --check)
    notes: list = field(default_factory=list)  # (job name, Note) to print: the actions put back in their text

    @property
    def changed(self) -> bool:
        return self.new_text is not None and self.new_text != self.text


@dataclass(frozen=True)
class Chunk:
    start: int  # offset in the file
    end: int
    line: int  # 1-based line of its first character

    def text(self, whole: str) -> str:
        return whole[self.start:self.end]


def chunks(text: str) -> list[Chunk]:
    """The file cut at `---` lines that sit outside every if/with/range/define."""
    cuts = [0]
    depth = 0
    for piece in _raw_pieces(text):
        start, end, action = piece
        if action is None:
            if depth == 0:
                for m in re.finditer(r"(?m)^---[ \t]*(?:#[^\n]*)?$", text[start:end]):
                    at = start + m.start()
                    if at > 0:
                        cuts.append(at)
        else:
            word = action.word
            if word in ("if", "with", "range", "define") and not gt._DECL.match(action.body):
                depth += 1
            elif action.body == "end":
                depth -= 1
    cuts = sorted(set(cuts))
    bounds = cuts[1:] + [len(text)]
    return [Chunk(s, e, text.count("\n", 0, s) + 1) for s, e in zip(cuts, bounds, strict=False) if e > s]


def _raw_pieces(text: str):
    pos = 0
    while True:
        at = text.find("{{", pos)
        if at < 0:
            yield pos, len(text), None
            return
        yield pos, at, None
        action = gt._action(text, at)
        yield at, action.end, action
        pos = action.end


def helpers_of(files: dict[str, str]) -> dict:
    """name -> (Define, file, text) over the chart's template files (what Helm loads as named templates).
    A file that does not read as a template contributes nothing (Helm would fail on it anyway)."""
    out = {}
    for name in sorted(files):
        try:
            nodes = gt.parse(files[name])
        except gt.TemplateError:
            continue
        for dname, define in gt.defines(nodes).items():
            out[dname] = (define, name, files[name])
    return out


def convert_chart_template(text: str, path: str, chart_files: dict[str, str], options) -> TemplateResult:
    """Convert one template file of a chart. `chart_files`: path -> text of every file under the chart's
    templates/ (helpers included)."""
    result = TemplateResult(path, text)
    helpers = helpers_of(chart_files)
    pieces = []
    taken = text + "".join(chart_files.values())
    for chunk in chunks(text):
        piece = chunk.text(text)
        if not may_hold_job(piece, options.katib):
            pieces.append(piece)
            continue
        try:
            converted = convert_chunk(piece, path, helpers, taken, options)
        except Refusal as r:
            if r.file not in (None, path):  # in a helper file: its own line
                where = Location(r.file, line=r.line)
            else:
                where = Location(path, line=chunk.line + r.line - 1 if r.line else chunk.line)
            result.errors.append(UnsupportedError(Problem(
                f"this Helm template cannot be converted at the source: {r.message}", where, RULE, POST_RENDERER)))
            continue
        except Kf2JobSetError as err:  # the job itself is refused, as the post-renderer would refuse it
            line = _kind_line(piece, chunk.line)
            result.errors.append(type(err)([_in_template(p, path, line) for p in err.problems]))
            continue
        pieces.append(converted.text)
        result.conversions += converted.conversions
        result.notes += converted.notes
    if not result.errors:
        result.new_text = "".join(pieces)
    return result


def _in_template(p: Problem, path: str, line: int) -> Problem:
    return Problem(f"the job this template renders: {p.message}", Location(path, line=line), p.rule, p.hint)


def _kind_line(piece: str, first_line: int) -> int:
    """The line of the chunk's `kind: <job kind>` (its first line when the kind is written otherwise)."""
    kinds = kinds_in(piece)
    return first_line + kinds[0][0] - 1 if kinds else first_line


