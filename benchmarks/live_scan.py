#!/usr/bin/env python3
"""Benchmark `kubectl kf2jobset scan -A` over many v1 jobs in a cluster.

    python benchmarks/live_scan.py --kubeconfig K [--jobs 1000] [--namespaces 10] [--runs 3] [--keep]

Starts nothing itself: point it at a cluster (e.g. the test API server of tests/live, see
benchmarks/test_live_scan.py) whose Kubeflow v1 CRDs are installed. It creates --jobs v1 jobs
(round robin over the served kinds, spread over --namespaces new namespaces, all labelled
kf2jobset-bench=<id>), runs the installed plugin `scan -A` --runs times as a child process and
reports wall time and peak RSS (ru_maxrss of the child) per run, then deletes what it created
unless --keep. With kubectl on PATH it also times `kubectl get <kinds> -A -o json` (the listing
alone) for comparison.
"""
from __future__ import annotations

import argparse
import copy
import os
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

BENCH_LABEL = "kf2jobset-bench"


def _container(name: str, image: str, args: list[str]) -> dict:
    return {
        "name": name,
        "image": image,
        "command": ["python", "-u", "/opt/train.py"],
        "args": args,
        "env": [{"name": "LOG_LEVEL", "value": "info"}, {"name": "DATA_DIR", "value": "/data"}],
        "resources": {"requests": {"cpu": "2", "memory": "4Gi"}, "limits": {"cpu": "2", "memory": "4Gi"}},
        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
    }


def _replica(container: dict, replicas: int, restart: str = "OnFailure") -> dict:
    return {
        "replicas": replicas,
        "restartPolicy": restart,
        "template": {
            "metadata": {"labels": {"app": "bench"}},
            "spec": {"containers": [container], "volumes": [{"name": "data", "emptyDir": {}}]},
        },
    }


def templates() -> dict[str, dict]:
    """One realistic v1 job per kind (apiVersion kubeflow.org/v1)."""
    args = ["--epochs=10", "--batch-size=64"]
    return {
        "pytorchjobs": {"kind": "PyTorchJob", "spec": {"pytorchReplicaSpecs": {
            "Master": _replica(_container("pytorch", "pytorch/pytorch:2.3.0", args), 1),
            "Worker": _replica(_container("pytorch", "pytorch/pytorch:2.3.0", args), 3)}}},
        "tfjobs": {"kind": "TFJob", "spec": {"tfReplicaSpecs": {
            "PS": _replica(_container("tensorflow", "tensorflow/tensorflow:2.15.0", args), 1),
            "Worker": _replica(_container("tensorflow", "tensorflow/tensorflow:2.15.0", args), 4)}}},
        "xgboostjobs": {"kind": "XGBoostJob", "spec": {"xgbReplicaSpecs": {
            "Master": _replica(_container("xgboost", "kubeflow/xgboost-dist-iris:latest", args), 1, "Never"),
            "Worker": _replica(_container("xgboost", "kubeflow/xgboost-dist-iris:latest", args), 2, "Never")}}},
        "paddlejobs": {"kind": "PaddleJob", "spec": {"paddleReplicaSpecs": {
            "Worker": _replica(_container("paddle", "paddlepaddle/paddle:2.4.0", args), 2)}}},
        "jaxjobs": {"kind": "JAXJob", "spec": {"jaxReplicaSpecs": {
            "Worker": _replica(_container("jax", "docker.io/kubeflow/jaxjob-simple:latest", args), 2)}}},
        "mpijobs": {"kind": "MPIJob", "spec": {"slotsPerWorker": 1, "mpiReplicaSpecs": {
            "Launcher": _replica(_container("mpi", "mpioperator/tensorflow-benchmarks:latest", args), 1),
            "Worker": _replica(_container("mpi", "mpioperator/tensorflow-benchmarks:latest", args), 2)}}},
    }


def served_v1(custom) -> list[str]:
    from kubernetes.client.exceptions import ApiException

    try:
        res = custom.get_api_resources("kubeflow.org", "v1")
    except ApiException as exc:
        if exc.status == 404:
            return []
        raise
    names = {r.name for r in res.resources}
    return [p for p in templates() if p in names]


def seed(api_client, n: int, n_namespaces: int, run: str) -> tuple[list[str], dict[str, int]]:
    from kubernetes import client

    custom, core = client.CustomObjectsApi(api_client), client.CoreV1Api(api_client)
    plurals = served_v1(custom)
    if not plurals:
        sys.exit("no Kubeflow v1 CRD is served by this cluster: install the training-operator CRDs first")
    namespaces = [f"bench-{run}-{i}" for i in range(n_namespaces)]
    for ns in namespaces:
        core.create_namespace({"metadata": {"name": ns, "labels": {BENCH_LABEL: run}}})
    tpl = templates()
    counts: dict[str, int] = {}

    def create(i: int) -> None:
        plural = plurals[i % len(plurals)]
        body = copy.deepcopy(tpl[plural])
        body["apiVersion"] = "kubeflow.org/v1"
        body["metadata"] = {"name": f"job-{i:05d}", "labels": {BENCH_LABEL: run, "team": f"t{i % 7}"}}
        custom.create_namespaced_custom_object("kubeflow.org", "v1", namespaces[i % n_namespaces], plural, body)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(create, range(n)))
    for i in range(n):
        plural = plurals[i % len(plurals)]
        counts[plural] = counts.get(plural, 0) + 1
    return namespaces, counts


