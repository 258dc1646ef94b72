"""Command line: click commands only. Work happens in the core; errors become exit codes via exitcodes."""
from __future__ import annotations

import sys

import click

from . import exitcodes
from .version import __version__
from .clioptions import build_options, conversion_options  # noqa: F401  (also the plugin's)
from .repo.cli import REPO_HELP, RepoOptions, repo_mode, repo_options, stream_files

_CONVERT_HELP = """Convert Kubeflow Training Operator jobs (v1, MPIJob v2beta1) under PATH (files, directories or - for stdin) to JobSets.

Prints one YAML stream on stdout: every Kubeflow job is replaced by its JobSet and companion
objects (e.g. an MPI hostfile ConfigMap); every other document passes through byte for byte.
Nothing is printed on stdout if any job fails; messages go to stderr."""


def fail(err) -> "NoReturn":  # noqa: F821
    for problem in err.problems:
        click.echo(f"kf2jobset: {problem}", err=True)
    sys.exit(exitcodes.for_error(err))


class _Main(click.Group):
    """`live` (the kubectl plugin's commands) is imported only when used: no `kubernetes` for convert."""

    def list_commands(self, ctx):
        return sorted({*super().list_commands(ctx), "live"})

    def get_command(self, ctx, name):
        if name == "live":
            from .live.plugin import plugin

            return plugin
        return super().get_command(ctx, name)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kf2jobset")
def main():
    """Migrate Kubeflow Training Operator v1 jobs to Kubernetes JobSet."""


def _with_run_peers(options, files, read_text):
    import dataclasses

    from .errors import Kf2JobSetError
    from .selectorfix import tree_peers

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


@main.command(help=_CONVERT_HELP + REPO_HELP)
@click.argument("paths", nargs=-1, required=True)
@conversion_options
@repo_options
@click.option("--report", "report_specs", multiple=True, metavar="FORMAT[:FILE]",
              help="Also write the semantic diff report (text, markdown, json, junit, sarif, github) to stderr or FILE.")
@click.option("--verbose", "-v", is_flag=True, help="Print every job's own warnings (default: one line per code).")
def convert(paths, report_specs=(), verbose=False, **kw):
    from .errors import Kf2JobSetError, UsageError
    from .files import is_doc_name
    from .pipeline import convert_text, read_text, stream_for_stdout
    from .repo.run import unparsable_without_job

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
    results, errors = [], []
    files = stream_files(paths, repo.walk)
    if len(files) > 1:  # objects of one file may select the pods of another file's job (selectorfix)
        options = _with_run_peers(options, files, read_text)
    for path, from_dir in files:
        if is_doc_name(path):  # its YAML blocks are rewritten in the file, not printed
            errors.append(UsageError(f"{path}: a Markdown file is converted where it is: kf2jobset convert {path} --in-place "
                                     "(or --check, or --out-dir DIR)"))
            continue
        try:
            text = read_text(path)
        except Kf2JobSetError as err:
            errors.append(err)
            continue
        r = convert_text(text, "<stdin>" if path == "-" else path, options)
        if from_dir and r.errors and unparsable_without_job(r, options.katib):
            click.echo(f"kf2jobset: skipped (not YAML, and no Kubeflow job in it): {r.errors[0].problems[0]}", err=True)
            continue
        results.append(r)
        errors += r.errors
    if options.name and sum(len(r.conversions) for r in results) > 1:
        errors.append(UsageError("--name applies to a single job, but several were converted"))
    if errors:
        for err in errors:
            for problem in err.problems:
                click.echo(f"kf2jobset: {problem}", err=True)
        sys.exit(exitcodes.worst(exitcodes.for_error(e) for e in errors))
    if not options.katib:
        from .repo.run import katib_embedded

        katib = sum(katib_embedded(r) for r in results)
        if katib:
            click.echo(f"kf2jobset: hint: {katib} Katib Experiment(s) embed v1 jobs in trialTemplate.trialSpec; "
                       "passed through unchanged: pass --katib to convert them", err=True)
    from .notes import warning_lines

    for r in results:
        for line in r.unconverted_lines():
            click.echo(f"kf2jobset: warning: {line}", err=True)
    printed = [(r.path, conv.job.display_name(), note) for r in results for conv in r.conversions
               for note in conv.notes if note.printed]
    for line in warning_lines(printed, verbose):
        click.echo(f"kf2jobset: {line}", err=True)
    if report_specs:
        _convert_report(results, options, report_specs)
    sys.stdout.write(stream_for_stdout(results))


