"""Targets behind one registry (kf2jobset/targets/__init__.py): the --target choices are its names, no
module outside targets/ compares a target's name, and a new target is one module and one entry."""
from __future__ import annotations

import ast

import kf2jobset.options as options_module
from kf2jobset import targets
from kf2jobset.options import TARGETS, ConvertOptions
from kf2jobset.files.pipeline import convert_text
from kf2jobset.text.yamlio import parse_documents

from .conftest import FIXTURES, REPO

TOY_LABEL = "toy.example.com/written-by"


def finish(conversion, options) -> None:
    """The toy target: the core's JobSet with one label, and its companions."""
    conversion.jobset["metadata"].setdefault("labels", {})[TOY_LABEL] = "toy"
    conversion.output = [conversion.jobset, *conversion.companions]


def test_the_choices_are_the_registry():
    assert tuple(targets.REGISTRY) == TARGETS
    assert all(t.name == name for name, t in targets.REGISTRY.items())


def test_no_module_outside_targets_compares_a_target_name():
    names = set(targets.REGISTRY)
    found = []
    for path in sorted((REPO / "kf2jobset").rglob("*.py")):
        if "targets" in path.relative_to(REPO / "kf2jobset").parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(isinstance(s, ast.Attribute) and s.attr == "target" for s in sides) and \
                        any(isinstance(s, ast.Constant) and s.value in names for s in sides):
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert found == []


def test_a_toy_target_is_one_module(monkeypatch):
    toy = targets.Target("toy", __name__, "JobSet", writes_the_jobset=True, embeddable=True)
    monkeypatch.setitem(targets.REGISTRY, "toy", toy)
    monkeypatch.setattr(options_module, "TARGETS", (*TARGETS, "toy"))
    text = (FIXTURES / "pytorchjob" / "active-deadline" / "input.yaml").read_text()
    result = convert_text(text, "input.yaml", ConvertOptions(target="toy"))
    assert result.errors == []
    written = [d.data for d in parse_documents(result.new_text, "out.yaml") if d.data is not None]
    jobsets = [d for d in written if d.get("kind") == "JobSet"]
    assert len(jobsets) == 1 and jobsets[0]["metadata"]["labels"][TOY_LABEL] == "toy"
