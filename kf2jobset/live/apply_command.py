"""`kubectl kf2jobset apply`: the JobSet (and companions) of one v1 job created in its namespace,
validated by a server dry run first; `--target trainjob` hands over to trainjobs.py.
"""
from __future__ import annotations

import sys

import click

from .. import exitcodes
from ..cli.shared_options import build_options, conversion_options
from ..errors import Kf2JobSetError, UsageError
from ..targets import target_of
from .applying import Source, check_secrets, check_source, create_objects
from .flags import connect, connection_options
from .kinds import LiveKind, resolve_kind, split_kind_name
from .objects import kubectl_name
from .output import dump, exit_for, print_note, print_warning
from .reading import convert_noting_owners, kinds_to_read
from .scanning import object_ref


_APPLY_HELP = """Create the JobSet (and companions) of one v1 job in its namespace.

--dry-run=server (the default) sends everything with dryRun=All: the API server runs the JobSet
CRD's schema and CEL rules with strict field validation, and nothing persists. --dry-run=client
prints what would be sent. --dry-run=none creates the objects (after a server dry run of all of
them): the JobSet first, then its companions, owned by the JobSet so they go when it goes.

The v1 job is never deleted or changed, except with --suspend-source: after the JobSet exists,
runPolicy.suspend=true is set on it (a merge patch), so its pods stop and the two do not run side
by side. Secrets the pods mount (e.g. the MPI SSH key) are checked and missing ones reported.

With --target trainjob: the generated TrainingRuntime first (kept if one of that name, i.e. that
content, exists), then the TrainJob, then its companions, owned by the TrainJob. On a built-in
runtime the ClusterTrainingRuntime must exist. Trainer's webhook reads runtimes from a cache:
a TrainJob refused because its new runtime is not there yet is sent again for up to 10 s."""


@click.command(help=_APPLY_HELP)
@click.argument("kind")
@click.argument("job_name", metavar="NAME", required=False)
@connection_options
@click.option("--dry-run", "dry_run", type=click.Choice(["server", "client", "none"]), default="server",
              show_default=True, is_flag=False, flag_value="server", help="server: validate only; client: print; none: create.")
@click.option("--suspend-source", is_flag=True, help="After the JobSet exists, set runPolicy.suspend=true on the v1 job.")
@click.option("-o", "--output", type=click.Choice(["yaml", "json"]), default=None,
              help="Print the objects (as the server returned them) instead of kubectl-style result lines.")
@conversion_options
def apply(kind, job_name, dry_run, suspend_source, output, **kw):
    name = job_name
    try:
        kind, name = split_kind_name(kind, name)
        if not name:
            raise UsageError("apply needs KIND NAME (or KIND/NAME)")
        live_kind = resolve_kind(kind)
        options = build_options(kw)
        cluster = connect(kw)
    except Kf2JobSetError as err:
        exit_for(err)
    with cluster:
        try:
            code = _apply(cluster, live_kind, name, kw.get("namespace") or cluster.namespace, options,
                          dry_run, suspend_source, output)
        except Kf2JobSetError as err:
            exit_for(err)
    sys.exit(code)


def _apply(cluster, kind: LiveKind, name: str, namespace: str, options, dry_run: str, suspend_source: bool,
           output: str | None) -> int:
    (kind, version), = kinds_to_read(cluster, kind.kind)
    source = Source(kind, version, cluster.get_job(kind, version, namespace, name))
    ref = object_ref(source.obj)
    conv = convert_noting_owners(source.obj, options)
    from ..notes import warning_lines

    for line in warning_lines([(ref, "", note) for note in conv.notes if note.printed]):
        print_warning(line.removeprefix("warning: "))
    check_source(source, suspend_source, print_warning,
                 suspend_hint="--suspend-source suspends the v1 job after the JobSet is created")
    check_secrets(cluster, conv.objects, conv.notes, namespace, print_warning)
    if dry_run == "client":
        sys.stdout.write(dump(conv.objects, output or "yaml", single=False))
        if suspend_source:
            print_note(f"{ref}: would be suspended (runPolicy.suspend=true) after the JobSet is created")
        return exitcodes.OK
    server_only = dry_run == "server"
    created = create_objects(cluster, conv.objects, target_of(options).kind_written, namespace, dry_run=server_only,
                             warn=print_warning)
    _report_created(created, output, "created (server dry run)" if server_only else "created")
    if suspend_source:
        cluster.suspend_job(kind, version, namespace, name, dry_run=server_only)
        _result_line(f"{kind.kind.lower()}.{kind.group}/{name} suspended" + (" (server dry run)" if server_only else ""),
                     output)
    return exitcodes.OK


def _report_created(created: list[dict], output: str | None, verb: str) -> None:
    if output:
        for obj in created:
            (obj.get("metadata") or {}).pop("managedFields", None)
        sys.stdout.write(dump(created, output, single=False))
    else:
        for obj in created:
            click.echo(f"{kubectl_name(obj)} {verb}")


def _result_line(text: str, output: str | None) -> None:
    if output:
        print_note(text)
    else:
        click.echo(text)
