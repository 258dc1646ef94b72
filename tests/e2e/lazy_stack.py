"""A stack of another flavour (tests/e2e/stack.py: "mpi-operator" for MPIJob v2beta1, "training-operator-v1.8.1"
for MXJob), started by the first case that needs it and shared by the later ones; a stack that did not start
raises the same error for every case.

It lives in a thread of its own until :meth:`LazyStack.close`: the components are started with
PR_SET_PDEATHSIG, which kills a child when the *thread* that forked it ends, so they must not be started
from a pool worker that goes away with its pool."""
from __future__ import annotations

import os
import shutil
import tempfile
import threading
from pathlib import Path


class LazyStack:
    """:meth:`result` starts the stack on its first call and hands out :meth:`_up` of it (the stack itself
    here; a subclass builds on it, and stops what it built in :meth:`_down`)."""

    def __init__(self, flavour: str, prefix: str = "kf2jobset-e2e") -> None:
        self.flavour, self.prefix = flavour, prefix
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._value = None
        self._error: BaseException | None = None
        self.stack = None
        self.workdir: Path | None = None

    def result(self):
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._live, name=f"{self.prefix}-{self.flavour}", daemon=True)
                self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise RuntimeError(f"the {self.flavour} stack did not start: {self._error}") from self._error
        return self._value

    def _up(self, stack):
        return stack

    def _down(self) -> None:
        """Nothing to stop unless a subclass started something of its own."""

    def _start(self):
        from .stack import start_stack

        for attempt in (1, 2):  # on a loaded machine the API server can miss its start-up deadline once
            if self.workdir is not None:
                shutil.rmtree(self.workdir, ignore_errors=True)
            self.workdir = Path(tempfile.mkdtemp(prefix=f"{self.prefix}-{self.flavour}-"))
            try:
                return start_stack(self.workdir, flavour=self.flavour)  # stops what it started on failure
            except Exception as e:  # noqa: BLE001
                if attempt == 2:
                    raise
                print(f"\n[{self.prefix}] {self.flavour} stack start failed, retrying once: {str(e)[:300]}")

    def _live(self) -> None:
        try:
            self.stack = self._start()
            self._value = self._up(self.stack)
        except BaseException as e:  # noqa: BLE001 - every case of this flavour fails with it
            self._error = e
        finally:
            self._ready.set()
        try:
            self._stop.wait()
        finally:
            self._down()
            if self.stack is not None:
                self.stack.stop()
            if self.workdir is not None:
                if os.environ.get("KF2JOBSET_KEEP_E2E_DIR"):
                    print(f"\nkept {self.flavour} e2e directory: {self.workdir}")
                else:
                    shutil.rmtree(self.workdir, ignore_errors=True)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=120)
