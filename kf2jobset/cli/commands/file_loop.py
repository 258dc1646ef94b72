"""The files of a `convert` stream or a `report` run, converted one by one. What a run does with a file
that is not news is decided here, once: a file found under a directory that is not YAML and holds no job
is skipped with a note; a report also skips, counted, a template whose placeholders need values (as
repo mode does) and a file that holds only objects kf2jobset converted."""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import click

from ...checks.staleness import SOURCE_ANNOTATION  # every converted object carries it
from ...errors import Kf2JobSetError
from ...files.pipeline import FileResult
from ...repo.fsio import read_text
from ...repo.run import needs_values, unparsable_without_job
from ...sources.markdown import convert_file_text


@dataclass
class Skipped:
    templates: int = 0  # templates whose placeholders need values (found under directories)
    unparsable: int = 0  # files found under directories that are not YAML and hold no job
    converted: int = 0  # files found under directories that hold objects kf2jobset converted, and no job


@dataclass
class FileRun:
    results: list = field(default_factory=list)
    errors: list = field(default_factory=list)
    skipped: Skipped = field(default_factory=Skipped)


@dataclass(frozen=True)
class Policy:
    """What a front end makes of a file (the stream and the report differ only here)."""
    skip_templates: bool = False  # a template whose placeholders need values is skipped, not failed
    skip_job_free: bool = False  # a file found under a directory that converted nothing and failed nothing
    keep_unreadable: bool = False  # a file that could not be read is a result too (the report lists it)
    on_result: Callable | None = None  # called with each result before it is judged (the report's warnings)
    refuse: Callable | None = None  # path -> the error a front end gives instead of converting it, or None


STREAM = Policy()


def convert_files(files: Iterable[tuple[str, str | None, bool]], options, policy: Policy = STREAM) -> FileRun:
    """Each (path, text or None to read it, found under a directory) converted under `policy`."""
    run = FileRun()
    for path, text, from_dir in files:
        shown = "<stdin>" if path == "-" else path
        refused = policy.refuse(path) if policy.refuse is not None else None
        if refused is not None:
            run.errors.append(refused)
            continue
        try:
            text = read_text(path) if text is None else text
        except Kf2JobSetError as err:
            run.errors.append(err)
            if policy.keep_unreadable:
                run.results.append(FileResult(path=shown, text="", errors=[err]))
            continue
        r = convert_file_text(text, shown, options)  # a named .md file: its YAML blocks, at its own lines
        if policy.on_result is not None:
            policy.on_result(r)
        if from_dir and _skipped(r, text, options, policy, run.skipped):
            continue
        run.results.append(r)
        run.errors += r.errors
    return run


def _skipped(r, text: str, options, policy: Policy, skipped: Skipped) -> bool:
    if policy.skip_job_free and not r.conversions and not r.errors and not r.edited:
        skipped.converted += SOURCE_ANNOTATION in text  # a file kf2jobset converted: the report compares v1 jobs
        return True  # found by the walk, holds no job (a CRD, docs, a JobSet still of its recorded size): not news
    if r.errors and unparsable_without_job(r, options.katib):
        skipped.unparsable += 1  # not YAML and no `kind:` names a job: a file that cannot hold a job fails nothing
        click.echo(f"kf2jobset: skipped (not YAML, and no Kubeflow job in it): {r.errors[0].problems[0]}", err=True)
        return True
    if policy.skip_templates and r.errors and needs_values(r):
        skipped.templates += 1  # like a Helm template: counted, with the way forward
        what = "envsubst template" if r.engine is None else f"{r.engine} file"
        for e in r.errors:
            for p in e.problems:
                click.echo(f"kf2jobset: skipped ({what}): {p}", err=True)
        return True
    return False
