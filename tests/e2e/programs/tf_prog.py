"""TensorFlow in a pod: every task of TF_CONFIG serves its address with a gRPC tf.distribute.Server.

The lead task of this task's own view of the cluster (chief, else master, else the lowest worker
index) connects to the cluster (remote eager) and runs, pinned with tf.device to /job:T/task:I of
every task, ops that read that task's ``identity`` file (written in the serving process's private
working directory: the TF task it serves as and its hostname from its own UTS namespace) and
compute on that task. The lead fails if the task it reached at T:I says it is another task. It
then writes ``done`` on every non-PS task (again by an op on that task); those exit 0 on seeing it.
PS tasks serve until killed, as real parameter servers do. No TF_CONFIG (a job of one pod): a local op.
"""
from __future__ import annotations

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _verdict import args, cancel_watchdog, fail, hostname, private_cwd, verdict, wait_tcp  # noqa: E402


def tasks(cluster: dict) -> dict:
    """{type: {index: address}} for the non-empty jobs of a TF_CONFIG cluster (list or sparse map form)."""
    out = {}
    for t, v in cluster.items():
        if isinstance(v, dict):
            m = {int(i): addr for i, addr in v.items()}
        else:
            m = dict(enumerate(v or []))
        if m:
            out[t] = m
    return out


def lead_of(view: dict):
    for t in ("chief", "master", "worker"):
        if view.get(t):
            return t, min(view[t])
    return None


def retry(op, tf, tt, ii, deadline):
    """Run ``op`` pinned to /job:tt/task:ii; gRPC UNAVAILABLE (a name not resolving yet, a connection
    refused) is retried until the deadline, as a training loop's first step would be."""
    while True:
        try:
            with tf.device(f"/job:{tt}/replica:0/task:{ii}/device:CPU:0"):
                return op()
        except tf.errors.UnavailableError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1.0)


def remote(tf, tt, ii, deadline):
    def op():
        ident = tf.io.read_file("identity")  # relative: the cwd of the process serving this task
        x = tf.reduce_sum(tf.fill([ii + 1], 2))
        return json.loads(ident.numpy().decode()), int(x.numpy())

    return retry(op, tf, tt, ii, deadline)


def main() -> None:
    a = args()
    cwd = private_cwd()
    raw = os.environ.get("TF_CONFIG")
    if not raw:
        import tensorflow as tf

        v = int(tf.reduce_sum(tf.range(10)).numpy())
        verdict(a, v == 45, mode="single", task=None, peers={})
        sys.exit(0 if v == 45 else 1)
    cfg = json.loads(raw)
    view = tasks(cfg.get("cluster") or {})
    t, i = cfg["task"]["type"], int(cfg["task"]["index"])
    me = f"{t}:{i}"
    with open(os.path.join(cwd, "identity"), "w") as f:
        json.dump({"task": me, "host": hostname()}, f)
    if i not in view.get(t, {}):
        verdict(a, True, mode="not-in-cluster", task=me, peers={})
        return
    import tensorflow as tf

    spec = tf.train.ClusterSpec(view)
    if lead_of(view) != (t, i):
        serve(a, tf, spec, cwd, t, i)
    else:
        lead(a, tf, spec, view, t, i)


def serve(a, tf, spec, cwd: str, t: str, i: int) -> None:
    """A task the lead reaches: serve until the lead says done (a ps serves until its pod is deleted)."""
    me = f"{t}:{i}"
    server = tf.distribute.Server(spec, job_name=t, task_index=i, protocol="grpc", start=True)
    if t == "ps":
        verdict(a, True, mode="serve", task=me, peers={})
        cancel_watchdog()
        server.join()  # until the pod is deleted
    deadline = time.monotonic() + a.timeout * 2
    while not os.path.exists(os.path.join(cwd, "done")):
        if time.monotonic() > deadline:
            fail(a, "the lead task never reached this task (no done)", task=me)
        time.sleep(0.3)
    verdict(a, True, mode="serve", task=me, peers={})


def lead(a, tf, spec, view: dict, t: str, i: int) -> None:
    """The lead task: run an op on every task of TF_CONFIG, check each is the task it claims, then say done."""
    me = f"{t}:{i}"
    deadline = time.monotonic() + a.timeout
    try:
        for tt, m in view.items():
            for ii, addr in m.items():
                if (tt, ii) != (t, i):
                    host, _, port = addr.rpartition(":")
                    wait_tcp(host, int(port), deadline)
        resolver = tf.distribute.cluster_resolver.SimpleClusterResolver(spec, task_type=t, task_id=i, rpc_layer="grpc")
        tf.config.experimental_connect_to_cluster(resolver, job_name=t, task_index=i, make_master_device_default=False)
        peers, total = {}, 0
        for tt, m in sorted(view.items()):
            for ii in sorted(m):
                got, x = remote(tf, tt, ii, deadline)
                total += x
                peers[f"{tt}:{ii}"] = got["host"]
                if got["task"] != f"{tt}:{ii}":
                    fail(a, f"the server at {m[ii]} (TF_CONFIG {tt}:{ii}) is task {got['task']} on {got['host']}",
                         task=me, peers=peers)
        for tt, m in sorted(view.items()):
            if tt == "ps":
                continue
            for ii in sorted(m):
                if (tt, ii) != (t, i):
                    retry(lambda: tf.io.write_file("done", "1"), tf, tt, ii, deadline)
    except Exception as e:  # noqa: BLE001 - the verdict says why
        fail(a, f"{type(e).__name__}: {e}", task=me)
    want = sum(2 * (ii + 1) for m in view.values() for ii in m)
    if total != want:
        fail(a, f"remote ops summed to {total}, want {want}", task=me, peers=peers)
    verdict(a, True, mode="lead", task=me, peers=peers)


if __name__ == "__main__":
    main()
