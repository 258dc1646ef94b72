"""Shared by the training programs of tests/e2e/test_frameworks.py (stdlib only: every venv imports it).

A program is started by the node agent inside a pod (its own network namespace, UTS namespace and
DNS) with the env the kubelet resolved for the container. ``--role``/``--index`` are the pod's
identity as its labels give it (the harness reads them), used only to label the verdict and the
``identity`` file; every address, rank and size comes from the framework's own env.

Each program prints one ``KF2JS-VERDICT {json}`` line per process it checked (torchrun and
paddle.distributed.launch start several), with ``ok`` true or false, and exits non-zero on failure.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import tempfile
import time

for _k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS"):
    os.environ.setdefault(_k, "1")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

TAG = "KF2JS-VERDICT"
START = time.monotonic()


def args() -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("--role", required=True)
    p.add_argument("--index", type=int, required=True)
    p.add_argument("--mode", default="")
    p.add_argument("--timeout", type=float, default=float(os.environ.get("KF2JS_TIMEOUT", "120")))
    p.add_argument("--exit-marker", default="")
    p.add_argument("rest", nargs="*")
    a = p.parse_args()
    if a.exit_marker:  # the pod's sidecars (test stand-ins) end when this program ends
        import atexit

        atexit.register(lambda: open(a.exit_marker, "w").close())
    _watchdog(a)
    return a


_WATCHDOG: list = []


def _watchdog(a) -> None:
    """A framework stuck past every timeout of its own (a rendezvous that never completes) still ends with a verdict."""
    import threading

    def fire():
        verdict(a, False, error=f"watchdog: still running after {a.timeout * 2.5:.0f} s")
        if a.exit_marker:
            open(a.exit_marker, "w").close()
        os._exit(3)

    t = threading.Timer(a.timeout * 2.5, fire)
    t.daemon = True
    t.start()
    _WATCHDOG.append(t)


def cancel_watchdog() -> None:
    """For a process that is meant to run until it is killed (a TF parameter server)."""
    for t in _WATCHDOG:
        t.cancel()


def hostname() -> str:
    return socket.gethostname()  # this process's UTS namespace: the pod's hostname


def verdict(a, ok: bool, **fields) -> None:
    out = {"role": a.role, "index": a.index, "host": hostname(), "ok": ok, **fields,
           "seconds": round(time.monotonic() - START, 1)}
    emit(f"{TAG} {json.dumps(out, sort_keys=True)}")


def emit(line: str) -> None:
    """One line on stdout, whole. A write over PIPE_BUF (4096 bytes) to a pipe is not atomic, and a
    verdict with many long JobSet hostnames is that long: the processes torchrun starts in one pod
    would interleave theirs. So the writers of a pod take turns (a lock file named after the pod's
    hostname, on the machine's /tmp that they share) and each writes its line in full."""
    import fcntl

    sys.stdout.flush()
    data = (line + "\n").encode()
    with open(os.path.join(tempfile.gettempdir(), f"kf2js-verdict-{hostname()}.lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        view = memoryview(data)
        while view:
            view = view[os.write(1, view):]


def fail(a, why: str, code: int = 1, **fields) -> None:
    verdict(a, False, error=why if len(why) < 1200 else why[:800] + " ... " + why[-300:], **fields)
    sys.exit(code)


def private_cwd() -> str:
    """A directory of this process only (files a remote op reads or writes relative to the cwd)."""
    d = tempfile.mkdtemp(prefix="kf2js-prog-")
    os.chdir(d)
    return d


def env_int(name: str) -> int | None:
    v = os.environ.get(name)
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


def wait_tcp(host: str, port: int, deadline: float) -> None:
    """Until host:port accepts a connection (name resolved through the pod's own DNS each time)."""
    last = None
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=2):
                return
        except OSError as e:
            last = e
            time.sleep(0.5)
    raise TimeoutError(f"{host}:{port} did not answer: {last}")
