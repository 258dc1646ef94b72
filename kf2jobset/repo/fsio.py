"""Bytes in and out: decoding that remembers a BOM, and atomic writes that keep the file mode."""
from __future__ import annotations

import codecs
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError, Location, Problem


@dataclass
class Source:
    path: str
    text: str  # decoded, without BOM
    bom: bool
    raw: bytes

    def encode(self, text: str) -> bytes:
        return (codecs.BOM_UTF8 if self.bom else b"") + text.encode("utf-8")


def read_source(path: str) -> Source:
    """Read and decode a manifest (UTF-8, BOM remembered). Raises InputError."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise InputError(Problem(f"cannot read: {exc.strerror}", Location(path)))
    bom = raw.startswith(codecs.BOM_UTF8)
    try:
        text = raw[3:].decode("utf-8") if bom else raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(Problem(f"not UTF-8 (byte {exc.start + (3 if bom else 0)})", Location(path)))
    return Source(path, text, bom, raw)


def write_atomic(path: str | Path, data: bytes, mode_from: str | Path | None = None) -> None:
    """Write via a temporary file in the same directory and os.replace: readers see the old or the
    new file, never half of one. The mode of the replaced file (or of `mode_from`) is kept."""
    path = Path(path)
    mode = None
    for candidate in (path, mode_from):
        if candidate is None:
            continue
        try:
            mode = stat.S_IMODE(os.stat(candidate).st_mode)
            break
        except OSError:
            continue
    if mode is None:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".kf2jobset.tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
