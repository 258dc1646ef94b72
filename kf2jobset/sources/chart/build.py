"""One document of a chart template (a chunk between `---` lines), converted: stand-ins planned, the
variants converted twice, merged, and the actions put back. See kf2jobset/sources/chart/source.py."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ...errors import Kf2JobSetError, format_path
from ...notes import Note
from ...files.pipeline import convert_text
from ...text.classify import may_hold_job
from ...text.yamlio import detect_style
from . import gotemplate as gt
from . import standins as si
from .numeric import probe
from .fold import fold
from .merge import merge
from .passthrough import renders_no_job
from .names import guard
from .reorder import reorder_like
from .restore import write
from .sizes import COUNTS, Sizes
from .skeleton import BLOCK, EXPAND, LINES, SCALAR, Program, inline_blocks
from .refusal import Refusal
from .resource_names import holds_resource_names, unprefixed

# a word of a choice may hold dashes (`etcd-v2`, `ClusterFirstWithHostNet` alike): one word on both sides
_WORD = re.compile(r"[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*|[^A-Za-z0-9_]")
_BLOCK_SOURCES = re.compile(r"^\(?\s*(?:toYaml|tpl|\$?\.Files\.Get|\$?\.Files\.Glob)\b")


@dataclass
class Converted:
    text: str
    conversions: list = field(default_factory=list)
    notes: list = field(default_factory=list)


def convert_chunk(text: str, path: str, helpers: dict, taken: str, options) -> Converted:
    try:
        nodes = gt.parse(text)
    except gt.TemplateError as e:
        raise Refusal(f"cannot read the template: {e.message}", e.line) from None
    program = Program(nodes, text, path, helpers, taken)
    inline = inline_blocks(nodes, text)
    for _, (define, _file, htext) in helpers.items():
        inline |= inline_blocks(define.body, htext)
    program.inline_ids = inline
    program.classify = lambda node, form, source: _default_kind(node, form, source, helpers)

    if renders_no_job(Work(program, path, options), text):
        return Converted(text)  # what the post-renderer leaves as it is (a Service labelled `createdBy: PyTorchJob`)
    while True:
        work = Work(program, path, options)
        work.plan()
        try:
            items, work.folding = fold(program, merge(work))
            out = write(work, items)
            break
        except Refusal as r:
            # a helper of the chart standing in as one line, which the conversion reads or changes:
            # its own text instead (the conversion sees into it; the template holds it inline)
            slot = program.slots.get(r.slot) if r.slot else None
            call = gt.helper_call(slot.form.source) if slot is not None and hasattr(slot.node, "pipeline") else None
            if call is None or call[0] not in helpers or program.plan.kinds.get(r.slot[:-1]) == EXPAND:
                raise
            program.plan.kinds[r.slot[:-1]] = EXPAND
    if not work.conversions:
        if may_hold_job(re.sub(r"(?m)^[ \t]*#.*$", "", text)) and not work.embedded:
            # nothing passes silently: a job kind the template names (outside comments) that did not convert
            raise Refusal("with stand-ins for its values no job converts, yet the template names a Kubeflow job "
                          "kind: its apiVersion or kind comes from the values")
        return Converted(text)  # a job kind named in comments only, or inside what the post-renderer leaves: as it was

    out = guard(work, out)
    if out.startswith("\n") and not text.startswith("\n"):
        out = out[1:]  # the line break a leading block's action ate, left by the merge before it
    return Converted(out, work.conversions, _notes(work))


def _notes(work) -> list:
    """(job name, note) to print: the conversion's own, actions put back in their text, and HELM001."""
    import dataclasses

    out = []
    for conv in work.conversions:
        name = work.restore_text(conv.job.display_name())
        for note in conv.notes:
            if note.printed:
                out.append((name, dataclasses.replace(note, message=work.restore_text(note.message),
                                                      action=work.restore_text(note.action) if note.action else None)))
    ours = sorted(set(re.findall(r"(?m)^\s*- name: ([A-Z][A-Z0-9_]*)\s*$", "\n".join(work.reference or ())))
                  - set(re.findall(r"\b[A-Z][A-Z0-9_]*\b", work.program.text)))
    if work.env_writers and ours and work.conversions:
        writers = sorted({f"{{{{ {work.program.slots[k].source} }}}}" for k in work.env_writers})
        out.append((work.restore_text(work.conversions[0].job.display_name()), Note(
            "HELM001", "approximated",
            f"env entries the values write ({', '.join(writers)}) are not merged with the variables kf2jobset writes "
            f"({', '.join(ours[:8])}{', ...' if len(ours) > 8 else ''}): values naming one of these would repeat the "
            "name, where the post-renderer keeps the value the operator gave it",
            source_path="env", action="keep these names out of the values, or render the chart with the post-renderer",
            warn=True, unchecked="about values the chart is installed with, which the conversion never sees")))
    out += _inlined(work)
    return out