def cleanup(api_client, namespaces: list[str], plurals) -> None:
    from kubernetes import client

    custom, core = client.CustomObjectsApi(api_client), client.CoreV1Api(api_client)
    for ns in namespaces:
        for plural in plurals:
            custom.delete_collection_namespaced_custom_object("kubeflow.org", "v1", ns, plural)
        core.delete_namespace(ns)


def plugin_command() -> list[str]:
    script = shutil.which("kubectl-kf2jobset")
    if script:
        return [script]
    return [sys.executable, "-c", "from kf2jobset.live.plugin import main; main()"]


def timed(cmd: list[str], pythonpath: str | None = None) -> tuple[float, int, int, str]:
    """(wall seconds, peak RSS in KiB, exit code, stdout) of one child process."""
    env = None
    if pythonpath:
        env = {**os.environ, "PYTHONPATH": pythonpath}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env)
    out_chunks = []
    # read stdout fully before wait4 (a full pipe would block the child)
    out, err = proc.stdout.read(), proc.stderr.read()
    out_chunks.append(out)
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.stderr.write(err.decode(errors="replace"))
    return wall, int(usage.ru_maxrss), proc.returncode, b"".join(out_chunks).decode()


def run(kubeconfig: str, jobs: int = 1000, namespaces: int = 10, runs: int = 3, keep: bool = False,
        baseline_pythonpath: str | None = None) -> dict:
    """Seed, scan `runs` times, clean up. `baseline_pythonpath`: also scan with the kf2jobset found
    there (e.g. a copy of an older tree), alternating with the current one, and check both list the
    same jobs with the same findings."""
    from kubernetes import config

    run_id = uuid.uuid4().hex[:6]
    api_client = config.new_client_from_config(config_file=kubeconfig, persist_config=False)
    t0 = time.perf_counter()
    ns_list, counts = seed(api_client, jobs, namespaces, run_id)
    seed_s = time.perf_counter() - t0
    result: dict = {"jobs": jobs, "namespaces": namespaces, "kinds": counts, "seed_seconds": round(seed_s, 2)}
    try:
        cmd = [*plugin_command(), "scan", "-A", "--kubeconfig", kubeconfig]
        variants = {"current": None}
        if baseline_pythonpath:
            variants["baseline"] = baseline_pythonpath
        samples: dict = {name: [] for name in variants}
        tables: dict = {}
        for _ in range(runs):
            for name, pythonpath in variants.items():  # alternated: machine load hits both alike
                wall, rss, code, out = timed(cmd, pythonpath)
                rows = [line for line in out.splitlines()[1:] if line.startswith(f"bench-{run_id}-")]
                if code != 0 or len(rows) != jobs:
                    raise SystemExit(f"scan -A ({name}) failed (exit {code}) or listed {len(rows)} of {jobs} jobs")
                samples[name].append((wall, rss))
                tables[name] = [" ".join(r.split()) for r in rows]
        if baseline_pythonpath and tables["current"] != tables["baseline"]:
            raise SystemExit("the current and the baseline scan differ in their rows (findings)")
        for name, got in samples.items():
            prefix = "scan" if name == "current" else "baseline_scan"
            result[f"{prefix}_seconds"] = [round(w, 2) for w, _ in got]
            result[f"{prefix}_peak_rss_mib"] = [round(r / 1024, 1) for _, r in got]
            result[f"{prefix}_seconds_median"] = round(statistics.median(w for w, _ in got), 2)
            result[f"{prefix}_peak_rss_mib_max"] = round(max(r for _, r in got) / 1024, 1)
        kubectl = shutil.which("kubectl")
        if kubectl:
            wall, rss, code, _out = timed([kubectl, "--kubeconfig", kubeconfig, "get", ",".join(
                f"{p}.kubeflow.org" for p in counts), "-A", "-o", "json"])
            if code == 0:
                result["kubectl_get_json_seconds"] = round(wall, 2)
                result["kubectl_get_json_peak_rss_mib"] = round(rss / 1024, 1)
    finally:
        if not keep:
            cleanup(api_client, ns_list, counts)
        api_client.close()
    return result


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kubeconfig", required=True)
    ap.add_argument("--jobs", type=int, default=1000)
    ap.add_argument("--namespaces", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", action="store_true", help="leave the jobs and namespaces in the cluster")
    ap.add_argument("--baseline-pythonpath", metavar="DIR",
                    help="also time the kf2jobset importable from DIR (alternating), and check the findings agree")
    args = ap.parse_args(argv)
    result = run(args.kubeconfig, args.jobs, args.namespaces, args.runs, args.keep, args.baseline_pythonpath)
    width = max(map(len, result))
    for key, value in result.items():
        print(f"{key.ljust(width)}  {value}")


if __name__ == "__main__":
    main()
