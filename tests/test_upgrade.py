"""Older apiVersions read as the v1 job they meant (kf2jobset/upgrade/__init__.py): one test per move, the
conflicts the old operators resolved in their own way, and the error locations in the document as
written. The per-version facts are in upgrade.py's docstring (the operators' types at their tags)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kf2jobset import exitcodes
from kf2jobset.cli.main import main
from kf2jobset.core.convert import convert_job
from kf2jobset.errors import InvalidJobError, UnsupportedError
from kf2jobset.mappings import all_mappings, convertible_mapping, readable_versions
from kf2jobset.options import ConvertOptions
from kf2jobset.upgrade import READERS, upgrade

from .jobs import pytorchjob_text, replica_text


def _pod(name="tensorflow", **extra):
    return {"spec": {"containers": [{"name": name, "image": "img:1", **extra}]}}


def _up(doc):
    return upgrade(doc, convertible_mapping(doc["apiVersion"], doc["kind"]))


def _codes(up):
    return [n.code for n in up.notes]


# Every (kind, older apiVersion) the mappings read, with the reader each names.
UPGRADED = {(m.kind, u.api_version): u.reader for m in all_mappings() for u in m.upgrades}


def test_the_versions_read_are_the_mapping_data():
    assert set(UPGRADED.values()) <= set(READERS), sorted(set(UPGRADED.values()) - set(READERS))
    for m in all_mappings():
        assert not set(m.upgrade_from) & set(m.api_versions), m.kind


# Every (kind, apiVersion) an operator release served, with the releases and the API package at their tags
# that show it (read with `git show TAG:DIR`; the first release named has the package, the last is the last
# one that still had it). The table of upgrades plus the v1 mappings must read exactly these.
SERVED = {
    ("TFJob", "kubeflow.org/v1alpha1"): "tf-operator v0.1.0-v0.3.0 pkg/apis/tensorflow/v1alpha1",
    ("TFJob", "kubeflow.org/v1alpha2"): "tf-operator v0.3.0 pkg/apis/tensorflow/v1alpha2",
    ("TFJob", "kubeflow.org/v1beta1"): "tf-operator v0.4.0-v0.5.1 pkg/apis/tensorflow/v1beta1",
    ("TFJob", "kubeflow.org/v1beta2"): "tf-operator v0.4.0-v0.5.3 pkg/apis/tensorflow/v1beta2",
    ("TFJob", "kubeflow.org/v1"): "tf-operator v0.5.1-v1.2.1 pkg/apis/tensorflow/v1; training-operator v1.3.0-v1.9 "
                                  "(v1.5+: pkg/apis/kubeflow.org/v1/tensorflow_types.go)",
    ("PyTorchJob", "kubeflow.org/v1alpha1"): "pytorch-operator v0.3.0 pkg/apis/pytorch/v1alpha1",
    ("PyTorchJob", "kubeflow.org/v1alpha2"): "pytorch-operator v0.3.0-v0.4.0 pkg/apis/pytorch/v1alpha2",
    ("PyTorchJob", "kubeflow.org/v1beta1"): "pytorch-operator v0.4.0-v0.5.0 pkg/apis/pytorch/v1beta1",
    ("PyTorchJob", "kubeflow.org/v1beta2"): "pytorch-operator v0.5.0-v0.6.0 pkg/apis/pytorch/v1beta2",
    ("PyTorchJob", "kubeflow.org/v1"): "pytorch-operator v0.5.1-v0.7.0 pkg/apis/pytorch/v1; training-operator v1.3.0-v1.9",
    ("MPIJob", "kubeflow.org/v1alpha1"): "mpi-operator 0.1.0-v0.3.0 pkg/apis/kubeflow/v1alpha1",
    ("MPIJob", "kubeflow.org/v1alpha2"): "mpi-operator v0.2.0-v0.3.0 pkg/apis/kubeflow/v1alpha2",
    ("MPIJob", "kubeflow.org/v1"): "mpi-operator v0.2.3-v0.3.0 pkg/apis/kubeflow/v1; training-operator v1.4.0-v1.9 "
                                   "(v1.4.0: pkg/apis/mpi/v1)",
    ("MPIJob", "kubeflow.org/v2beta1"): "mpi-operator v0.4.0-v0.8 pkg/apis/kubeflow/v2beta1",
    ("XGBoostJob", "xgboostjob.kubeflow.org/v1alpha1"): "xgboost-operator v0.1.0 pkg/apis/xgboostjob/v1alpha1",
    ("XGBoostJob", "xgboostjob.kubeflow.org/v1"): "xgboost-operator v0.2.0 pkg/apis/xgboostjob/v1",
    ("XGBoostJob", "kubeflow.org/v1"): "training-operator v1.3.0-v1.9 (v1.3.0: pkg/apis/xgboost/v1)",
    ("MXJob", "kubeflow.org/v1beta1"): "mxnet-operator v0.1.0-v1.1.0 pkg/apis/mxnet/v1beta1 (manifests/crd-v1beta1.yaml, "
                                       "cmd/mxnet-operator.v1beta1)",
    ("MXJob", "kubeflow.org/v1"): "mxnet-operator v0.7.0-v1.1.0 pkg/apis/mxnet/v1; training-operator v1.3.0-v1.8.1 "
                                  "(gone in v1.9.0)",
    ("PaddleJob", "kubeflow.org/v1"): "training-operator v1.6.0-v1.9 pkg/apis/kubeflow.org/v1/paddlepaddle_types.go",
    ("JAXJob", "kubeflow.org/v1"): "training-operator v1.9.0 pkg/apis/kubeflow.org/v1/jax_types.go",
}


def test_every_kind_and_version_an_operator_served_is_read():
    read = {(m.kind, v) for m in all_mappings() for v in (*m.api_versions, *m.upgrade_from)}
    assert read == set(SERVED), (sorted(set(SERVED) - read), sorted(read - set(SERVED)))
    upgraded = {k for k in SERVED if k[1] not in ("kubeflow.org/v1", "kubeflow.org/v2beta1")}
    assert upgraded == set(UPGRADED)


def test_the_plugin_does_not_list_older_versions():
    from kf2jobset.live.kinds import KINDS

    for k in KINDS:
        assert not {v for v in k.versions if "alpha" in v or v == "v1beta1"} - {"v2beta1"}, k


# ------------------------------------------------------------------------- run policy moves

BETA = {"kubeflow.org/v1alpha2": ("cleanPodPolicy", "ttlSecondsAfterFinished"),
        "kubeflow.org/v1beta1": ("cleanPodPolicy", "ttlSecondsAfterFinished"),
        "kubeflow.org/v1beta2": ("activeDeadlineSeconds", "backoffLimit", "cleanPodPolicy", "ttlSecondsAfterFinished")}
VALUES = {"cleanPodPolicy": st.sampled_from(["All", "Running", "None"]), "ttlSecondsAfterFinished": st.integers(0, 10**6),
          "activeDeadlineSeconds": st.integers(1, 10**6), "backoffLimit": st.integers(0, 100)}


def _map_job(kind, api, top):
    field, container = {"TFJob": ("tfReplicaSpecs", "tensorflow"), "PyTorchJob": ("pytorchReplicaSpecs", "pytorch")}[kind]
    rtype = "Worker" if kind == "TFJob" else "Master"
    return {"apiVersion": api, "kind": kind, "metadata": {"name": "j"},
            "spec": {**top, field: {rtype: {"replicas": 1, "template": _pod(container)}}}}


@settings(max_examples=60, deadline=None)
@given(data=st.data(), kind=st.sampled_from(["TFJob", "PyTorchJob"]), api=st.sampled_from(sorted(BETA)))
def test_top_level_run_fields_move_into_run_policy(data, kind, api):
    keys = data.draw(st.lists(st.sampled_from(BETA[api]), unique=True))
    top = {k: data.draw(VALUES[k]) for k in keys}
    up = _up(_map_job(kind, api, top))
    spec = up.doc["spec"]
    assert up.doc["apiVersion"] == "kubeflow.org/v1"
    assert not set(spec) & set(BETA["kubeflow.org/v1beta2"]), "top-level run fields stay behind"
    expected = dict(top)
    if kind == "TFJob":  # the TFJob operators of these versions defaulted cleanPodPolicy to Running (v1: None)
        expected.setdefault("cleanPodPolicy", "Running")
    assert spec.get("runPolicy", {}) == expected
    assert _codes(up).count("UP010") == len(top)
    for k in top:  # errors and findings about the moved field point where it was written
        assert up.old_path(("spec", "runPolicy", k)) == ("spec", k)


def test_fields_a_version_did_not_have_are_dropped():
    # v1beta1 had no backoffLimit: the operator's decoder dropped it, so it never applied
    up = _up(_map_job("PyTorchJob", "kubeflow.org/v1beta1", {"backoffLimit": 3, "elasticPolicy": {"maxReplicas": 4}}))
    assert "backoffLimit" not in up.doc["spec"].get("runPolicy", {}) and "elasticPolicy" not in up.doc["spec"]
    dropped = [n for n in up.notes if n.code == "UP012"]
    assert {n.source_path for n in dropped} == {"spec.backoffLimit", "spec.elasticPolicy"}
    assert all(n.category == "dropped" for n in dropped)


def test_run_policy_written_in_a_beta_version_was_never_read_and_the_top_level_wins():
    # TFJob v1beta2's Go type has no runPolicy: the operator used the top-level backoffLimit only.
    up = _up(_map_job("TFJob", "kubeflow.org/v1beta2", {"backoffLimit": 2, "runPolicy": {"backoffLimit": 9, "suspend": True}}))
    assert up.doc["spec"]["runPolicy"] == {"backoffLimit": 2, "cleanPodPolicy": "Running"}
    assert {n.source_path for n in up.notes if n.code == "UP012"} == {"spec.runPolicy.backoffLimit", "spec.runPolicy.suspend"}


def test_mpijob_v1alpha2_run_policy_overrides_the_top_level_as_its_controller_did():
    # mpi-operator v0.3.0 v1alpha2 newLauncher: runPolicy.backoffLimit/activeDeadlineSeconds win when set;
    # cleanPodPolicy is read from the top level only, runPolicy's other fields are never read.
    doc = {"apiVersion": "kubeflow.org/v1alpha2", "kind": "MPIJob", "metadata": {"name": "m"},
           "spec": {"backoffLimit": 1, "activeDeadlineSeconds": 60, "cleanPodPolicy": "All",
                    "runPolicy": {"backoffLimit": 5, "cleanPodPolicy": "None", "ttlSecondsAfterFinished": 30},
                    "mpiReplicaSpecs": {"Launcher": {"replicas": 1, "template": _pod("l")},
                                        "Worker": {"replicas": 2, "template": _pod("w")}}}}
    up = _up(doc)
    assert up.doc["spec"]["runPolicy"] == {"backoffLimit": 5, "activeDeadlineSeconds": 60, "cleanPodPolicy": "All"}
    assert [n.source_path for n in up.notes if n.code == "UP013"] == ["spec.backoffLimit"]
    assert {n.source_path for n in up.notes if n.code == "UP012"} == {"spec.runPolicy.cleanPodPolicy",
                                                                      "spec.runPolicy.ttlSecondsAfterFinished"}
    assert up.doc["spec"]["mpiReplicaSpecs"]["Launcher"]["restartPolicy"] == "OnFailure"  # its default
    assert up.doc["spec"]["mpiReplicaSpecs"]["Worker"]["restartPolicy"] == "Always"  # a StatefulSet's pods
    assert up.old_path(("spec", "runPolicy", "backoffLimit")) == ("spec", "runPolicy", "backoffLimit")


@pytest.mark.parametrize("dist, breaking", [(None, False), ("OpenMPI", False), ("IntelMPI", True), ("MPICH", True)])
def test_mpijob_v1alpha2_mpi_distribution(dist, breaking):
    spec = {"mpiReplicaSpecs": {"Launcher": {"template": _pod("l")}}}
    if dist:
        spec["mpiDistribution"] = dist
    up = _up({"apiVersion": "kubeflow.org/v1alpha2", "kind": "MPIJob", "metadata": {"name": "m"}, "spec": spec})
    assert "mpiDistribution" not in up.doc["spec"]
    assert ("UP033" in _codes(up)) == breaking
    assert all(n.category == "breaking" for n in up.notes if n.code == "UP033")


def test_xgboost_operator_group_and_inline_run_policy():
    for api in ("xgboostjob.kubeflow.org/v1alpha1", "xgboostjob.kubeflow.org/v1"):
        doc = {"apiVersion": api, "kind": "XGBoostJob", "metadata": {"name": "x"},
               "spec": {"backoffLimit": 2, "schedulingPolicy": {"minAvailable": 3}, "runPolicy": {"suspend": True},
                        "xgbReplicaSpecs": {"Master": {"replicas": 1, "template": _pod("xgboostjob")},
                                            "Worker": {"replicas": 2, "template": _pod("xgboost")}}}}
        up = _up(doc)
        spec = up.doc["spec"]
        assert up.doc["apiVersion"] == "kubeflow.org/v1"
        assert spec["runPolicy"] == {"backoffLimit": 2, "schedulingPolicy": {"minAvailable": 3}}  # runPolicy: never read
        # the old default container is renamed; one already named as v1 wants is left alone
        assert spec["xgbReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["name"] == "xgboost"
        assert [n.source_path for n in up.notes if n.code == "UP034"] == [
            "spec.xgbReplicaSpecs.Master.template.spec.containers[0].name"]
        assert doc["spec"]["xgbReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]["name"] == "xgboostjob", \
            "the document as read is never changed"


# ------------------------------------------------------------------------- v1alpha1 replica lists

def _tf_alpha1(specs, **spec):
    return {"apiVersion": "kubeflow.org/v1alpha1", "kind": "TFJob", "metadata": {"name": "t"},
            "spec": {"replicaSpecs": specs, **spec}}


def test_v1alpha1_replica_list_becomes_the_map():
    up = _up(_tf_alpha1([{"replicas": 1, "template": _pod()},  # no type: the operator's default, MASTER
                         {"tfReplicaType": "WORKER", "replicas": 2, "tfPort": 2300,
                          "template": {"spec": {**_pod()["spec"], "restartPolicy": "OnFailure", "schedulerName": "x"}}}]))
    specs = up.doc["spec"]["tfReplicaSpecs"]
    assert list(specs) == ["Master", "Worker"]
    assert specs["Master"]["restartPolicy"] == "Always"  # the Pod default the old operator's pods got
    assert specs["Worker"]["restartPolicy"] == "OnFailure"
    assert specs["Worker"]["template"]["spec"]["containers"][0]["ports"] == [{"name": "tfjob-port", "containerPort": 2300}]
    assert "schedulerName" not in specs["Worker"]["template"]["spec"]  # the operator replaced it by spec.schedulerName
    assert up.doc["spec"]["runPolicy"] == {"cleanPodPolicy": "All"}  # unset cleanupPodPolicy deleted every pod
    assert up.old_path(("spec", "tfReplicaSpecs", "Worker", "template", "spec")) == ("spec", "replicaSpecs", 1, "template", "spec")


def test_v1alpha1_scheduler_name_goes_on_every_pod():
    up = _up(_tf_alpha1([{"template": _pod()}, {"tfReplicaType": "PS", "template": _pod()}], schedulerName="kube-batch"))
    assert {s["template"]["spec"]["schedulerName"] for s in up.doc["spec"]["tfReplicaSpecs"].values()} == {"kube-batch"}


def test_pytorch_v1alpha1_master_port_is_the_masters():
    doc = {"apiVersion": "kubeflow.org/v1alpha1", "kind": "PyTorchJob", "metadata": {"name": "p"},
           "spec": {"replicaSpecs": [{"replicaType": "MASTER", "masterPort": 29500, "template": _pod("pytorch")},
                                     {"replicaType": "WORKER", "replicas": 2, "masterPort": 29501, "template": _pod("pytorch")}]}}
    up = _up(doc)
    master = up.doc["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]
    assert master["ports"] == [{"name": "pytorchjob-port", "containerPort": 29500}]
    assert "ports" not in up.doc["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    assert [n.category for n in up.notes if n.code == "UP021"] == ["rewritten", "approximated"]


@pytest.mark.parametrize("chief, outcome", [
    ({"replicaName": "MASTER", "replicaIndex": 0}, "ok"),
    ({"replicaName": "WORKER", "replicaIndex": 0}, "ok-without-master"),
    ({"replicaName": "WORKER", "replicaIndex": 2}, UnsupportedError),
    ({"replicaName": "PS", "replicaIndex": 0}, UnsupportedError),
    ({"replicaName": "EVALUATOR"}, InvalidJobError),
])
def test_v1alpha1_termination_policy(chief, outcome):
    specs = [{"tfReplicaType": "PS", "template": _pod()}, {"tfReplicaType": "WORKER", "replicas": 3, "template": _pod()}]
    if outcome == "ok":
        specs.append({"tfReplicaType": "MASTER", "template": _pod()})
    doc = _tf_alpha1(specs, terminationPolicy={"chief": chief})
    if isinstance(outcome, type):
        with pytest.raises(outcome) as err:
            _up(doc)
        assert err.value.problems[0].location.path[:2] == ("spec", "terminationPolicy")
    else:
        assert "UP023" in _codes(_up(doc))


@pytest.mark.parametrize("specs, path, error", [
    ([{"tfReplicaType": "WORKER", "template": _pod()}, {"tfReplicaType": "WORKER", "template": _pod()}],
     ("spec", "replicaSpecs", 1, "tfReplicaType"), InvalidJobError),
    ([{"tfReplicaType": "CHIEF", "template": _pod()}], ("spec", "replicaSpecs", 0, "tfReplicaType"), InvalidJobError),
    ([{"tfReplicaType": "MASTER", "template": _pod()}, {"tfReplicaType": "PS"}], ("spec", "replicaSpecs", 1), UnsupportedError),
    ([], ("spec", "replicaSpecs"), InvalidJobError),
    (["not a mapping"], ("spec", "replicaSpecs", 0), InvalidJobError),
])
def test_v1alpha1_refusals_name_the_place(specs, path, error):
    with pytest.raises(error) as err:
        _up(_tf_alpha1(specs))
    assert err.value.problems[0].location.path == path


# ------------------------------------------------------------------------- MPIJob v1alpha1

def _mpi_alpha1(**spec):
    container = {"name": "mpi", "image": "img", "command": ["mpirun", "x"], **spec.pop("container", {})}
    return {"apiVersion": "kubeflow.org/v1alpha1", "kind": "MPIJob", "metadata": {"name": "m"},
            "spec": {**spec, "template": {"spec": {"containers": [container]}}}}


def _allocate(total: int, per_node: int) -> tuple[int, int] | None:
    """mpi-operator's allocateProcessingUnits (0.1.0 allocateGPUs): fewer than a node -> one worker."""
    if total < per_node:
        return 1, total
    return (total // per_node, per_node) if total % per_node == 0 else None


@settings(max_examples=80, deadline=None)
@given(total=st.integers(0, 64), per_node=st.one_of(st.none(), st.integers(1, 16)), units=st.booleans())
def test_mpijob_v1alpha1_gpus_become_workers_and_gpus_per_worker(total, per_node, units):
    field, per_field = ("processingUnits", "processingUnitsPerNode") if units else ("gpus", "gpusPerNode")
    spec = {field: total} if per_node is None else {field: total, per_field: per_node}
    expected = _allocate(total, per_node or 1)  # unset per-node: the operator flag's default, 1
    if expected is None:
        with pytest.raises(InvalidJobError) as err:
            _up(_mpi_alpha1(**spec))
        assert err.value.problems[0].location.path == ("spec", field)
        return
    up = _up(_mpi_alpha1(**spec))
    workers, per_worker = expected
    worker = up.doc["spec"]["mpiReplicaSpecs"]["Worker"]
    assert worker["replicas"] == workers
    assert worker["template"]["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": per_worker}
    assert "command" not in worker["template"]["spec"]["containers"][0]  # the operator ran `sleep 365d` there
    launcher = up.doc["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    assert launcher["command"] == ["mpirun", "x"] and "resources" not in launcher
    assert up.doc["spec"]["slotsPerWorker"] == (per_worker or 1)
    assert [n.category for n in up.notes if n.code == "UP030"] == ["approximated" if per_node is None else "rewritten"]
    assert up.old_path(("spec", "mpiReplicaSpecs", "Worker", "replicas")) == ("spec", field)


def test_mpijob_v1alpha1_replicas_keep_the_templates_gpus_and_launcher_on_master():
    up = _up(_mpi_alpha1(replicas=3, launcherOnMaster=True, backoffLimit=2, activeDeadlineSeconds=100,
                         container={"resources": {"limits": {"nvidia.com/gpu": 2}}}))
    spec = up.doc["spec"]
    assert spec["mpiReplicaSpecs"]["Worker"]["replicas"] == 3 and spec["slotsPerWorker"] == 2
    assert spec["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": 2}}
    launcher = spec["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]
    assert launcher["tolerations"] == [{"key": "node-role.kubernetes.io/master", "effect": "NoSchedule"}]
    assert spec["runPolicy"] == {"backoffLimit": 2, "activeDeadlineSeconds": 100}
    assert "launcherOnMaster" not in spec and "replicas" not in spec


def test_mpijob_v1alpha1_without_a_count_has_a_launcher_only_and_the_default_backoff():
    up = _up(_mpi_alpha1())
    assert list(up.doc["spec"]["mpiReplicaSpecs"]) == ["Launcher"]
    assert up.doc["spec"]["runPolicy"] == {"backoffLimit": 6}


def test_mpijob_v1alpha1_gpus_and_processing_units_together_are_refused():
    with pytest.raises(InvalidJobError) as err:
        _up(_mpi_alpha1(gpus=2, processingUnits=2))
    assert err.value.problems[0].location.path == ("spec", "processingUnits")


# ------------------------------------------------------------------------- through the converter

def test_converted_jobs_name_the_version_they_were_written_in():
    doc = _map_job("TFJob", "kubeflow.org/v1beta1", {"cleanPodPolicy": "All"})
    conv = convert_job(doc, ConvertOptions())
    assert conv.jobset["metadata"]["annotations"]["kf2jobset.dev/source"] == "kubeflow.org/v1beta1/TFJob j"
    assert conv.job.written_api_version == "kubeflow.org/v1beta1" and conv.job.api_version == "kubeflow.org/v1"
    assert [n.code for n in conv.notes][:2] == ["UP001", "UP010"]
    assert doc["apiVersion"] == "kubeflow.org/v1beta1" and doc["spec"]["cleanPodPolicy"] == "All"


def test_errors_point_into_the_document_as_written(tmp_path):
    f = tmp_path / "old.yaml"
    f.write_text("apiVersion: kubeflow.org/v1alpha1\nkind: PyTorchJob\nmetadata:\n  name: p\nspec:\n  replicaSpecs:\n"
                 "    - replicaType: MASTER\n      template:\n        spec:\n          containers:\n"
                 "            - name: pytorch\n              image: img\n"
                 "    - replicaType: WORKER\n      replicas: -2\n      template:\n        spec:\n          containers:\n"
                 "            - name: pytorch\n              image: img\n")
    res = CliRunner().invoke(main, ["convert", str(f)])
    assert res.exit_code == exitcodes.INPUT and not res.stdout
    assert f"{f}:14:7: document 1: spec.replicaSpecs[1].replicas: must be >= 0" in res.stderr


def test_refused_versions_name_every_version_read():
    res = CliRunner().invoke(main, ["convert", "-"], input="apiVersion: kubeflow.org/v1beta3\nkind: TFJob\n"
                                                          "metadata: {name: t}\nspec: {}\n")
    assert res.exit_code == exitcodes.UNSUPPORTED
    versions = ", ".join(readable_versions("TFJob"))
    assert versions == ("kubeflow.org/v1, kubeflow.org/v1alpha1, kubeflow.org/v1alpha2, kubeflow.org/v1beta1, "
                        "kubeflow.org/v1beta2")
    assert f"kf2jobset converts TFJob {versions} only" in res.stderr


OLD_REPO_JOB = pytorchjob_text("legacy  # from 2019", replica_text("Master", image="img:1  # pinned"),
                               api_version="kubeflow.org/v1beta2", spec="backoffLimit: 2")


def test_repo_mode_counts_and_converts_older_versions(tmp_path):
    (tmp_path / "jobs").mkdir()
    f = tmp_path / "jobs" / "legacy.yaml"
    f.write_text(OLD_REPO_JOB)
    check = CliRunner().invoke(main, ["convert", str(tmp_path), "--check"])
    assert check.exit_code == exitcodes.FINDINGS, check.output
    assert f"{f}:1: PyTorchJob legacy (kubeflow.org/v1beta2): to convert" in check.stdout
    done = CliRunner().invoke(main, ["convert", str(tmp_path), "--in-place"])
    assert done.exit_code == 0, done.output
    text = f.read_text()
    assert "kind: JobSet" in text and "kf2jobset.dev/source: kubeflow.org/v1beta2/PyTorchJob legacy" in text
    assert "name: legacy  # from 2019" in text and "image: img:1  # pinned" in text
    again = CliRunner().invoke(main, ["convert", str(tmp_path), "--check"])
    assert again.exit_code == 0, again.output


def test_report_names_the_source_version_and_where_each_move_was_written(tmp_path):
    import json

    f = tmp_path / "old.yaml"
    f.write_text(OLD_REPO_JOB)
    out = tmp_path / "r.json"
    res = CliRunner().invoke(main, ["report", str(f), "--format", f"json:{out}"])
    assert res.exit_code == 0, res.output
    job = json.loads(out.read_text())["files"][0]["jobs"][0]
    assert job["apiVersion"] == "kubeflow.org/v1beta2"
    moved = next(x for x in job["findings"] if x["code"] == "UP010")
    assert moved["sourcePath"] == "spec.backoffLimit" and moved["line"] == 6


# ------------------------------------------------------------------------- any input

_KEYS = ["replicaSpecs", "tfReplicaType", "replicaType", "template", "spec", "containers", "name", "image", "ports",
         "replicas", "tfPort", "masterPort", "restartPolicy", "terminationPolicy", "chief", "master", "replicaName",
         "gpus", "gpusPerNode", "processingUnits", "resources", "limits", "runPolicy", "backoffLimit", "cleanPodPolicy",
         "mpiReplicaSpecs", "Launcher", "Worker", "xgbReplicaSpecs", "Master", "schedulerName", "launcherOnMaster"]
_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 20), st.sampled_from(["MASTER", "WORKER", "PS", "Never", "x", "4"])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(_KEYS), inner, max_size=4)),
    max_leaves=25)