def _inlined(work) -> list:
    """HELM002: each include of a helper still written as the helper's own text (chart/fold.py)."""
    p, out, said = work.program, [], set()
    if not work.conversions or work.folding is None:
        return out
    job = work.restore_text(work.conversions[0].job.display_name())
    for key, why in work.folding.why.items():
        slot = p.expanded[key]
        name = gt.helper_call(slot.form.source)[0]
        if (name, slot.line) in said:
            continue
        said.add((name, slot.line))
        where = f"line {slot.line}" if slot.file == work.path else f"{slot.file}:{slot.line}"
        copies = " in some of the branches the values pick" if key in work.folding.kept else ""
        out.append((job, Note(
            "HELM002", "rewritten",
            f"{{{{ {slot.form.source} }}}} at {where} is written out as the lines of helper "
            f"{name!r}{copies}: {work.restore_text(why)}; an edit of {name!r} in {p.helpers[name][1]} no longer "
            "changes what this template renders there",
            source_path=f"{slot.file}:{slot.line}",
            action=f"make such edits in the converted template's lines where {name!r} was, or render the chart "
                   "with the post-renderer to keep the include",
            warn=True, unchecked="about the chart's text, which the converted objects do not hold")))
    return out


def _default_kind(node, form: gt.Indented, source: str, helpers: dict) -> str:
    """How an action writing a value stands in before anything is known about where it lands."""
    call = gt.helper_call(form.source)
    level = _line_level(node.action, source)
    if form.function and source.startswith(":", node.action.end):
        return SCALAR  # a key written indented (`{{ .Values.chiefName | indent 4 }}:`): a scalar, its padding kept
    if form.function:
        return BLOCK
    if call and call[0] in helpers and level and _writes_lines(helpers[call[0]]):
        return BLOCK
    if level and _BLOCK_SOURCES.match(form.source) and not node.action.trim_right:
        return BLOCK
    return SCALAR


def _line_level(action: gt.Action, source: str) -> bool:
    start = source.rfind("\n", 0, action.start) + 1
    end = source.find("\n", action.end)
    end = len(source) if end < 0 else end
    return not (source[start:action.start].strip() or source[action.end:end].strip())


def _writes_lines(helper) -> bool:
    define, _file, text = helper
    body = text[define.action.end:define.end.start] if define.end else ""
    return "\n" in body.strip() or bool(re.search(r"^\s*[\w./-]+:\s", body.strip())) or body.strip().startswith("- ")


