"""Locate the data directories (schemas/, mappings/) for source and installed layouts."""
from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """Return the directory holding `name` ('schemas' or 'mappings').

    A wheel carries them in kf2jobset/_data/; a source checkout (or an editable
    install) keeps them at the repository root next to the package.
    """
    for candidate in (_PKG / "_data" / name, _PKG.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"kf2jobset data directory {name!r} not found")
