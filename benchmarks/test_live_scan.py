"""`scan -A` over 1,000 v1 jobs in the test API server (benchmarks/live_scan.py). A benchmark, not a
test: it lives outside tests/ so the default run never collects it. It borrows the live fixtures.

    python -m pytest benchmarks/test_live_scan.py -s
    KF2JOBSET_BENCH_BASELINE=/path/to/old/tree python -m pytest benchmarks/test_live_scan.py -s   # before/after

Prints the numbers quoted in docs/plugin.md and docs/benchmarks.md (time and peak memory of the plugin process).
"""
from __future__ import annotations

import importlib.util
import os

import pytest

from tests import upstream
from tests.live.conftest import REPO_ROOT, apiserver  # noqa: F401  (fixture)

pytestmark = pytest.mark.apiserver

BENCH = REPO_ROOT / "benchmarks" / "live_scan.py"


def test_scan_all_namespaces_1000_jobs(apiserver):
    apiserver.install_crds([str(p) for p in upstream.training_operator_crds()])
    spec = importlib.util.spec_from_file_location("live_scan", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    jobs = int(os.environ.get("KF2JOBSET_BENCH_JOBS", "1000"))
    baseline = os.environ.get("KF2JOBSET_BENCH_BASELINE")  # a PYTHONPATH holding an older kf2jobset
    result = bench.run(apiserver.kubeconfig, jobs=jobs, namespaces=10, runs=int(os.environ.get("KF2JOBSET_BENCH_RUNS", "3")),
                       baseline_pythonpath=baseline)
    print("\nscan -A benchmark:", result)
    assert result["jobs"] == jobs
    assert result["scan_peak_rss_mib_max"] < 512
