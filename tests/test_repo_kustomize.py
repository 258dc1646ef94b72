"""kustomize overlays: patches aimed at v1 jobs are rewritten (and verified) or reported, never converted as jobs."""
from __future__ import annotations

import copy
import json
import os

import pytest
from ruamel.yaml import YAML

from kf2jobset import exitcodes
from kf2jobset.options import ConvertOptions
from kf2jobset.files.pipeline import convert_text
from kf2jobset.repo import patches
from kf2jobset.repo.run import CHECK, IN_PLACE

from .jobs import job_text, replica_text
from .repo_harness import PYTORCHJOB, do_run, jobsets, snapshot

safe = YAML(typ="safe", pure=True)


def overlay(tmp_path, kustomization: str, files: dict | None = None, base: str = PYTORCHJOB):
    root = tmp_path / "repo"
    (root / "base").mkdir(parents=True)
    (root / "base" / "job.yaml").write_text(base)
    (root / "base" / "kustomization.yaml").write_text("resources:\n- job.yaml\n")
    (root / "overlay").mkdir()
    (root / "overlay" / "kustomization.yaml").write_text(kustomization)
    for name, text in (files or {}).items():
        (root / "overlay" / name).write_text(text)
    return root


def converted(text: str) -> dict:
    r = convert_text(text, "x.yaml", ConvertOptions())
    assert not r.errors
    return jobsets(r.new_text)[0]


def test_replicas_patch_also_patches_what_derives_from_replicas(tmp_path):
    root = overlay(tmp_path, "resources: [../base]\npatches:\n- path: replicas.yaml\n  target: {kind: PyTorchJob, name: train}\n",
                   {"replicas.yaml": "- op: replace\n  path: /spec/pytorchReplicaSpecs/Worker/replicas\n  value: 4\n"})
    code, out, err = do_run(root, IN_PLACE, paths=["overlay"])
    assert code == 0, err
    ops = safe.load((root / "overlay" / "replicas.yaml").read_text())
    assert {"op": "replace", "path": "/spec/replicatedJobs/1/replicas", "value": 4} in ops
    # independent check: the rewritten patch on the converted base == the converted patched base
    base_js = converted(PYTORCHJOB)
    expected = converted(PYTORCHJOB.replace("replicas: 2", "replicas: 4"))
    assert patches.apply_json_patch(base_js, ops) == expected
    assert "kind: JobSet" in (root / "overlay" / "kustomization.yaml").read_text()


def test_image_patch_is_mapped_mechanically_in_json_notation(tmp_path):
    ops = [{"op": "replace", "path": "/spec/pytorchReplicaSpecs/Master/template/spec/containers/0/image", "value": "img:9"}]
    root = overlay(tmp_path, "resources: [../base]\npatchesJson6902:\n- target:\n    group: kubeflow.org\n    version: v1\n"
                   "    kind: PyTorchJob\n    name: train\n  path: p.json\n", {"p.json": json.dumps(ops, indent=2) + "\n"})
    code, out, err = do_run(root, IN_PLACE, paths=["overlay"])
    assert code == 0, err
    text = (root / "overlay" / "p.json").read_text()
    assert text == json.dumps([{**ops[0], "path": "/spec/replicatedJobs/0/template/spec/template/spec/containers/0/image"}],
                              indent=2) + "\n", "only the path string changed"
    k = (root / "overlay" / "kustomization.yaml").read_text()
    assert "group: jobset.x-k8s.io\n    version: v1alpha2\n    kind: JobSet\n    name: train" in k


def test_inline_one_line_json_patch(tmp_path):
    k = ("resources: [../base]\npatches:\n- target: {kind: PyTorchJob, name: train}\n"
         "  patch: '[{\"op\": \"add\", \"path\": \"/spec/pytorchReplicaSpecs/Worker/template/spec/nodeSelector\", "
         "\"value\": {\"gpu\": \"a100\"}}]'\n")
    root = overlay(tmp_path, k)
    code, out, err = do_run(root, IN_PLACE, paths=["overlay"])
    assert code == 0, err
    doc = safe.load((root / "overlay" / "kustomization.yaml").read_text())
    entry = doc["patches"][0]
    assert entry["target"] == {"kind": "JobSet", "name": "train"}
    assert json.loads(entry["patch"])[0]["path"] == "/spec/replicatedJobs/1/template/spec/template/spec/nodeSelector"