@settings(max_examples=300, deadline=None)
@given(api_kind=st.sampled_from(sorted(UPGRADED, key=str)), spec=_VALUES)
# found by this test: a null replica spec under an old XGBoostJob apiVersion crashed the upgrade
@example(api_kind=("XGBoostJob", "xgboostjob.kubeflow.org/v1"), spec={"xgbReplicaSpecs": {"replicaSpecs": None}})
def test_any_spec_is_upgraded_or_refused_with_a_place(api_kind, spec):
    from kf2jobset.errors import Kf2JobSetError

    kind, api = api_kind
    doc = {"apiVersion": api, "kind": kind, "metadata": {"name": "j"}, "spec": spec}
    try:
        conv = convert_job(doc, ConvertOptions(accept_mpi_ssh=True))
    except Kf2JobSetError as err:
        assert err.problems and all(isinstance(p.location.path, tuple) for p in err.problems)
        return
    assert conv.notes[0].code == "UP001"


# ------------------------------------------------------------------------- MXJob v1beta1 (mxnet-operator)

def _mx_beta(top=None, **worker):
    return {"apiVersion": "kubeflow.org/v1beta1", "kind": "MXJob", "metadata": {"name": "mx"},
            "spec": {"jobMode": "MXTrain", **(top or {}), "mxReplicaSpecs": {
                "Scheduler": {"template": _pod("mxnet")}, "Worker": {"replicas": 2, "template": _pod("mxnet"), **worker}}}}


