"""`python -m paddle.distributed.launch` (PyPI paddlepaddle, CPU) in every pod of converted PaddleJobs,
with the pod's own env (PADDLE_MASTER, PADDLE_NNODES, PADDLE_JOB_ID, POD_IP_DUMMY as the kubelet
resolves them), running a gloo all_reduce. The job must converge with rank 0 on v1's first pod,
which is the pod with job-global-index 0 (master 0, else worker 0).
"""
from __future__ import annotations

import copy
import json
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from .common import FIXTURES, convert, tmpdir
from .. import upstream
from .conftest import need
from .harness import Cluster

pytestmark = pytest.mark.launchers

TRAINER = """\
import json, os, socket
if os.environ.get("TRAINING_ROLE") in ("PSERVER", "TRAINER"):  # a job with a Master: parameter-server mode
    suffix = "." + os.environ["TRAINING_ROLE"] + "." + os.environ.get("PADDLE_TRAINER_ID", os.environ.get("PADDLE_PORT", ""))
    with open(os.environ["KF2_RESULT"] + suffix, "w") as f:
        json.dump({"mode": "ps", "role": os.environ["TRAINING_ROLE"], "host": socket.gethostname(),
                   "ip": os.environ.get("POD_IP"), "servers": os.environ["PADDLE_PSERVERS_IP_PORT_LIST"],
                   "trainers": os.environ["PADDLE_TRAINER_ENDPOINTS"], "trainer_id": os.environ.get("PADDLE_TRAINER_ID")}, f)
    open(os.environ["KF2_RESULT"], "w").write(json.dumps({"mode": "ps"}))
    raise SystemExit(0)
import paddle
import paddle.distributed as dist
dist.init_parallel_env()
rank, world = dist.get_rank(), dist.get_world_size()
t = paddle.to_tensor([float(rank + 1)])
dist.all_reduce(t)
with open(os.environ["KF2_RESULT"], "w") as f:
    json.dump({"rank": rank, "world": world, "host": socket.gethostname(), "sum": float(t.numpy()[0])}, f)
"""
GLOBAL_INDEX = "jobset.sigs.k8s.io/job-global-index"


def paddle_cases():
    out = [pytest.param(FIXTURES / "paddlejob" / c / "input.yaml", id=f"paddlejob/{c}") for c in ("worker-only", "master-worker")]
    for name in ("simple-cpu", "simple-gpu"):
        reason = upstream.absent("training-operator")
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        path = upstream.module_dir("training-operator") / f"examples/paddlepaddle/{name}.yaml"
        out.append(pytest.param(path, id=f"corpus/{name}", marks=marks))
    return out


def run_paddle(conv, root: Path, timeout: float = 150) -> tuple[dict, dict, str]:
    """Start every pod's launcher; {hostname: result} once all wrote one, the pods, and their logs."""
    python = need(root / "paddle" / "bin" / "python")
    work = Path(tempfile.mkdtemp(prefix="kf2js-paddle-"))
    (work / "trainer.py").write_text(TRAINER)
    results: dict = {}
    with Cluster(conv.jobset, conv.companions, conv.secrets(tmpdir())) as cl:
        pods = {p.hostname: p for p in cl.world.pods}
        procs = []
        for host, pod in pods.items():
            d = work / host
            d.mkdir()
            procs.append(cl.start(pod, [python, "-m", "paddle.distributed.launch", "--log_dir", str(d / "log"),
                                        str(work / "trainer.py")], cwd=str(d),
                                  extra_env={"KF2_RESULT": str(d / "result.json"), "PADDLE_DISTRI_BACKEND": "gloo"}))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and len(results) < len(pods):
            for host in pods:
                f = work / host / "result.json"
                if host not in results and f.exists() and f.stat().st_size:
                    results[host] = json.loads(f.read_text())
                    results[host]["processes"] = [json.loads(x.read_text()) for x in sorted(f.parent.glob("result.json.*"))]
            if any(p.popen.poll() not in (None, 0) for p in procs):
                break
            time.sleep(0.5)
        # a pod's result.json can appear before its other processes wrote theirs: read them all once
        # every pod is done (or the wait is over)
        settle = time.monotonic() + 5
        while time.monotonic() < settle and any(p.popen.poll() is None for p in procs):
            time.sleep(0.2)
        for host in results:
            results[host]["processes"] = [json.loads(x.read_text()) for x in sorted((work / host).glob("result.json.*"))]
        logs = "\n".join(f"--- {p.pod.hostname}\n{p.output()[-1500:]}" for p in procs)
        for host in pods:
            for f in sorted((work / host / "log").glob("workerlog.*")):
                logs += f"\n--- {host} {f.name}\n{f.read_text(errors='replace')[-1500:]}"
        index = {host: pod.labels[GLOBAL_INDEX] for host, pod in pods.items()}
    return results, index, logs


