"""`kubectl kf2jobset get | scan | apply` (also `kf2jobset live ...`): v1 jobs read from a cluster.

kubectl neither parses nor forwards its own flags to plugins, so the standard ones are parsed here:
--kubeconfig, --context, -n/--namespace, -A/--all-namespaces, -l/--selector, -o/--output,
--request-timeout, --chunk-size. stdout carries data only (manifests, the table, kubectl-style
"created" lines); notes, warnings and errors go to stderr, one line each.
"""
from __future__ import annotations

import dataclasses
import json
import re
import sys
from typing import Iterator

import click

from .. import __version__, exitcodes
from ..clioptions import build_options, conversion_options
from ..errors import Kf2JobSetError, NotFoundError, UsageError
from .cluster import DEFAULT_CHUNK_SIZE, JOBSET_GROUP, JOBSET_PLURAL, JOBSET_VERSION
from .kinds import KINDS, LiveKind, resolve_kind, split_kind_name
from .objects import (
    TERMINAL_STATES,
    clean,
    format_replicas,
    is_suspended,
    job_state,
    secret_refs,
)
from .scanning import base_row, convert_live, default_workers, finish_row, object_ref, scan_rows

PLUGIN_NAME = "kubectl kf2jobset"
ACTIVE_STATES = ("-", "Created", "Running", "Restarting")


# ---------------------------------------------------------------------------------------------
# output helpers


def _error(err: Kf2JobSetError) -> None:
    for problem in err.problems:
        click.echo(f"kf2jobset: error: {problem}", err=True)


def _warn(text: str) -> None:
    click.echo(f"kf2jobset: warning: {text}", err=True)


def _note(text: str) -> None:
    click.echo(f"kf2jobset: note: {text}", err=True)


def _exit_for(err: Kf2JobSetError) -> "NoReturn":  # noqa: F821
    _error(err)
    sys.exit(exitcodes.for_error(err))


def _kubectl_name(obj: dict) -> str:
    """kubectl's `jobset.jobset.x-k8s.io/name` / `configmap/name`."""
    api_version, kind = obj.get("apiVersion", ""), str(obj.get("kind", "")).lower()
    group = api_version.split("/", 1)[0] if "/" in api_version else ""
    return f"{kind}.{group}/{obj['metadata'].get('name')}" if group else f"{kind}/{obj['metadata'].get('name')}"


def _dump(objects: list[dict], output: str, single: bool) -> str:
    from ..yamlio import dump_documents, to_plain

    if output == "json":
        plain = [to_plain(o) for o in objects]
        data = plain[0] if single and len(plain) == 1 else {"apiVersion": "v1", "kind": "List", "items": plain}
        return json.dumps(data, indent=2) + "\n"
    return dump_documents(objects)


_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")


def parse_timeout(text: str) -> float | None:
    """kubectl's --request-timeout: `0` (no limit), `30` (seconds), `1m30s`, `500ms` -> seconds or None."""
    text = (text or "0").strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        seconds = float(text)
    else:
        parts = _DURATION.findall(text)
        if not parts or "".join(n + u for n, u in parts) != text:
            raise UsageError(f"--request-timeout {text!r}: expected a duration such as 0, 30, 30s, 1m or 500ms")
        scale = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
        seconds = sum(float(n) * scale[u] for n, u in parts)
    return seconds or None


# ---------------------------------------------------------------------------------------------
# options: the kubectl flags the plugin parses itself


