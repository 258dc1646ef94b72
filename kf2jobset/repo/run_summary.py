"""The end of a repo-mode run: each file's lines (stdout: findings and writes; stderr: notes and problems),
the run's warnings and hints, the one-line summary, and the exit code."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TextIO

from .. import exitcodes
from ..notes import warning_lines
from . import check_listing
from .outcome import (CHECK, CONVERTED, ENVSUBST_HINT, ENVSUBST_TEMPLATE, FAILED, HELM_HINT, IN_PLACE, RENDER_HINT,
                      RENDERED_TEMPLATE, SKIPPED, UNCHANGED, UNPARSABLE, Outcome, Settings)

# the reasons a file is skipped as the summary line counts them
_SKIPPED_AS = {ENVSUBST_TEMPLATE: "envsubst templates", RENDERED_TEMPLATE: "unrendered templates",
               UNPARSABLE: "unparsable files"}


@dataclass
class Summary:
    scanned: int = 0
    converted: int = 0
    unchanged: int = 0
    skipped: dict = field(default_factory=dict)  # reason -> count
    failed: int = 0


@dataclass
class _Printed:
    """What the per-file lines leave for the end of the run."""
    codes: list = field(default_factory=list)
    needs_change: bool = False  # --check listed something
    changed: bool = False  # a file was written
    left_counts: Counter = field(default_factory=Counter)


def report_outcomes(outcomes: list[Outcome], summary: Summary, settings: Settings, helm_with_jobs: list[str],
                    stdout: TextIO, stderr: TextIO) -> int:
    printed = _Printed()
    for o in outcomes:
        _count(summary, o)
        _print_outcome(o, settings, printed, stdout, stderr)
    if settings.mode != CHECK:
        for line in warning_lines([w for o in outcomes for w in o.warnings], settings.verbose):
            print(f"kf2jobset: {line}", file=stderr)
    _print_hints(outcomes, settings, helm_with_jobs, stderr)
    line = _summary_line(summary, settings)
    if settings.mode == CHECK:  # the lines above, by category: exit 0 only when nothing is left and nothing failed
        line += "; " + check_listing.counted(printed.left_counts)
    print("kf2jobset: " + line, file=stderr)
    return _exit_code(outcomes, settings, printed)


def _count(summary: Summary, o: Outcome) -> None:
    """One file's outcome in the summary's counts."""
    if o.status == CONVERTED:
        summary.converted += 1
    elif o.status == FAILED:
        summary.failed += 1
    elif o.status == UNCHANGED:
        summary.unchanged += 1
    elif o.status == SKIPPED and o.reason in _SKIPPED_AS:
        reason = _SKIPPED_AS[o.reason]
        summary.skipped[reason] = summary.skipped.get(reason, 0) + 1


def _print_outcome(o: Outcome, settings: Settings, printed: _Printed, stdout: TextIO, stderr: TextIO) -> None:
    """One file's lines: its findings and what was written on stdout, its notes (not under --check) and
    problems on stderr."""
    for line in o.findings:
        print(line, file=stdout)
        printed.needs_change = True
    printed.left_counts.update(o.left)
    if o.written:
        printed.changed = True
        print(f"Rewriting {o.written}" if settings.mode == IN_PLACE else f"Writing {o.written}", file=stdout)
    if settings.mode != CHECK:
        for note in o.notes:
            print(f"kf2jobset: {note}", file=stderr)
    for problem in o.problems:
        print(f"kf2jobset: {problem}", file=stderr)
    printed.codes += o.codes


def _print_hints(outcomes: list[Outcome], settings: Settings, helm_with_jobs: list[str], stderr: TextIO) -> None:
    """The way forward for what the run left (templates, Katib trials), and the runtimes its TrainJobs need."""
    skipped = Counter(o.reason for o in outcomes if o.status == SKIPPED)
    katib = sum(o.katib_unconverted for o in outcomes)
    if helm_with_jobs and settings.mode != CHECK:
        for path in helm_with_jobs:
            print(f"kf2jobset: {path}: skipped: Helm template with a Kubeflow job", file=stderr)
    if helm_with_jobs:  # the hint is for templates that hold a job, not for every chart in the repo
        print(f"kf2jobset: hint: Helm templates are not converted; {HELM_HINT}", file=stderr)
    if skipped[ENVSUBST_TEMPLATE]:
        print(f"kf2jobset: hint: envsubst templates whose placeholders sit where kf2jobset needs the values are not "
              f"converted; {ENVSUBST_HINT}", file=stderr)
    if skipped[RENDERED_TEMPLATE]:
        print(f"kf2jobset: hint: Go text/template and Jinja files whose placeholders sit where kf2jobset needs the "
              f"values (or whose text depends on them) are not converted; {RENDER_HINT}", file=stderr)
    if katib:
        print(f"kf2jobset: hint: {katib} Katib Experiment(s) embed v1 jobs in trialTemplate.trialSpec; "
              "pass --katib to convert them", file=stderr)
    needed = Counter(name for o in outcomes for name in o.runtimes)
    if needed:
        from ..targets.bundle_catalog import describe
        from ..targets.bundle_gang import parse

        print("kf2jobset: ClusterTrainingRuntimes the TrainJobs need: " + "; ".join(
            f"{name} ({describe(name, parse(gang))})" for name, gang in sorted(needed, key=str)), file=stderr)


def _exit_code(outcomes: list[Outcome], settings: Settings, printed: _Printed) -> int:
    if printed.codes:
        return exitcodes.worst(printed.codes)
    if settings.mode == CHECK:
        return exitcodes.FINDINGS if printed.needs_change else exitcodes.OK
    # the fixer hook fails on what it wrote and on what it cannot fix: pre-commit shows a passing hook's warnings to nobody
    if settings.fail_on_change and (printed.changed or any(o.stale for o in outcomes)):
        return exitcodes.FINDINGS
    return exitcodes.OK


def _summary_line(s: Summary, settings: Settings) -> str:
    verb = "to convert" if settings.mode == CHECK else "converted"
    skipped = sum(s.skipped.values())
    text = f"{s.scanned} file{'s' if s.scanned != 1 else ''} scanned, {s.converted} {verb}, {skipped} skipped"
    if skipped:
        text += " (" + ", ".join(f"{n} {reason if n != 1 else reason[:-1]}" for reason, n in sorted(s.skipped.items())) + ")"
    return text + f", {s.failed} failed"