class Work:
    """The conversions of one chunk's variants, cached by rendered text."""

    def __init__(self, program: Program, path: str, options):
        self.program, self.path, self.options = program, path, options
        self.cache: dict[str, object] = {}
        self.conversions: list = []
        self.notes: list = []
        self.reference: list | None = None  # the base variant's lines: other variants' keys follow their order
        self.style: str | None = None  # a first document that fixes the indentation style of lists
        self.paths: dict = {}  # where a stand-in sits in the job (a block's: the value it fills) -> its slot key
        self.env_writers: set = set()  # slots whose values write a container's env entries (HELM001)
        self.choices: dict = {}  # share -> every word a choice's stand-in may be (check_choices)
        self.typed_at: dict = {}  # share -> the keys its choice is written at (two choices with one pair of words)
        self.embedded = False
        self.folding = None  # the helpers' texts written as their includes again (chart/fold.py)
        self.unprobed: set = set()  # string stand-ins that digits make invalid (chart/numeric.py)

        self.sizes = Sizes(program.prefix, program.plan.counts)  # values derived from replica counts

    # ---- stand-ins ---------------------------------------------------------------------------------

    def plan(self) -> None:
        """Render the base variant with string tokens, read where every token lands, and fix each
        stand-in's shape from kf2jobset's schemas; repeat until nothing changes."""
        import yaml

        p = self.program
        for _ in range(12):
            text = p.render({})
            if self._probe_lists(text):
                continue
            try:
                docs, seen = si.locate(text)
            except yaml.YAMLError as exc:
                if not self._probe_items(text, exc):
                    line = getattr(getattr(exc, "problem_mark", None), "line", None)
                    raise Refusal(f"with stand-ins for its values it is not YAML ({_first_line(exc)})"
                                  + self._near(text, line)) from None
                continue
            if not self._shape(docs, seen):
                return
        raise Refusal("the stand-ins for its values did not settle")

    def _near(self, text: str, line) -> str:
        if line is None:
            return ""
        lines = text.split("\n")
        around = " / ".join(ln.strip() for ln in lines[max(0, line - 1):line + 1] if ln.strip())
        return f"; near: {self.restore_text(around)}"

    def _probe_lists(self, text: str) -> bool:
        """A block stand-in written as an entry where its neighbours at its indentation are list items
        (`env:` items, then `{{ toYaml .Values.extraEnv | nindent 16 }}`): an item instead."""
        lines = text.split("\n")
        tokens = self.program.tokens(0)
        changed = False
        for i, line in enumerate(lines):
            m = re.match(r"^( *)(kfq[ab][0-9]{4}z): \2$", line)
            key = tokens.get(m.group(2)) if m else None
            if key is None or self.program.plan.standins.get(key[:-1], "{t}: {t}") != "{t}: {t}":
                continue
            ind = len(m.group(1))
            above = _neighbour(lines, i, -1, ind)
            opened = re.match(rf"^ {{{ind}}}[^\s#-][^#]*:\s*$", above)  # `env:` then items at its own indentation
            if opened or any(_sibling_item(ln, ind) for ln in (above, _neighbour(lines, i, 1, ind))):
                self.program.plan.standins[key[:-1]] = "- {t}"
                changed = True
        return changed

    def _probe_items(self, text: str, exc) -> bool:
        """A block written where the YAML around it is a list: stand in as an item instead."""
        mark = getattr(exc, "problem_mark", None)
        if mark is None:
            return False
        lines = text.split("\n")
        tokens = self.program.tokens(0)
        for ln in (mark.line, mark.line - 1, mark.line + 1, mark.line - 2):
            if 0 <= ln < len(lines):
                for t in si.TOKEN_RE.findall(lines[ln]):
                    key = tokens.get(t)
                    if key and self.program.plan.kinds.get(key[:-1]) == BLOCK and \
                            self.program.plan.standins.get(key[:-1], "{t}: {t}") == "{t}: {t}":
                        self.program.plan.standins[key[:-1]] = "- {t}"
                        return True
        return False

    def _shape(self, docs, seen) -> bool:
        p = self.program
        tokens = p.tokens(0)
        changed = False
        for s in seen:
            key = tokens.get(s.token)
            if key is None:
                continue
            base = key[:-1]
            api, kind = docs[s.doc]
            kind_of = p.plan.kinds.get(base, SCALAR)
            self.paths.setdefault(s.path if kind_of == SCALAR else s.path[:-1], key)
            names_env = (s.path[-3:-2] == ("env",) and s.path[-1:] == ("name",)) if kind_of == SCALAR else \
                ("env" in s.path[-3:-1])  # a block's probe: an entry (its key's parent) or an item of env
            if names_env and si.schema_at(api, kind, ()) is not None:
                self.env_writers.add(key)
            if kind_of == BLOCK:
                changed |= self._shape_block(base, s, api, kind)
            elif kind_of != SCALAR or s.role == "part":
                continue
            elif s.role == "key":
                changed |= self._shape_key(key, s, api, kind)
            else:
                changed |= self._shape_scalar(key, s, api, kind)
        return changed

    def _shape_block(self, base, s: si.Seen, api, kind) -> bool:
        """A block token's stand-in, reshaped to what its place holds; True when it changed."""
        p = self.program
        probe = p.plan.standins.get(base, "{t}: {t}")
        if probe not in ("{t}: {t}", "- {t}"):
            return False  # shaped already
        if s.role != "part" and s.role != ("key" if probe == "{t}: {t}" else "value"):
            return False  # the probe entry's value: its key says where it sits
        new = self._block_shape(base, s, api, kind)
        if new == LINES:
            p.plan.kinds[base] = LINES
            return True
        if new is not None and new != p.plan.standins.get(base, "{t}: {t}"):
            p.plan.standins[base] = new
            return True
        return False

    def _shape_key(self, key, s: si.Seen, api, kind) -> bool:
        """A scalar token written as a key: a resource name is carried (True when newly so); a key that
        decides what the entry is (a replica type, a field) is refused."""
        p = self.program
        if holds_resource_names(s.path[:-1]) and si.schema_at(api, kind, ()) is not None:
            if p.share.get(key, key) not in p.plan.resource_names:
                p.plan.resource_names.add(p.share.get(key, key))
                return True
            return False
        parent = si.schema_at(api, kind, s.path[:-1])
        if parent is not None and not si.is_string_map(parent):
            ranges = [p.regions[r] for r, _ in p.slots[key].regions if p.regions[r].block.kind == "range"]
            inside = (f" (inside {{{{ {ranges[-1].block.branches[0].action.body} }}}}, line {ranges[-1].line}: "
                      "the range writes the entries)") if ranges else ""
            raise Refusal(f"{_shown(p.slots[key])} writes a key at {_path(s.path[:-1])}{inside}, where the key "
                          "decides what the entry is (a replica type, a field)", p.slots[key].line,
                          p.slots[key].file)
        return False

    def _shape_scalar(self, key, s: si.Seen, api, kind) -> bool:
        """A scalar token written as a value: a replica count, a number or one of the schema's words, each
        given its own stand-ins; True when the plan changed."""
        p = self.program
        schema = si.schema_at(api, kind, s.path)
        how = si.scalar_kind(schema)
        share = p.share.get(key, key)
        words = si.choices(schema, s.path)
        if words:
            self.typed_at.setdefault(share, set()).add(s.path[-1])
        if how == "number" and _replica_count(si.job_path(api, kind, s.path)) and share not in p.plan.counts:
            if len(p.plan.counts) >= len(COUNTS):
                raise Refusal(f"{_shown(p.slots[key])}: more than {len(COUNTS)} replica counts come from the values",
                              p.slots[key].line, p.slots[key].file)
            p.plan.counts[share] = COUNTS[len(p.plan.counts)]
            p.plan.numbers.discard(share)
            return True
        if how == "number" and share not in p.plan.numbers and share not in p.plan.counts:
            p.plan.numbers.add(share)
            if s.path[-3:-1] == ("resources", "requests"):
                p.plan.requests.add(share)
            return True
        if words and share not in p.plan.typed:
            k = len(p.plan.typed)
            p.plan.typed[share] = (words[k % len(words)], words[(k + 1) % len(words)])
            self.choices[share] = words
            return True
        return False

    def _block_shape(self, base, s: si.Seen, api, kind):
        """The stand-in line for a block token seen in the probe render (LINES: inside a string)."""
        if s.role == "part":
            return LINES
        if si.schema_at(api, "Kind", ()) is None and (api, kind) == (None, None):
            return None
        probe_entry = s.role == "key"
        parent_path = s.path[:-1]
        parent = si.schema_at(api, kind, parent_path)
        if parent is None:
            return None  # a document kf2jobset does not convert: the probe line passes through as it is
        line = si.block_line(parent, whole_value=probe_entry, item=not probe_entry)
        if line is None:
            slot = next(v for k, v in self.program.slots.items() if k[:-1] == base)
            raise Refusal(f"{_shown(slot)} writes YAML lines at {_path(parent_path)}, where kf2jobset cannot stand in "
                          "for what they hold", slot.line, slot.file)
        return line

    # ---- conversions -------------------------------------------------------------------------------

    def convert(self, choice: dict, iterations: dict | None = None) -> "Variant":
        """The variant's conversion with both token sets; the first set's output lines, or the error."""
        p = self.program
        text0 = p.render(choice, 0, iterations)
        if text0 in self.cache:
            return self.cache[text0]
        text1 = p.render(choice, 1, iterations)
        v = Variant(choice, iterations or {}, text0)
        r0 = self._run(text0)
        if isinstance(r0, Kf2JobSetError):
            v.error = r0
        else:
            r1 = self._run(text1)
            if isinstance(r1, Kf2JobSetError):
                v.error = r1
            else:
                v.lines = r0[0].split("\n")
                v.other = self.swap(r1[0]).split("\n")
                v.conversions = r0[1]
                probe(self, text0, r0[0])  # a string the conversion reads as a number when it is one: refused
                if self.reference is not None:
                    v.lines, v.other = reorder_like(v.lines, self.reference), reorder_like(v.other, self.reference)
                v.raw = list(v.lines)
                if v.lines != v.other and (p.plan.typed or p.plan.counts):
                    self._compared(v)
        self.cache[text0] = v
        return v

    def _compared(self, v: "Variant") -> None:
        """Where the two sets wrote different text for a stand-in found by comparison (a choice's word, a
        replica count and what is derived from it: chart/sizes.py), both get the same marker."""
        lines, other = v.lines, v.other
        if self.program.plan.counts:
            p = self.program
            self.sizes.numbers = {p.share.get(k, k): (p.token(k, 0), p.token(k, 1)) for k in p.slots
                                  if p.share.get(k, k) in p.plan.numbers}
            lines, other = self.sizes.blocks(list(lines), list(other))
        if len(lines) != len(other):
            return
        for i, (a, b) in enumerate(zip(lines, other, strict=False)):
            if a != b:
                same = self._typed_line(a, b) or (self.sizes.line(a, b) if self.program.plan.counts else None)
                if same is not None:
                    lines[i] = other[i] = same
        v.lines, v.other = lines, other

    def check_choices(self, base: "Variant") -> None:
        """A choice's words were tried two at a time; the others too: with each, the base's conversion must be
        the same but for the word itself (a restart policy decides more than its own line: refused)."""
        p = self.program
        for share, (w0, w1) in list(p.plan.typed.items()):
            words = self.choices.get(share, ())
            for word in words:
                if word in (w0, w1):
                    continue
                p.plan.typed[share] = (word, w1)
                try:
                    out = self._run(p.render(base.choice, 0))
                finally:
                    p.plan.typed[share] = (w0, w1)
                lines = out[0].split("\n") if not isinstance(out, Kf2JobSetError) else None
                if self.reference is not None and lines is not None:
                    lines = reorder_like(lines, self.reference)
                if lines is None or len(lines) != len(base.raw) or any(
                        a != b and not _choice_only(a, b, w0, word) for a, b in zip(base.raw, lines, strict=False)):
                    key = next(k for k in p.slots if p.share.get(k, k) == share)
                    raise Refusal(f"{{{{ {p.slots[key].source} }}}} writes one of {', '.join(words)}, which the "
                                  f"conversion reads: with {word} it writes another job, not just another word",
                                  p.slots[key].line, p.slots[key].file, key)

    def _typed_line(self, a: str, b: str) -> str | None:
        """A line where only choices' words differ (`Always`/`IfNotPresent`, `true`/`false`): each word written
        as that action's string token (None: something else differs too)."""
        p = self.program
        pairs: dict = {}
        for share, pair in p.plan.typed.items():
            pairs.setdefault(pair, []).append(share)
        keys = {p.share.get(k, k): k for k in p.slots}
        wa, wb = _WORD.findall(a), _WORD.findall(b)
        if not pairs or len(wa) != len(wb):
            return None
        new = []
        at = re.match(r"^\s*(?:-\s+)?([\w./-]+):", a)
        for x, y in zip(wa, wb, strict=False):
            shares = pairs.get((x, y), []) if x != y else []
            if len(shares) > 1 and at:  # words alike: the choice written at this line's key
                shares = [s for s in shares if at.group(1) in self.typed_at.get(s, ())]
            if x != y and len(shares) != 1:
                return None  # not a choice's stand-in, or two alike
            new.append(f"{p.prefix}a{p.serial_of(keys[shares[0]]):04d}z" if x != y else x)
        return "".join(new)

    def _run(self, text: str):
        """Convert a rendered variant as the post-renderer would, in one indentation style for every
        variant: kf2jobset writes lists the way the text's first list is written, which a branch can
        change (a document that starts with this style's list fixes it, and is cut off again)."""
        if self.style is None:
            offset = detect_style(text).offset
            self.style = f"kfqstyle:\n{' ' * offset}- {self.program.prefix}\n---\n"
        result = convert_text(self.style + text, self.path, self.options)
        if result.errors:
            return result.errors[0] if len(result.errors) == 1 else type(result.errors[0])(
                [p for e in result.errors for p in e.problems])
        out = unprefixed(result.new_text if result.new_text is not None else self.style + text)
        numbers = {str(self.program.token(k, s)) for k in self.program.slots for s in (0, 1)}
        out = si.quoted_colon_numbers(out, {n for n in numbers if n.isdigit()})
        if any(r.unconverted for r in result.results):
            self.embedded = True  # a job inside another object the post-renderer leaves too (an AppWrapper, Katib)
        return out[len(self.style):] if out.startswith(self.style) else out, result.conversions

    def swap(self, text: str) -> str:
        """Second-set stand-ins replaced by the first set's."""
        p = self.program
        compared = p.plan.typed.keys() | p.plan.counts.keys()  # found by comparing the lines instead
        table = {str(p.token(k, 1)): str(p.token(k, 0)) for k in p.slots if p.share.get(k, k) not in compared}
        strings = {a: b for a, b in table.items() if not a.isdigit()}
        numbers = {a: b for a, b in table.items() if a.isdigit()}
        text = si.TOKEN_RE.sub(lambda m: strings.get(m.group(0), m.group(0)), text)
        if numbers:
            text = re.sub(r"(?<![\w.])(" + "|".join(sorted(numbers, key=len, reverse=True)) + r")(?![\w.])",
                          lambda m: numbers[m.group(1)], text)
        return text

    def restore_text(self, text: str) -> str:
        """Tokens put back as the actions they stand for (for messages)."""
        p = self.program
        compared = p.plan.typed.keys() | p.plan.counts.keys()
        table = {str(p.token(k, s)): f"{{{{ {p.slots[k].source} }}}}" for k in p.slots for s in (0, 1)
                 if p.share.get(k, k) not in compared}
        text = si.TOKEN_RE.sub(lambda m: table.get(m.group(0), m.group(0)), unprefixed(text))
        numbers = {t: v for t, v in table.items() if t.isdigit()}
        if numbers:  # a range in words (`601..613`) holds two
            text = re.sub(r"(?<!\w)(?<!\d\.)(" + "|".join(sorted(numbers, key=len, reverse=True)) + r")(?!\w|\.\d)",
                          lambda m: numbers[m.group(1)], text)
        return text