def check_converged(results: dict, index: dict, logs: str) -> None:
    n = len(index)
    assert len(results) == n, f"{len(results)} of {n} pods finished the all_reduce (the others hang)\n{logs[-6000:]}"
    if any(r.get("mode") == "ps" for r in results.values()):
        # Master + Workers: the launchers agreed on one server (on the store's pod) and their trainers.
        procs = {(h, i): p for h, r in results.items() for i, p in enumerate(r["processes"])}
        servers = {p["servers"] for p in procs.values()}
        assert len(servers) == 1, results
        assert len(servers) == 1, f"the pods disagree on the servers: {procs}"
        by_ip = {p["ip"]: h for (h, _), p in procs.items()}
        first = by_ip.get(next(iter(servers)).split(",")[0].split(":")[0])
        assert first is not None and index[first] == "0", (
            f"rank 0 ran on {first} (job-global-index {index.get(first)}), not on v1's first pod")
        ids = sorted(int(p["trainer_id"]) for p in procs.values() if p["role"] == "TRAINER")
        assert ids == list(range(len(ids))) and ids, procs
        return
    assert {r["world"] for r in results.values()} == {n}, results
    assert sorted(r["rank"] for r in results.values()) == list(range(n)), results
    assert {r["sum"] for r in results.values()} == {n * (n + 1) / 2}, results
    rank0 = next(host for host, r in results.items() if r["rank"] == 0)
    assert index[rank0] == "0", f"rank 0 ran on {rank0} (job-global-index {index[rank0]}), not on v1's first pod"


@pytest.mark.parametrize("path", paddle_cases())
def test_paddle_launcher_converges_with_rank0_on_the_first_pod(netns, root, path):
    conv = convert(path)
    check_converged(*run_paddle(conv, root))


def test_mutation_paddle_master_on_a_non_first_pod_is_caught(netns, root, tmp_path):
    """Swap the roles: the IP form on worker 1's replicatedJob, worker 0 pointing at worker 1."""
    doc = yaml.safe_load((FIXTURES / "paddlejob/worker-only/input.yaml").read_text())
    doc["spec"]["paddleReplicaSpecs"]["Worker"]["replicas"] = 2
    src = tmp_path / "two-workers.yaml"
    src.write_text(yaml.safe_dump(doc))
    conv = convert(src)
    specs = {rj["name"]: rj["template"]["spec"]["template"]["spec"]["containers"][0] for rj in conv.jobset["spec"]["replicatedJobs"]}
    first, rest = specs["worker0"], specs["worker"]
    ip_form = [e for e in first["env"] if e["name"] in ("POD_IP_DUMMY", "PADDLE_MASTER")]
    dns_form = next(e for e in rest["env"] if e["name"] == "PADDLE_MASTER")
    first["env"] = [e for e in first["env"] if e["name"] not in ("POD_IP_DUMMY", "PADDLE_MASTER")] + [
        {"name": "PADDLE_MASTER", "value": dns_form["value"].replace("-worker0-0-0.", "-worker-0-0.")}]
    rest["env"] = [e for e in rest["env"] if e["name"] != "PADDLE_MASTER"] + copy.deepcopy(ip_form)
    with pytest.raises(AssertionError, match="rank 0 ran on"):
        check_converged(*run_paddle(conv, root, timeout=90))
