"""Which files a run looks at: explicit files, `-` (stdin), and manifests below directories.

Directory walks:
- take `*.yaml`, `*.yml`, `*.json`, YAML templates (`*.yaml-template`, `*.yaml.template`,
  `*.yaml.tmpl`, also `.yml`) and kustomize's extension-less `Kustomization`;
- skip VCS/tooling directories (`.git`, `node_modules`, ...);
- honour `.gitignore` files met on the way (each applies below its own directory) and the
  `--exclude` patterns (relative to the directory given on the command line), both with gitignore
  rules: `name` matches at any depth, `dir/name` or `/name` is anchored, a trailing `/` matches only
  directories, `**` crosses directories, `!pattern` re-includes, the last matching pattern wins, and
  nothing below an excluded directory is looked at;
- never follow symlinks: symlinked directories are not entered and symlinked files are skipped
  (counted), so a walk cannot leave the tree or visit a file twice.

Explicit file arguments are always taken (a symlink is resolved to the file it names), except when
an `--exclude` pattern matches their path relative to the working directory — pre-commit passes
files explicitly, and its users put excludes in the hook's `args`.
"""
from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ..text.filenames import is_doc_name, is_manifest_name

SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".tox", ".mypy_cache", ".pytest_cache"}


@dataclass
class Found:
    path: str  # as the user will see it (relative when they gave relative paths)
    base: Path | None  # directory argument the file was found under (None: explicit file or stdin)
    rel: str  # path relative to `base` (explicit files: relative to the working directory if inside)


@dataclass
class Walk:
    files: list[Found] = field(default_factory=list)
    symlinks: list[str] = field(default_factory=list)  # skipped symlinked files
    missing: list[str] = field(default_factory=list)  # arguments that do not exist


class Pattern:
    """One gitignore-style pattern."""

    __slots__ = ("negate", "dir_only", "anchored", "regex", "text")

    def __init__(self, text: str):
        self.text = text
        pat = text
        self.negate = pat.startswith("!")
        if self.negate:
            pat = pat[1:]
        elif pat.startswith("\\!") or pat.startswith("\\#"):
            pat = pat[1:]
        self.dir_only = pat.endswith("/")
        pat = pat.rstrip("/")
        self.anchored = "/" in pat
        pat = pat.lstrip("/")
        self.regex = re.compile(_translate(pat) + r"\Z", re.DOTALL)

    def matches(self, rel: str, name: str, is_dir: bool) -> bool:
        if self.dir_only and not is_dir:
            return False
        return bool(self.regex.match(rel if self.anchored else name))


@lru_cache(maxsize=512)
def _translate(pat: str) -> str:
    out, i, n = [], 0, len(pat)
    while i < n:
        c = pat[i]
        if pat.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pat.startswith("/**", i) and i + 3 == n:
            out.append("/.*")
            i += 3
        elif pat.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = pat.find("]", i + 2)
            if j < 0:
                out.append(re.escape(c))
                i += 1
                continue
            body = pat[i + 1:j]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = j + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pat[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def compile_patterns(lines) -> list[Pattern]:
    out = []
    for line in lines:
        line = line.rstrip("\n").rstrip("\r")
        if not line.strip() or line.startswith("#"):
            continue
        if not line.endswith("\\ "):
            line = line.rstrip(" ")
        out.append(Pattern(line))
    return out


def _decide(patterns, rel: str, name: str, is_dir: bool, current: bool | None) -> bool | None:
    """Last match wins: True = excluded, False = re-included, None = no pattern matched."""
    for p in patterns:
        if p.matches(rel, name, is_dir):
            current = not p.negate
    return current


def _gitignore(directory: Path) -> list[Pattern]:
    try:
        text = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return compile_patterns(text.splitlines())


def walk(paths, excludes=(), *, gitignore: bool = True, prune=(), docs: bool = False) -> Walk:
    """Expand arguments into files, in a stable order. `prune`: directories never entered (--out-dir).

    Cheap per file (pre-commit passes thousands): one lstat, identity by (device, inode)."""
    result = Walk()
    patterns = compile_patterns(excludes)
    pruned = {os.path.realpath(p) for p in prune}
    cwd = os.getcwd()
    seen: set = set()
    for arg in paths:
        if arg == "-":
            result.files.append(Found("-", None, "-"))
            continue
        try:
            st = os.stat(arg)  # follows a symlink named explicitly
        except OSError:
            result.missing.append(arg)
            continue
        if stat.S_ISDIR(st.st_mode):  # an explicit directory is the root of its tree, even if it is a symlink
            _walk_dir(Path(arg), patterns, gitignore, pruned, result, seen, docs)
            continue
        path = arg
        if os.path.islink(arg):
            path = os.path.realpath(arg)
        rel = _relative(path, cwd)
        if patterns and _path_excluded(rel, patterns):
            continue
        key = (st.st_dev, st.st_ino)
        if key in seen:
            continue
        seen.add(key)
        result.files.append(Found(path, None, rel))
    return result


def _path_excluded(rel: str, patterns) -> bool:
    """A file named explicitly: excluded if it or one of its directories matches (gitignore rule)."""
    parts = rel.split("/")
    for i in range(1, len(parts)):
        sub = "/".join(parts[:i])
        if _decide(patterns, sub, parts[i - 1], True, None):
            return True
    return bool(_decide(patterns, rel, parts[-1], False, None))


def _relative(path: str, cwd: str) -> str:
    """Path relative to the working directory (posix), or the file name if it is outside."""
    if not os.path.isabs(path) and not path.startswith(".."):
        return os.path.normpath(path).replace(os.sep, "/")
    rel = os.path.relpath(os.path.abspath(path), cwd)
    return os.path.basename(path) if rel.startswith("..") else rel.replace(os.sep, "/")


def _walk_dir(root: Path, patterns, gitignore: bool, pruned: set, result: Walk, seen: set, docs: bool = False) -> None:
    # (directory, its path relative to root, inherited .gitignore rule sets as (base rel, patterns))
    stack = [(root, "", [])]
    while stack:
        directory, rel_dir, ignores = stack.pop()
        if gitignore:
            own = _gitignore(directory)
            if own:
                ignores = ignores + [(rel_dir, own)]
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            name = entry.name
            rel = f"{rel_dir}/{name}" if rel_dir else name
            try:
                is_link = entry.is_symlink()
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir:
                if name in SKIP_DIRS or _ignored(rel, name, True, patterns, ignores):
                    continue
                if pruned and os.path.realpath(entry.path) in pruned:
                    continue
                subdirs.append((Path(entry.path), rel, ignores))
                continue
            if not (is_manifest_name(name) or (docs and is_doc_name(name))) or \
                    _ignored(rel, name, False, patterns, ignores):
                continue
            if is_link:
                result.symlinks.append(entry.path)
                continue
            try:
                key = (entry.stat(follow_symlinks=False).st_dev, entry.inode())
            except OSError:
                continue
            if key in seen:
                continue
            seen.add(key)
            result.files.append(Found(entry.path, root, rel))
        stack.extend(reversed(subdirs))


def _ignored(rel: str, name: str, is_dir: bool, patterns, ignores) -> bool:
    state = None
    for base, pats in ignores:
        sub = rel[len(base) + 1:] if base else rel
        state = _decide(pats, sub, name, is_dir, state)
    state = _decide(patterns, rel, name, is_dir, state)
    return bool(state)


def discover(paths, excludes=()) -> list[str]:
    """Expand paths into files, in a stable order, never following symlinks out of a directory tree."""
    found = walk(paths, excludes)
    return [f.path for f in found.files] + found.missing  # missing ones fail later, when read
