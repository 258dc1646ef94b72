"""`kf2jobset krm` without kustomize: what the function does with the runtime's annotations, the order of
items, the function config and bad input (real kustomize runs it in tests/test_krm_kustomize.py)."""
from __future__ import annotations

import yaml
from click.testing import CliRunner

from kf2jobset.cli.main import main

from .conftest import REPO

JOB = yaml.safe_load((REPO / "fixtures" / "mpijob-v1" / "accepted" / "input.yaml").read_text())


def _krm(rl: dict | str):
    text = rl if isinstance(rl, str) else yaml.safe_dump(rl)
    return CliRunner().invoke(main, ["krm"], input=text, catch_exceptions=False)


def _convert(*args: str) -> list:
    proc = CliRunner().invoke(main, ["convert", *args, "-"], input=yaml.safe_dump(JOB), catch_exceptions=False)
    assert proc.exit_code == 0, proc.stderr
    return [d for d in yaml.safe_load_all(proc.stdout) if d]


def _annotate(obj: dict, ann: dict) -> dict:
    meta = dict(obj["metadata"])
    meta["annotations"] = {**(meta.get("annotations") or {}), **ann}
    return {**obj, "metadata": meta}


SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "a", "annotations": {
    "config.kubernetes.io/index": "0", "internal.config.kubernetes.io/index": "0", "config.kubernetes.io/path": "svc.yaml",
    "internal.config.kubernetes.io/path": "svc.yaml", "internal.config.kubernetes.io/id": "1", "config.k8s.io/id": "1"}},
    "spec": {"ports": [{"port": 80}]}}
BOOKKEEPING = {"config.kubernetes.io/index": "2", "internal.config.kubernetes.io/index": "2",
               "config.kubernetes.io/path": "jobs/mpi.yaml", "internal.config.kubernetes.io/path": "jobs/mpi.yaml",
               "internal.config.kubernetes.io/id": "2", "config.k8s.io/id": "2", "kustomize.config.k8s.io/id": "kind: MPIJob\n"}
CONFIGMAP = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "z"}, "data": {"on": "true"}}


def _list(data: dict | None = None) -> dict:
    rl = {"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList",
          "items": [SERVICE, _annotate(JOB, BOOKKEEPING), CONFIGMAP]}
    if data is not None:
        rl["functionConfig"] = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "f"}, "data": data}
    return rl


def test_a_job_becomes_its_conversion_in_place_with_the_jobs_path_and_index():
    proc = _krm(_list({"acceptMpiSsh": "true"}))
    assert proc.exit_code == 0, proc.stderr
    out = yaml.safe_load(proc.stdout)
    assert (out["apiVersion"], out["kind"]) == ("config.kubernetes.io/v1", "ResourceList") and "results" not in out
    items = out["items"]
    converted = _convert("--accept-mpi-ssh")
    assert len(converted) >= 2  # the JobSet and its companions (hostfile ConfigMap, ...)
    # in the job's place, between the Service and the ConfigMap, which come back as they went in
    assert items[0] == SERVICE and items[-1] == CONFIGMAP
    carried = {k: v for k, v in BOOKKEEPING.items() if "id" not in k.rsplit("/", 1)[1]}
    assert items[1:-1] == [_annotate(o, carried) for o in converted]


def test_function_config_data_picks_the_options():
    proc = _krm(_list({"acceptMpiSsh": "true", "target": "trainjob", "trainerRuntime": "per-job"}))
    assert proc.exit_code == 0, proc.stderr
    kinds = [i["kind"] for i in yaml.safe_load(proc.stdout)["items"]]
    assert "TrainJob" in kinds and "JobSet" not in kinds


def test_without_the_decision_the_list_carries_the_error_and_no_items():
    proc = _krm(_list())
    assert proc.exit_code == 4
    out = yaml.safe_load(proc.stdout)
    assert out["items"] == []
    [result] = out["results"]
    assert result["severity"] == "error" and "--accept-mpi-ssh" in result["message"]
    assert result["resourceRef"]["kind"] == "MPIJob" and result["file"] == {"path": "jobs/mpi.yaml", "index": 2}
    assert "jobs/mpi.yaml items[1] (MPIJob" in proc.stderr


def test_bad_function_config_values_name_the_key():
    for data, words in [({"scheduler": "slurm"}, ["data.scheduler", "'slurm' is not one of"]),
                        ({"acceptMpiSsh": "yes"}, ["data.acceptMpiSsh", 'expected "true" or "false"']),
                        ({"name": "x"}, ["data.name: unknown option"])]:
        proc = _krm(_list(data))
        assert proc.exit_code == 2, (data, proc.stderr)
        assert yaml.safe_load(proc.stdout)["items"] == []
        assert all(w in proc.stderr for w in words), proc.stderr


def test_input_that_is_not_a_resource_list_is_refused():
    proc = _krm(yaml.safe_dump(JOB))
    assert proc.exit_code == 3 and "ResourceList" in proc.stderr
    assert yaml.safe_load(proc.stdout)["items"] == []
