"""JAX in a pod: jax.distributed.initialize from COORDINATOR_ADDRESS/COORDINATOR_PORT, NUM_PROCESSES and
PROCESS_ID (CPU, gloo collectives), then a cross-process allgather of every process's id and hostname."""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _verdict import args, env_int, fail, hostname, verdict  # noqa: E402

WIDTH = 64


def main() -> None:
    a = args()
    addr, port = os.environ.get("COORDINATOR_ADDRESS"), os.environ.get("COORDINATOR_PORT")
    n, pid = env_int("NUM_PROCESSES"), env_int("PROCESS_ID")
    if not addr or not port or n is None or pid is None:
        fail(a, "COORDINATOR_ADDRESS/COORDINATOR_PORT/NUM_PROCESSES/PROCESS_ID missing or not integers")
    import jax
    import numpy as np

    try:
        jax.config.update("jax_platforms", "cpu")
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
        jax.distributed.initialize(coordinator_address=f"{addr}:{port}", num_processes=n, process_id=pid,
                                   initialization_timeout=int(a.timeout))
        from jax.experimental import multihost_utils

        mine = np.zeros(WIDTH + 1, dtype=np.int32)
        h = hostname().encode()[:WIDTH]
        mine[0] = jax.process_index()
        mine[1:1 + len(h)] = list(h)
        everyone = np.asarray(multihost_utils.process_allgather(mine))
        peers = [bytes(int(c) for c in row[1:] if c).decode() for row in everyone]
        ids = [int(row[0]) for row in everyone]
        rank, world = jax.process_index(), jax.process_count()
        multihost_utils.sync_global_devices("kf2js-done")
        jax.distributed.shutdown()
    except Exception as e:  # noqa: BLE001 - the verdict says why
        fail(a, f"{type(e).__name__}: {e}", rank=pid, world=n)
    fields = {"rank": rank, "world": world, "peers": peers}
    if ids != list(range(world)) or rank != pid or world != n:
        fail(a, f"allgather ids {ids}, process_index {rank} (PROCESS_ID {pid}), count {world} (NUM_PROCESSES {n})", **fields)
    verdict(a, True, **fields)


if __name__ == "__main__":
    main()
