"""Paddle in a pod: `python -m paddle.distributed.launch` with only the pod's env (PADDLE_MASTER,
PADDLE_NNODES, PADDLE_JOB_ID; PADDLE_SERVER_NUM/PADDLE_TRAINER_NUM for a job with a Master), CPU, gloo.

The launcher starts this file again (--mode child) per process:
* collective mode: init_parallel_env, an all_reduce of rank+1 and one that gathers every rank's hostname;
* parameter-server mode (a job with a Master): the launcher's role, trainer id, and the server and
  trainer endpoints it handed out (addresses; the harness maps them to pods).
Each child writes its result to a file; the wrapper prints one verdict per child process.
"""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _verdict import TAG, args, fail, hostname, private_cwd, verdict  # noqa: E402

WIDTH = 64


def child(a) -> None:
    out = os.environ["KF2JS_RESULT"]
    role = os.environ.get("TRAINING_ROLE")
    if role in ("PSERVER", "TRAINER"):
        suffix = f".{role}.{os.environ.get('PADDLE_TRAINER_ID', os.environ.get('PADDLE_PORT', ''))}"
        res = {"mode": "ps", "proc_role": role, "trainer_id": os.environ.get("PADDLE_TRAINER_ID"),
               "servers": os.environ.get("PADDLE_PSERVERS_IP_PORT_LIST", "").split(","),
               "trainers": os.environ.get("PADDLE_TRAINER_ENDPOINTS", "").split(","), "host": hostname()}
        with open(out + suffix, "w") as f:
            json.dump(res, f)
        return
    import paddle
    import paddle.distributed as dist

    dist.init_parallel_env()
    rank, world = dist.get_rank(), dist.get_world_size()
    t = paddle.to_tensor([float(rank + 1)])
    dist.all_reduce(t)
    names = paddle.zeros([world, WIDTH], dtype="int32")
    h = list(hostname().encode()[:WIDTH])
    row = paddle.to_tensor(h + [0] * (WIDTH - len(h)), dtype="int32")
    names[rank] = row
    dist.all_reduce(names)
    peers = [bytes(int(c) for c in r if c).decode() for r in names.numpy()]
    with open(out + f".collective.{rank}", "w") as f:
        json.dump({"mode": "collective", "rank": rank, "world": world, "sum": float(t.numpy()[0]), "peers": peers,
                   "host": hostname()}, f)


def main() -> None:
    a = args()
    if a.mode == "child":
        child(a)
        return
    cwd = private_cwd()
    env = dict(os.environ, KF2JS_RESULT=os.path.join(cwd, "result"), PADDLE_DISTRI_BACKEND="gloo")
    argv = [sys.executable, "-m", "paddle.distributed.launch", "--log_dir", os.path.join(cwd, "log"),
            os.path.abspath(__file__), "--role", a.role, "--index", str(a.index), "--mode", "child"]
    try:
        rc = subprocess.call(argv, env=env, timeout=a.timeout * 2)
    except subprocess.TimeoutExpired:
        rc = "timeout"
    logs = ""
    for f in sorted(glob.glob(os.path.join(cwd, "log", "*"))):
        with open(f, errors="replace") as fh:
            logs += f"--- {os.path.basename(f)}\n{fh.read()[-1500:]}\n"
    results = []
    for f in sorted(glob.glob(os.path.join(cwd, "result.*"))):
        with open(f) as fh:
            results.append(json.load(fh))
    if rc != 0 or not results:
        print(logs[-5000:], flush=True)
        fail(a, f"paddle.distributed.launch exited {rc} with {len(results)} results")
    ok = True
    for r in results:
        r.pop("host", None)
        if r["mode"] == "collective":
            w = r["world"]
            ok = ok and r["sum"] == w * (w + 1) / 2
        verdict(a, r["mode"] != "collective" or r["sum"] == r["world"] * (r["world"] + 1) / 2, launcher="paddle", **r)
    if not ok:
        print(f"{TAG}-FAILED", flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
