"""kf2jobset as Helm's post-renderer, run by REAL Helm (v3.22.0 and v4.3.1, built from tools/helm3 and
tools/helm4 by tools/install-ground-truth.sh; not built by the tests: a skip names the command, and
under CI=true a missing binary fails).

Helm 3 execs `kf2jobset convert -` itself (--post-renderer PATH --post-renderer-args ...); Helm 4 runs
post-renderer plugins: the repo's helm-plugin/. The chart (fixtures/helm/train-chart) builds its
PyTorchJob with if/range/include, so only rendering shows it. The promise: what Helm writes equals
`helm template | kf2jobset convert -` as data, the Service passes through, an invalid job fails Helm.
"""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from .conftest import REPO
from .ground_truth_tools import helm_binary, helm_env

CHART = REPO / "fixtures" / "helm" / "train-chart"
PLUGIN = REPO / "helm-plugin"


@pytest.fixture
def env(tmp_path) -> dict:
    return helm_env(tmp_path)


def _run(cmd: list, env: dict, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env, timeout=120)


def _objects(text: str) -> list:
    return sorted((d for d in yaml.safe_load_all(text) if d is not None), key=lambda d: (d["kind"], d["metadata"]["name"]))


def _expected(helm: str, env: dict, *convert_args: str, sets: tuple = ()) -> tuple[str, str]:
    """(plain `helm template`, its conversion by `kf2jobset convert -`)"""
    plain = _run([helm, "template", "demo", str(CHART), *sets], env)
    assert plain.returncode == 0, plain.stderr
    conv = _run(["kf2jobset", "convert", *convert_args, "-"], env, plain.stdout)
    assert conv.returncode == 0, conv.stderr
    return plain.stdout, conv.stdout


def _post_renderer_args(helm_major: int, env: dict, extra: tuple) -> list:
    if helm_major == 3:
        args = ["--post-renderer", shutil.which("kf2jobset", path=env["PATH"])]
        for a in ("convert", "-", *extra):
            args += ["--post-renderer-args", a]
        return args
    shutil.copytree(PLUGIN, Path(env["HELM_PLUGINS"]) / "kf2jobset")
    args = ["--post-renderer", "kf2jobset"]
    for a in extra:
        args += ["--post-renderer-args", a]
    return args


def _check_renders(helm: str, major: int, env: dict, extra: tuple) -> None:
    plain, want = _expected(helm, env, *extra)
    got = _run([helm, "template", "demo", str(CHART), *_post_renderer_args(major, env, extra)], env)
    assert got.returncode == 0, got.stderr
    objects = _objects(got.stdout)
    assert objects == _objects(want)
    if major == 3:  # Helm 3 prints what the post-renderer wrote: the Service byte for byte, comments and all
        assert got.stdout == want
    kinds = [d["kind"] for d in objects]
    assert "PyTorchJob" not in kinds and ("TrainJob" in kinds if "trainjob" in extra else "JobSet" in kinds)
    # the chart's range gave the Worker role 3 replicas and its include the containers' env
    if "trainjob" in extra:  # one pod template: Trainer's torch-distributed runtime, 1 + 3 nodes
        (tj,) = [d for d in objects if d["kind"] == "TrainJob"]
        assert tj["spec"]["runtimeRef"]["name"] == "torch-distributed" and tj["spec"]["trainer"]["numNodes"] == 4
    else:
        js = next(d for d in objects if d["kind"] == "JobSet")
        assert {r["name"]: r["replicas"] for r in js["spec"]["replicatedJobs"]} == {"master": 1, "worker": 3}
    service = next(d for d in _objects(plain) if d["kind"] == "Service")
    assert service in objects  # passed through as rendered
    # Helm 4 tags each object with its template file; the job's outputs go back to the job's file
    assert "postrenderer.helm.sh" not in got.stdout and "generated-by-postrender" not in got.stdout


def _check_fails(helm: str, major: int, env: dict) -> subprocess.CompletedProcess:
    got = _run([helm, "template", "demo", str(CHART), "--set", "masterReplicas=2", *_post_renderer_args(major, env, ())], env)
    assert got.returncode != 0
    assert "kind: " not in got.stdout  # nothing rendered is written
    return got


@pytest.mark.parametrize("name", ["helm3", "helm4"])
@pytest.mark.parametrize("extra", [(), ("--target", "trainjob")])
def test_the_post_renderer_writes_what_convert_writes_for_the_rendered_chart(name, env, extra):
    _check_renders(helm_binary(name), int(name[-1]), env, extra)


@pytest.mark.parametrize("name", ["helm3", "helm4"])
def test_an_invalid_job_fails_helm(name, env):
    got = _check_fails(helm_binary(name), int(name[-1]), env)
    assert "spec.pytorchReplicaSpecs.Master.replicas: Master replicas must be exactly 1, got 2" in got.stderr


def test_the_plugin_version_is_kf2jobsets():
    from kf2jobset import __version__

    assert yaml.safe_load((PLUGIN / "plugin.yaml").read_text())["version"] == __version__
