"""Objects built from libyaml's nodes (kf2jobset.text.yamlread) must be what ruamel's round-trip loader
returns: same values and types, same flow/block styles, same line/column of every key, value and
item. Documents the builder refuses go to ruamel (tested below)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings

from kf2jobset.text.yamlio import _loader, split_documents
from kf2jobset.text.yamlstrict import strict_loader
from kf2jobset.text.yamlread import NotReadable, build, may_read

from . import upstream
from .conftest import FIXTURES
from .strategies import commented_source


def _same(a, b, path=()):
    assert type(a) is type(b), (path, type(a), type(b))
    if isinstance(a, dict):
        assert list(a.keys()) == list(b.keys()), path
        assert [type(k) for k in a] == [type(k) for k in b], path
        assert (a.lc.line, a.lc.col) == (b.lc.line, b.lc.col), path
        assert dict(a.lc.data or {}) == dict(b.lc.data or {}), path
        assert a.fa.flow_style() == b.fa.flow_style(), path
        for k in a:
            _same(a[k], b[k], path + (k,))
    elif isinstance(a, list):
        assert len(a) == len(b), path
        assert (a.lc.line, a.lc.col) == (b.lc.line, b.lc.col), path
        assert dict(a.lc.data or {}) == dict(b.lc.data or {}), path
        assert a.fa.flow_style() == b.fa.flow_style(), path
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            _same(x, y, path + (i,))
    else:
        assert a == b, path
        assert getattr(a, "_width", None) == getattr(b, "_width", None), path


def _compare_text(text) -> int:
    """Builds every document both ways and compares; returns how many the builder took."""
    strict = strict_loader()
    taken = 0
    for doc in split_documents(text):
        error, _, roots = strict(doc.text)
        if error is not None or len(roots) != 1 or roots[0] is None or not may_read(doc.text):
            continue
        try:
            built = build(roots[0], doc.text)
        except NotReadable:
            continue
        loaded = list(_loader().load_all(doc.text))
        _same(built, loaded[0])
        taken += 1
    return taken


INPUTS = sorted(FIXTURES.glob("*/*/input.yaml"))


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_fixture_inputs(path):
    _compare_text(path.read_text())


def test_most_fixture_documents_are_built():
    taken = sum(_compare_text(p.read_text()) for p in INPUTS)
    assert taken >= 0.7 * len(INPUTS)


def test_corpus():
    for name, path in upstream.require_corpus():
        if not name.endswith(".yaml"):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        try:
            _compare_text(text)
        except Exception as exc:  # noqa: BLE001 - name the file
            raise AssertionError(f"{path}: {exc}") from exc


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(commented_source())
def test_commented_sources(source):
    _compare_text(source[0])


@pytest.mark.parametrize("text", [
    "a: &x 1\nb: *x\n",          # anchors and aliases
    "a: !!str 1\n",              # tags
    "%YAML 1.1\n---\na: 1\n",    # directives
    "a: >\n  folded\n",          # folded block
    "a: |  # note\n  x\n",       # comment on a block header
    "a: 1.5\n",                  # float
    "a: 010\n",                  # formatted int
    "a: 2001-12-14\n",           # timestamp
    "a: é\n",                    # not ASCII
])
def test_refused_documents_load_with_ruamel(text):
    from kf2jobset.text.yamlio import parse_documents

    strict = strict_loader()
    error, _, roots = strict(text.split("---\n")[-1])
    refused = not may_read(text)
    if not refused:
        with pytest.raises(NotReadable):
            build(roots[0], text)
    fast = parse_documents(text, without_comments=True)
    slow = parse_documents(text)
    for a, b in zip(fast, slow, strict=False):
        assert type(a.data) is type(b.data)
        assert a.data == b.data