_REPORT_HELP = """Semantic diff report: what changes for every pod when the v1 jobs under PATH become JobSets.

Each job is converted (same options as `convert`), then what the v1 operator ran is compared with
what the JobSet will run, pod by pod and rule by rule. Findings: unchanged, rewritten (same meaning),
approximated, dropped, prerequisite (act before applying), breaking, unexplained (a kf2jobset gap).

Formats: text, markdown, json, junit, sarif, github. Repeat --format to write several in one
run, e.g. --format text --format sarif:kf2jobset.sarif (one may go to stdout, the rest need :FILE).

\b
Exit codes: 0 nothing at or above --fail-on; 1 findings at or above it;
3 unreadable input or invalid job; 4 a job that cannot be converted as
asked; 2 bad options."""


@main.command(help=_REPORT_HELP)
@click.argument("paths", nargs=-1, required=True)
@click.option("--format", "formats", multiple=True, metavar="FORMAT[:FILE]",
              help="Output format, optionally with a file (repeatable). Default: text on stdout.")
@click.option("--output", default=None, metavar="FILE", help="File for the one --format given without :FILE.")
@click.option("--fail-on", type=click.Choice(["breaking", "approximated", "any", "never"]), default="breaking",
              show_default=True, help="Exit 1 when a finding is at least this bad (any = every change, never = exit 0).")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto", show_default=True,
              help="Colour the text format (auto: on a terminal, unless NO_COLOR is set).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip matching paths (gitignore syntax; repeatable).")
@click.option("--no-gitignore", is_flag=True, help="Do not read .gitignore files while walking directories.")
@conversion_options
def report(paths, formats, output, fail_on, color, exclude, no_gitignore, **kw):
    from .errors import Kf2JobSetError, UsageError
    from .markdown import convert_file_text
    from .pipeline import FileResult, read_text
    from .repo.cli import walk_for_jobs
    from .repo.run import unparsable_without_job
    from .report import build_report
    from .report.outputs import resolve, write

    try:
        options = build_options(kw)
        specs = resolve(formats, output)
    except Kf2JobSetError as err:
        fail(err)
    walked = walk_for_jobs(paths, exclude, gitignore=not no_gitignore, katib=options.katib)
    if walked.selecting:  # objects anywhere in the run may select a job's pods (selectorfix)
        import dataclasses

        from .selectorfix import tree_peers

        options = dataclasses.replace(options, selector_peers=tree_peers(walked.selecting))
    results, errors = [], []
    templates = 0  # envsubst templates whose placeholders need values (found under directories)
    unparsable = 0  # files found under directories that are not YAML and hold no job
    for path, text, from_dir in walked.files:
        shown = "<stdin>" if path == "-" else path
        try:
            text = read_text(path) if text is None else text
        except Kf2JobSetError as err:
            errors.append(err)
            results.append(FileResult(path=shown, text="", errors=[err]))
            continue
        r = convert_file_text(text, shown, options)  # a named .md file: its YAML blocks, at its own lines
        for line in r.unconverted_lines():  # jobs inside AppWrappers, ConfigMaps, Argo templates
            click.echo(f"kf2jobset: warning: {line}", err=True)
        if from_dir and not r.conversions and not r.errors:
            continue  # found by the walk, mentions a job kind, holds none (a CRD, docs): not news
        if from_dir and r.errors and unparsable_without_job(r, options.katib):
            unparsable += 1  # not YAML and no `kind:` names a job: a file that cannot hold a job fails nothing
            click.echo(f"kf2jobset: skipped (not YAML, and no Kubeflow job in it): {r.errors[0].problems[0]}", err=True)
            continue
        if from_dir and r.errors and all(p.rule == "envsubst" for e in r.errors for p in e.problems):
            templates += 1  # like a Helm template: counted, with the way forward
            for e in r.errors:
                for p in e.problems:
                    click.echo(f"kf2jobset: skipped (envsubst template): {p}", err=True)
            continue
        results.append(r)
        errors += r.errors
    if options.name and sum(len(r.conversions) for r in results) > 1:
        fail(UsageError("--name applies to a single job, but several were found"))
    rep = build_report(results, options, fail_on)
    try:
        write(rep, specs, sys.stdout, color)
    except Kf2JobSetError as err:
        fail(err)
    if walked.walked_dirs or all(s.path not in (None, "-") for s in specs):
        jobs = sum(len(r.conversions) for r in results)
        with_jobs = sum(1 for r in results if r.conversions)
        line = (f"kf2jobset: {walked.scanned} file{'s' if walked.scanned != 1 else ''} scanned, {jobs} job{'s' if jobs != 1 else ''} "
                f"in {with_jobs} file{'s' if with_jobs != 1 else ''}")
        if walked.helm:
            line += f", {walked.helm} skipped (Helm templates)"
        if templates:
            line += f", {templates} skipped (envsubst templates)"
        if unparsable:
            line += f", {unparsable} skipped (not YAML, no job)"
        failed = sum(1 for r in results if r.errors)
        line += f", {failed} failed" if failed else ""
        click.echo(line, err=True)
        if walked.helm_jobs:
            click.echo("kf2jobset: hint: Helm templates are not reported; render the chart (helm template CHART | "
                       "kf2jobset report -)", err=True)
        if templates:
            click.echo("kf2jobset: hint: envsubst templates whose placeholders need values are not reported; substitute "
                       "first (VAR=... envsubst < FILE | kf2jobset report -)", err=True)
    if errors:
        sys.exit(exitcodes.worst(exitcodes.for_error(e) for e in errors))
    sys.exit(exitcodes.FINDINGS if rep.failing() else exitcodes.OK)


