"""Fuzzing: no traceback, no hang, no invalid JobSet, no silently skipped job — on any input.

- every reproducer in tests/fuzz-findings (input + JSON with its options) passes the oracles of
  tests/fuzzing.py, in stream mode and with --check;
- a seeded fuzz run over fixtures/ and the upstream corpus (tests/upstream.py) with a fixed seed and a
  time budget (KF2JOBSET_FUZZ_SECONDS, default 60 s; KF2JOBSET_FUZZ_COUNT inputs at most, default
  600). The long run is `python tools/fuzz.py --count 100000` (docs/hardening.md).
"""
from __future__ import annotations

import os

import pytest

from tests import upstream
from tests.fuzzing import finding_cases, fuzz, run_case

CASES = finding_cases()


@pytest.mark.parametrize("path,opts,meta", CASES, ids=[c[0].name for c in CASES])
def test_fuzz_finding(path, opts, meta):
    text = path.read_bytes().decode("utf-8", errors="surrogateescape")
    out = run_case(text, path.name, opts)
    assert not out.violations, f"{path.name} ({meta.name}): {out.violations}\n{out.stderr[-2000:]}"
    assert out.code != 70
    checked = run_case(text, path.name, {k: v for k, v in opts.items() if k != "name"}, check_mode=True)
    assert not checked.violations, f"{path.name} --check: {checked.violations}\n{checked.stderr[-2000:]}"


def test_fuzz_findings_present():
    assert len(CASES) >= 80


def test_fuzz_seeded_budget():
    """Fixed seed, bounded budget: the CI slice of the long run."""
    seconds = float(os.environ.get("KF2JOBSET_FUZZ_SECONDS", "60"))
    count = int(os.environ.get("KF2JOBSET_FUZZ_COUNT", "600"))
    upstream.need(*upstream.CORPUS, "jobset")  # its seeds and the real JobSet CRD
    n, failures, took = fuzz(count, seed=20260911, budget_s=seconds)
    assert n >= 50, f"only {n} inputs in {took:.0f} s"
    report = [f"#{f[0]} {f[1]} opts={f[3]} check={f[4]}: {f[6].violations[0][:400]}" for f in failures[:10]]
    assert not failures, f"{len(failures)} of {n} mutated inputs failed an oracle:\n" + "\n".join(report)


def test_limits_are_clean_errors(tmp_path):
    """Replicas above the limit, alias bombs and deep nesting: one-line typed errors, fast."""
    from kf2jobset.core.parse import MAX_REPLICAS
    from kf2jobset.text.yamlio import MAX_DEPTH

    base = (tmp_path.parent / "x").parent  # noqa: F841 - keep pytest's tmp dir alive
    job = ("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: big\nspec:\n  pytorchReplicaSpecs:\n"
           "    Worker:\n      replicas: {n}\n      template:\n        spec:\n          containers:\n"
           "          - name: pytorch\n            image: img\n")
    out = run_case(job.format(n=MAX_REPLICAS + 1), "big.yaml", {})
    assert out.code == 3 and not out.stdout and "replicas" in out.stderr and out.seconds < 5, out.stderr
    out = run_case(job.format(n=4_000_000_000), "big.yaml", {})
    assert out.code == 3 and not out.violations, out.stderr
    bomb = "".join(f"      a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 10))
    bombed = job.format(n=2).replace("  name: big\n", "  name: big\n  labels:\n    x:\n      a0: &a0 [lol]\n" + bomb)
    out = run_case(bombed, "bomb.yaml", {})
    assert out.code == 3 and "aliases expand" in out.stderr and out.seconds < 5, out.stderr
    deep = job.format(n=2).replace("image: img", "image: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5))
    out = run_case(deep, "deep.yaml", {})
    assert out.code == 3 and "nesting too deep" in out.stderr and "recursion" not in out.stderr, out.stderr


def test_unsupported_versions_are_refused(tmp_path):
    job = ("apiVersion: {api}\nkind: TFJob\nmetadata:\n  name: t\nspec:\n  tfReplicaSpecs:\n    Worker:\n"
           "      template:\n        spec:\n          containers:\n          - name: tensorflow\n            image: img\n")
    for api, code in (("kubeflow.org/v2beta1", 4), ("kubeflow.org/v1beta3", 4), ("'kubeflow.org/v1 '", 3),
                      ("kubeflow.org/v2beta1#x", 3)):
        out = run_case(job.format(api=api), "t.yaml", {})
        assert out.code == code and not out.stdout and "kubeflow.org/v1" in out.stderr, (api, out.stderr)
        checked = run_case(job.format(api=api), "t.yaml", {}, check_mode=True)
        assert checked.code != 0, (api, checked.stderr)