def test_mxjob_v1beta1_run_fields_move_and_its_clean_pod_default_is_written():
    up = _up(_mx_beta({"ttlSecondsAfterFinished": 60}))
    assert up.doc["apiVersion"] == "kubeflow.org/v1"
    assert up.doc["spec"]["runPolicy"] == {"ttlSecondsAfterFinished": 60, "cleanPodPolicy": "All"}
    assert {"UP001", "UP010", "UP011", "UP002"} <= set(_codes(up))
    assert _up(_mx_beta({"cleanPodPolicy": "None"})).doc["spec"]["runPolicy"] == {"cleanPodPolicy": "None"}


def test_mxjob_v1beta1_label_becomes_the_tuner_server_key_annotation():
    up = _up(_mx_beta(label="v100"))
    worker = up.doc["spec"]["mxReplicaSpecs"]["Worker"]
    assert "label" not in worker
    assert worker["template"]["metadata"]["annotations"] == {"tuner-server-key": "v100"}
    assert up.old_path(("spec", "mxReplicaSpecs", "Worker", "template", "metadata", "annotations", "tuner-server-key")) == \
        ("spec", "mxReplicaSpecs", "Worker", "label")
    assert "UP035" in _codes(up)


def test_mxjob_v1beta1_all_workers_success_is_refused_and_the_default_dropped():
    with pytest.raises(UnsupportedError, match="successPolicy AllWorkers"):
        _up(_mx_beta({"successPolicy": "AllWorkers"}))
    up = _up(_mx_beta({"successPolicy": ""}))
    assert "successPolicy" not in up.doc["spec"] and "UP012" in _codes(up)


def test_mxjob_v1beta1_converts_end_to_end():
    conv = convert_job(_mx_beta({"cleanPodPolicy": "Running"}, label="k"), ConvertOptions())
    assert conv.job.api_version == "kubeflow.org/v1" and conv.job.run_policy.clean_pod_policy == "Running"
