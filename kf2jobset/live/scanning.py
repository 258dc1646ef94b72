"""`scan`'s rows: one per listed v1 job, converted in forked worker processes when there are CPUs.

A row is small (names, state, replica counts, worst finding); the conversion behind it is the
cost. With several CPUs, `scan_rows` forks its workers before the listing starts (no thread is
running yet, and the converter is already imported, so each worker shares it), hands them whole
chunks of listed objects and gets rows back. Chunks in flight are bounded, so memory stays flat
however many jobs the cluster holds. The caller sorts the rows, so their order does not matter.
"""
from __future__ import annotations

from collections import deque
from typing import Iterable, Iterator

from ..errors import Kf2JobSetError
from .objects import clean, job_state, replica_counts, worst_note

CHUNK = 25  # jobs per task: ~20 ms of work, so two workers stay busy and a task is cheap to send
IN_FLIGHT_PER_WORKER = 4


def object_ref(obj: dict) -> str:
    """`ns/Kind/name`: how messages name a live object."""
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{obj.get('kind')}/{meta.get('name')}"


def convert_live(obj: dict, options):
    """Clean and convert one live job -> (Conversion, owners). Typed errors carry `ns/Kind/name`."""
    from ..core.convert import convert_job

    doc, owners = clean(obj)
    try:
        return convert_job(doc, options), owners
    except Kf2JobSetError as err:
        raise err.located(file=object_ref(obj)) from None


def base_row(obj: dict) -> dict:
    meta = obj.get("metadata") or {}
    return {
        "namespace": meta.get("namespace", ""),
        "kind": obj.get("kind"),
        "apiVersion": obj.get("apiVersion"),
        "name": meta.get("name"),
        "state": job_state(obj),
        "replicas": replica_counts(obj),
        "worst": None,
        "error": None,
    }


def finish_row(row: dict, conversions, errors) -> dict:
    """Fill in the worst finding (or the first error) of a job's conversion."""
    if errors:
        row["error"] = {"kind": errors[0].kind, "message": str(errors[0].problems[0])}
    elif conversions:
        worst = worst_note(conversions[0].notes)
        row["worst"] = {"category": worst.category, "code": worst.code, "message": worst.message} if worst else {
            "category": "unchanged", "code": None, "message": None}
    return row


def scan_row(obj: dict, options) -> dict:
    try:
        conv, _owners = convert_live(obj, options)
    except Kf2JobSetError as err:
        return finish_row(base_row(obj), [], [err])
    return finish_row(base_row(obj), [conv], [])


MAX_DEFAULT_WORKERS = 4  # past this the API server's listing, not conversion, sets the pace


def default_workers() -> int:
    """One per CPU this process may use, at most MAX_DEFAULT_WORKERS (a pod on a big node sees
    every CPU of the node in its affinity mask)."""
    from ..k8s.cpus import usable_cpus

    return max(1, min(usable_cpus(), MAX_DEFAULT_WORKERS))


_options = None  # set in each worker by _init_worker


def _init_worker(options) -> None:
    global _options
    _options = options


def _scan_chunk(objs: list[dict]) -> list[dict]:
    return [scan_row(obj, _options) for obj in objs]


def _chunks(pages: Iterable[list[dict]], size: int) -> Iterator[list[dict]]:
    for page in pages:
        for start in range(0, len(page), size):
            yield page[start:start + size]


def scan_rows(pages: Iterable[list[dict]], options, workers: int) -> list[dict]:
    """The rows of every job in `pages`, in no particular order. `pages` must not have started
    producing yet when workers > 1 (the workers are forked first, before any thread runs)."""
    import multiprocessing

    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():  # (no fork on Windows)
        return [scan_row(obj, options) for page in pages for obj in page]

    from ..core import convert  # noqa: F401  (imported before the fork: the workers share it)

    ctx = multiprocessing.get_context("fork")
    rows: list[dict] = []
    with ctx.Pool(workers, initializer=_init_worker, initargs=(options,)) as pool:
        pending: deque = deque()
        for chunk in _chunks(pages, CHUNK):
            pending.append(pool.apply_async(_scan_chunk, (chunk,)))
            while len(pending) > workers * IN_FLIGHT_PER_WORKER:
                rows += pending.popleft().get()
        while pending:
            rows += pending.popleft().get()
    return rows
