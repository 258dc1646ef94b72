"""One file's text -> its converted text, spliced so that unconverted documents keep every byte.

Shared by `convert` (stdout), the repo mode (--in-place / --out-dir / --check) and the pre-commit
hook. Pure: text in, text out (the shells read the files: repo/fsio.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import cached_property

from ..core.convert import is_job
from ..core.document_result import DocumentResult
from ..core.document_routing import convert_document
from ..errors import Kf2JobSetError, Location, Problem
from ..options import ConvertOptions
from ..targets import target_of
from ..text.classify import may_hold_job
from ..text.yamlio import Document, detect_style, dump_documents, parse_documents, position, to_plain


@dataclass
class FileResult:
    path: str
    text: str
    documents: list[Document] = field(default_factory=list)
    results: list[DocumentResult] = field(default_factory=list)
    errors: list[Kf2JobSetError] = field(default_factory=list)
    new_text: str | None = None  # None when nothing was converted (or on error)
    dropped_comments: int = 0  # comments on v1 fields that have no place in the JobSet
    engine: str | None = None  # a `{{ }}` template file: the engine it is written for (brace_templates.py)

    @property
    def conversions(self):
        return [c for r in self.results for c in r.conversions]

    @property
    def changed(self) -> bool:
        return self.new_text is not None and self.new_text != self.text

    def unconverted_lines(self) -> list[str]:
        """`file:line:column: document N: <path> holds a <kind> ...` for each v1 job left inside another object."""
        out = []
        for i, (doc, res) in enumerate(zip(self.documents, self.results, strict=False)):
            for emb in res.unconverted:
                line, col = position(doc.data, emb.path, doc.start_line)  # where the job is held, as --check says
                if line is None:
                    line, col = doc.start()
                out.append(f"{self.path}:{line}:{col}: document {i + 1}: {emb.message()}")
        return out

    @cached_property
    def edited(self) -> list:
        """The converted JobSets and TrainJobs of the file an edit left stale (kf2jobset/checks/staleness.py
        edited_objects): converting leaves them as they are, so every mode warns of them."""
        from ..checks.edit_checks import edited_objects

        return edited_objects(self.text)


def convert_source(text: str, path: str, options: ConvertOptions) -> FileResult:
    """A file as its author wrote it: a Go text/template or Jinja file outside Helm charts is converted through
    stand-ins for its placeholders (kf2jobset/sources/brace_files.py); any other file is convert_text's."""
    if "{{" in text or "{%" in text:  # the only cost for a file without templates
        from ..sources.brace_templates import engine_of

        engine = engine_of(text, path)
        if engine is not None:
            from ..sources.brace_files import convert_template_file

            return convert_template_file(text, path, options, engine, convert_text)
    return convert_text(text, path, options)


def convert_text(text: str, path: str, options: ConvertOptions) -> FileResult:
    result = FileResult(path=path, text=text)
    # Documents that cannot hold a job (no `kind: <job kind>` / Experiment / List line) are only
    # syntax-checked: they pass through verbatim anyway.
    # Comments are carried over by position (text/comments.py), not on the parsed objects.
    docs = parse_documents(text, path, select=lambda doc: _may_convert(doc, options), without_comments=True)
    result.documents = docs
    configmaps = _configmaps(docs)
    if configmaps:
        options = replace(options, sibling_configmaps=configmaps)

    parsed = any(d.data is not None for d in docs)  # a job (or its neighbours) to convert
    if parsed or options.selector_peers:  # objects of the file (and of the run) that select pods
        from ..core.selectorfix import peers_of  # the runtime models: only where a job converts

        peers = peers_of(docs, path, options.selector_peers) if parsed else ()
        if peers or options.selector_peers:
            options = replace(options, selector_peers=peers)
    for doc in docs:
        if doc.error is not None:
            result.errors.append(doc.error)
            result.results.append(DocumentResult())
            continue
        res = _held_text(doc, path, options, docs) or convert_document(doc.data, options)
        result.results.append(res)
        _program_template(doc, res)
        for err in res.errors:
            result.errors.append(_locate(err, path, doc))
    if result.errors or not any(r.changed for r in result.results):
        return result
    target_of(options).share([r.outputs for r in result.results if r.outputs is not None])
    if path.lower().endswith(".json") and not any(r.new_text is not None for r in result.results):
        json_text = _render_json(text, docs, result.results)
        if json_text is not None:
            result.new_text = json_text
            return result
    from ..core.selectorfix import edit_peers

    edited = edit_peers(docs, [e for c in result.conversions for e in c.peer_edits])
    style = detect_style(text)
    pieces = []
    last = len(docs) - 1
    for i, (doc, res) in enumerate(zip(docs, result.results, strict=False)):
        if res.new_text is not None:
            pieces.append(res.new_text)  # job text converted inside a string scalar: the rest as it was
        elif res.changed:
            piece, dropped = _render_converted(doc, res, style, options, final=i == last)
            pieces.append(piece)
            result.dropped_comments += dropped
        elif i in edited:
            pieces.append(edited[i])  # a selector rewritten to JobSet labels (selectorfix); the rest verbatim
        else:
            pieces.append(doc.text)  # verbatim: every byte, including a missing final newline
    result.new_text = "".join(pieces)
    return result


