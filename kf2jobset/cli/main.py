"""Command line: the click commands, their arguments, options and help, and nothing else. A command's
body is its own module under kf2jobset/commands (live: kf2jobset/live), imported when the command
runs: `--version`, `--help` and the pre-commit hook load only what they use."""
from __future__ import annotations

import click

from .shared_options import build_options, conversion_options  # noqa: F401  (also the plugin's)
from ..choices import COLOR_MODES, FAIL_ON, GANG_FLAVOURS
from ..repo.command_line import REPO_HELP, repo_options
from ..version import __version__

_CONVERT_HELP = """Convert Kubeflow Training Operator jobs (v1, MPIJob v2beta1) under PATH (files, directories or - for stdin) to JobSets.

Prints one YAML stream on stdout: every Kubeflow job is replaced by its JobSet and companion
objects (e.g. an MPI hostfile ConfigMap); every other document passes through byte for byte.
Nothing is printed on stdout if any job fails; messages go to stderr."""


class _Main(click.Group):
    """`live` (the kubectl plugin's commands) is imported only when used: no `kubernetes` for convert."""

    def list_commands(self, ctx):
        return sorted({*super().list_commands(ctx), "live"})

    def get_command(self, ctx, name):
        if name == "live":
            from ..live.plugin import plugin

            return plugin
        return super().get_command(ctx, name)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kf2jobset")
def main():
    """Migrate Kubeflow Training Operator v1 jobs to Kubernetes JobSet."""


@main.command(help=_CONVERT_HELP + REPO_HELP)
@click.argument("paths", nargs=-1, required=True)
@conversion_options
@repo_options
@click.option("--report", "report_specs", multiple=True, metavar="FORMAT[:FILE]",
              help="Also write the semantic diff report (text, markdown, json, junit, sarif, github) to stderr or FILE.")
@click.option("--verbose", "-v", is_flag=True, help="Print every job's own warnings (default: one line per code).")
def convert(paths, report_specs=(), verbose=False, **kw):
    from .commands.convert_command import run_convert

    run_convert(paths, report_specs, verbose, kw)


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
@click.option("--fail-on", type=click.Choice(list(FAIL_ON)), default="breaking",
              show_default=True, help="Exit 1 when a finding is at least this bad (any = every change, never = exit 0).")
@click.option("--color", type=click.Choice(list(COLOR_MODES)), default="auto", show_default=True,
              help="Colour the text format (auto: on a terminal, unless NO_COLOR is set).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Skip matching paths (gitignore syntax; repeatable).")
@click.option("--no-gitignore", is_flag=True, help="Do not read .gitignore files while walking directories.")
@conversion_options
def report(paths, formats, output, fail_on, color, exclude, no_gitignore, **kw):
    from .commands.report_command import run_report

    run_report(paths, formats, output, fail_on, color, exclude, no_gitignore, kw)


_EXPLAIN_HELP = """What a finding code of the report means: what v1 did, what the JobSet (or TrainJob)
does, an example, and what to do. `kf2jobset explain JS051` prints one (any case); without CODE,
every code with its title, by family. --markdown prints every long form as Markdown (the
docs/codes.md page). An unknown CODE exits 2 and names the codes close to it."""


@main.command(help=_EXPLAIN_HELP, short_help="What a finding code means (e.g. JS051); every code without one.")
@click.argument("code", required=False)
@click.option("--markdown", is_flag=True, help="Markdown instead of text (all codes: the docs/codes.md page).")
def explain(code, markdown):
    from ..report import codebook

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
the TrainJob. --list prints one line per runtime instead; NAME... prints only those.

A platform whose pods are gang-scheduled installs one flavour instead: --gang coscheduling (scheduler-plugins;
its scheduler's name with --gang-scheduler-name), volcano or yunikorn prints the same runtimes under the same
names, with Trainer's podGroupPolicy and the scheduler's name in their pod templates."""


@main.command(help=_RUNTIMES_HELP, short_help="The ClusterTrainingRuntimes of kf2jobset's compat bundle (YAML).")
@click.argument("names", nargs=-1)
@click.option("--list", "as_list", is_flag=True, help="One line per runtime: name, framework, shape.")
@click.option("--gang", type=click.Choice(GANG_FLAVOURS), default=None,
              help="The flavour for a gang scheduler: podGroupPolicy and schedulerName in every runtime.")
@click.option("--gang-scheduler-name", default=None,
              help="With --gang coscheduling: the name scheduler-plugins' scheduler runs under (default: scheduler-plugins).")
def runtimes(names, as_list, gang, gang_scheduler_name):
    from ..targets.bundle_catalog import bundle_listing, bundle_stream
    from ..targets.bundle_gang import Gang, default_name

    if gang_scheduler_name and gang != "coscheduling":
        raise click.UsageError("--gang-scheduler-name goes with --gang coscheduling (volcano and yunikorn have one name)")
    flavour = Gang(gang, gang_scheduler_name or default_name(gang)) if gang else None
    try:
        click.echo(bundle_listing(names) if as_list else bundle_stream(names, flavour), nl=False)
    except KeyError as err:
        raise click.UsageError(f"no runtime {err.args[0]!r} in kf2jobset's bundle (kf2jobset runtimes --list names them)") from None


_RESIZE_HELP = """Resize converted JobSets: set the replicas of a replica type and rewrite every value kf2jobset
wrote from the old counts (TF_CONFIG's host lists, an MPI hostfile ConfigMap, WORKER_ADDRS, DMLC_NUM_*, the
gang's minMember and minResources, the kf2jobset.dev/sized-for record, ...), keeping every other byte of
the file: comments and edits made since the conversion stay.

PATH: files, - for stdin, or a directory with --name. Without --in-place the resized files are printed.

Refused, with the reason, and nothing written: a size the v1 job could not have had (e.g. a TFJob Chief
other than 1), a value kf2jobset wrote that was edited since, and an elastic PyTorchJob's workers past
its PET_NNODES bound without --elastic-max.

\b
Exit codes: 0 resized; 2 bad options; 3 unreadable input; 4 refused."""


@main.command(help=_RESIZE_HELP, short_help="Resize a converted JobSet: replicas and every value written from them.")
@click.argument("paths", nargs=-1, required=True)
@click.option("--replicas", "replicas", multiple=True, metavar="TYPE=N",
              help="New replicas of a replica type (Worker) or replicatedJob (worker); repeatable.")
@click.option("--num-nodes", type=click.IntRange(min=1), default=None, metavar="N",
              help="A TrainJob's new numNodes (not resized yet: refused, naming the way that works).")
@click.option("--elastic-max", type=click.IntRange(min=1), default=None, metavar="N",
              help="An elastic PyTorchJob's new maximum (PET_NNODES min:N), to resize past the old one.")
@click.option("--name", "names", multiple=True, metavar="NAME", help="Only the JobSet of this name (repeatable).")
@click.option("--in-place", is_flag=True, help="Write the files instead of printing them.")
def resize(paths, replicas, num_nodes, elastic_max, names, in_place):
    from .commands.resize_command import run_resize

    run_resize(paths, replicas, num_nodes, elastic_max, names, in_place)


_KRM_HELP = """kustomize function: a ResourceList on stdin; the same list, every Kubeflow job replaced by what `convert` writes \
for it, on stdout.

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
    from .commands.krm_command import run_krm

    run_krm()


def kubectl_main():
    """Entry point of `kubectl kf2jobset` (the kubectl plugin)."""
    from ..live.plugin import main as plugin_main

    plugin_main()


if __name__ == "__main__":
    main()
