"""Command line: click commands only. Work happens in the core; errors become exit codes via exitcodes."""
from __future__ import annotations

import sys

import click

from . import __version__, exitcodes

_CONVERT_HELP = """Convert Kubeflow v1 jobs under PATH (files, directories or - for stdin) to JobSets.

Prints one YAML stream on stdout: every Kubeflow job is replaced by its JobSet and companion
objects (e.g. an MPI hostfile ConfigMap); every other document passes through byte for byte.
Nothing is printed on stdout if any job fails; messages go to stderr."""


def conversion_options(func):
    """Options shared by convert, report and the kubectl plugin."""
    opts = [
        click.option("--jobset-version", default="v0.12", show_default=True, help="Oldest JobSet release the output must run on (v0.6 or newer)."),
        click.option("--scheduler", type=click.Choice(["none", "kueue", "volcano"]), default="none", show_default=True,
                     help="Where runPolicy.schedulingPolicy goes; never guessed."),
        click.option("--name", "name", default=None, help="JobSet name (only when converting a single job)."),
        click.option("--subdomain", default=None, help="Pin network.subdomain instead of using the JobSet name."),
        click.option("--keep-kubeflow-labels", is_flag=True, help="Keep the static training.kubeflow.org/* pod labels."),
        click.option("--ssh-secret", default=None, help="MPI: existing kubernetes.io/ssh-auth Secret to mount (default <jobset>-ssh)."),
        click.option("--accept-mpi-ssh", is_flag=True, help="MPIJob v1: accept the breaking switch from kubectl exec to SSH."),
        click.option("--mpi-hostfile", type=click.Choice(["auto", "configmap", "generated"]), default="auto", show_default=True,
                     help="MPI hostfile as a ConfigMap, or generated in the launcher at start-up (works without a known name)."),
        click.option("--cluster-domain", default=None, help="The operator's CUSTOM_CLUSTER_DOMAIN / --cluster-domain, if it had one."),
        click.option("--katib", is_flag=True, help="Also convert jobs inside Katib Experiments (trialTemplate.trialSpec)."),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def build_options(kw: dict):
    from .options import ConvertOptions, parse_version

    return ConvertOptions(
        jobset_version=parse_version(kw.pop("jobset_version")),
        scheduler=kw.pop("scheduler"),
        name=kw.pop("name"),
        subdomain=kw.pop("subdomain"),
        keep_kubeflow_labels=kw.pop("keep_kubeflow_labels"),
        ssh_secret=kw.pop("ssh_secret"),
        accept_mpi_ssh=kw.pop("accept_mpi_ssh"),
        mpi_hostfile=kw.pop("mpi_hostfile"),
        cluster_domain=kw.pop("cluster_domain"),
        katib=kw.pop("katib"),
    )


def fail(err) -> "NoReturn":  # noqa: F821
    for problem in err.problems:
        click.echo(f"kf2jobset: {problem}", err=True)
    sys.exit(exitcodes.for_error(err))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kf2jobset")
def main():
    """Migrate Kubeflow Training Operator v1 jobs to Kubernetes JobSet."""


@main.command(help=_CONVERT_HELP)
@click.argument("paths", nargs=-1, required=True)
@conversion_options
def convert(paths, **kw):
    from .errors import Kf2JobSetError, UsageError
    from .files import discover
    from .pipeline import convert_text, read_text, stream_for_stdout

    try:
        options = build_options(kw)
    except Kf2JobSetError as err:
        fail(err)
    results, errors = [], []
    for path in discover(paths):
        try:
            text = read_text(path)
        except Kf2JobSetError as err:
            errors.append(err)
            continue
        r = convert_text(text, "<stdin>" if path == "-" else path, options)
        results.append(r)
        errors += r.errors
    if options.name and sum(len(r.conversions) for r in results) > 1:
        errors.append(UsageError("--name applies to a single job, but several were converted"))
    if errors:
        for err in errors:
            for problem in err.problems:
                click.echo(f"kf2jobset: {problem}", err=True)
        sys.exit(exitcodes.worst(exitcodes.for_error(e) for e in errors))
    for r in results:
        for conv in r.conversions:
            for note in conv.notes:
                if note.category == "breaking":
                    click.echo(f"kf2jobset: warning: {r.path}: {conv.job.display_name()}: {note.code} {note.message}", err=True)
    sys.stdout.write(stream_for_stdout(results))


def kubectl_main():
    """Entry point of `kubectl kf2jobset` (the kubectl plugin)."""
    from .live.plugin import main as plugin_main

    plugin_main()


if __name__ == "__main__":
    main()
