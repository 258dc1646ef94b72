"""`kf2jobset convert`: repo mode (kf2jobset.repo) or one YAML stream on stdout, the messages on stderr."""
from __future__ import annotations

import dataclasses
import sys

import click

from ..shared_options import build_options
from ...errors import Kf2JobSetError, UsageError
from ...text.filenames import is_doc_name
from ...notes import warning_lines
from ...files.pipeline import stream_for_stdout
from ...options import shared_subdomain
from ...repo.command_line import RepoOptions, repo_mode, stream_files
from ...repo.fsio import read_text
from ...repo.run import katib_embedded
from .exits import fail, fail_all
from .file_loop import Policy, convert_files


def run_convert(paths, report_specs, verbose: bool, kw: dict) -> None:
    try:
        options = build_options(kw)
    except Kf2JobSetError as err:
        fail(err)
    repo = RepoOptions.from_click(kw, verbose)
    if report_specs and (repo.in_place or repo.out_dir or repo.check):
        fail(UsageError("--report goes with the stream mode; for a repository run `kf2jobset report PATH...`"))
    code = repo_mode(paths, repo, options)  # --in-place / --out-dir / --check (kf2jobset.repo)
    if code is not None:
        sys.exit(code)
    files = stream_files(paths, repo.walk)
    if len(files) > 1:  # objects of one file may select the pods of another file's job (selectorfix)
        options = _with_run_peers(options, files)
    results, errors = _convert_files(files, options)
    if options.name and sum(len(r.conversions) for r in results) > 1:
        errors.append(UsageError("--name applies to a single job, but several were converted"))
    clash = shared_subdomain(options, [c.job.namespace for r in results for c in r.conversions])
    if clash is not None:
        errors.append(clash)
    if errors:
        fail_all(errors)
    if not options.katib:
        katib = sum(katib_embedded(r) for r in results)
        if katib:
            click.echo(f"kf2jobset: hint: {katib} Katib Experiment(s) embed v1 jobs in trialTemplate.trialSpec; "
                       "passed through unchanged: pass --katib to convert them", err=True)
    _print_warnings(results, verbose)
    if report_specs:
        from .report_command import report_to_stderr  # the report's modules: only for --report

        report_to_stderr(results, options, report_specs)
    sys.stdout.write(stream_for_stdout(results))


def _with_run_peers(options, files):
    from ...core.selectorfix import tree_peers  # the runtime models: only for a run of several files

    texts = []
    for path, _ in files:
        if path == "-":
            continue
        try:
            texts.append((path, read_text(path)))
        except Kf2JobSetError:
            continue  # reported when the file itself is read
    peers = tree_peers(texts)
    return dataclasses.replace(options, selector_peers=peers) if peers else options


def _convert_files(files, options):
    """Each file converted; (results, errors). A Markdown file is an error here: its YAML blocks are rewritten
    in the file, not printed."""
    run = convert_files([(path, None, from_dir) for path, from_dir in files], options, Policy(refuse=_markdown))
    return run.results, run.errors


def _markdown(path: str) -> UsageError | None:
    if not is_doc_name(path):
        return None
    return UsageError(f"{path}: a Markdown file is converted where it is: kf2jobset convert {path} --in-place "
                      "(or --check, or --out-dir DIR)")


def _print_warnings(results, verbose: bool) -> None:
    for r in results:
        for line in r.unconverted_lines() + [stale.listing(r.path) for stale in r.edited]:
            click.echo(f"kf2jobset: warning: {line}", err=True)
    printed = [(r.path, conv.job.display_name(), note) for r in results for conv in r.conversions
               for note in conv.notes if note.printed]
    for line in warning_lines(printed, verbose):
        click.echo(f"kf2jobset: {line}", err=True)
