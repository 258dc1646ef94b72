"""Bytes in and out: decoding that remembers a BOM, and atomic writes that keep the file mode."""
from __future__ import annotations

import codecs
import os
import stat
import sys
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
    """Read and decode a manifest (UTF-8, BOM remembered), or stdin for `-` (`convert --check -`). Raises InputError."""
    try:
        if path == "-":
            raw = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as fh:
                raw = fh.read()
    except OSError as exc:
        raise InputError(Problem(f"cannot read: {exc.strerror}", Location(path))) from exc
    bom = raw.startswith(codecs.BOM_UTF8)
    try:
        text = raw[3:].decode("utf-8") if bom else raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(Problem(f"not UTF-8 (byte {exc.start + (3 if bom else 0)})", Location(path))) from exc
    return Source(path, text, bom, raw)


def read_text(path: str) -> str:
    """Decode a manifest file, or stdin for `-`: UTF-8 (a BOM is kept out of the text). Raises InputError."""
    try:
        raw = Path(path).read_bytes() if path != "-" else sys.stdin.buffer.read()
    except OSError as exc:
        raise InputError(Problem(f"cannot read: {exc.strerror}", Location(path))) from exc
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(Problem(f"not UTF-8 (byte {exc.start})", Location(path))) from exc


def write_atomic(path: str | Path, data: bytes, mode_from: str | Path | None = None) -> None:
    """Write via a temporary file in the same directory and os.replace: readers see the old or the
    new file, never half of one. The mode of the replaced file (or of `mode_from`) is kept."""
    batch = AtomicBatch()
    batch.add(path, data, mode_from)
    failures = batch.commit()
    if failures:
        raise failures[0][1]


def _mode_for(path: Path, mode_from) -> int:
    for candidate in (path, mode_from):
        if candidate is None:
            continue
        try:
            return stat.S_IMODE(os.stat(candidate).st_mode)
        except OSError:
            continue
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


class AtomicBatch:
    """Atomic writes of many files with one durability barrier for all of them.

    `add` writes each new content to a temporary file beside its target (nothing is replaced yet;
    a failure leaves the target untouched and is raised). `commit` makes every temporary file
    durable at once — one syncfs per file system on Linux, instead of an fsync per file, which cost
    more than converting the file — then renames each over its target (os.replace: readers see the
    old or the new file, never half of one) and fsyncs each directory once so the renames last.
    It returns the (target, OSError) of renames that failed; their temporary files are removed."""

    def __init__(self):
        self._pending: list[tuple[str, Path, int]] = []  # (temporary file, target, fd kept for the barrier)

    def __len__(self) -> int:
        return len(self._pending)

    def add(self, path: str | Path, data: bytes, mode_from: str | Path | None = None) -> None:
        path = Path(path)
        mode = _mode_for(path, mode_from)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".kf2jobset.tmp")
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, mode)
        except BaseException:
            os.close(fd)
            _unlink(tmp)
            raise
        self._pending.append((tmp, path, fd))

    def commit(self) -> list[tuple[str, OSError]]:
        pending, self._pending = self._pending, []
        failures: list[tuple[str, OSError]] = []
        try:
            _make_durable([fd for _, _, fd in pending])
        except OSError as exc:  # nothing was replaced: every file of the batch fails alike
            for tmp, path, _ in pending:
                _unlink(tmp)
                failures.append((str(path), exc))
            return failures
        finally:
            for _, _, fd in pending:
                os.close(fd)
        directories = set()
        for tmp, path, _ in pending:
            try:
                os.replace(tmp, path)
                directories.add(path.parent)
            except OSError as exc:
                _unlink(tmp)
                failures.append((str(path), exc))
        for directory in directories:
            _fsync_directory(directory)
        return failures

    def abort(self) -> None:
        for tmp, _, fd in self._pending:
            os.close(fd)
            _unlink(tmp)
        self._pending = []


def _make_durable(fds: list[int]) -> None:
    """The data of every file in `fds` on disk: syncfs once per file system where the C library has
    it (Linux), else an fsync per file."""
    if not fds:
        return
    syncfs = _syncfs()
    if syncfs is None or len(fds) == 1:  # one file: its own fsync flushes less than the whole file system
        for fd in fds:
            os.fsync(fd)
        return
    done = set()
    for fd in fds:
        dev = os.fstat(fd).st_dev
        if dev in done:
            continue
        if syncfs(fd) != 0:
            for other in fds:  # the barrier failed: fall back to per-file fsync, which raises the error
                os.fsync(other)
            return
        done.add(dev)


_SYNCFS: list = []


def _syncfs():
    if not _SYNCFS:
        fn = None
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                fn = ctypes.CDLL(None, use_errno=True).syncfs
                fn.argtypes = [ctypes.c_int]
            except (OSError, AttributeError):
                fn = None
        _SYNCFS.append(fn)
    return _SYNCFS[0]


def _fsync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on a directory; the rename itself is still atomic
    finally:
        os.close(fd)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
