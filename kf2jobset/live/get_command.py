"""`kubectl kf2jobset get`: the JobSets (and companions) of live v1 jobs, printed for GitOps."""
from __future__ import annotations

import sys
from typing import Iterator

import click

from .. import exitcodes
from ..cli.shared_options import build_options, conversion_options
from ..errors import Kf2JobSetError, UsageError
from .flags import connect, connection_options, selection_options
from .kinds import KINDS, split_kind_name
from .output import dump, exit_for, no_jobs, print_error
from .reading import convert_noting_owners, kinds_to_read, read_jobs
from .scanning import object_ref


_KIND_NAMES = [k.kind.lower() for k in KINDS]  # from mappings/*.yaml, like the kinds themselves
_GET_HELP = """Print the JobSet (and companion objects) for live v1 jobs.

KIND is """ + ", ".join(_KIND_NAMES[:-1]) + " or " + _KIND_NAMES[-1] + """ (singular, plural, or
plural.kubeflow.org; KIND/NAME works too); without KIND every kind whose CRD is installed is read.
Server-populated fields (status, uid, resourceVersion, managedFields, owner references, kubectl's
last-applied annotation …) are dropped before converting. Jobs that cannot be converted are
reported on stderr; the others are still printed and the exit code tells the worst problem."""


@click.command(help=_GET_HELP)
@click.argument("kind", required=False)
@click.argument("job_name", metavar="[NAME]", required=False)
@connection_options
@selection_options
@click.option("-o", "--output", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True,
              help="yaml: a --- stream; json: the object, or a v1 List when there are several.")
@conversion_options
def get(kind, job_name, output, all_namespaces, selector, chunk_size, **kw):
    name = job_name
    try:
        kind, name = split_kind_name(kind, name)
        if name and all_namespaces:
            raise UsageError("a job cannot be retrieved by name across all namespaces (drop -A or NAME)")
        if name and selector:
            raise UsageError("NAME and --selector cannot be combined")
        if name and not kind:
            raise UsageError("NAME needs a KIND")
        options = build_options(kw)
        if options.name and not name:
            raise UsageError("--name applies to one job: give KIND NAME")
        cluster = connect(kw)
    except Kf2JobSetError as err:
        exit_for(err)
    errors: list[Kf2JobSetError] = []
    collected: list[dict] = []
    printed: list = []  # warnings, printed once per code at the end
    found = 0
    with cluster:
        try:
            namespace = None if all_namespaces else (kw.get("namespace") or cluster.namespace)
            kinds = kinds_to_read(cluster, kind)
            if name:
                k, version = kinds[0]
                jobs: Iterator = iter([cluster.get_job(k, version, namespace, name)])
            else:
                jobs = read_jobs(cluster, kinds, namespace, selector, chunk_size)
            for obj in jobs:
                found += 1
                try:
                    conv = convert_noting_owners(obj, options)
                except Kf2JobSetError as err:
                    print_error(err)
                    errors.append(err)
                    continue
                printed += [(object_ref(obj), "", note) for note in conv.notes if note.printed]
                if output == "yaml":  # stream job by job: constant memory for a whole cluster
                    sys.stdout.write(dump(conv.objects, output, False))
                    sys.stdout.flush()
                else:
                    collected += conv.objects
        except Kf2JobSetError as err:
            exit_for(err)
    from ..notes import warning_lines

    for line in warning_lines(printed):
        click.echo(f"kf2jobset: {line}", err=True)
    if output == "json" and collected:
        sys.stdout.write(dump(collected, output, single=bool(name)))
    if not found:
        no_jobs(namespace, selector)
    sys.exit(exitcodes.worst(exitcodes.for_error(e) for e in errors))
