"""Which files a run looks at: explicit files, `-` (stdin), and manifests below directories."""
from __future__ import annotations

import fnmatch
import os
from pathlib import Path

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", "__pycache__", ".venv", ".tox"}


def discover(paths, excludes=()) -> list[str]:
    """Expand paths into files, in a stable order, never following symlinks out of a directory tree."""
    out: list[str] = []
    for p in paths:
        if p == "-":
            out.append(p)
            continue
        path = Path(p)
        if path.is_dir():
            root = path.resolve()
            for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
                dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not _excluded(Path(dirpath, d), path, excludes))
                for name in sorted(filenames):
                    f = Path(dirpath, name)
                    if not name.endswith(MANIFEST_SUFFIXES) or _excluded(f, path, excludes):
                        continue
                    if f.is_symlink() and not _inside(f.resolve(), root):
                        continue
                    out.append(str(f))
        else:
            out.append(str(path))
    return out


def _inside(target: Path, root: Path) -> bool:
    try:
        target.relative_to(root)
        return True
    except ValueError:
        return False


def _excluded(f: Path, base: Path, excludes) -> bool:
    rel = str(f.relative_to(base)) if f != base else f.name
    return any(fnmatch.fnmatch(rel, pat) or fnmatch.fnmatch(f.name, pat) for pat in excludes)