def test_strategic_merge_replicas_becomes_guarded_json6902_operations(tmp_path):
    smp = "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: train\nspec:\n  pytorchReplicaSpecs:\n" \
          "    Worker:\n      replicas: 3\n"
    root = overlay(tmp_path, "resources: [../base]\npatchesStrategicMerge:\n- smp.yaml\n", {"smp.yaml": smp})
    code, out, err = do_run(root, IN_PLACE, paths=["overlay"])
    assert code == 0, err
    ops = safe.load((root / "overlay" / "smp.yaml").read_text())
    assert {"op": "test", "path": "/spec/replicatedJobs/1/name", "value": "worker"} in ops
    assert {"op": "replace", "path": "/spec/replicatedJobs/1/replicas", "value": 3} in ops
    assert patches.apply_json_patch(converted(PYTORCHJOB), ops) == converted(PYTORCHJOB.replace("replicas: 2", "replicas: 3"))
    kustomization = safe.load((root / "overlay" / "kustomization.yaml").read_text())
    assert "patchesStrategicMerge" not in kustomization
    assert kustomization["patches"] == [{"path": "smp.yaml", "target": {"group": "jobset.x-k8s.io", "version": "v1alpha2",
                                                                        "kind": "JobSet", "name": "train"}}]


@pytest.mark.parametrize("kustomization, files, message", [
    pytest.param("resources: [../base]\npatches:\n- path: p.yaml\n  target: {kind: PyTorchJob, name: other}\n",
                 {"p.yaml": "- {op: replace, path: /spec/pytorchReplicaSpecs/Worker/replicas, value: 4}\n"},
                 "is not among the kustomization's resources", id="base-not-found"),
    pytest.param("resources: [../base]\npatches:\n- path: p.yaml\n  target: {kind: PyTorchJob, labelSelector: 'a=b'}\n",
                 {"p.yaml": "- {op: replace, path: /spec/pytorchReplicaSpecs/Worker/replicas, value: 4}\n"},
                 "by label/annotation", id="label-selector"),
    pytest.param("resources: [../base]\npatchesStrategicMerge:\n- p.yaml\n",
                 {"p.yaml": "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: train}\nspec:\n"
                            "  pytorchReplicaSpecs:\n    Worker:\n      $patch: delete\n"},
                 "directive $patch", id="smp-directive"),
    pytest.param("resources: [../base]\npatches:\n- path: p.yaml\n",
                 {"p.yaml": "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: train}\nspec:\n"
                            "  pytorchReplicaSpecs:\n    Worker:\n      template:\n        spec:\n          containers:\n"
                            "          - {name: pytorch, resources: {limits: {memory: 8Gi}}}\n"},
                 "replaces the whole list at spec.pytorchReplicaSpecs.Worker.template.spec.containers", id="smp-drops-the-image"),
    pytest.param("resources: [../base]\nreplacements:\n- source: {kind: ConfigMap, name: c, fieldPath: data.n}\n"
                 "  targets:\n  - select: {kind: PyTorchJob}\n    fieldPaths: [spec.pytorchReplicaSpecs.Worker.replicas]\n",
                 {}, "selects kind PyTorchJob", id="replacements"),
])
def test_unmappable_overlays_are_reported_and_left_untouched(tmp_path, kustomization, files, message):
    root = overlay(tmp_path, kustomization, files)
    before = snapshot(root / "overlay")
    code, out, err = do_run(root, IN_PLACE, paths=["overlay"])
    assert code == exitcodes.UNSUPPORTED
    assert message in err
    assert "overlay/kustomization.yaml:" in err and "left untouched" in err
    assert snapshot(root / "overlay") == before