def connection_options(func):
    opts = [
        click.option("--kubeconfig", metavar="PATH", help="Kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)."),
        click.option("--context", metavar="NAME", help="Kubeconfig context (default: the current context)."),
        click.option("-n", "--namespace", metavar="NS", help="Namespace (default: the context's, else default)."),
        click.option("--request-timeout", default="0", show_default=True, metavar="DURATION",
                     help="Limit for each API request (e.g. 30s, 1m); 0 = none."),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def selection_options(func):
    opts = [
        click.option("-A", "--all-namespaces", is_flag=True, help="Every namespace (ignores -n and the context's namespace)."),
        click.option("-l", "--selector", metavar="SELECTOR", help="Label selector, e.g. team=ml,env!=dev."),
        click.option("--chunk-size", type=click.IntRange(min=0), default=DEFAULT_CHUNK_SIZE, show_default=True,
                     help="List this many objects per request (limit/continue); 0 = all at once."),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def _connect(kw: dict):
    from .cluster import Cluster

    return Cluster.connect(kw.pop("kubeconfig"), kw.pop("context"), parse_timeout(kw.pop("request_timeout")))


# ---------------------------------------------------------------------------------------------
# reading jobs


def _kinds_to_read(cluster, kind_arg: str | None) -> list[tuple[LiveKind, str]]:
    """(kind, served version) for KIND, or every kind with a served CRD (the others noted on stderr)."""
    if kind_arg:
        kind = resolve_kind(kind_arg)
        version = cluster.served_version(kind)
        if version is None:
            raise NotFoundError(
                f"the {kind.kind} CRD ({kind.resource}) is not installed in this cluster: it serves none of "
                + ", ".join(f"{kind.group}/{v}" for v in kind.versions)
            )
        return [(kind, version)]
    out, missing = [], []
    for kind in KINDS:
        version = cluster.served_version(kind)
        if version is None:
            missing.append(f"{kind.kind} ({kind.resource})")
        else:
            out.append((kind, version))
    if missing:
        _note("skipped, CRD not installed: " + ", ".join(missing))
    return out


def _job_pages(cluster, kinds, namespace: str | None, selector: str | None, chunk_size: int) -> Iterator[list[dict]]:
    """The jobs of `kinds` a page at a time, in kind order; the next page is fetched (by a thread,
    started on the first page) while this one is converted."""
    from .readahead import read_ahead

    def pages():
        for kind, version in kinds:
            yield from cluster.list_pages(kind, version, namespace, selector, chunk_size)

    return read_ahead(pages(), depth=2)


def _read_jobs(cluster, kinds, namespace: str | None, selector: str | None, chunk_size: int) -> Iterator[dict]:
    for page in _job_pages(cluster, kinds, namespace, selector, chunk_size):
        yield from page


def _convert_live(obj: dict, options):
    """Clean and convert one live job, noting dropped owner references. Typed errors carry `ns/Kind/name`."""
    conv, owners = convert_live(obj, options)
    if owners:
        _note(f"{object_ref(obj)}: was owned by {', '.join(owners)}; the JobSet gets no owner references")
    return conv


def _no_jobs(namespace: str | None, selector: str | None) -> None:
    where = "in any namespace" if namespace is None else f"in namespace {namespace}"
    click.echo(f"No Kubeflow Training Operator jobs found {where}" + (f" matching {selector!r}" if selector else "") + ".", err=True)


# ---------------------------------------------------------------------------------------------
# the commands


_VALUE_FLAGS = {"--kubeconfig", "--context", "-n", "--namespace", "--request-timeout", "-l", "--selector",
                "-o", "--output", "--chunk-size"}
_BOOL_FLAGS = {"-A", "--all-namespaces"}


class _PluginGroup(click.Group):
    """Accepts the standard flags before the command too: `kubectl kf2jobset -n ml scan`."""

    def parse_args(self, ctx, args):
        return super().parse_args(ctx, hoist_flags(list(args), self.commands))


def hoist_flags(args: list[str], commands) -> list[str]:
    """Move standard flags given before the command name to after it; anything else is left to click."""
    lead: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in commands:
            return [arg, *lead, *args[i + 1:]] if lead else args
        flag = arg.split("=", 1)[0]
        if flag in _VALUE_FLAGS and "=" not in arg and i + 1 < len(args):
            lead += args[i:i + 2]
            i += 2
        elif flag in _VALUE_FLAGS or arg in _BOOL_FLAGS:
            lead.append(arg)
            i += 1
        else:
            return args
    return args


@click.group(cls=_PluginGroup, context_settings={"help_option_names": ["-h", "--help"]},
             short_help="The kubectl plugin's commands for a live cluster: get, scan, apply.")
@click.version_option(__version__, prog_name="kf2jobset")
def plugin():
    """Migrate the Kubeflow Training Operator v1 jobs of a cluster to JobSet.

    \b
    get    print the JobSets (and companions) of live v1 jobs, for GitOps
    scan   inventory every v1 job with its state and worst migration finding
    apply  create the JobSet of one v1 job (server-side dry run by default)

    \b
    Exit codes: 0 ok; 2 bad usage; 3 invalid job; 4 needs a decision
    (e.g. --accept-mpi-ssh) or rejected by the API; 5 unauthorized/forbidden;
    6 cluster unreachable or bad kubeconfig; 7 object or CRD not found.
    """


_KIND_NAMES = [k.kind.lower() for k in KINDS]  # from mappings/*.yaml, like the kinds themselves
_GET_HELP = """Print the JobSet (and companion objects) for live v1 jobs.

KIND is """ + ", ".join(_KIND_NAMES[:-1]) + " or " + _KIND_NAMES[-1] + """ (singular, plural, or
plural.kubeflow.org; KIND/NAME works too); without KIND every kind whose CRD is installed is read.
Server-populated fields (status, uid, resourceVersion, managedFields, owner references, kubectl's
last-applied annotation …) are dropped before converting. Jobs that cannot be converted are
reported on stderr; the others are still printed and the exit code tells the worst problem."""


@plugin.command(help=_GET_HELP)
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
        cluster = _connect(kw)
    except Kf2JobSetError as err:
        _exit_for(err)
    errors: list[Kf2JobSetError] = []
    collected: list[dict] = []
    printed: list = []  # warnings, printed once per code at the end
    found = 0
    with cluster:
        try:
            namespace = None if all_namespaces else (kw.get("namespace") or cluster.namespace)
            kinds = _kinds_to_read(cluster, kind)
            if name:
                k, version = kinds[0]
                jobs: Iterator = iter([cluster.get_job(k, version, namespace, name)])
            else:
                jobs = _read_jobs(cluster, kinds, namespace, selector, chunk_size)
            for obj in jobs:
                found += 1
                try:
                    conv = _convert_live(obj, options)
                except Kf2JobSetError as err:
                    _error(err)
                    errors.append(err)
                    continue
                printed += [(object_ref(obj), "", note) for note in conv.notes if note.printed]
                if output == "yaml":  # stream job by job: constant memory for a whole cluster
                    sys.stdout.write(_dump(conv.objects, output, False))
                    sys.stdout.flush()
                else:
                    collected += conv.objects
        except Kf2JobSetError as err:
            _exit_for(err)
    from ..notes import warning_lines

    for line in warning_lines(printed):
        click.echo(f"kf2jobset: {line}", err=True)
    if output == "json" and collected:
        sys.stdout.write(_dump(collected, output, single=bool(name)))
    if not found:
        _no_jobs(namespace, selector)
    sys.exit(exitcodes.worst(exitcodes.for_error(e) for e in errors))


_SCAN_HELP = """Inventory the v1 jobs: namespace, kind, name, state, replicas and worst finding.

STATE is the operator's latest condition (Created, Running, Restarting, Succeeded, Failed,
Suspended; - before it has any). WORST is the most severe mapping note of the conversion
(unchanged < rewritten < approximated < dropped < prerequisite < breaking) with its code, or `error: KIND` when
the job cannot be converted as it is. MPIJob v1 is assessed as if --accept-mpi-ssh were given (the
switch to SSH shows as breaking MPI001).

--report FORMAT[:FILE] (text, markdown, json, junit, sarif, github; repeatable) adds the full
semantic report of `kf2jobset report`; a report without :FILE goes to stdout instead of the table."""


@plugin.command(help=_SCAN_HELP)
@click.argument("kind", required=False)
@connection_options
@selection_options
@click.option("-o", "--output", type=click.Choice(["table", "json", "yaml"]), default="table", show_default=True,
              help="The inventory as a table, or as data.")
@click.option("--report", "report_specs", multiple=True, metavar="FORMAT[:FILE]",
              help="Also the semantic diff report (to stdout instead of the table, or to FILE).")
@click.option("--jobs", "-j", "workers", type=click.IntRange(min=0), default=0, show_default=True,
              help="Convert in this many worker processes; 0 = one per CPU (at most 4), 1 = in this process.")
@conversion_options
def scan(kind, output, report_specs, all_namespaces, selector, chunk_size, workers, **kw):
    try:
        options = dataclasses.replace(build_options(kw), accept_mpi_ssh=True)
        if options.name:
            raise UsageError("--name applies to one job; scan reads many")
        specs = None
        if report_specs:
            from ..report.outputs import resolve

            specs = resolve(report_specs, None)
        cluster = _connect(kw)
    except Kf2JobSetError as err:
        _exit_for(err)
    rows: list[dict] = []
    results = []
    with cluster:
        try:
            namespace = None if all_namespaces else (kw.get("namespace") or cluster.namespace)
            kinds = _kinds_to_read(cluster, kind)
            pages = _job_pages(cluster, kinds, namespace, selector, chunk_size)
            if specs is None:
                rows = scan_rows(pages, options, workers or default_workers())
            else:
                for page in pages:
                    for obj in page:
                        row, result = _scan_with_report(obj, options)
                        rows.append(row)
                        results.append(result)
        except Kf2JobSetError as err:
            _exit_for(err)
    rows.sort(key=lambda r: (r["namespace"], r["kind"], r["name"]))
    if not rows:
        _no_jobs(namespace, selector)
    report_on_stdout = bool(specs) and any(s.path in (None, "-") for s in specs)
    if specs:
        from ..report import build_report
        from ..report.outputs import write

        results.sort(key=lambda r: r.path)
        try:
            write(build_report(results, options, "never"), specs, sys.stdout, "auto")
        except Kf2JobSetError as err:
            _exit_for(err)
    if not report_on_stdout:
        sys.stdout.write(_inventory(rows, output))
    sys.exit(exitcodes.OK)


def _scan_with_report(obj: dict, options):
    """The row and the report's DocumentResult; the report needs the document as text (it points at lines)."""
    from ..pipeline import convert_text
    from ..yamlio import dump_documents

    doc, _owners = clean(obj)
    result = convert_text(dump_documents([doc]), object_ref(obj), options)
    return finish_row(base_row(obj), result.conversions, result.errors), result


def _worst_cell(row: dict) -> str:
    if row["error"]:
        return f"error: {row['error']['kind']}"
    w = row["worst"] or {}
    return f"{w.get('category')} {w['code']}" if w.get("code") else str(w.get("category"))


def _inventory(rows: list[dict], output: str) -> str:
    if output in ("json", "yaml"):
        data = {"items": rows}
        if output == "json":
            return json.dumps(data, indent=2) + "\n"
        from ..yamlio import dump_documents

        return dump_documents([data])
    if not rows:
        return ""
    header = ("NAMESPACE", "KIND", "NAME", "STATE", "REPLICAS", "WORST")
    table = [header] + [(r["namespace"], r["kind"], r["name"], r["state"], format_replicas(r["replicas"]), _worst_cell(r))
                        for r in rows]
    widths = [max(len(str(line[i])) for line in table) for i in range(len(header))]
    return "".join("   ".join(str(c).ljust(w) for c, w in zip(line, widths)).rstrip() + "\n" for line in table)


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


@plugin.command(help=_APPLY_HELP)
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
        cluster = _connect(kw)
    except Kf2JobSetError as err:
        _exit_for(err)
    with cluster:
        try:
            code = _apply(cluster, live_kind, name, kw.get("namespace") or cluster.namespace, options,
                          dry_run, suspend_source, output)
        except Kf2JobSetError as err:
            _exit_for(err)
    sys.exit(code)


def _apply(cluster, kind: LiveKind, name: str, namespace: str, options, dry_run: str, suspend_source: bool,
           output: str | None) -> int:
    (kind, version), = _kinds_to_read(cluster, kind.kind)
    source = cluster.get_job(kind, version, namespace, name)
    ref = object_ref(source)
    conv = _convert_live(source, options)
    for note in conv.notes:
        if note.printed:
            _warn(f"{ref}: {note.warning_text()}")
    state = job_state(source)
    if state in TERMINAL_STATES:
        _warn(f"{ref} has {state}: the JobSet runs the training again")
    elif state in ACTIVE_STATES and not is_suspended(source) and not suspend_source:
        _warn(f"{ref} is not suspended: once the JobSet exists both run the same training "
              "(--suspend-source suspends the v1 job after the JobSet is created)")
    _check_secrets(cluster, conv, namespace)
    objects = conv.objects
    jobset = conv.jobset
    if options.target == "trainjob" and dry_run != "client":
        from .trainjobs import create_trainjob

        created = create_trainjob(cluster, objects, namespace, dry_run=dry_run == "server", warn=_warn)
        _report_created(created, output, "created (server dry run)" if dry_run == "server" else "created")
        if suspend_source:
            cluster.suspend_job(kind, version, namespace, name, dry_run=dry_run == "server")
            _result_line(f"{kind.kind.lower()}.{kind.group}/{name} suspended"
                         + (" (server dry run)" if dry_run == "server" else ""), output)
        return exitcodes.OK
    if dry_run == "client":
        sys.stdout.write(_dump(objects, output or "yaml", single=False))
        if suspend_source:
            _note(f"{ref}: would be suspended (runPolicy.suspend=true) after the JobSet is created")
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
                _error(err)
                raise type(err)(f"{_kubectl_name(out[0])} was created, but its companion "
                                f"{_kubectl_name(obj)} was not; create it, or delete the JobSet and retry") from None
            raise
    return out


def _report_created(created: list[dict], output: str | None, verb: str) -> None:
    if output:
        for obj in created:
            (obj.get("metadata") or {}).pop("managedFields", None)
        sys.stdout.write(_dump(created, output, single=False))
    else:
        for obj in created:
            click.echo(f"{_kubectl_name(obj)} {verb}")


def _result_line(text: str, output: str | None) -> None:
    if output:
        _note(text)
    else:
        click.echo(text)


def _check_secrets(cluster, conv, namespace: str) -> None:
    """Warn about Secrets the pods mount that are missing, or that the v1 job's deletion would take along."""
    for secret in secret_refs(conv.objects):
        try:
            owners = cluster.secret_owners(namespace, secret)
        except Kf2JobSetError as err:
            _warn(f"cannot check Secret {secret!r} in namespace {namespace}: {err.problems[0]}")
            continue
        if owners is None:
            action = next((n.action for n in conv.notes if n.action and secret in n.action), None)
            if action:  # the core's hint has no namespace: this one has
                action = action.replace("kubectl create secret", f"kubectl -n {namespace} create secret")
            _warn(f"Secret {secret!r} not found in namespace {namespace}: pods that mount it will not start"
                  + (f" (hint: {action})" if action else ""))
        elif owners:
            _warn(f"Secret {secret!r} is owned by {', '.join(owners)}: deleting the owner deletes the Secret "
                  "the JobSet mounts; remove its ownerReferences (or copy it) before deleting the v1 job")


def main() -> None:
    """Console script `kubectl-kf2jobset` (kubectl runs it for `kubectl kf2jobset ...`)."""
    try:
        plugin.main(prog_name=PLUGIN_NAME)
    finally:
        # Exit without a last garbage collection over everything the client and converter loaded
        # (~0.1 s after a scan); objects are still finalised and atexit handlers still run.
        import gc

        gc.freeze()
