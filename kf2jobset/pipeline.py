"""One file's text -> its converted text, spliced so that unconverted documents keep every byte.

Shared by `convert` (stdout), the repo mode (--in-place / --out-dir / --check) and the pre-commit
hook. Pure apart from the explicit `read_text` helper.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .convert import DocumentResult, convert_document
from .errors import InputError, Kf2JobSetError, Location, Problem
from .options import ConvertOptions
from .yamlio import Document, detect_style, dump_documents, parse_documents, position


@dataclass
class FileResult:
    path: str
    text: str
    documents: list[Document] = field(default_factory=list)
    results: list[DocumentResult] = field(default_factory=list)
    errors: list[Kf2JobSetError] = field(default_factory=list)
    new_text: str | None = None  # None when nothing was converted (or on error)

    @property
    def conversions(self):
        return [c for r in self.results for c in r.conversions]

    @property
    def changed(self) -> bool:
        return self.new_text is not None and self.new_text != self.text


def read_text(path: str) -> str:
    """Decode a manifest file: UTF-8 (a BOM is kept out of the text). Raises InputError."""
    try:
        raw = Path(path).read_bytes() if path != "-" else __import__("sys").stdin.buffer.read()
    except OSError as exc:
        raise InputError(Problem(f"cannot read: {exc.strerror}", Location(path)))
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(Problem(f"not UTF-8 (byte {exc.start})", Location(path)))


def convert_text(text: str, path: str, options: ConvertOptions) -> FileResult:
    result = FileResult(path=path, text=text)
    docs = parse_documents(text, path)
    result.documents = docs
    for doc in docs:
        if doc.error is not None:
            result.errors.append(doc.error)
            result.results.append(DocumentResult())
            continue
        res = convert_document(doc.data, options)
        result.results.append(res)
        for err in res.errors:
            result.errors.append(_locate(err, path, doc))
    if result.errors or not any(r.changed for r in result.results):
        return result
    style = detect_style(text)
    pieces = []
    for doc, res in zip(docs, result.results):
        if res.changed:
            prefix = _leading_comments(doc.text)
            pieces.append(prefix + dump_documents(res.outputs, style))
        else:
            pieces.append(_as_stream_part(doc.text, style.newline))
    result.new_text = "".join(pieces)
    return result


def _locate(err: Kf2JobSetError, path: str, doc: Document) -> Kf2JobSetError:
    fixed = []
    for p in err.problems:
        loc = p.location
        line, col = loc.line, loc.column
        if line is None and loc.path:
            line, col = position(doc.data, loc.path, doc.start_line)
        if line is None:
            line = doc.start_line + 1
        fixed.append(Problem(p.message, Location(loc.file or path, doc.index if loc.document is None else loc.document,
                                                 line, col, loc.path), p.rule, p.hint))
    return type(err)(fixed)


def _leading_comments(text: str) -> str:
    """Comment lines before a converted document's content (licence headers, notes) stay."""
    kept = []
    for line in text.splitlines(keepends=True):
        s = line.strip()
        if s.startswith("#") or not s:
            kept.append(line)
        elif s.startswith("---") and not kept:
            continue
        else:
            break
    return "".join(kept)


def _as_stream_part(text: str, newline: str) -> str:
    """An untouched document, verbatim; add a final newline only if the file lacked one."""
    if text and not text.endswith(("\n", "\r")):
        return text + newline
    return text


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
