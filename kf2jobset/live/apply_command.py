"""`kubectl kf2jobset apply`: the JobSet (and companions) of one v1 job created in its namespace,
validated by a server dry run first; `--target trainjob` hands over to trainjobs.py.
"""
from __future__ import annotations

import sys

import click

from .. import exitcodes
from ..cli.shared_options import build_options, conversion_options
from ..errors import Kf2JobSetError, NotFoundError, UsageError
from ..targets import target_of
from .cluster import JOBSET_GROUP, JOBSET_PLURAL, JOBSET_VERSION
from .flags import connect, connection_options
from .kinds import LiveKind, resolve_kind, split_kind_name
from .objects import TERMINAL_STATES, is_suspended, job_state, secret_refs
from .output import dump, exit_for, kubectl_name, print_error, print_note, print_warning
from .reading import convert_noting_owners, kinds_to_read
from .scanning import object_ref

ACTIVE_STATES = ("-", "Created", "Running", "Restarting")


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
    source = cluster.get_job(kind, version, namespace, name)
    ref = object_ref(source)
    conv = convert_noting_owners(source, options)
    from ..notes import warning_lines

    for line in warning_lines([(ref, "", note) for note in conv.notes if note.printed]):
        print_warning(line.removeprefix("warning: "))
    state = job_state(source)
    if state in TERMINAL_STATES:
        print_warning(f"{ref} has {state}: the JobSet runs the training again")
    elif state in ACTIVE_STATES and not is_suspended(source) and not suspend_source:
        print_warning(f"{ref} is not suspended: once the JobSet exists both run the same training "
              "(--suspend-source suspends the v1 job after the JobSet is created)")
    _check_secrets(cluster, conv, namespace)
    objects = conv.objects
    jobset = conv.jobset
    if target_of(options).kind_written == "TrainJob" and dry_run != "client":
        from .trainjobs import create_trainjob

        created = create_trainjob(cluster, objects, namespace, dry_run=dry_run == "server", warn=print_warning)
        _report_created(created, output, "created (server dry run)" if dry_run == "server" else "created")
        if suspend_source:
            cluster.suspend_job(kind, version, namespace, name, dry_run=dry_run == "server")
            _result_line(f"{kind.kind.lower()}.{kind.group}/{name} suspended"
                         + (" (server dry run)" if dry_run == "server" else ""), output)
        return exitcodes.OK
    if dry_run == "client":
        sys.stdout.write(dump(objects, output or "yaml", single=False))
        if suspend_source:
            print_note(f"{ref}: would be suspended (runPolicy.suspend=true) after the JobSet is created")
        return exitcodes.OK
    if not cluster.jobset_served():
        raise NotFoundError(
            f"the JobSet CRD ({JOBSET_PLURAL}.{JOBSET_GROUP}, {JOBSET_VERSION}) is not installed in this cluster: "
            "install JobSet first (https://jobset.sigs.k8s.io/docs/installation/)"
        )
    # Pass 1, always: every object through the server's validation, nothing persisted.
    created = _create_all(cluster, jobset, conv.companions, namespace, dry_run=True)
    if dry_run == "server":
        if suspend_source:
            cluster.suspend_job(kind, version, namespace, name, dry_run=True)
        _report_created(created, output, "created (server dry run)")
        if suspend_source:
            _result_line(f"{kind.kind.lower()}.{kind.group}/{name} suspended (server dry run)", output)
        return exitcodes.OK
    created = _create_all(cluster, jobset, conv.companions, namespace, dry_run=False)
    _report_created(created, output, "created")
    if suspend_source:
        cluster.suspend_job(kind, version, namespace, name, dry_run=False)
        _result_line(f"{kind.kind.lower()}.{kind.group}/{name} suspended", output)
    return exitcodes.OK



def _create_all(cluster, jobset: dict, companions: list[dict], namespace: str, *, dry_run: bool) -> list[dict]:
    import copy

    out = [cluster.create(jobset, namespace, dry_run)]
    owner = {
        "apiVersion": jobset["apiVersion"],
        "kind": "JobSet",
        "name": out[0]["metadata"]["name"],
        "uid": out[0]["metadata"]["uid"],
    }
    for obj in companions:
        obj = copy.deepcopy(obj)
        obj.setdefault("metadata", {})["ownerReferences"] = [owner]
        try:
            out.append(cluster.create(obj, namespace, dry_run))
        except Kf2JobSetError as err:
            if not dry_run:
                print_error(err)
                raise type(err)(f"{kubectl_name(out[0])} was created, but its companion "
                                f"{kubectl_name(obj)} was not; create it, or delete the JobSet and retry") from None
            raise
    return out


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


def _check_secrets(cluster, conv, namespace: str) -> None:
    """Warn about Secrets the pods mount that are missing, or that the v1 job's deletion would take along."""
    for secret in secret_refs(conv.objects):
        try:
            owners = cluster.secret_owners(namespace, secret)
        except Kf2JobSetError as err:
            print_warning(f"cannot check Secret {secret!r} in namespace {namespace}: {err.problems[0]}")
            continue
        if owners is None:
            action = next((n.action for n in conv.notes if n.action and secret in n.action), None)
            if action:  # the core's hint has no namespace: this one has
                action = action.replace("kubectl create secret", f"kubectl -n {namespace} create secret")
            print_warning(f"Secret {secret!r} not found in namespace {namespace}: pods that mount it will not start"
                  + (f" (hint: {action})" if action else ""))
        elif owners:
            print_warning(f"Secret {secret!r} is owned by {', '.join(owners)}: deleting the owner deletes the Secret "
                  "the JobSet mounts; remove its ownerReferences (or copy it) before deleting the v1 job")
