"""How the plugin's commands read v1 jobs from a cluster: the kinds to read (every kind whose CRD is
served, or the one asked for), their pages read ahead while the previous one converts, and one
live job cleaned and converted with its dropped owner references noted.
"""
from __future__ import annotations

from typing import Iterator

from ..errors import NotFoundError
from .kinds import KINDS, LiveKind, resolve_kind
from .output import print_note
from .scanning import convert_live, object_ref


def kinds_to_read(cluster, kind_arg: str | None) -> list[tuple[LiveKind, str]]:
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
        print_note("skipped, CRD not installed: " + ", ".join(missing))
    return out


def job_pages(cluster, kinds, namespace: str | None, selector: str | None, chunk_size: int) -> Iterator[list[dict]]:
    """The jobs of `kinds` a page at a time, in kind order; the next page is fetched (by a thread,
    started on the first page) while this one is converted."""
    from .readahead import read_ahead

    def pages():
        for kind, version in kinds:
            yield from cluster.list_pages(kind, version, namespace, selector, chunk_size)

    return read_ahead(pages(), depth=2)


def read_jobs(cluster, kinds, namespace: str | None, selector: str | None, chunk_size: int) -> Iterator[dict]:
    for page in job_pages(cluster, kinds, namespace, selector, chunk_size):
        yield from page


def convert_noting_owners(obj: dict, options):
    """Clean and convert one live job, noting dropped owner references. Typed errors carry `ns/Kind/name`."""
    conv, owners = convert_live(obj, options)
    if owners:
        print_note(f"{object_ref(obj)}: was owned by {', '.join(owners)}; the JobSet gets no owner references")
    return conv
