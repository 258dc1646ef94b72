"""XGBoost in a pod: rank 0 (RANK=0) runs the RabitTracker on MASTER_PORT; every rank joins through
MASTER_ADDR:MASTER_PORT with its RANK as task id, then an allreduce (sum of ranks) and an allreduce
that gathers every rank's hostname, and a tiny distributed training round (hist, 2 iterations)."""
from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _verdict import args, env_int, fail, hostname, verdict, wait_tcp  # noqa: E402

WIDTH = 64


def main() -> None:
    a = args()
    addr, port, world, rank = os.environ.get("MASTER_ADDR"), env_int("MASTER_PORT"), env_int("WORLD_SIZE"), env_int("RANK")
    if not addr or port is None or world is None or rank is None:
        fail(a, "MASTER_ADDR/MASTER_PORT/WORLD_SIZE/RANK missing or not integers")
    import numpy as np
    import xgboost as xgb
    from xgboost import collective
    from xgboost.tracker import RabitTracker

    tracker = None
    try:
        if rank == 0:
            tracker = RabitTracker(n_workers=world, host_ip="0.0.0.0", port=port, sortby="task", timeout=int(a.timeout))
            tracker.start()
        # like a worker script in Kubernetes: wait until the tracker's name resolves and it listens
        wait_tcp(addr, port, time.monotonic() + a.timeout)
        with collective.CommunicatorContext(dmlc_tracker_uri=addr, dmlc_tracker_port=port, dmlc_task_id=str(rank),
                                            dmlc_retry=30, dmlc_timeout=int(a.timeout)):
            got_rank, got_world = collective.get_rank(), collective.get_world_size()
            s = collective.allreduce(np.array([float(got_rank + 1)]), collective.Op.SUM)
            names = np.zeros((got_world, WIDTH), dtype=np.int32)
            h = hostname().encode()[:WIDTH]
            names[got_rank, :len(h)] = list(h)
            names = np.asarray(collective.allreduce(names, collective.Op.SUM)).reshape(got_world, WIDTH)
            peers = [bytes(int(c) for c in row if c).decode() for row in names]
            rng = np.random.default_rng(got_rank)
            X = rng.normal(size=(64, 4))
            y = (X[:, 0] > 0).astype(float)
            booster = xgb.train({"tree_method": "hist", "objective": "binary:logistic", "nthread": 1},
                                xgb.DMatrix(X, y), num_boost_round=2)
            trees = len(booster.get_dump())
        if tracker is not None:
            tracker.wait_for(int(a.timeout))
    except Exception as e:  # noqa: BLE001 - the verdict says why
        fail(a, f"{type(e).__name__}: {e}", rank=rank, world=world)
    fields = {"rank": got_rank, "world": got_world, "peers": peers, "sum": float(s[0]), "trees": trees}
    if got_rank != rank or got_world != world or float(s[0]) != world * (world + 1) / 2:
        fail(a, f"collective rank {got_rank} (RANK {rank}), world {got_world} (WORLD_SIZE {world}), sum {s[0]}", **fields)
    verdict(a, True, **fields)


if __name__ == "__main__":
    main()
