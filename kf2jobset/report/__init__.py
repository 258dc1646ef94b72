"""The semantic diff report: what changes for every pod when a v1 job becomes a JobSet.

`build_report(file_results, options, fail_on)` runs both runtime models for every conversion,
compares them and turns differences and mapping notes into findings (kf2jobset.report.explain);
`render(report, fmt, color=False)` writes one of FORMATS. Pure: the CLI does the I/O.
"""
from __future__ import annotations

from .build import build_report
from .model import CATEGORIES, FAIL_ON_CHOICES, Finding, Report

__all__ = ["build_report", "render", "FORMATS", "CATEGORIES", "FAIL_ON_CHOICES", "Finding", "Report"]

FORMATS = ("text", "markdown", "json", "junit", "sarif", "github")


def render(report: Report, fmt: str, *, color: bool = False) -> str:
    from importlib import import_module

    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}")
    module = import_module(f"{__name__}.render_{fmt}")
    if fmt == "text":
        return module.render(report, color=color)
    return module.render(report)
