"""A file's text with its converted JobSets resized: each value the resize changes is spliced into the text in
its own scalar style (a literal block stays literal, a single-quoted TF_CONFIG single-quoted), and every other
byte of the file stays, comments and the user's later edits included. Text in, text out; no I/O."""
from __future__ import annotations

import json

from ..errors import InputError, Kf2JobSetError, Location, Problem
from ..text.scalar_splice import _plain_ok, node_at, scalar_edit
from ..text.yamledit import Edit, apply_edits, compose, quote
from ..text.yamlio import parse_documents, position, to_plain
from . import Resize, ResizeRequest, resizable, resize


def _name(doc) -> str | None:
    meta = doc.get("metadata") if isinstance(doc, dict) else None
    return meta.get("name") if isinstance(meta, dict) else None


def chosen(stream: list, names: tuple) -> list[int]:
    """The indexes of the converted JobSets to resize: those named, or every one."""
    return [i for i, d in enumerate(stream) if isinstance(d, dict) and resizable(d) and (not names or _name(d) in names)]


def resize_text(text: str, file: str, names: tuple, request: ResizeRequest) -> tuple[str, list[Resize]]:
    """`text` with the converted JobSets it holds (those in `names`, or all) resized; raises a located
    Kf2JobSetError (nothing is changed then)."""
    docs = parse_documents(text, file)
    for doc in docs:
        if doc.error is not None:
            raise doc.error
    stream = [to_plain(d.data) for d in docs]
    done: list[Resize] = []
    edits: dict[int, list] = {}
    for index in chosen(stream, names):
        try:
            result = resize(stream, index, request)
        except Kf2JobSetError as err:
            path = err.problems[0].location.path
            line, column = position(docs[index].data, path, docs[index].start_line) if path else docs[index].start()
            raise err.located(file=file, document=index, line=line, column=column) from None
        done.append(result)
        for e in result.edits:
            edits.setdefault(e.document, []).append(e)
    pieces = []
    for i, doc in enumerate(docs):
        pieces.append(_edited(doc, edits[i], file) if i in edits else doc.text)
    out = "".join(pieces)
    _check_written(out, file, stream, edits)
    return out, done


def _edited(doc, edits: list, file: str) -> str:
    root = compose(doc.text)
    spliced = []
    for e in edits:
        node, key = node_at(root, e.path)
        if node is None:
            raise InputError(Problem("a value to resize is not where the parsed document has it (an alias or merge key?)",
                                     Location(file, doc.index, path=e.path)))
        spliced.append(_value_edit(doc.text, node, key, e.value))
    return apply_edits(doc.text, spliced)


def _value_edit(text: str, node, key, value) -> Edit:
    if type(node).__name__ != "ScalarNode" or isinstance(value, (dict, list)):
        # a collection written anew: JSON is YAML's flow style, on the value's own line
        return Edit(node.start_mark.index, node.end_mark.index, json.dumps(value, ensure_ascii=False))
    if not isinstance(value, str):
        return Edit(node.start_mark.index, node.end_mark.index, json.dumps(value))
    if node.style in ("|", ">"):
        return scalar_edit(text, node, key, value)
    if node.style in ("'", '"'):
        return Edit(node.start_mark.index, node.end_mark.index, quote(value, node.style))
    return Edit(node.start_mark.index, node.end_mark.index, value if _plain_ok(value) else quote(value, "'"))


def _check_written(text: str, file: str, stream: list, edits: dict) -> None:
    """The written text reads back as the resized objects (a splice that misread the text is a kf2jobset bug)."""
    import copy

    expected = copy.deepcopy(stream)
    for changed in edits.values():
        for e in changed:
            node = expected[e.document]
            for part in e.path[:-1]:
                node = node[part]
            node[e.path[-1]] = e.value
    got = [to_plain(d.data) for d in parse_documents(text, file)]
    if got != expected:
        raise AssertionError(f"{file}: the resized text does not read back as the resized objects")
