"""`kf2jobset.live` for Python: a v1 job read from a cluster by kind, name and namespace and converted, and a
conversion applied, with the checks, the server dry run and the order `kubectl kf2jobset apply` uses
(applying.py holds them for both).

    from kf2jobset import live
    result = live.convert("pytorchjob", "mnist", "ml", target="trainjob")   # kubectl's kubeconfig lookup
    applied = live.apply(result)                                             # dry run, then created
    live.apply(kf2jobset.convert_job(job), cluster=my_api_client, dry_run=True)

`cluster` is a `kubernetes.client.ApiClient` of the caller's, a `Cluster` from `connect()`, or None:
kubectl's lookup ($KUBECONFIG, ~/.kube/config, then the pod's service account). Errors are kf2jobset's
typed errors (ClusterAuthError, ClusterUnreachableError, NotFoundError, RejectedJobSetError, and the
conversion's), worded for Python."""
from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..api import ConvertKeywords, Converted, convert_job, in_python
from ..errors import Kf2JobSetError, UsageError
from ..options import ConvertOptions
from .applying import Source, check_secrets, check_source, create_objects
from .cluster import Cluster
from .kinds import resolve_kind
from .objects import clean
from .reading import kinds_to_read
from .scanning import object_ref

if TYPE_CHECKING:
    from typing_extensions import Unpack

LOG = logging.getLogger("kf2jobset.live")
# the plugin's own flags its messages may name, as Python spells them
_FLAGS = {"--context": "context=...", "--kubeconfig": "kubeconfig=...", "--dry-run=none": "dry_run=False",
          "--suspend-source": "suspend_source=True"}


@dataclass(frozen=True)
class LiveConverted(Converted):
    """A conversion of a live v1 job: `source` is the job as read (`source.obj`) and where it is served."""

    source: Source | None = None
    owners: tuple[str, ...] = ()  # the ownerReferences the v1 job had ("Trial/x"); the output gets none


@dataclass(frozen=True)
class Applied:
    """What `apply` did. objects: as the API server returned them (created, or checked by the dry run),
    in the order sent. warnings: what to know before the objects run (also logged to `kf2jobset.live`)."""

    objects: list[dict[str, Any]]
    dry_run: bool
    namespace: str
    warnings: list[str] = field(default_factory=list)


def connect(api_client: Any = None, *, kubeconfig: str | None = None, context: str | None = None,
            namespace: str | None = None, request_timeout: float | None = None) -> Cluster:
    """A connection: on `api_client` (a kubernetes.client.ApiClient; never closed by kf2jobset), else from
    `kubeconfig` (or $KUBECONFIG, ~/.kube/config, in a pod its service account; kubectl's rules, written back
    never) and `context`. Use it as a context manager, or `close()` it. `namespace`: the default namespace
    (else the context's, else "default")."""
    try:
        if api_client is not None:
            return Cluster.of(api_client, namespace or "default", request_timeout)
        cluster = Cluster.connect(kubeconfig, context, request_timeout)
    except Kf2JobSetError as err:
        raise in_python(err, _FLAGS) from None
    if namespace:
        cluster.namespace = namespace
    return cluster


@contextmanager
def _session(cluster: Any) -> Iterator[Cluster]:
    if isinstance(cluster, Cluster):
        yield cluster
    elif cluster is not None:
        yield Cluster.of(cluster)  # the caller's ApiClient: theirs to close
    else:
        with connect() as own:
            yield own


def convert(kind: str, name: str, namespace: str | None = None, *, cluster: Any = None,
            opts: ConvertOptions | None = None, **kw: Unpack[ConvertKeywords]) -> LiveConverted:
    """Read the v1 job `kind`/`name` (kind as kubectl takes it: pytorchjob, PyTorchJob, pytorchjobs.kubeflow.org)
    in `namespace` (else the connection's) and convert it: server fields dropped, options as for
    kf2jobset.convert_job. Raises NotFoundError when the job or its CRD is not there."""
    try:
        live_kind = resolve_kind(kind)
        with _session(cluster) as connection:
            (live_kind, version), = kinds_to_read(connection, live_kind.kind)
            obj = connection.get_job(live_kind, version, namespace or connection.namespace, name)
    except Kf2JobSetError as err:
        raise in_python(err, _FLAGS) from None
    doc, owners = clean(obj)
    try:
        result = convert_job(doc, opts, **kw)
    except Kf2JobSetError as err:
        raise err.located(file=object_ref(obj)).with_traceback(err.__traceback__) from None
    if owners:
        LOG.warning("%s: was owned by %s; the JobSet gets no owner references", object_ref(obj), ", ".join(owners))
    return LiveConverted(result.objects, result.notes, result.kind, Source(live_kind, version, obj), tuple(owners))


def apply(result: Converted, namespace: str | None = None, *, cluster: Any = None, dry_run: bool = False,
          suspend_source: bool = False) -> Applied:
    """Create the objects of `result` (from convert_job or convert) in `namespace` (else the objects', else the
    connection's): every object through a server dry run first (schemas, CEL rules, strict field validation),
    then, unless `dry_run`, created: the JobSet, then its companions owned by it; for a TrainJob its
    TrainingRuntime first, then the TrainJob, then companions owned by it. Checked first and warned about:
    Secrets the pods mount, a v1 job still running or finished. `suspend_source`: set runPolicy.suspend on
    the v1 job `result` was read from, once the objects exist."""
    said: list[str] = []

    def warn(text: str) -> None:
        said.append(text)
        LOG.warning("%s", text)

    try:
        source = result.source if isinstance(result, LiveConverted) else None
        if suspend_source and source is None:
            raise UsageError("suspend_source=True needs a result of kf2jobset.live.convert (the v1 job it read)")
        with _session(cluster) as connection:
            target_namespace = _namespace(result, namespace, connection)
            if source is not None:
                check_source(source, suspend_source, warn, suspend_hint="suspend_source=True suspends the v1 job "
                             "once the JobSet exists")
            check_secrets(connection, result.objects, result.notes, target_namespace, warn)
            created = create_objects(connection, result.objects, result.kind, target_namespace, dry_run=dry_run, warn=warn)
            if suspend_source and source is not None:
                connection.suspend_job(source.kind, source.version, target_namespace, source.name, dry_run=dry_run)
    except Kf2JobSetError as err:
        raise in_python(err, _FLAGS) from None
    return Applied(created, dry_run, target_namespace, said)


def _namespace(result: Converted, given: str | None, connection: Cluster) -> str:
    written = {(o.get("metadata") or {}).get("namespace") for o in result.objects} - {None}
    if given and written - {given}:
        raise UsageError(f"namespace {given!r}, but the objects are written for {', '.join(sorted(written))}: "
                         "convert with the namespace the objects are to live in")
    if len(written) > 1:
        raise UsageError(f"the objects are written for several namespaces ({', '.join(sorted(written))})")
    return given or (next(iter(written)) if written else connection.namespace)
