"""MXNet in a pod: the parameter-server job an MXJob (jobMode MXTrain) runs, with only the env the pod got.

``DMLC_ROLE`` says what this process is; ``DMLC_PS_ROOT_URI``/``DMLC_PS_ROOT_PORT`` name the scheduler,
``DMLC_NUM_SERVER``/``DMLC_NUM_WORKER`` the sizes (MXNet's ps-lite reads them itself; this program only
checks they are there and waits, like a pod's script, until the scheduler's name resolves and it listens).

* scheduler, server: ``import mxnet`` runs the ps-lite node (mxnet/kvstore/kvstore_server.py) until every
  worker has finished, then exits; the verdict says it served;
* worker: ``mx.kv.create('dist_sync')``; on several keys (spread over the servers) every worker pushes
  ``(rank + 1) * (key + 1)`` and pulls the sum, which must be ``world * (world + 1) / 2 * (key + 1)``; one
  more key gathers every worker's hostname (row = kvstore rank), so the verdict names the peers reached.
  The kvstore rank is handed out by the scheduler (ps-lite orders the nodes by address), not by the pod.
"""
from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _verdict import args, env_int, fail, hostname, verdict, wait_tcp  # noqa: E402

WIDTH = 64
KEYS = 4  # small keys: ps-lite puts each on one server, so with several servers every one holds some


def main() -> None:
    a = args()
    role = os.environ.get("DMLC_ROLE")
    uri, port = os.environ.get("DMLC_PS_ROOT_URI"), env_int("DMLC_PS_ROOT_PORT")
    servers, workers = env_int("DMLC_NUM_SERVER"), env_int("DMLC_NUM_WORKER")
    common = {"framework": "mxnet", "dmlc_role": role, "servers": servers, "workers": workers,
              "worker_id": os.environ.get("DMLC_WORKER_ID")}
    if role not in ("scheduler", "server", "worker") or not uri or port is None or servers is None or workers is None:
        fail(a, "DMLC_ROLE/DMLC_PS_ROOT_URI/DMLC_PS_ROOT_PORT/DMLC_NUM_SERVER/DMLC_NUM_WORKER missing or invalid", **common)
    try:
        if role != "scheduler":
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
        kv = mx.kv.create("dist_sync")
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
