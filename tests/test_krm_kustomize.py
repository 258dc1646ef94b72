"""`kf2jobset krm` as a kustomize exec transformer, run by REAL kustomize (v5.7.1, tools/kustomize).

The promise: a kustomization that lists the function under `transformers:` builds into exactly what
`kf2jobset convert` writes for the plain build of the same base; other objects pass through; an
invalid job fails the build with kf2jobset's message; function-config data picks the options.
"""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import REPO

FIXTURES = REPO / "fixtures"
JOBS = [FIXTURES / "pytorchjob" / "master-workers" / "input.yaml", FIXTURES / "tfjob" / "chief-ps-workers" / "input.yaml",
        FIXTURES / "mpijob-v1" / "accepted" / "input.yaml"]

OTHERS = """\
apiVersion: v1
kind: Service
metadata:
  name: tensorboard
spec:
  selector: {app: tensorboard}
  ports:
    - port: 6006
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: train-settings
data:
  EPOCHS: "10"
  ENABLED: "true"
"""


def _wrapper(bin_dir: Path) -> None:
    """`kf2jobset` on kustomize's PATH: this checkout's (not an installed one)."""
    bin_dir.mkdir()
    path = bin_dir / "kf2jobset"
    path.write_text(f"#!/bin/sh\nPYTHONPATH='{REPO}' exec '{sys.executable}' -m kf2jobset \"$@\"\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _tree(root: Path, jobs: list[Path], data: dict) -> tuple[Path, Path]:
    base = root / "base"
    base.mkdir()
    names = []
    for i, job in enumerate(jobs):
        shutil.copy(job, base / f"job{i}.yaml")
        names.append(f"job{i}.yaml")
    (base / "others.yaml").write_text(OTHERS)
    (base / "kustomization.yaml").write_text("resources:\n" + "".join(f"- {n}\n" for n in ["others.yaml", *names]))
    overlay = root / "jobsets"
    overlay.mkdir()
    _wrapper(root / "bin")
    # as the README writes it: kustomize execs `kf2jobset krm` found on PATH
    fn = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kf2jobset", "annotations": {
        "config.kubernetes.io/function": "exec:\n  path: kf2jobset\n  args: [krm]\n"}}}
    if data:
        fn["data"] = data
    (overlay / "kf2jobset.yaml").write_text(yaml.safe_dump(fn))
    (overlay / "kustomization.yaml").write_text("resources:\n- ../base\ntransformers:\n- kf2jobset.yaml\n")
    return base, overlay


def _build(kustomize: str, path: Path, *flags: str) -> subprocess.CompletedProcess:  # noqa: F811
    env = {**os.environ, "PATH": f"{path.parent / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run([kustomize, "build", *flags, str(path)], capture_output=True, text=True, env=env, timeout=120)


def _objects(text: str) -> list:
    return sorted((d for d in yaml.safe_load_all(text) if d is not None),
                  key=lambda d: (d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]))


def _convert(text: str, *args: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "kf2jobset", "convert", *args, "-"], input=text, capture_output=True,
                          text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("data, args", [({"acceptMpiSsh": "true"}, ["--accept-mpi-ssh"]),
                                        ({"acceptMpiSsh": "true", "target": "trainjob", "scheduler": "kueue", "trainerRuntime": "per-job"},
                                         ["--accept-mpi-ssh", "--target", "trainjob", "--scheduler", "kueue",
                                          "--trainer-runtime", "per-job"])])
def test_the_function_builds_what_convert_writes_for_the_built_base(kustomize, tmp_path, data, args):  # noqa: F811
    base, overlay = _tree(tmp_path, JOBS, data)
    plain = _build(kustomize, base)
    assert plain.returncode == 0, plain.stderr
    built = _build(kustomize, overlay, "--enable-alpha-plugins", "--enable-exec")
    assert built.returncode == 0, built.stderr
    got, want = _objects(built.stdout), _objects(_convert(plain.stdout, *args))
    assert got == want
    kinds = {d["kind"] for d in got}
    assert not kinds & {"PyTorchJob", "TFJob", "MPIJob"}
    assert ("TrainJob" in kinds) == ("trainjob" in args) and ("JobSet" in kinds) == ("trainjob" not in args)
    # the Service and the ConfigMap came through as the plain build has them
    others = [d for d in _objects(plain.stdout) if d["kind"] in ("Service", "ConfigMap")]
    assert len(others) == 2 and all(d in got for d in others)
    # nothing of the function runtime's bookkeeping leaks into what kustomize writes
    assert "config.kubernetes.io/" not in built.stdout and "config.k8s.io/id" not in built.stdout


def test_an_invalid_job_fails_the_build_with_kf2jobsets_message(kustomize, tmp_path):  # noqa: F811
    base, overlay = _tree(tmp_path, [JOBS[0], FIXTURES / "errors" / "name-not-dns1035" / "input.yaml"], {})
    built = _build(kustomize, overlay, "--enable-alpha-plugins", "--enable-exec")
    assert built.returncode != 0
    assert built.stdout == ""
    assert "metadata.name: name 'bert.finetune' is not a DNS-1035 label" in built.stderr
    assert "PyTorchJob bert.finetune" in built.stderr


def test_a_bad_function_config_fails_the_build_naming_the_key(kustomize, tmp_path):  # noqa: F811
    base, overlay = _tree(tmp_path, JOBS[:1], {"schedular": "kueue"})
    built = _build(kustomize, overlay, "--enable-alpha-plugins", "--enable-exec")
    assert built.returncode != 0 and built.stdout == ""
    assert "data.schedular: unknown option" in built.stderr and "scheduler" in built.stderr
