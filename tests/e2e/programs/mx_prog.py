"""MXNet in a pod: the parameter-server job an MXJob (jobMode MXTrain) runs, with only the env the pod got.

``DMLC_ROLE`` says what this process is; ``DMLC_PS_ROOT_URI``/``DMLC_PS_ROOT_PORT`` name the scheduler,
``DMLC_NUM_SERVER``/``DMLC_NUM_WORKER`` the sizes (MXNet's ps-lite reads them itself; this program only
checks they are there and waits, like a pod's script, until the scheduler's name resolves and it listens).

* scheduler, server: ``import mxnet`` runs the ps-lite node (mxnet/kvstore/kvstore_server.py) until every
  worker has finished, then exits; the verdict says it served;
* worker: ``mx.kv.create('dist_sync')``; on several keys (spread over the servers) every worker pushes
  ``(rank + 1) * (key + 1)`` and pulls the sum, which must be ``world * (world + 1) / 2 * (key + 1)``; one
  more key gathers every worker's hostname (row = kvstore rank), so the verdict names the peers reached.
  The kvstore rank is handed out by the scheduler (ps-lite orders the nodes by address), not by the pod;
* a lone worker (no scheduler: ``DMLC_PS_ROOT_URI`` empty, ``DMLC_NUM_SERVER`` 0, what the operator gives a
  Worker-only MXJob) does the same on a ``local`` kvstore, as ``--kv-store local`` training would;
* MXTune (tunertracker, tunerserver, tuner: TVM auto-tuning, whose processes find each other through
  ``MX_CONFIG``): a stand-in for TVM's RPC tracker/server rendezvous, in plain sockets (TVM is not
  installed). The tracker listens on its ``MX_CONFIG`` port; every tuner server listens on its own and
  registers with the tracker under its ``labels`` key; the tuner registers, then connects to every
  tuner server at its ``MX_CONFIG`` address and reads the hostname of the pod that answers. So every
  address of ``MX_CONFIG`` is checked to reach the pod it names.
"""
from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _verdict import args, env_int, fail, hostname, verdict, wait_tcp  # noqa: E402

import json  # noqa: E402
import socket  # noqa: E402
import threading  # noqa: E402

WIDTH = 64
KEYS = 4  # small keys: ps-lite puts each on one server, so with several servers every one holds some


def _lines(conn) -> list[str]:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    return data.decode().splitlines()


def _ask(host: str, port: int, message: dict, deadline: float) -> list[str]:
    """Send one JSON line to host:port and return its answer's lines; retried (name resolved again each
    time) until it answers, like a TVM RPC client waiting for its tracker."""
    last = None
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=max(1.0, deadline - time.monotonic())) as c:
                c.sendall((json.dumps(message) + "\n").encode())
                lines = _lines(c)
                if lines:
                    return lines
        except OSError as e:
            last = e
        time.sleep(0.5)
    raise TimeoutError(f"{host}:{port} did not answer: {last}")


def tune(a, role: str, common: dict) -> None:
    try:
        cfg = json.loads(os.environ["MX_CONFIG"])
        cluster, labels, index = cfg["cluster"], cfg.get("labels") or {}, int(cfg["task"]["index"])
        tracker = cluster["tunertracker"][0]
        me = cluster[role][index]
    except (KeyError, IndexError, TypeError, ValueError) as e:
        fail(a, f"MX_CONFIG unusable: {type(e).__name__}: {e}", **common)
    deadline = time.monotonic() + a.timeout
    servers = cluster.get("tunerserver") or []
    expected = len(servers) + len(cluster.get("tuner") or [])
    try:
        if role == "tunertracker":
            srv = socket.socket()
            srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            srv.bind(("0.0.0.0", int(me["port"])))
            srv.listen(64)
            srv.settimeout(max(1.0, deadline - time.monotonic()))
            conns, registered = [], []
            while len(registered) < expected:
                c, _ = srv.accept()
                lines = _lines(c)
                if not lines:  # a connection check, not a registration
                    c.close()
                    continue
                registered.append(json.loads(lines[0]))
                conns.append(c)
            answer = (json.dumps(registered) + "\n").encode()
            for c in conns:
                c.sendall(answer)
                c.close()
            verdict(a, True, registered=[[r["role"], r["host"], r["key"]] for r in registered], **common)
            return
        key = labels.get(role, "")
        if role == "tunerserver":
            srv = socket.socket()
            srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            srv.bind(("0.0.0.0", int(me["port"])))
            srv.listen(8)
            pinged: list = []

            def serve():
                while not pinged:
                    c, _ = srv.accept()
                    lines = _lines(c)
                    if lines:
                        pinged.append(json.loads(lines[0])["host"])
                        c.sendall((json.dumps({"host": hostname(), "key": key}) + "\n").encode())
                    c.close()

            t = threading.Thread(target=serve, daemon=True)
            t.start()
            registry = _ask(tracker["url"], int(tracker["port"]), {"role": role, "host": hostname(), "key": key}, deadline)
            t.join(max(0.0, deadline - time.monotonic()))
            if not pinged:
                fail(a, "the tuner never reached this tuner server", key=key, **common)
            verdict(a, True, key=key, pinged_by=pinged[0], registry_size=len(json.loads(registry[0])), **common)
            return
        if role == "tuner":
            registry = json.loads(_ask(tracker["url"], int(tracker["port"]), {"role": role, "host": hostname(), "key": key},
                                       deadline)[0])
            reached = []
            for s in servers:
                reached.append(json.loads(_ask(s["url"], int(s["port"]), {"host": hostname()}, deadline)[0]))
            keys = sorted(r["key"] for r in registry if r["role"] == "tunerserver")
            verdict(a, True, reached=[[r["host"], r["key"]] for r in reached], server_keys=keys, **common)
            return
    except Exception as e:  # noqa: BLE001 - the verdict says why
        fail(a, f"{type(e).__name__}: {e}", **common)
    fail(a, f"unknown MXTune role {role}", **common)