def test_patch_that_changes_a_companion_is_reported(tmp_path):
    mpi = job_text("MPIJob", "pi", replica_text("Launcher", image="mpi:1", name="launcher", dash=""),
                   replica_text("Worker", "2", image="mpi:1", name="worker", dash=""),
                   api_version="kubeflow.org/v2beta1", spec="slotsPerWorker: 1")
    root = overlay(tmp_path, "resources: [../base]\npatches:\n- path: p.yaml\n  target: {kind: MPIJob, name: pi}\n",
                   {"p.yaml": "- {op: replace, path: /spec/mpiReplicaSpecs/Worker/replicas, value: 4}\n"}, base=mpi)
    code, out, err = do_run(root, IN_PLACE, paths=["overlay"])  # the hostfile ConfigMap lists the workers
    assert code == exitcodes.UNSUPPORTED and "generates next to the JobSet (ConfigMap)" in err
    # with the hostfile generated at start-up nothing next to the JobSet depends on the replica count
    code, out, err = do_run(root, IN_PLACE, paths=["overlay"], options=ConvertOptions(mpi_hostfile="generated"))
    assert code == exitcodes.OK, err
    ops = safe.load((root / "overlay" / "p.yaml").read_text())
    opts = ConvertOptions(mpi_hostfile="generated")
    base = jobsets(convert_text(mpi, "m.yaml", opts).new_text)[0]
    patched = jobsets(convert_text(mpi.replace("replicas: 2", "replicas: 4"), "m.yaml", opts).new_text)[0]
    workers = [i for i, rj in enumerate(base["spec"]["replicatedJobs"]) if rj["name"] == "worker"]
    assert {"op": "replace", "path": f"/spec/replicatedJobs/{workers[0]}/replicas", "value": 4} in ops
    assert patches.apply_json_patch(base, ops) == patched


def test_check_lists_overlays_and_base_already_converted_is_reported(tmp_path):
    root = overlay(tmp_path, "resources: [../base]\npatches:\n- path: p.yaml\n  target: {kind: PyTorchJob, name: train}\n",
                   {"p.yaml": "- {op: replace, path: /spec/pytorchReplicaSpecs/Worker/replicas, value: 4}\n"})
    code, out, err = do_run(root, CHECK)
    assert code == exitcodes.FINDINGS
    assert "overlay/p.yaml: kustomize patch aims at a v1 job" in out
    # the base alone was converted earlier (by hand, or by an older kf2jobset run on that file only)
    (root / "base" / "job.yaml").write_text(convert_text(PYTORCHJOB, "job.yaml", ConvertOptions()).new_text)
    code, out, err = do_run(root, IN_PLACE, paths=["overlay"])
    assert code == exitcodes.UNSUPPORTED and "already holds as a JobSet" in err


def test_a_unit_that_fails_leaves_its_base_untouched_too(tmp_path):
    root = overlay(tmp_path, "resources: [../base]\npatches:\n- path: p.yaml\n  target: {kind: PyTorchJob, labelSelector: 'a=b'}\n",
                   {"p.yaml": "- {op: replace, path: /spec/pytorchReplicaSpecs/Worker/replicas, value: 4}\n"})
    before = snapshot(root)
    code, out, err = do_run(root, IN_PLACE, paths=["base/job.yaml"])
    assert code == exitcodes.UNSUPPORTED
    assert "by label/annotation" in err and "base/job.yaml: not converted: it belongs to a kustomize unit" in err
    assert snapshot(root) == before


# ---- patches as data ------------------------------------------------------------------------------

def test_json_patch_operations():
    doc = {"a": {"b": [1, 2]}, "c": 1}
    out = patches.apply_json_patch(doc, [
        {"op": "add", "path": "/a/b/-", "value": 3},
        {"op": "add", "path": "/a/b/0", "value": 0},
        {"op": "replace", "path": "/c", "value": 2},
        {"op": "copy", "from": "/c", "path": "/d"},
        {"op": "move", "from": "/d", "path": "/e~1f"},
        {"op": "remove", "path": "/a/b/1"},
        {"op": "test", "path": "/c", "value": 2},
    ])
    assert out == {"a": {"b": [0, 2, 3]}, "c": 2, "e/f": 2}
    assert doc == {"a": {"b": [1, 2]}, "c": 1}, "input untouched"
    for bad in ({"op": "replace", "path": "/x", "value": 1}, {"op": "test", "path": "/c", "value": 9},
                {"op": "remove", "path": "/a/b/5"}, {"op": "frob", "path": "/c"}):
        with pytest.raises(patches.PatchError):
            patches.apply_json_patch(doc, [bad])


