"""Rewritten kustomize overlays against REAL kustomize (v5.7.1, built from tools/kustomize).

For every overlay: `kustomize build` of the converted tree must equal the conversion of `kustomize
build` of the original tree — the rewrite is judged by what kustomize really builds, not by our own
model of patching. (Real kustomize has no schema for CRDs: a strategic merge patch replaces whole
lists, which is why kf2jobset writes JSON6902 operations for JobSets.)
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from kf2jobset.repo import patches

from .ground_truth_tools import KUSTOMIZE_VERSION
from .jobs import pytorchjob_text, replica_text


_IMAGE, _COMMAND = "registry.example.com/train:1", 'command: ["torchrun", "train.py"]'
BASE = pytorchjob_text(
    "train",
    replica_text("Master", image=_IMAGE, replica="restartPolicy: OnFailure",
                 container=_COMMAND + '\nenv:\n  - name: EPOCHS\n    value: "10"'),
    replica_text("Worker", "2", image=_IMAGE, replica="restartPolicy: OnFailure", container=_COMMAND),
    metadata="namespace: ml")



def _patch(role: str, body: str, namespace: str | None = "ml") -> str:
    """A strategic merge patch of the base job: ``body`` is the lines under its replica spec ``role``."""
    meta = "  name: train\n" + (f"  namespace: {namespace}\n" if namespace else "")
    return (f"apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n{meta}spec:\n  pytorchReplicaSpecs:\n    {role}:\n"
            + textwrap.indent(body, " " * 6))


SMP_REPLICAS = _patch("Worker", "replicas: 4\n")

# A list in a CRD patch replaces the whole list under real kustomize: this drops `command` and `env`.
SMP_CONTAINERS = _patch("Worker", "template:\n  spec:\n    containers:\n      - name: pytorch\n"
                                  "        image: registry.example.com/train:2\n")

OVERLAYS = {
    "smp-path-no-target": ("resources:\n- ../base\npatches:\n- path: smp.yaml\n", {"smp.yaml": SMP_REPLICAS}),
    "smp-legacy-field-and-images": (
        "resources:\n- ../base\npatchesStrategicMerge:\n- smp.yaml\nimages:\n- name: registry.example.com/train\n  newTag: \"3\"\n",
        {"smp.yaml": SMP_REPLICAS}),
    "smp-legacy-field-with-patches": (
        "resources:\n- ../base\npatchesStrategicMerge:\n- smp.yaml\npatches:\n- path: ttl.yaml\n  target:\n"
        "    kind: PyTorchJob\n    name: train\n",
        {"smp.yaml": SMP_CONTAINERS,
         "ttl.yaml": "- op: add\n  path: /spec/runPolicy\n  value: {ttlSecondsAfterFinished: 600}\n"}),
    "smp-containers-list-replaced": ("resources:\n- ../base\npatches:\n- path: smp.yaml\n", {"smp.yaml": SMP_CONTAINERS}),
    "smp-inline-with-target": (
        "resources:\n- ../base\npatches:\n- target: {kind: PyTorchJob, name: train}\n  patch: |-\n"
        + textwrap.indent(_patch("Master", "template:\n  spec:\n    nodeSelector:\n      pool: big\n", namespace=None), "    "),
        {}),
    "smp-flow-entry": ("resources: [../base]\npatches:\n- {path: smp.yaml}\n", {"smp.yaml": SMP_REPLICAS}),
    "json6902-replicas": (
        "resources:\n- ../base\npatches:\n- path: replicas.yaml\n  target:\n    group: kubeflow.org\n    version: v1\n"
        "    kind: PyTorchJob\n    name: train\n",
        {"replicas.yaml": "- op: replace\n  path: /spec/pytorchReplicaSpecs/Worker/replicas\n  value: 3\n"}),
    "json6902-legacy-json-file": (
        "resources:\n- ../base\npatchesJson6902:\n- target:\n    group: kubeflow.org\n    version: v1\n    kind: PyTorchJob\n"
        "    name: train\n  path: image.json\n",
        {"image.json": '[{"op": "replace", "path": "/spec/pytorchReplicaSpecs/Master/template/spec/containers/0/image", '
                       '"value": "registry.example.com/train:9"}]\n'}),
    # an earlier patch's image is lost when a later strategic merge patch replaces the containers list
    "json6902-then-smp-list": (
        "resources:\n- ../base\npatches:\n- target: {kind: PyTorchJob, name: train}\n  patch: |-\n"
        "    - {op: replace, path: /spec/pytorchReplicaSpecs/Worker/template/spec/containers/0/image, value: img:7}\n"
        "- path: smp.yaml\n", {"smp.yaml": SMP_CONTAINERS}),
    "json6902-inline": (
        "resources:\n- ../base\npatches:\n- target: {kind: PyTorchJob, name: train}\n  patch: |-\n"
        "    - op: add\n      path: /spec/pytorchReplicaSpecs/Worker/template/spec/tolerations\n"
        "      value: [{key: gpu, operator: Exists}]\n", {}),
}


def _tree(root: Path, kustomization: str, files: dict) -> Path:
    (root / "base").mkdir(parents=True)
    (root / "base" / "job.yaml").write_text(BASE)
    (root / "base" / "kustomization.yaml").write_text("resources:\n- job.yaml\n")
    (root / "overlay").mkdir()
    (root / "overlay" / "kustomization.yaml").write_text(kustomization)
    for name, text in files.items():
        (root / "overlay" / name).write_text(text)
    return root


def _build(kustomize: str, directory: Path) -> subprocess.CompletedProcess:
    return subprocess.run([kustomize, "build", str(directory)], capture_output=True, text=True, timeout=60)


def _objects(text: str) -> list:
    return [d for d in yaml.safe_load_all(text) if d is not None]


def _convert_stream(text: str) -> str:
    proc = subprocess.run([sys.executable, "-m", "kf2jobset", "convert", "-"], input=text, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _convert_in_place(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kf2jobset", "convert", str(root), "--in-place"], capture_output=True,
                          text=True, timeout=120, cwd=root)


@pytest.mark.parametrize("case", sorted(OVERLAYS))
def test_converted_overlay_builds_to_the_conversion_of_the_original_build(case, kustomize, tmp_path):
    kustomization, files = OVERLAYS[case]
    original = _tree(tmp_path / "original", kustomization, files)
    built = _build(kustomize, original / "overlay")
    assert built.returncode == 0, built.stderr
    expected = _objects(_convert_stream(built.stdout))

    converted = _tree(tmp_path / "converted", kustomization, files)
    run = _convert_in_place(converted)
    assert run.returncode == 0, run.stderr
    assert "kind: PyTorchJob" not in (converted / "overlay" / "kustomization.yaml").read_text()
    rebuilt = _build(kustomize, converted / "overlay")
    assert rebuilt.returncode == 0, f"{rebuilt.stderr}\n--- kustomization\n{(converted / 'overlay' / 'kustomization.yaml').read_text()}"
    assert _objects(rebuilt.stdout) == expected


def test_a_strategic_merge_patch_on_a_crd_replaces_lists_in_real_kustomize_as_in_our_model(kustomize, tmp_path):
    root = _tree(tmp_path, "resources:\n- ../base\npatches:\n- path: smp.yaml\n", {"smp.yaml": SMP_CONTAINERS})
    built = _build(kustomize, root / "overlay")
    assert built.returncode == 0, built.stderr
    job = _objects(built.stdout)[0]
    assert job["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"] == [
        {"name": "pytorch", "image": "registry.example.com/train:2"}]  # command gone: the list was replaced
    assert patches.apply_smp(yaml.safe_load(BASE), yaml.safe_load(SMP_CONTAINERS)) == job


def test_the_guards_stop_the_build_when_the_base_order_changes(kustomize, tmp_path):
    root = _tree(tmp_path, *OVERLAYS["smp-path-no-target"])
    assert _convert_in_place(root).returncode == 0
    base = yaml.safe_load((root / "base" / "job.yaml").read_text())
    base["spec"]["replicatedJobs"].reverse()
    (root / "base" / "job.yaml").write_text(yaml.safe_dump(base))
    rebuilt = _build(kustomize, root / "overlay")
    assert rebuilt.returncode != 0
    assert "test" in rebuilt.stderr.lower(), rebuilt.stderr


def test_kustomize_is_the_pinned_version(kustomize):
    out = subprocess.run([kustomize, "version"], capture_output=True, text=True, timeout=30).stdout
    assert KUSTOMIZE_VERSION in out
    assert shutil.which(kustomize) or Path(kustomize).is_file()


def test_a_changed_base_count_builds_and_the_world_size_follows(kustomize, tmp_path):
    # WORLD_SIZE / PET_NNODES read the pods' global-replicas label (SZ001): the overlay patches only the
    # count, so a later change of the base's counts builds, and no literal size goes stale
    root = _tree(tmp_path, *OVERLAYS["smp-path-no-target"])
    assert _convert_in_place(root).returncode == 0
    assert "WORLD_SIZE" not in (root / "overlay" / "smp.yaml").read_text()
    assert _build(kustomize, root / "overlay").returncode == 0
    base = yaml.safe_load((root / "base" / "job.yaml").read_text())
    base["spec"]["replicatedJobs"][1]["replicas"] = 2  # someone changes the base's workers later
    (root / "base" / "job.yaml").write_text(yaml.safe_dump(base))
    rebuilt = _build(kustomize, root / "overlay")
    assert rebuilt.returncode == 0, rebuilt.stderr
    (built,) = [d for d in yaml.safe_load_all(rebuilt.stdout) if d["kind"] == "JobSet"]
    assert [r["replicas"] for r in built["spec"]["replicatedJobs"]] == [1, 4]  # the overlay's count
    for rjob in built["spec"]["replicatedJobs"]:
        env = {e["name"]: e for e in rjob["template"]["spec"]["template"]["spec"]["containers"][0]["env"]}
        assert env["WORLD_SIZE"]["valueFrom"]["fieldRef"]["fieldPath"] == (
            "metadata.labels['jobset.sigs.k8s.io/global-replicas']")
