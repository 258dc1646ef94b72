"""Run a generator in a background thread, a bounded number of items ahead of its consumer.

Why: listing jobs is mostly waiting (the API server encodes, TLS delivers), converting them is
CPU in this process. Reading the next page while the current one converts hides most of the
listing time. The bound keeps memory flat however large the cluster (`depth` items queued, one
being produced). Items come out in the producer's order; an exception in the producer is raised
in the consumer at the point where it happened.
"""
from __future__ import annotations

import queue
import threading
from typing import Iterable, Iterator, TypeVar

T = TypeVar("T")

_DONE = object()


class _Failed:
    __slots__ = ("exc",)

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def read_ahead(source: Iterable[T], depth: int = 2) -> Iterator[T]:
    """Yield the items of `source`, produced by a daemon thread at most `depth` items ahead."""
    buffer: queue.Queue = queue.Queue(maxsize=max(1, depth))
    stop = threading.Event()

    def offer(item) -> bool:
        while not stop.is_set():  # a consumer that went away must not leave us blocked forever
            try:
                buffer.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in source:
                if not offer(item):
                    return
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer, raised there
            offer(_Failed(exc))
            return
        offer(_DONE)

    worker = threading.Thread(target=produce, name="kf2jobset-read-ahead", daemon=True)
    worker.start()
    try:
        while True:
            item = buffer.get()
            if item is _DONE:
                return
            if isinstance(item, _Failed):
                raise item.exc
            yield item
    finally:
        stop.set()
