"""Where report formats go: `FORMAT` (the terminal) or `FORMAT:FILE`, several per run.

    kf2jobset report jobs/ --format text --format sarif:kf2jobset.sarif --format junit:report.xml

At most one format goes to the stream (stdout for `report`, stderr for `convert --report`); the
others need a file. `--output FILE` names the file of the one format given without `:FILE`.
Colour: only for `text` on a terminal, never when NO_COLOR is set (https://no-color.org) or when
written to a file; `--color always|never` overrides.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import UsageError
from . import FORMATS, render


@dataclass(frozen=True)
class OutputSpec:
    fmt: str
    path: str | None = None  # None = the stream


def parse_spec(text: str) -> OutputSpec:
    fmt, sep, path = text.partition(":")
    fmt = fmt.strip().lower()
    if fmt == "md":
        fmt = "markdown"
    if fmt not in FORMATS:
        raise UsageError(f"unknown report format {text!r}: choose one of {', '.join(FORMATS)} (optionally FORMAT:FILE)")
    if sep and not path:
        raise UsageError(f"--format {text!r}: no file name after ':'")
    return OutputSpec(fmt, path or None)


def resolve(formats, output: str | None, *, default: str = "text") -> list[OutputSpec]:
    specs = [parse_spec(f) for f in formats] or [OutputSpec(default)]
    to_stream = [s for s in specs if s.path is None or s.path == "-"]
    if output:
        bare = [s for s in specs if s.path is None]
        if len(bare) != 1:
            raise UsageError("--output names the file of the one --format given without :FILE")
        specs = [OutputSpec(s.fmt, output) if s.path is None else s for s in specs]
        to_stream = [s for s in specs if s.path == "-"]
    if len(to_stream) > 1:
        raise UsageError("only one report format can go to the terminal; give the others a file: --format FORMAT:FILE")
    paths = [s.path for s in specs if s.path not in (None, "-")]
    if len(paths) != len(set(paths)):
        raise UsageError("two report formats name the same file")
    return specs


def use_color(mode: str, stream) -> bool:
    if mode == "always":
        return True
    if mode == "never" or os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def write(report, specs: list[OutputSpec], stream, color: str = "auto") -> None:
    """Render every spec; files are written whole (via a temporary file next to them)."""
    for spec in specs:
        if spec.path in (None, "-"):
            stream.write(render(report, spec.fmt, color=spec.fmt == "text" and use_color(color, stream)))
            stream.flush()
            continue
        text = render(report, spec.fmt, color=False)
        target = Path(spec.path)
        tmp = target.with_name(f".{target.name}.kf2jobset-tmp")
        try:
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, target)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise UsageError(f"cannot write the {spec.fmt} report to {spec.path}: {exc.strerror}") from exc