def main() -> None:
    a = args()
    role = os.environ.get("DMLC_ROLE")
    uri, port = os.environ.get("DMLC_PS_ROOT_URI"), env_int("DMLC_PS_ROOT_PORT")
    servers, workers = env_int("DMLC_NUM_SERVER"), env_int("DMLC_NUM_WORKER")
    common = {"framework": "mxnet", "dmlc_role": role, "servers": servers, "workers": workers,
              "worker_id": os.environ.get("DMLC_WORKER_ID")}
    if role in ("tunertracker", "tunerserver", "tuner"):
        tune(a, role, common)
        return
    local = role == "worker" and not uri and servers == 0 and workers == 1
    if role not in ("scheduler", "server", "worker") or (not uri and not local) or port is None or servers is None \
            or workers is None:
        fail(a, "DMLC_ROLE/DMLC_PS_ROOT_URI/DMLC_PS_ROOT_PORT/DMLC_NUM_SERVER/DMLC_NUM_WORKER missing or invalid", **common)
    common["kvstore"] = "local" if local else "dist_sync"
    try:
        if not local and role != "scheduler":
            wait_tcp(uri, port, time.monotonic() + a.timeout)
        try:
            import mxnet as mx  # scheduler and server: runs the node, then sys.exit()
        except SystemExit as e:
            if role == "worker" or e.code not in (None, 0):
                raise
            verdict(a, True, served=True, **common)
            return
        if role != "worker":
            fail(a, f"import mxnet returned in role {role}: it did not run a {role} node", **common)
        kv = mx.kv.create(common["kvstore"])
        rank, world = kv.rank, kv.num_workers
        sums = []
        for k in range(KEYS):
            kv.init(k, mx.nd.zeros((1,)))
        for k in range(KEYS):
            kv.push(k, mx.nd.ones((1,)) * (rank + 1) * (k + 1))
        for k in range(KEYS):
            out = mx.nd.zeros((1,))
            kv.pull(k, out=out)
            sums.append(float(out.asnumpy()[0]))
        names = mx.nd.zeros((world, WIDTH))
        kv.init(KEYS, names)
        mine = [0.0] * (world * WIDTH)
        for i, b in enumerate(hostname().encode()[:WIDTH]):
            mine[rank * WIDTH + i] = float(b)
        kv.push(KEYS, mx.nd.array(mine).reshape((world, WIDTH)))
        kv.pull(KEYS, out=names)
        peers = [bytes(int(c) for c in row if c).decode() for row in names.asnumpy().tolist()]
        if not local:
            kv._barrier()
    except Exception as e:  # noqa: BLE001 - the verdict says why
        fail(a, f"{type(e).__name__}: {e}", **common)
    want = [world * (world + 1) / 2 * (k + 1) for k in range(KEYS)]
    fields = {"rank": rank, "world": world, "sums": sums, "peers": peers, **common}
    if world != workers or not 0 <= rank < world or sums != want:
        fail(a, f"kvstore rank {rank}, world {world} (DMLC_NUM_WORKER {workers}), pulled {sums}, expected {want}", **fields)
    verdict(a, True, **fields)


if __name__ == "__main__":
    main()
