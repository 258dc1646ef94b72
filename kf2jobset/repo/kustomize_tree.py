"""kustomize trees: which kustomizations exist, the files they name, and which build on which.

Repo mode needs this before converting anything: a patch file is never a job of its own
(`patch_owner`), and a base converts together with the overlays that patch it (`family_extras`).
Kept apart from the patch rewrites (kustomize_rewrite.py): this side only reads and walks.
"""
from __future__ import annotations

import os
from pathlib import Path

from .walk import walk
from ..text import yamledit
from ..text.classify import KUSTOMIZATION_NAMES, V1_REFERENCE_RE, may_hold_job
from .fsio import read_source

PATCH_SECTIONS = ("patches", "patchesStrategicMerge", "patchesJson6902")


def find_kustomization(directory: Path) -> Path | None:
    for name in KUSTOMIZATION_NAMES:
        p = directory / name
        if p.is_file():
            return p
    return None


def _ancestors(start: Path):
    d = start
    for _ in range(32):
        yield d
        if (d / ".git").exists() or d.parent == d:
            return
        d = d.parent


# ---- families: a base and the overlays that build on it -------------------------------------------------

def family_extras(paths: list[str], taken: set[str]) -> tuple[dict[str, list[str]], list[set[str]]]:
    """Files that must be converted together with `paths` but are not in the run: for each file that
    is a resource or patch of a kustomization, every kustomization connected to it through
    `resources`/`bases`/`components` (the overlays that patch a base, the base an overlay builds)
    and those kustomizations' own job files — as soon as one of them mentions v1 kinds or fields.
    Converting only some of them leaves `kustomize build` broken (overlays patching a PyTorchJob
    that became a JobSet, or the reverse). Returns ({extra real path: [the run's files it goes with]},
    the families as sets of real paths). Searched below the repository root (see _repo_root)."""
    graph: dict[str, set[str]] = {}  # kustomization dir -> connected kustomization dirs
    members: dict[str, set[str]] = {}  # kustomization dir -> real paths of its files (resources, patches)
    v1: set[str] = set()
    scanned_roots: set[str] = set()
    for path in paths:
        root = _repo_root(Path(path).resolve().parent)
        if str(root) in scanned_roots:
            continue
        scanned_roots.add(str(root))
        for kfile in _kustomizations_below(root):
            try:
                src = read_source(str(kfile))
                node = yamledit.compose(src.text)
            except Exception:  # unreadable or invalid: reported when it is converted itself
                continue
            d = str(kfile.parent.resolve())
            files, dirs = _references_of(node, kfile.parent)
            members.setdefault(d, set()).update(files | {str(kfile.resolve())})
            for other in dirs:
                graph.setdefault(d, set()).add(other)
                graph.setdefault(other, set()).add(d)
            if V1_REFERENCE_RE.search(src.text):
                v1.add(d)
    extras: dict[str, list[str]] = {}
    families: list[set[str]] = []
    for path in paths:
        real = str(Path(path).resolve())
        start = [d for d, files in members.items() if real in files]
        family: set[str] = set()
        todo = list(start)
        while todo:
            d = todo.pop()
            if d in family:
                continue
            family.add(d)
            todo += graph.get(d, ())
        if not family & v1 and not _mentions_v1_job(real):
            continue
        files = {m for d in family for m in members.get(d, ())} | {real}
        families.append(files)
        for member in sorted(files):
            if member not in taken and os.path.isfile(member):
                extras.setdefault(member, []).append(path)
    return extras, families


def patch_owner(path: str, found: dict | None = None) -> str | None:
    """The kustomization that names `path` as a patch (searched upwards), else None: such a file
    is a patch, never a job to convert on its own. `found` (directory -> kustomization or None)
    spares a run over many files in the same directories the same stat calls."""
    real = os.path.realpath(path)
    found = {} if found is None else found
    for directory in _ancestors(Path(real).parent):
        key = str(directory)
        if key not in found:
            found[key] = find_kustomization(directory)
        kfile = found[key]
        if kfile is not None and real in _named_patches(str(kfile)):
            return str(kfile)
    return None


_PATCH_CACHE: dict[str, set[str]] = {}


def _named_patches(kfile: str) -> set[str]:
    if kfile not in _PATCH_CACHE:
        try:
            _PATCH_CACHE[kfile] = patch_files(yamledit.compose(read_source(kfile).text), Path(kfile).parent)
        except Exception:  # an unreadable kustomization names nothing we can trust
            _PATCH_CACHE[kfile] = set()
    return _PATCH_CACHE[kfile]


def _mentions_v1_job(path: str) -> bool:
    try:
        return may_hold_job(Path(path).read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return False


def _repo_root(start: Path) -> Path:
    """The nearest ancestor holding .git (pre-commit always runs there); else the working directory
    when `start` is below it; else, outside both, the parent of the nearest directory holding a
    kustomization (a base's sibling overlays), or `start` itself when none of its ancestors holds
    one. (Never a bare parent: for /tmp/x/job.yaml that would walk all of /tmp.)"""
    for d in _ancestors(start):
        if (d / ".git").exists():
            return d
    cwd = Path.cwd().resolve()
    if start == cwd or cwd in start.parents:
        return cwd
    for d in _ancestors(start):
        if find_kustomization(d) is not None:
            return d.parent
    return start


def _kustomizations_below(root: Path):
    for f in walk([str(root)]).files:
        if os.path.basename(f.path) in KUSTOMIZATION_NAMES:
            yield Path(f.path)


def _references_of(node, directory: Path) -> tuple[set[str], set[str]]:
    """(files, kustomization directories) a kustomization names."""
    files, dirs = set(), set()
    for section in ("resources", "bases", "components"):
        for item in yamledit.items(yamledit.get(node, section)):
            ref = yamledit.scalar(item)
            if not ref or "://" in ref or ref.startswith(("github.com/", "git@")):
                continue  # remote bases are not ours to convert
            target = (directory / ref).resolve()
            if target.is_dir() and find_kustomization(target) is not None:
                dirs.add(str(target))
            elif target.is_file():
                files.add(str(target))
    files |= patch_files(node, directory)
    return files, dirs


def patch_files(root, directory: Path) -> set[str]:
    out = set()
    for section in PATCH_SECTIONS:
        for item in yamledit.items(yamledit.get(root, section)):
            ref = yamledit.scalar(item) if section == "patchesStrategicMerge" else yamledit.scalar(yamledit.get(item, "path"))
            if ref and "\n" not in ref:
                out.add(os.path.realpath(directory / ref))
    return out
