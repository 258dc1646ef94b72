"""`kf2jobset report` (and `convert --report`): every job converted, then the two runtime models
compared pod by pod; the report in the formats asked for, a summary line and the exit code."""
from __future__ import annotations

import dataclasses
import sys
from typing import NoReturn

import click

from ... import exitcodes
from ..shared_options import build_options
from ...errors import Kf2JobSetError, UsageError
from ...options import shared_subdomain
from ...checks.staleness import SOURCE_ANNOTATION  # every converted object carries it
from ...report import build_report
from ...report.outputs import resolve, write
from ...repo.command_line import walk_for_jobs
from ...core.selectorfix import tree_peers
from .exits import fail, fail_all
from .file_loop import Policy, Skipped, convert_files


def run_report(paths, formats, output, fail_on, color, exclude, no_gitignore, kw: dict) -> NoReturn:
    try:
        options = build_options(kw)
        specs = resolve(formats, output)
    except Kf2JobSetError as err:
        fail(err)
    walked = walk_for_jobs(paths, exclude, gitignore=not no_gitignore, katib=options.katib)
    if walked.selecting:  # objects anywhere in the run may select a job's pods (selectorfix)
        options = dataclasses.replace(options, selector_peers=tree_peers(walked.selecting))
    results, errors, skipped = _convert_files(walked.files, options)
    if options.name and sum(len(r.conversions) for r in results) > 1:
        fail(UsageError("--name applies to a single job, but several were found"))
    clash = shared_subdomain(options, [c.job.namespace for r in results for c in r.conversions])
    if clash is not None:
        fail(clash)
    rep = build_report(results, options, fail_on)
    try:
        write(rep, specs, sys.stdout, color)
    except Kf2JobSetError as err:
        fail(err)
    if walked.walked_dirs or all(s.path not in (None, "-") for s in specs):
        _summary(walked, results, skipped)
    if errors:
        fail_all(errors)
    sys.exit(exitcodes.FINDINGS if rep.failing() else exitcodes.OK)


def _convert_files(files, options):
    """Each file converted; (results, errors, what was skipped): files found under directories that hold no
    job, are not YAML, or are templates whose placeholders need values are skipped with a note, not failed."""
    run = convert_files(files, options, Policy(skip_templates=True, skip_job_free=True, keep_unreadable=True,
                                               on_result=_warn_unconverted))
    return run.results, run.errors, run.skipped


def _warn_unconverted(r) -> None:
    for line in r.unconverted_lines():  # jobs inside AppWrappers, ConfigMaps, Argo templates
        click.echo(f"kf2jobset: warning: {line}", err=True)


def _summary(walked, results, skipped: Skipped) -> None:
    """The one line on stderr (files scanned, jobs found, what was skipped or failed) and the hints."""
    jobs = sum(len(r.conversions) for r in results)
    with_jobs = sum(1 for r in results if r.conversions)
    line = (f"kf2jobset: {walked.scanned} file{'s' if walked.scanned != 1 else ''} scanned, {jobs} job{'s' if jobs != 1 else ''} "
            f"in {with_jobs} file{'s' if with_jobs != 1 else ''}")
    if walked.helm:
        line += f", {walked.helm} skipped (Helm templates)"
    if skipped.templates:
        line += f", {skipped.templates} skipped (templates)"
    if skipped.unparsable:
        line += f", {skipped.unparsable} skipped (not YAML, no job)"
    failed = sum(1 for r in results if r.errors)
    line += f", {failed} failed" if failed else ""
    by_category: dict[str, int] = {}
    for stale in (s for r in results for s in r.edited):
        by_category[stale.category] = by_category.get(stale.category, 0) + 1
    line += "".join(f", {n} {category} (see the report)" for category, n in by_category.items())
    click.echo(line, err=True)
    if walked.helm_jobs:
        click.echo("kf2jobset: hint: Helm templates are not reported; render the chart (helm template CHART | "
                   "kf2jobset report -)", err=True)
    if skipped.templates:
        click.echo("kf2jobset: hint: templates whose placeholders need values are not reported; fill them in first "
                   "(VAR=... envsubst < FILE | kf2jobset report -, or render a Go text/template or Jinja file with the "
                   "program that fills it in)", err=True)
    if skipped.converted and not with_jobs:  # a converted branch: "no changes" would read as "nothing changed"
        click.echo(f"kf2jobset: hint: {skipped.converted} file{'s hold' if skipped.converted != 1 else ' holds'} objects "
                   f"kf2jobset converted ({SOURCE_ANNOTATION}); the report compares v1 jobs with their conversion: run it "
                   "on the revision before the conversion (git show REV:FILE | kf2jobset report -, or a checkout of "
                   "REV)", err=True)


def report_to_stderr(results, options, report_specs) -> None:
    """`convert --report`: the report goes to stderr or to files, never into the YAML on stdout."""
    try:
        specs = resolve(report_specs, None)
        if any(s.path == "-" for s in specs):
            raise UsageError("convert --report cannot write to stdout (it carries the YAML); use stderr (no :FILE) or a file")
        write(build_report(results, options), specs, sys.stderr)
    except Kf2JobSetError as err:
        fail(err)
