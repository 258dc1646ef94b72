"""Repo mode's Helm charts: a template under a chart's templates/ that renders v1 jobs is converted at
the source (kf2jobset/sources/chart/source.py), with the chart's other template files read for its helpers;
`--check` lists its jobs as `to convert` or `refused` (with the construct and the post-renderer)."""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

from .. import exitcodes
from ..sources.chart.source import convert_chart_template
from . import check_listing
from .outcome import CHECK, CONVERTED, FAILED, Outcome, Settings, deliver


@lru_cache(maxsize=64)
def chart_files(chart_dir: str) -> tuple:
    """((path, text), ...) of every file under the chart's templates/ (Helm reads them all for defines)."""
    root = Path(chart_dir) / "templates"
    out = []
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_symlink():
            try:
                out.append((_shown(str(p)), p.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError):
                continue  # not a template Helm could read either
    return tuple(out)


def _shown(path: str) -> str:
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def convert_chart_file(task, settings: Settings, pending=None) -> Outcome:
    out = Outcome(task.path)
    files = {p: t for p, t in chart_files(task.chart) if os.path.realpath(p) != os.path.realpath(task.path)}
    files[task.path] = task.text
    result = convert_chart_template(task.text, task.path, files, settings.options)
    check = settings.mode == CHECK
    if result.errors:
        out.status = FAILED
        for err in result.errors:
            out.problems += [str(p) for p in err.problems]
            out.codes.append(exitcodes.for_error(err))
        if check:
            detail = result.errors[0].problems[0].message
            for category, line in check_listing.unparsed_lines(task.path, task.text, check_listing.REFUSED, detail):
                out.finding(category, line)
        return out
    out.warnings += [(task.path, name, note) for name, note in result.notes]
    if not result.changed:
        return out
    data = (b"\xef\xbb\xbf" if task.bom else b"") + result.new_text.encode("utf-8")
    if check and task.target is None:
        out.status = CONVERTED
        detail = f"a Helm chart template, converted at the source: run {settings.again}"
        for category, line in check_listing.unparsed_lines(task.path, task.text, check_listing.TO_CONVERT, detail):
            out.finding(category, line)
        return out
    deliver(out, task.path, data, task.target, settings, pending)
    return out