@dataclass
class Variant:
    choice: dict
    iterations: dict
    text: str
    lines: list | None = None
    other: list | None = None  # the second set's output, its tokens swapped for the first set's
    error: Kf2JobSetError | None = None
    conversions: list = field(default_factory=list)
    raw: list | None = None  # the first set's lines before the compared stand-ins were marked


def _neighbour(lines: list, i: int, step: int, indent: int) -> str:
    """The nearest line with content above (step -1) or below (+1) that is not indented deeper."""
    j = i + step
    while 0 <= j < len(lines):
        ln = lines[j]
        if ln.strip() and not ln.lstrip().startswith("#") and len(ln) - len(ln.lstrip(" ")) <= indent:
            return ln
        j += step
    return ""


def _sibling_item(line: str, indent: int) -> bool:
    return len(line) - len(line.lstrip(" ")) == indent and line.lstrip(" ").startswith("-")


def _choice_only(a: str, b: str, was: str, word: str) -> bool:
    """Lines that differ only where `a` has the word `was` and `b` has `word`."""
    wa, wb = _WORD.findall(a), _WORD.findall(b)
    return len(wa) == len(wb) and all(x == y or (x, y) == (was, word) for x, y in zip(wa, wb, strict=False))


def _replica_count(path: tuple | None) -> bool:
    return path is not None and len(path) == 4 and path[0] == "spec" and isinstance(path[1], str) and path[1].endswith("ReplicaSpecs") \
        and path[3] == "replicas"


def _first_line(exc) -> str:
    return str(exc).strip().split("\n")[0]


def _shown(slot) -> str:
    return f"{{{{ {slot.source} }}}}"


def _path(path: tuple) -> str:
    return format_path(path, empty="the document")