def _convert_report(results, options, report_specs) -> None:
    """`convert --report`: the report goes to stderr or to files, never into the YAML on stdout."""
    from .errors import Kf2JobSetError, UsageError
    from .report import build_report
    from .report.outputs import resolve, write

    try:
        specs = resolve(report_specs, None)
        if any(s.path == "-" for s in specs):
            raise UsageError("convert --report cannot write to stdout (it carries the YAML); use stderr (no :FILE) or a file")
        write(build_report(results, options), specs, sys.stderr)
    except Kf2JobSetError as err:
        fail(err)


_EXPLAIN_HELP = """What a finding code of the report means: what v1 did, what the JobSet (or TrainJob)
does, an example, and what to do. `kf2jobset explain JS051` prints one (any case); without CODE,
every code with its title, by family. --markdown prints every long form as Markdown (the
docs/codes.md page). An unknown CODE exits 2 and names the codes close to it."""


@main.command(help=_EXPLAIN_HELP, short_help="What a finding code means (e.g. JS051); every code without one.")
@click.argument("code", required=False)
@click.option("--markdown", is_flag=True, help="Markdown instead of text (all codes: the docs/codes.md page).")
def explain(code, markdown):
    from .report import codebook

    if code is None:
        click.echo(codebook.markdown() if markdown else codebook.listing(), nl=False)
        return
    found, near = codebook.lookup(code)
    if found is None:
        hint = f"; close matches: {', '.join(near)}" if near else ""
        raise click.UsageError(f"unknown finding code {code!r}{hint} (kf2jobset explain lists them all)")
    click.echo(codebook.markdown_entry(found) if markdown else codebook.long_form(found), nl=False)


_RUNTIMES_HELP = """kf2jobset's compat bundle: the ClusterTrainingRuntimes that TrainJobs of `--target trainjob`
run on where no Kubeflow Trainer built-in runtime keeps the v1 contract.

Prints them as one YAML stream for the platform team to review and install once:

\b
  kf2jobset runtimes | kubectl apply -f -

Each runtime holds only what every job of its shape shares (roles, restart, retry and success rules,
helper env naming pods from the JobSet name); the job itself (image, command, env, numNodes) is in
the TrainJob. --list prints one line per runtime instead; NAME... prints only those."""