def _program_template(doc: Document, res: DocumentResult) -> None:
    """A job written as a template for a program (kf2jobset/sources/progtemplate.py): its errors name the
    placeholders, and a conversion of it says on stderr that it holds them (TPL003)."""
    if res.new_text is not None or not is_job(doc.data):
        return
    from ..sources import progtemplate

    slots = progtemplate.find(doc.data, doc.text)
    if res.errors:
        res.errors[:] = [progtemplate.explain(err, slots) for err in res.errors]
    elif slots:
        for conv in res.conversions:
            conv.notes.append(progtemplate.note(slots))


def _configmaps(docs: list[Document]) -> tuple:
    """The file's ConfigMaps (parsed), where pod addresses a job's pods used may be written
    (kf2jobset/core/addresses.py offers v1's per-pod Services for them; the documents stay as they are)."""
    out = []
    for d in docs:
        if d.error is not None or "ConfigMap" not in d.text:
            continue
        data = d.data
        if data is None:
            import yaml

            try:
                data = yaml.load(d.text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
            except yaml.YAMLError:
                continue
        if isinstance(data, dict) and data.get("kind") == "ConfigMap" and data.get("apiVersion") == "v1":
            out.append(data)
    return tuple(out)


def _held_text(doc: Document, path: str, options: ConvertOptions, docs: list[Document]) -> DocumentResult | None:
    """Job text inside a string scalar (Argo resource manifests; Katib trial templates in ConfigMaps and the
    Experiments reading them, with --katib): kf2jobset/sources/jobs_in_strings.py, the inner text converted like a file."""
    from ..sources import jobs_in_strings, katib_configmaps

    if not jobs_in_strings.may_hold(doc.data, options):
        return None

    def templates():  # the run's (repo mode gathers them from every file) and this file's own
        unparsed = [d.text for d in docs if d.data is None and "ConfigMap" in d.text]  # no job kind: not parsed
        return (options.katib_trial_templates + katib_configmaps.trial_templates([d.data for d in docs], options)
                + (katib_configmaps.trial_templates_in_texts(unparsed, options) if unparsed else ()))

    return jobs_in_strings.convert_document_text(doc, path, options, convert_text, templates)


def _render_converted(doc: Document, res: DocumentResult, style, options: ConvertOptions, final: bool) -> tuple[str, int]:
    from .output_paths import path_map

    return render_document(doc, res.outputs, lambda: path_map(doc.data, res, options), style, final)


def render_document(doc: Document, outputs: list, path_map, style, final: bool) -> tuple[str, int]:
    """New objects in place of one document: the document's own leading lines (separator, comments)
    and trailing lines (comments, `...`) stay verbatim around the dumped objects, and comments inside
    move with their fields (`path_map()` says where each source field went). Returns the text and
    how many comments had no field to go to."""
    from ..text import comments
    from ..text.comment_attach import attach, commented

    layout = comments.scan(doc.text)
    outputs = [commented(o) for o in outputs]
    trailing: dict[int, list] = {}
    if layout is None or layout.first_content is None:  # the scanner disagrees with the parser
        prefix, suffix, inline, dropped = _leading_comments(doc.text), "", True, 0
    else:
        lines = comments.split_lines(doc.text)
        tail = comments.trailing_end(layout, lines, doc.data)
        prefix = "".join(lines[:layout.first_content])
        suffix = "".join(lines[tail:])
        inline = layout.separator_inline
        owned = comments.own(layout, doc.data, tail)
        dropped, trailing = attach(outputs, owned, path_map(), style, doc.data) if owned else (0, {})
    body = "".join(dump_documents([o], style) + _comment_lines(trailing.get(i, ()), style)
                   for i, o in enumerate(outputs))
    if not inline and body.startswith("---" + style.newline):
        body = body[3 + len(style.newline):]  # the original separator line is in the prefix
    if final and not suffix and not doc.text.endswith(("\n", "\r")) and not _ends_in_block_scalar(body):
        body = body[: -len(style.newline)]  # the file had no final newline; keep it that way
    return prefix + body + suffix, dropped


def _comment_lines(rows, style) -> str:
    """Comment lines that end an output (a block's last field was commented out)."""
    return "".join(((" " * col + text) if text else "") + style.newline for col, text in rows)


def _ends_in_block_scalar(body: str) -> bool:
    """Whether the last line belongs to a literal/folded block (e.g. an MPI hostfile ConfigMap): there the
    final line break is part of the value (clip chomping keeps it), so it must stay even in a file that
    had no final newline."""
    lines = body.rstrip("\r\n").splitlines()
    if not lines:
        return False
    last_indent = len(lines[-1]) - len(lines[-1].lstrip(" "))
    for line in reversed(lines[:-1]):
        stripped = line.strip()
        if not stripped:
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent < last_indent:
            # the nearest less-indented line: a key or item opening a block scalar?
            return bool(re.search(r"(^|[:\s-])[|>][0-9+-]*\s*(#.*)?$", stripped))
    return False


def _render_json(text: str, docs: list[Document], results: list[DocumentResult]) -> str | None:
    """A .json manifest stays JSON: same indentation unit and line endings; several output objects
    (a JobSet and its companions) become a v1 List. None: not a single-document file."""
    import json
    import re

    content = [(d, r) for d, r in zip(docs, results, strict=False) if d.data is not None]
    if len(content) != 1 or not content[0][1].changed:
        return None
    outputs = [to_plain(o) for o in content[0][1].outputs]
    obj = outputs[0] if len(outputs) == 1 else {"apiVersion": "v1", "kind": "List", "items": outputs}
    m = re.search(r"^([ \t]+)[\"}\]]", text, re.M)
    indent = m.group(1) if m else "  "
    newline = "\r\n" if "\r\n" in text else "\n"
    body = json.dumps(obj, indent=indent, ensure_ascii=False)
    if text.endswith(("\n", "\r")):
        body += "\n"
    return body.replace("\n", newline) if newline != "\n" else body


def _may_convert(doc_text: str, options: ConvertOptions) -> bool:
    if not may_hold_job(doc_text, options.katib):
        return False
    if "CustomResourceDefinition" in doc_text:
        # A vendored CRD names the job kinds (`names: {kind: TFJob}`) and is megabytes long: read it
        # with libyaml first and parse it the slow, position-keeping way only if it is not a CRD.
        return not _is_plain_crd(doc_text)
    return True


def _is_plain_crd(doc_text: str) -> bool:
    import yaml

    try:
        data = yaml.load(doc_text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except Exception:  # not loadable here: let the careful reader report it
        return False
    return isinstance(data, dict) and data.get("kind") == "CustomResourceDefinition" and \
        str(data.get("apiVersion", "")).startswith("apiextensions.k8s.io/")


def _locate(err: Kf2JobSetError, path: str, doc: Document) -> Kf2JobSetError:
    fixed = []
    for p in err.problems:
        loc = p.location
        line, col = loc.line, loc.column
        if line is None and loc.path:
            line, col = position(doc.data, loc.path, doc.start_line)
        if line is None:  # about the whole document, or a field it does not have: where the document starts
            line, col = doc.start()
        hint = p.hint
        if p.rule == "envsubst" and hint:
            from ..sources.envsubst import fill_hint

            hint = fill_hint(hint, loc.file or path)
        fixed.append(Problem(p.message, Location(loc.file or path, doc.index if loc.document is None else loc.document,
                                                 line, col, loc.path), p.rule, hint))
    return type(err)(fixed)


def _leading_comments(text: str) -> str:
    """Fallback prefix: comment, blank and separator lines before the document's content."""
    kept = []
    for line in text.splitlines(keepends=True):
        s = line.strip()
        if s.startswith("#") or not s:
            kept.append(line)
        else:
            break
    return "".join(kept)


def stream_for_stdout(results: list[FileResult]) -> str:
    """All files as one YAML stream: converted documents replaced, everything else verbatim."""
    out = []
    for r in results:
        body = r.new_text if r.new_text is not None else r.text
        if not body.strip():
            continue
        if out and not body.lstrip().startswith("---"):
            out.append("---\n")
        out.append(body if body.endswith("\n") else body + "\n")
    return "".join(out)
