"""A DDP-style rendezvous probe (rank 0 accepts every worker over MASTER_ADDR:MASTER_PORT, each side reports what
it resolved and saw as JSON) and its check against what the node agent recorded; node agents for one namespace."""
from __future__ import annotations

import json
import shutil
from contextlib import contextmanager

from .nodeagent import NodeAgent


@contextmanager
def node_agents(kubeconfig: str, namespace: str):
    """``make(programs, **kw)`` -> a started NodeAgent running only ``namespace``; all stopped afterwards."""
    agents: list[NodeAgent] = []

    def make(programs: dict, **kw) -> NodeAgent:
        a = NodeAgent(kubeconfig, programs, namespaces={namespace}, **kw)
        a.start()
        agents.append(a)
        return a

    try:
        yield make
    finally:
        for a in agents:
            if a.events:
                print("\n[nodeagent events]\n" + "\n".join(a.events[-30:]))
            a.stop()
            shutil.rmtree(a.workdir, ignore_errors=True)


def last_json(text: str) -> dict:
    lines = [line for line in text.splitlines() if line.startswith("{")]
    assert lines, f"no JSON report in the output:\n{text}"
    return json.loads(lines[-1])


# Every rank reports its rank, world, host, MASTER_ADDR and its address, and Trainer's PET_* variables; rank 0
# each peer's address as it accepted it. RESOLVE_WORKERS (set in front of it): rank 0 also resolves each
# worker by the naming scheme of a master/worker world.
_RENDEZVOUS_PROBE = r"""
import json, os, socket, sys, time
def resolve(name, wait=90):
    deadline = time.time() + wait
    while True:
        try:
            return socket.gethostbyname(name)
        except socket.gaierror:
            if time.time() > deadline:
                raise
            time.sleep(0.2)
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
pet = {k: v for k, v in os.environ.items() if k.startswith("PET_")}
me = {"rank": rank, "world": world, "hostname": socket.gethostname(), "master_addr": addr, "master_ip": resolve(addr),
      "pet": pet}
if rank == 0:
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("0.0.0.0", port))
    srv.listen(16)
    srv.settimeout(120)
    peers, conns = {}, []
    while len(peers) < world - 1:
        conn, (peer_ip, _) = srv.accept()
        info = json.loads(conn.recv(4096).decode())
        info["peer_ip"] = peer_ip
        peers[info["rank"]] = info
        conns.append(conn)
    me["peers"] = peers
    if RESOLVE_WORKERS:
        # while the workers still run (a finished pod has no DNS record): every worker's address by the
        # naming scheme of its world (v1: <job>-worker-i, JobSet: <js>-worker-i-0.<subdomain>)
        me["workers"] = {i: resolve(addr.replace("-master-0", f"-worker-{i}"), wait=30) for i in range(world - 1)}
    for conn in conns:
        conn.sendall(b"ok")
        conn.close()
else:
    deadline = time.time() + 90
    while True:
        try:
            s = socket.create_connection((addr, port), timeout=2)
            break
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.3)
    me["own_ip"] = s.getsockname()[0]
    s.sendall(json.dumps(me).encode())
    s.settimeout(120)
    assert s.recv(2) == b"ok"
print(json.dumps(me), flush=True)
"""
DDP_PROBE = "RESOLVE_WORKERS = True" + _RENDEZVOUS_PROBE
# the same on a world not named master/worker (Trainer's node-0-i): ranks, addresses and PET_* only
RANK_PROBE = "RESOLVE_WORKERS = False" + _RENDEZVOUS_PROBE


def check_ddp(agent: NodeAgent, namespace: str, master: str, workers: list[str]) -> dict:
    """master/workers: pod hostnames. From the agent's records: a finished JobSet deletes its
    remaining Jobs (and so pods), and JobSet pod names have a random suffix."""
    runs = {x.hostname: x for x in agent.launches(namespace) if x.container == "pytorch"}
    assert sorted(runs) == sorted([master, *workers]), sorted(runs)
    m = last_json(agent.log(namespace, runs[master].pod, "pytorch"))
    master_ip = runs[master].pod_ip
    assert m["rank"] == 0 and m["master_ip"] == master_ip and m["hostname"] == master
    assert len(m["peers"]) == len(workers)
    by_rank = {}
    for w in workers:
        r = last_json(agent.log(namespace, runs[w].pod, "pytorch"))
        ip = runs[w].pod_ip
        assert r["master_ip"] == master_ip, (w, r)  # MASTER_ADDR reaches the master pod
        assert r["own_ip"] == ip and m["peers"][str(r["rank"])]["peer_ip"] == ip
        assert r["hostname"] == w
        assert str(r["rank"]) == dict(runs[w].env)["RANK"]
        by_rank[r["rank"]] = w
    assert sorted(by_rank) == list(range(1, len(workers) + 1))
    for i, ip in m["workers"].items():  # the master resolves each worker's name to that worker
        assert ip == runs[by_rank[int(i) + 1]].pod_ip, (i, ip, by_rank)
    return m