def test_strategic_merge_semantics_on_custom_resources():
    # kustomize has no schema for CRDs: maps merge, null deletes, every list is replaced whole
    dest = {"m": {"x": 1, "y": 2}, "named": [{"name": "a", "v": 1}, {"name": "b", "v": 2}], "plain": [1, 2]}
    out = patches.apply_smp(dest, {"m": {"y": None, "z": 3}, "named": [{"name": "b", "v": 9}, {"name": "c"}], "plain": [3]})
    assert out == {"m": {"x": 1, "z": 3}, "named": [{"name": "b", "v": 9}, {"name": "c"}], "plain": [3]}


@pytest.mark.parametrize("b_change", [
    lambda b: b["spec"]["replicatedJobs"][1].__setitem__("replicas", 7),
    lambda b: b["metadata"].setdefault("labels", {}).__setitem__("x", "y"),
    lambda b: b["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0].__setitem__("image", "n"),
])
def test_computed_patches_reproduce_the_target(b_change):
    a = converted(PYTORCHJOB)
    b = copy.deepcopy(a)
    b_change(b)
    ops = patches.json_diff(a, b)
    assert patches.apply_json_patch(a, patches.guard_ops(a, ops) + ops) == b


@pytest.mark.parametrize("path, expected", [
    ("/spec/pytorchReplicaSpecs/Worker/replicas", "/spec/replicatedJobs/1/replicas"),
    ("/spec/pytorchReplicaSpecs/worker/replicas", "/spec/replicatedJobs/1/replicas"),
    ("/spec/pytorchReplicaSpecs/Master/template/spec/nodeSelector", "/spec/replicatedJobs/0/template/spec/template/spec/nodeSelector"),
    ("/spec/pytorchReplicaSpecs/Master/template/spec/containers/0/image",
     "/spec/replicatedJobs/0/template/spec/template/spec/containers/0/image"),
    ("/spec/runPolicy/ttlSecondsAfterFinished", "/spec/ttlSecondsAfterFinished"),
    ("/metadata/labels/team", "/metadata/labels/team"),
    ("/spec/pytorchReplicaSpecs/Master/template/spec/containers/0/env", None),  # kf2jobset adds env there
    ("/spec/pytorchReplicaSpecs/Master/template/spec/containers", None),
    ("/spec/pytorchReplicaSpecs/Master/restartPolicy", None),
    ("/spec/pytorchReplicaSpecs/Worker", None),
    ("/spec/runPolicy/cleanPodPolicy", None),
    ("/spec/elasticPolicy/maxReplicas", None),
])
def test_map_job_path(path, expected):
    index = {"Master": 0, "Worker": 1}
    parts = patches.map_job_path(patches.parse_pointer(path), "pytorchReplicaSpecs",
                           lambda k: next((v for t, v in index.items() if t.lower() == k.lower()), None))
    assert (None if parts is None else patches.format_pointer(parts)) == expected


def _replicas_overlay(tmp_path):
    return overlay(tmp_path, "resources: [../base]\npatches:\n- path: replicas.yaml\n  target: {kind: PyTorchJob, name: train}\n",
                   {"replicas.yaml": "- op: replace\n  path: /spec/pytorchReplicaSpecs/Worker/replicas\n  value: 4\n"})


def test_out_dir_blocked_by_a_file_fails_cleanly_for_jobs_and_kustomize_units(tmp_path):
    from click.testing import CliRunner

    from kf2jobset.cli.main import main

    root = _replicas_overlay(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    (out / "overlay").write_text("a file where the overlay's folder would go\n")
    (out / "base").write_text("and one where the base's would go\n")
    cwd = os.getcwd()
    os.chdir(root)
    try:
        res = CliRunner().invoke(main, ["convert", ".", "--out-dir", str(out)])
    finally:
        os.chdir(cwd)
    assert res.exit_code == exitcodes.INPUT, res.output
    assert "Traceback" not in res.output and res.exception is None or isinstance(res.exception, SystemExit)
    cannot = [line for line in res.stderr.splitlines() if "cannot write" in line]
    assert any("overlay/kustomization.yaml" in line for line in cannot), res.stderr
    assert any("base/job.yaml" in line for line in cannot), res.stderr


@pytest.mark.parametrize("errno_name", ["EACCES", "EROFS", "ENOSPC"])
def test_any_write_error_is_one_line_and_the_input_exit_code(tmp_path, monkeypatch, errno_name):
    import errno as errno_mod

    from kf2jobset.repo import fsio

    def refuse(path, data, mode_from=None):
        raise OSError(getattr(errno_mod, errno_name), os.strerror(getattr(errno_mod, errno_name)), str(path))

    monkeypatch.setattr(fsio, "write_atomic", refuse)
    root = _replicas_overlay(tmp_path)
    before = snapshot(root)
    code, out, err = do_run(root, IN_PLACE)
    assert code == exitcodes.INPUT
    assert snapshot(root) == before
    lines = [line for line in err.splitlines() if "cannot write" in line]
    assert len(lines) == 2 and all(os.strerror(getattr(errno_mod, errno_name)) in line for line in lines), err
    assert "base/job.yaml: not converted: it belongs to a kustomize unit" in err  # all of the unit or none


def test_one_failing_overlay_keeps_every_overlay_of_its_base_untouched(tmp_path):
    # all or none across the family: a base with a good and a bad overlay converts nothing, else the
    # good overlay would target a JobSet while its base stays a PyTorchJob (kustomize then drops the
    # patch without an error)
    root = overlay(tmp_path, "resources: [../base]\npatches:\n- path: p.yaml\n  target: {kind: PyTorchJob, name: train}\n",
                   {"p.yaml": "- {op: replace, path: /spec/pytorchReplicaSpecs/Worker/replicas, value: 4}\n"})
    (root / "bad").mkdir()
    (root / "bad" / "kustomization.yaml").write_text(
        "resources: [../base]\npatches:\n- target: {kind: PyTorchJob, labelSelector: 'a=b'}\n  patch: |-\n"
        "    - {op: replace, path: /spec/pytorchReplicaSpecs/Worker/replicas, value: 5}\n")
    before = snapshot(root)
    for paths in (["."], ["overlay/p.yaml"], ["base/job.yaml"]):
        code, out, err = do_run(root, IN_PLACE, paths=paths)
        assert code == exitcodes.UNSUPPORTED, (paths, err)
        assert snapshot(root) == before, paths
        assert "by label/annotation" in err
        assert "overlay/kustomization.yaml: not rewritten: it builds on the same base as bad/kustomization.yaml" in err


def test_family_search_outside_a_repo_stays_near_the_file(tmp_path, monkeypatch):
    """Outside git and the working directory, the search for a file's kustomize family starts at
    the parent of the nearest kustomization directory, or at the file's own directory when there is
    none: never at a bare parent (`convert /tmp/x/job.yaml --check` used to walk all of /tmp)."""
    from kf2jobset.repo.kustomize_tree import _repo_root

    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    loose = tmp_path / "downloads" / "x"
    loose.mkdir(parents=True)
    assert _repo_root(loose.resolve()) == loose.resolve()
    app = tmp_path / "app"
    (app / "base" / "jobs").mkdir(parents=True)
    (app / "base" / "kustomization.yaml").write_text("resources:\n- jobs/job.yaml\n")
    assert _repo_root((app / "base").resolve()) == app.resolve()  # the base's sibling overlays
    assert _repo_root((app / "base" / "jobs").resolve()) == app.resolve()
    (tmp_path / ".git").mkdir()
    assert _repo_root(loose.resolve()) == tmp_path.resolve()  # inside a repository: its root
