"""MXJob (training-operator v1.8.1, its last release with MXJob): the operator model against the v1.8.1
source, typed by hand (pkg/controller.v1/mxnet/mxnet.go SetPodEnv and genMXConfig, mxjob_controller.go
UpdateJobStatus/isSingleWorker/IsMasterRole, pkg/apis/kubeflow.org/v1/mxnet_defaults.go and
mxnet_validation.go), and the rule that no MXJob passes through unconverted.
The fixtures (fixtures/mxjob) prove the JobSet side reproduces this model pod by pod.
"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kf2jobset.cli.main import main
from kf2jobset.core.convert import convert_job
from kf2jobset.errors import InvalidJobError
from kf2jobset.mappings import mapping_for
from kf2jobset.options import ConvertOptions
from kf2jobset.core.parse import parse_job
from kf2jobset.runtime.jobset_view import jobset_world
from kf2jobset.runtime.lifecycle import operator_lifecycle
from kf2jobset.runtime.operator_view import operator_world

from .conftest import FIXTURES


def c(name="mxnet", **extra):
    return {"template": {"spec": {"containers": [{"name": name, "image": "img", **extra}]}}}


def mxjob(specs, name="mx", namespace="ns", mode="MXTrain"):
    return {"apiVersion": "kubeflow.org/v1", "kind": "MXJob", "metadata": {"name": name, "namespace": namespace},
            "spec": {"jobMode": mode, "mxReplicaSpecs": specs}}


def parsed(doc):
    return parse_job(doc, mapping_for(doc["apiVersion"], doc["kind"]))


def pod(doc, role, index):
    world = operator_world(parsed(doc))
    return next(p for p in world.pods if p.key == (role, index))


TRAIN = {"Scheduler": {"replicas": 1, **c(ports=[{"name": "mxjob-port", "containerPort": 9000}])},
         "Server": {"replicas": 1, **c()}, "Worker": {"replicas": 2, **c()}}


def test_env_order_values_and_mx_config_as_go_marshals_it():
    p = pod(mxjob(TRAIN), "worker", 1)
    env = p.env(p.containers()[0])
    assert [n for n, _ in env] == ["MX_CONFIG", "DMLC_PS_ROOT_PORT", "DMLC_PS_ROOT_URI", "DMLC_NUM_SERVER",
                                   "DMLC_NUM_WORKER", "DMLC_ROLE", "DMLC_USE_KUBERNETES", "DMLC_WORKER_ID"]
    values = dict(env)
    # struct field order cluster, labels, task; map keys sorted; url then port; bare names (no namespace)
    assert values["MX_CONFIG"] == (
        '{"cluster":{"scheduler":[{"url":"mx-scheduler-0","port":9000}],"server":[{"url":"mx-server-0","port":9091}],'
        '"worker":[{"url":"mx-worker-0","port":9091},{"url":"mx-worker-1","port":9091}]},'
        '"labels":{"scheduler":"","server":"","worker":""},"task":{"type":"worker","index":1}}'
    )
    assert (values["DMLC_PS_ROOT_PORT"], values["DMLC_PS_ROOT_URI"]) == ("9000", "mx-scheduler-0")
    assert (values["DMLC_NUM_SERVER"], values["DMLC_NUM_WORKER"], values["DMLC_ROLE"]) == ("1", "2", "worker")
    assert (values["DMLC_USE_KUBERNETES"], values["DMLC_WORKER_ID"]) == ("1", "1")


def test_worker_id_only_on_workers_and_env_on_every_container():
    specs = {**TRAIN, "Server": {"replicas": 1, "template": {"spec": {"containers": [
        {"name": "mxnet", "image": "img"}, {"name": "sidecar", "image": "img"}]}}}}
    p = pod(mxjob(specs), "server", 0)
    first, second = (dict(p.env(x)) for x in p.containers())
    assert first == second and "DMLC_WORKER_ID" not in first and first["DMLC_ROLE"] == "server"


def test_no_scheduler_gives_empty_root_and_zero_counts():
    p = pod(mxjob({"Worker": {"replicas": 2, **c()}}), "worker", 0)
    values = dict(p.env(p.containers()[0]))
    assert (values["DMLC_PS_ROOT_URI"], values["DMLC_PS_ROOT_PORT"], values["DMLC_NUM_SERVER"]) == ("", "0", "0")


def test_tune_labels_copy_the_tuner_server_key_annotation_with_go_escaping():
    server = c()
    server["template"]["metadata"] = {"annotations": {"tuner-server-key": "gpu<v100>&é"}}
    doc = mxjob({"TunerTracker": {"replicas": 1, **c()}, "TunerServer": {"replicas": 1, **server},
                 "Tuner": {"replicas": 1, **c()}}, mode="MXTune")
    p = pod(doc, "tunertracker", 0)
    values = dict(p.env(p.containers()[0]))
    # encoding/json: <, > and & as \u00XX, other non-ASCII as UTF-8
    assert '"labels":{"tuner":"","tunerserver":"gpu\\u003cv100\\u003e\\u0026é","tunertracker":""}' in values["MX_CONFIG"]
    assert json.loads(values["MX_CONFIG"])["labels"]["tunerserver"] == "gpu<v100>&é"
    assert (values["DMLC_ROLE"], values["DMLC_NUM_WORKER"], values["DMLC_PS_ROOT_URI"]) == ("tunertracker", "0", "")


def test_defaults_and_labels():
    job = parsed(mxjob({"worker": {**c()}, "Tuner": {**c()}}))
    spec = job.replicas["Worker"]  # Scheduler/Server/Worker keys are camel-cased
    assert (spec.replicas, spec.restart_policy, job.port("Worker")) == (1, "Never", 9091)
    assert job.run_policy.clean_pod_policy == "None"
    server = pod(mxjob(TRAIN), "server", 0)
    assert server.labels["training.kubeflow.org/job-role"] == "master"  # IsMasterRole: Server
    assert server.labels["training.kubeflow.org/operator-name"] == "mxjob-controller"
    assert "training.kubeflow.org/job-role" not in pod(mxjob(TRAIN), "scheduler", 0).labels


def test_tuning_type_keys_are_not_camel_cased():
    with pytest.raises(InvalidJobError, match="differ only in case"):
        parsed(mxjob({"tuner": {**c()}, "Tuner": {**c()}}, mode="MXTune"))
    job = parsed(mxjob({"tuner": {**c()}}, mode="MXTune"))
    assert list(job.replicas) == ["tuner"]  # kept as written, like v1.8.1 (its role is "tuner" either way)


def test_a_type_without_an_mxnet_container_is_refused_like_the_controller_did():
    with pytest.raises(InvalidJobError) as err:
        parsed(mxjob({"Scheduler": {**c()}, "Worker": {**c("main")}}))
    assert "Worker has no container named 'mxnet'" in str(err.value)


@pytest.mark.parametrize("specs, expected", [
    (TRAIN, ("all", ("scheduler",))),
    ({"Worker": {"replicas": 1, **c()}}, ("all", ("worker",))),
    ({"Worker": {"replicas": 1, **c()}, "Server": {"replicas": 0, **c()}}, ("all", ("worker",))),
    ({"Worker": {"replicas": 2, **c()}}, ("never",)),
    ({"Worker": {"replicas": 1, **c()}, "Server": {"replicas": 1, **c()}}, ("never",)),
    ({"Tuner": {"replicas": 1, **c()}, "TunerServer": {"replicas": 2, **c()}}, ("never",)),
])
def test_who_decides_success(specs, expected):
    assert operator_lifecycle(parsed(mxjob(specs))).job["success"] == expected


def test_success_rules_on_the_jobset_side():
    def success(specs):
        conv = convert_job(mxjob(specs), ConvertOptions())
        return conv.jobset["spec"]["successPolicy"], {n.code for n in conv.notes}

    policy, codes = success(TRAIN)
    assert policy == {"operator": "All", "targetReplicatedJobs": ["scheduler"]} and not codes & {"MX002", "MX003"}
    policy, codes = success({"Worker": {"replicas": 1, **c()}})
    assert policy == {"operator": "All", "targetReplicatedJobs": ["worker"]} and not codes & {"MX002", "MX003"}
    policy, codes = success({"Worker": {"replicas": 1, **c()}, "Tuner": {"replicas": 1, **c()}})
    assert policy == {"operator": "All", "targetReplicatedJobs": ["worker"]} and "MX003" in codes
    policy, codes = success({"Worker": {"replicas": 3, **c()}})
    assert policy == {"operator": "All"} and "MX002" in codes


def test_failed_pod_rules():
    specs = {"Scheduler": {**c()}, "Server": {"restartPolicy": "OnFailure", **c()},
             "Worker": {"replicas": 2, "restartPolicy": "ExitCode", **c()}}
    roles = operator_lifecycle(parsed(mxjob(specs))).roles
    assert roles["scheduler"]["failure"] == "fail-job" and roles["scheduler"]["backoffLimit"] == 0
    assert roles["server"]["failure"] == "fail-job"  # any Failed pod failed the MXJob (eviction): MX001
    assert roles["worker"]["failure"] == "exit-code"
    conv = convert_job(mxjob(specs), ConvertOptions())
    assert "MX001" in {n.code for n in conv.notes}


def test_jobset_pods_resolve_to_the_operator_values_after_a_rename():
    doc = mxjob(TRAIN)
    conv = convert_job(doc, ConvertOptions())
    js = jobset_world(conv.jobset, name="renamed", roles=conv.plan.pod_roles)
    worker = next(p for p in js.pods if p.key == ("worker", 1))
    values = dict(worker.env(worker.containers()[0]))
    config = json.loads(values["MX_CONFIG"])
    assert config["task"] == {"type": "worker", "index": 1}
    assert config["cluster"]["scheduler"] == [{"url": "renamed-scheduler-0-0.renamed", "port": 9000}]
    assert values["DMLC_PS_ROOT_URI"] == "renamed-scheduler-0-0.renamed" and values["DMLC_WORKER_ID"] == "1"


# ------------------------------------------------------------------ converted or refused, never passed through

def test_check_counts_an_mxjob_to_convert(tmp_path):
    (tmp_path / "job.yaml").write_text((FIXTURES / "mxjob" / "dist-sync" / "input.yaml").read_text())
    result = CliRunner().invoke(main, ["convert", str(tmp_path), "--check"], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    assert "1 to convert" in result.stderr


@pytest.mark.parametrize("api_version", ["kubeflow.org/v1beta1", "kubeflow.org/v1alpha1"])
def test_an_older_mxjob_is_converted_or_refused_never_passed_through(api_version):
    text = (FIXTURES / "mxjob" / "dist-sync" / "input.yaml").read_text().replace("kubeflow.org/v1\n", f"{api_version}\n")
    result = CliRunner().invoke(main, ["convert", "-"], input=text, catch_exceptions=False)
    if result.exit_code == 0:
        assert "kind: JobSet" in result.stdout and "kind: MXJob" not in result.stdout
    else:
        assert result.stdout == "" and "MXJob" in result.stderr and "Traceback" not in result.stderr


# ------------------------------------------------------------------ against the real v1.8.1 release, when at hand

def _v181_module():
    """training-operator v1.8.1 in the Go module cache (tests/upstream.py; the MXJob stack is built from it):
    the last release with MXJob (removed in v1.9.0)."""
    from . import upstream

    upstream.need("training-operator-v1.8.1")
    return upstream.module_dir("training-operator-v1.8.1")


def test_our_schema_has_the_fields_of_the_real_v181_crd():
    import yaml

    from kf2jobset.data_dirs import data_dir

    crd = yaml.safe_load((_v181_module() / "manifests/base/crds/kubeflow.org_mxjobs.yaml").read_text())
    (version,) = crd["spec"]["versions"]
    real = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    ours = json.loads((data_dir("schemas") / "kubeflow" / "mxjob.schema.json").read_text())
    assert version["name"] == "v1" and crd["spec"]["names"]["kind"] == "MXJob"
    assert set(ours["properties"]["spec"]["properties"]) == set(real["properties"])
    assert set(ours["properties"]["spec"]["required"]) == set(real["required"])
    assert set(ours["$defs"]["RunPolicyV1_8"]["properties"]) == set(real["properties"]["runPolicy"]["properties"])
    replica = real["properties"]["mxReplicaSpecs"]["additionalProperties"]["properties"]
    assert set(replica) == {"replicas", "restartPolicy", "template"}


def test_upstream_v181_examples_convert_with_every_difference_explained():
    import yaml

    from kf2jobset.files.pipeline import convert_text
    from kf2jobset.report import build_report

    examples = sorted((_v181_module() / "examples" / "mxnet").rglob("*.yaml"))
    jobs = 0
    for path in examples:
        text = path.read_text()
        if not any(isinstance(d, dict) and d.get("kind") == "MXJob" for d in yaml.safe_load_all(text)):
            continue
        result = convert_text(text, path.name, ConvertOptions())
        assert not result.errors, (path, result.errors)
        report = build_report([result], ConvertOptions())
        jobs += len(report.jobs)
        assert not [f for j in report.jobs for f in j.findings if f.category == "unexplained"], path
    assert jobs >= 3


def test_mapping_data_is_checked_when_loaded():
    from kf2jobset.mappings import _from_data

    base = {"kind": "X", "apiVersions": ["kubeflow.org/v1"], "replicaSpecsField": "xReplicaSpecs", "profile": "x",
            "operatorName": "x", "defaultRestartPolicy": "Never", "envContainers": "all",
            "replicaTypes": [{"type": "Worker"}], "success": [{"operator": "All", "targets": ["Worker"], "exact": True}]}
    assert _from_data(base, "x.yaml").case_normalized_types == ("Worker",)
    assert _from_data({**base, "normalizeReplicaTypeCase": False}, "x.yaml").case_normalized_types == ()
    with pytest.raises(ValueError, match="not in replicaTypes: Chief"):
        _from_data({**base, "normalizeReplicaTypeCase": ["Chief"]}, "x.yaml")
    with pytest.raises(ValueError, match="condition repicas is not one of"):
        _from_data({**base, "success": [{"when": {"repicas": {"Worker": 1}}, "operator": "All", "targets": [], "exact": True}]}, "x.yaml")
    mx = mapping_for("kubeflow.org/v1", "MXJob")
    assert (mx.case_normalized_types, [r.type for r in mx.port_read_from], mx.validating_webhook) == (
        ("Scheduler", "Server", "Worker"), ["*"], False)
    with pytest.raises(ValueError, match="when 'always' is not one of"):
        _from_data({**base, "withoutDefaultContainer": {"portReadFrom": [{"type": "Worker", "reads": "X", "when": "always"}]}},
                   "x.yaml")