@main.command(help=_RUNTIMES_HELP, short_help="The ClusterTrainingRuntimes of kf2jobset's compat bundle (YAML).")
@click.argument("names", nargs=-1)
@click.option("--list", "as_list", is_flag=True, help="One line per runtime: name, framework, shape.")
def runtimes(names, as_list):
    from .targets.bundle_catalog import bundle_listing, bundle_stream

    try:
        click.echo(bundle_listing(names) if as_list else bundle_stream(names), nl=False)
    except KeyError as err:
        raise click.UsageError(f"no runtime {err.args[0]!r} in kf2jobset's bundle (kf2jobset runtimes --list names them)")


_KRM_HELP = """kustomize function: a ResourceList on stdin; the same list, every Kubeflow job replaced by what `convert` writes for it, on stdout.

Run by kustomize as an exec transformer: a function config annotated
config.kubernetes.io/function: "exec: {path: kf2jobset, args: [krm]}" listed under
`transformers:`, built with kustomize build --enable-alpha-plugins --enable-exec.

Options come from the function config's data, named like convert's options in camelCase, e.g.
target: trainjob, scheduler: kueue, jobsetVersion: v0.8, acceptMpiSsh: "true". Other items pass
through with their annotations; a job's outputs take its path and index annotations. On an error
the list carries `results` (severity error) and no items, the messages go to stderr and the exit
code is non-zero, so kustomize fails the build."""


@main.command(help=_KRM_HELP)
def krm():
    from .errors import Kf2JobSetError
    from .krm import error_output, function_config_data, read_resource_list, transform
    from .notes import warning_lines
    from .pipeline import read_text

    try:
        rl = read_resource_list(read_text("-"))
        options = _krm_options(function_config_data(rl))
    except Kf2JobSetError as err:
        sys.stdout.write(error_output(err))
        fail(err)
    run = transform(rl, options)
    sys.stdout.write(run.output)
    if run.errors:
        for err in run.errors:
            for problem in err.problems:
                click.echo(f"kf2jobset: {problem}", err=True)
        sys.exit(exitcodes.worst(exitcodes.for_error(e) for e in run.errors))
    for line in run.warnings:
        click.echo(f"kf2jobset: warning: {line}", err=True)
    for line in warning_lines([("<ResourceList>", c.job.display_name(), n) for c in run.conversions for n in c.notes if n.printed]):
        click.echo(f"kf2jobset: {line}", err=True)


def _krm_options(data: dict):
    """functionConfig data -> ConvertOptions, parsed by convert's own click options (same choices,
    defaults and checks): `scheduler: kueue` is `--scheduler kueue`, `acceptMpiSsh: "true"` the flag."""
    import re

    from .errors import Location, Problem, UsageError

    params = conversion_options(lambda **kw: kw).__click_params__
    by_key = {re.sub(r"_(.)", lambda m: m.group(1).upper(), p.name): p for p in params if p.name != "name"}
    argv = []
    for key, value in data.items():
        where = Location(file="<function config>", path=("data", key))
        param = by_key.get(key)
        if param is None:
            raise UsageError(Problem(f"unknown option; known: {', '.join(sorted(by_key))}", where))
        if param.is_flag:
            if value not in ("true", "false"):
                raise UsageError(Problem(f"expected \"true\" or \"false\", got {value!r}", where))
            argv += [param.opts[0]] if value == "true" else []
            continue
        try:
            click.Command("krm", params=[param]).make_context("krm", [param.opts[0], value])
        except click.UsageError as exc:
            raise UsageError(Problem(exc.format_message(), where)) from None
        argv += [param.opts[0], value]
    ctx = click.Command("krm", params=params).make_context("krm", argv)
    return build_options(dict(ctx.params))


def kubectl_main():
    """Entry point of `kubectl kf2jobset` (the kubectl plugin)."""
    from .live.plugin import main as plugin_main

    plugin_main()


if __name__ == "__main__":
    main()
