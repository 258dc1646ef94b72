"""A kustomization unit (the kustomization and the patch files it names), its problems, and the
per-run caches of parsed files: the data the unit run (kustomize.py) and the patch rewrites
(kustomize_rewrite.py) share, in one module so neither imports the other's internals.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..text import yamledit
from ..text.yamlio import parse_documents
from .fsio import read_text
from .kustomize_tree import find_kustomization


@dataclass
class Problem:
    file: str
    line: int | None
    column: int | None
    message: str

    def __str__(self) -> str:
        where = self.file + (f":{self.line}" if self.line else "") + (f":{self.column}" if self.column else "")
        return f"{where}: {self.message}"


@dataclass
class Unit:
    path: str  # display path of the kustomization
    text: str
    bom: bool
    directory: Path
    edits: list[yamledit.Edit] = field(default_factory=list)  # in the kustomization
    files: dict = field(default_factory=dict)  # display path of a patch file -> (new text, bom)
    owned: set = field(default_factory=set)  # real paths of the patch files it names
    problems: list[Problem] = field(default_factory=list)
    rewrites: list[str] = field(default_factory=list)  # check mode: what would change


class Unmappable(Exception):
    def __init__(self, node, message: str, file: str | None = None):
        super().__init__(message)
        self.node, self.message, self.file = node, message, file


class Context:
    """Per-run caches: parsed files and converted base jobs."""

    def __init__(self, options):
        self.options = options
        self.docs: dict[str, list] = {}

    def documents(self, path: Path) -> list:
        key = os.path.realpath(path)
        if key not in self.docs:
            try:
                docs = parse_documents(read_text(str(path)), str(path))
            except Exception:
                docs = []
            self.docs[key] = [d for d in docs if d.error is None and isinstance(d.data, dict)]
        return self.docs[key]

    def resources(self, directory: Path, seen: set | None = None) -> list[tuple[str, Any]]:
        """(file, document) for every object reachable through resources/bases of a kustomization."""
        seen = seen if seen is not None else set()
        key = os.path.realpath(directory)
        if key in seen:
            return []
        seen.add(key)
        kfile = find_kustomization(directory)
        if kfile is None:
            return []
        try:
            root = yamledit.compose(read_text(str(kfile)))
        except Exception:
            return []
        out = []
        for section in ("resources", "bases"):
            for item in yamledit.items(yamledit.get(root, section)):
                ref = yamledit.scalar(item)
                if not ref or "://" in ref or ref.startswith(("github.com/", "git@")):
                    continue
                p = directory / ref
                if p.is_dir():
                    out += self.resources(p, seen)
                elif p.is_file():
                    out += [(str(p), d.data) for d in self.documents(p)]
        return out
