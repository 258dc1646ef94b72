"""PyTorch in a pod: gloo process group from the env, an all_reduce and an all_gather of hostnames.

--mode env       init_process_group("gloo", init_method="env://") from MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE
--mode torchrun  `python -m torch.distributed.run` with only PET_* from the env (nnodes, nproc, node rank,
                 master addr/port, or the elastic rendezvous: PET_RDZV_ENDPOINT/BACKEND/ID/CONF, PET_NNODES=min:max);
                 each child process runs --mode child (env mode with what torchrun gave it)
"""
from __future__ import annotations

import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _verdict import args, fail, hostname, verdict  # noqa: E402


def env_mode(a) -> None:
    need = [n for n in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE") if not os.environ.get(n)]
    if need:
        fail(a, f"{', '.join(need)} not in the env: no process group to join")
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    try:
        dist.init_process_group("gloo", init_method="env://", timeout=timedelta(seconds=a.timeout))
        rank, world = dist.get_rank(), dist.get_world_size()
        t = torch.tensor([float(rank + 1)])
        dist.all_reduce(t)
        hosts: list = [None] * world
        dist.all_gather_object(hosts, hostname())
        dist.barrier()
        dist.destroy_process_group()
    except Exception as e:  # noqa: BLE001 - the verdict says why
        fail(a, f"{type(e).__name__}: {e}", rank=os.environ.get("RANK"), world=os.environ.get("WORLD_SIZE"))
    want = world * (world + 1) / 2
    fields = {"rank": rank, "world": world, "peers": hosts, "sum": t.item(),
              "local_rank": os.environ.get("LOCAL_RANK"), "node_rank": os.environ.get("GROUP_RANK"),
              "elastic": a.mode == "child-elastic"}
    if t.item() != want or (os.environ.get("RANK") not in (None, str(rank))):
        fail(a, f"all_reduce gave {t.item()} (want {want}) or rank {rank} != RANK {os.environ.get('RANK')}", **fields)
    verdict(a, True, **fields)


def torchrun(a) -> None:
    child = "child-elastic" if os.environ.get("PET_RDZV_ENDPOINT") else "child"
    argv = [sys.executable, "-m", "torch.distributed.run", os.path.abspath(__file__),
            "--role", a.role, "--index", str(a.index), "--mode", child, "--timeout", str(a.timeout)]
    rc = subprocess.call(argv)
    if rc != 0:
        fail(a, f"torchrun exited {rc}", code=rc if 0 < rc < 128 else 1, launcher="torchrun")
    verdict(a, True, launcher="torchrun")


def main() -> None:
    a = args()
    if a.mode == "torchrun":
        torchrun(a)
    else:
        env_mode(a)


if __name__ == "__main__":
    main()
