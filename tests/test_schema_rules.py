"""Our JSON Schemas (schemas/) on hand-made jobs and JobSets: every constraint they hold (unknown fields,
types, enums, required fields, JobSet's own rules, quantities and int-or-string), YAML types normalised, and
the schema files themselves (valid 2020-12 schemas, strict everywhere)."""
from __future__ import annotations

import copy
import json

import pytest
from ruamel.yaml import YAML

from kf2jobset.data_dirs import data_dir
from kf2jobset.errors import format_path
from kf2jobset.k8s.schemas import SchemaIssue, schema_name_for, schema_names, validate

from .jobs import leader_workers_jobset, mnist_tfjob, pytorchjob_text, replica_text

SCHEMAS = data_dir("schemas")
_yaml = YAML(typ="safe")


WORKER = ("spec", "tfReplicaSpecs", "Worker")
CONTAINER0 = WORKER + ("template", "spec", "containers", 0)


def test_valid_baselines():
    assert validate(mnist_tfjob(), "kubeflow/tfjob") == []
    assert validate(leader_workers_jobset(), "jobset") == []


def test_unknown_field_at_spec_level():
    doc = mnist_tfjob()
    doc["spec"]["replicaz"] = 3
    assert validate(doc, "kubeflow/tfjob") == [SchemaIssue(("spec", "replicaz"), "unknown field 'replicaz'")]


def test_wrong_type_for_replicas():
    doc = mnist_tfjob()
    doc["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] = "two"
    assert validate(doc, "kubeflow/tfjob") == [
        SchemaIssue(WORKER + ("replicas",), "expected integer, got string 'two'")
    ]


def test_bad_restart_policy_enum():
    doc = mnist_tfjob()
    doc["spec"]["tfReplicaSpecs"]["Worker"]["restartPolicy"] = "Sometimes"
    assert validate(doc, "kubeflow/tfjob") == [
        SchemaIssue(WORKER + ("restartPolicy",), "must be one of: Always, OnFailure, Never, ExitCode")
    ]


def test_unknown_field_inside_a_container():
    doc = mnist_tfjob()
    doc["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    assert validate(doc, "kubeflow/tfjob") == [
        SchemaIssue(CONTAINER0 + ("imagePullPolicyy",), "unknown field 'imagePullPolicyy'")
    ]


def test_bad_success_policy_operator():
    doc = leader_workers_jobset()
    doc["spec"]["successPolicy"]["operator"] = "Some"
    assert validate(doc, "jobset") == [
        SchemaIssue(("spec", "successPolicy", "operator"), "must be one of: All, Any")
    ]


def test_depends_on_status_enum():
    doc = leader_workers_jobset()
    doc["spec"]["replicatedJobs"][1]["dependsOn"][0]["status"] = "Running"
    assert validate(doc, "jobset") == [
        SchemaIssue(("spec", "replicatedJobs", 1, "dependsOn", 0, "status"), "must be one of: Ready, Complete")
    ]


def test_missing_containers():
    doc = leader_workers_jobset()
    del doc["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"]
    path = ("spec", "replicatedJobs", 0, "template", "spec", "template", "spec", "containers")
    assert validate(doc, "jobset") == [SchemaIssue(path, "missing required field 'containers'")]
    doc = mnist_tfjob()
    del doc["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"]
    assert validate(doc, "kubeflow/tfjob") == [
        SchemaIssue(WORKER + ("template", "spec", "containers"), "missing required field 'containers'")
    ]


def test_jobset_needs_a_pod_template():
    doc = leader_workers_jobset()
    doc["spec"]["replicatedJobs"][0]["template"] = {"metadata": {"labels": {"a": "b"}}}
    assert validate(doc, "jobset") == [
        SchemaIssue(("spec", "replicatedJobs", 0, "template", "spec"), "missing required field 'spec'")
    ]
    doc["spec"]["replicatedJobs"][0]["template"] = {"spec": {"parallelism": 2}}
    assert validate(doc, "jobset") == [
        SchemaIssue(("spec", "replicatedJobs", 0, "template", "spec", "template"), "missing required field 'template'")
    ]


def test_jobset_other_constraints():
    doc = leader_workers_jobset()
    spec = doc["spec"]
    spec["replicatedJobs"][1]["dependsOn"] = [{"name": f"j{i}", "status": "Ready"} for i in range(6)]
    spec["replicatedJobs"][0]["replicas"] = -1  # v0.12.0's CRD has no minimum (validate.py checks it by version)
    spec["ttlSecondsAfterFinished"] = -5
    spec["failurePolicy"]["restartStrategy"] = "Sometimes"
    spec["failurePolicy"]["rules"][0]["action"] = "Explode"
    spec["startupPolicy"] = {}
    spec["coordinator"] = {"jobIndex": 0}
    spec["network"]["subDomain"] = "x"
    spec["volumeClaimPolicies"] = [
        {
            "templates": [{"metadata": {"name": "data", "namespace": "ns", "uid": "u"}, "spec": {}}],
            "retentionPolicy": {"whenDeleted": "Keep"},
        }
    ]
    doc["kind"] = "Jobset"
    got = {(format_path(i.path, empty=""), i.message) for i in validate(doc, "jobset")}
    assert got == {
        ("kind", "must be JobSet, got string 'Jobset'"),
        ("spec.coordinator.replicatedJob", "missing required field 'replicatedJob'"),
        (
            "spec.failurePolicy.restartStrategy",
            "must be one of: Recreate, BlockingRecreate, InPlaceRestart",
        ),
        (
            "spec.failurePolicy.rules[0].action",
            "must be one of: FailJobSet, RestartJobSet, RestartJobSetAndIgnoreMaxRestarts, "
            "RestartJob, RestartJobAndIgnoreMaxRestarts",
        ),
        ("spec.network.subDomain", "unknown field 'subDomain'"),
        ("spec.replicatedJobs[1].dependsOn", "must have at most 5 items, got 6"),
        ("spec.startupPolicy.startupPolicyOrder", "missing required field 'startupPolicyOrder'"),
        ("spec.ttlSecondsAfterFinished", "must be >= 0, got -5"),
        ("spec.volumeClaimPolicies[0].retentionPolicy.whenDeleted", "must be one of: Delete, Retain"),
        ("spec.volumeClaimPolicies[0].templates[0].metadata.namespace", "must be empty"),
        ("spec.volumeClaimPolicies[0].templates[0].metadata.uid", "unknown field 'uid'"),
    }


def test_jobset_metadata_needs_name_or_generate_name():
    doc = leader_workers_jobset()
    doc["metadata"] = {"generateName": "js-"}
    assert validate(doc, "jobset") == []
    doc["metadata"] = {"labels": {"a": "b"}}
    assert validate(doc, "jobset") == [SchemaIssue(("metadata",), "one of 'name', 'generateName' is required")]


def test_template_metadata_is_the_embedded_subset():
    doc = mnist_tfjob()
    meta = doc["spec"]["tfReplicaSpecs"]["Worker"]["template"]["metadata"]
    meta.update(name="x", namespace="y", finalizers=["f"], annotations={"k": "v"})
    assert validate(doc, "kubeflow/tfjob") == []
    meta["generateName"] = "x-"
    meta["labels"]["version"] = 2
    assert validate(doc, "kubeflow/tfjob") == [
        SchemaIssue(WORKER + ("template", "metadata", "generateName"), "unknown field 'generateName'"),
        SchemaIssue(WORKER + ("template", "metadata", "labels", "version"), "expected string, got integer 2"),
    ]


def test_top_level_metadata_accepts_server_fields():
    doc = mnist_tfjob()
    doc["metadata"].update(
        uid="1234",
        resourceVersion="99",
        generation=3,
        creationTimestamp="2024-05-01T10:00:00Z",
        managedFields=[{"manager": "kubectl", "operation": "Apply", "fieldsV1": {"f:spec": {}}}],
        ownerReferences=[{"apiVersion": "v1", "kind": "X", "name": "o", "uid": "u"}],
    )
    doc["status"] = {"conditions": [{"type": "Created", "status": "True"}]}
    assert validate(doc, "kubeflow/tfjob") == []


def test_quantities_and_int_or_string():
    doc = mnist_tfjob()
    c = doc["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    # the CRDs' int-or-string quantity: an integer (a float the API server reads as one), or a quantity string
    for good in ("0.5", "500m", 1, 1.0, 1e3, "1.5Gi", "+1", "1e3", ".5"):
        c["resources"]["requests"] = {"cpu": good, "memory": "1Gi"}
        assert validate(doc, "kubeflow/tfjob") == [], good
    c["resources"]["requests"]["cpu"] = True
    c["resources"]["requests"]["memory"] = 0.5  # fractional: the real v1 API server refuses it (tests/live)
    c["resources"]["limits"] = {"memory": "1.5.5", "cpu": "1\n"}  # RE2's $ is the end of the text
    c["readinessProbe"]["tcpSocket"]["port"] = 1.5
    c["ports"] = [{"containerPort": "2222"}]
    assert validate(doc, "kubeflow/tfjob") == [
        SchemaIssue(CONTAINER0 + ("ports", 0, "containerPort"), "expected integer, got string '2222'"),
        SchemaIssue(CONTAINER0 + ("readinessProbe", "tcpSocket", "port"), "expected integer or string, got number 1.5"),
        SchemaIssue(CONTAINER0 + ("resources", "limits", "cpu"), "'1\\n' is not a Kubernetes quantity (e.g. 500m, 2, 1.5Gi)"),
        SchemaIssue(CONTAINER0 + ("resources", "limits", "memory"), "'1.5.5' is not a Kubernetes quantity (e.g. 500m, 2, 1.5Gi)"),
        SchemaIssue(CONTAINER0 + ("resources", "requests", "cpu"), "expected integer or string, got boolean true"),
        SchemaIssue(CONTAINER0 + ("resources", "requests", "memory"), "expected integer or string, got number 0.5"),
    ]


def test_required_fields_follow_the_api_not_the_webhook():
    doc = mnist_tfjob()
    c = doc["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    del c["image"]  # the Kubeflow webhook wants an image; the schema does not
    c["env"] = [{"value": "1"}]
    del c["name"]
    assert validate(doc, "kubeflow/tfjob") == [
        SchemaIssue(CONTAINER0 + ("env", 0, "name"), "missing required field 'name'"),
        SchemaIssue(CONTAINER0 + ("name",), "missing required field 'name'"),
    ]


def test_replica_type_names_are_not_restricted():
    doc = mnist_tfjob()
    doc["spec"]["tfReplicaSpecs"]["Sidecar"] = copy.deepcopy(doc["spec"]["tfReplicaSpecs"]["Worker"])
    assert validate(doc, "kubeflow/tfjob") == []


def test_kind_specific_fields():
    doc = mnist_tfjob()
    doc["spec"]["successPolicy"] = ""
    doc["spec"]["enableDynamicWorker"] = True
    assert validate(doc, "kubeflow/tfjob") == []
    doc["spec"]["successPolicy"] = "AnyWorker"
    assert validate(doc, "kubeflow/tfjob") == [
        SchemaIssue(("spec", "successPolicy"), 'must be one of: "", AllWorkers')
    ]

    pt = mnist_tfjob()
    pt.update(kind="PyTorchJob")
    pt["spec"]["pytorchReplicaSpecs"] = pt["spec"].pop("tfReplicaSpecs")
    pt["spec"]["nprocPerNode"] = "auto"
    pt["spec"]["elasticPolicy"] = {
        "minReplicas": 1,
        "maxReplicas": 3,
        "rdzvBackend": "c10d",
        "rdzvConf": [{"key": "timeout", "value": "900"}],
        "metrics": [{"type": "Resource", "resource": {"name": "cpu"}}],
    }
    assert validate(pt, "kubeflow/pytorchjob") == []
    pt["spec"]["nprocPerNode"] = 2
    pt["spec"]["elasticPolicy"]["rdzvBackend"] = "zookeeper"
    assert validate(pt, "kubeflow/pytorchjob") == [
        SchemaIssue(("spec", "elasticPolicy", "rdzvBackend"), "must be one of: c10d, etcd, etcd-v2"),
        SchemaIssue(("spec", "nprocPerNode"), "expected string, got integer 2"),
    ]

    mpi = mnist_tfjob()
    mpi.update(apiVersion="kubeflow.org/v2beta1", kind="MPIJob")
    mpi["spec"]["mpiReplicaSpecs"] = mpi["spec"].pop("tfReplicaSpecs")
    mpi["spec"].update(slotsPerWorker=1, mpiImplementation="MPICH", launcherCreationPolicy="WaitForWorkersReady")
    assert validate(mpi, "kubeflow/mpijob-v2beta1") == []
    mpi["spec"]["mainContainer"] = "mpi"  # only in v1
    assert validate(mpi, "kubeflow/mpijob-v2beta1") == [
        SchemaIssue(("spec", "mainContainer"), "unknown field 'mainContainer'")
    ]
    mpi["apiVersion"] = "kubeflow.org/v1"
    assert validate(mpi, "kubeflow/mpijob-v1") == [
        SchemaIssue(("spec", "launcherCreationPolicy"), "unknown field 'launcherCreationPolicy'"),
        SchemaIssue(("spec", "mpiImplementation"), "unknown field 'mpiImplementation'"),
    ]


def test_nulls_and_yaml_types_are_normalised():
    text = pytorchjob_text(
        "pt", replica_text("Master", image="x", dash="", container='args:\nenv:\n- name: A\n  value: "1"'),
        metadata="creationTimestamp: 2024-05-01T10:00:00Z\nlabels:", spec="runPolicy:")
    rt = YAML()  # round-trip loader: CommentedMap, TimeStamp
    doc = rt.load(text)
    assert validate(doc, "kubeflow/pytorchjob") == []
    assert validate(_yaml.load(text), "kubeflow/pytorchjob") == []


def test_issue_sorting_and_dataclass():
    doc = leader_workers_jobset()
    doc["spec"]["replicatedJobs"][1]["replicas"] = "x"
    doc["spec"]["replicatedJobs"][0]["replicaz"] = 1
    doc["spec"]["zzz"] = 1
    doc["apiVersion"] = "jobset.x-k8s.io/v1"
    issues = validate(doc, "jobset")
    assert [i.path for i in issues] == [
        ("apiVersion",),
        ("spec", "replicatedJobs", 0, "replicaz"),
        ("spec", "replicatedJobs", 1, "replicas"),
        ("spec", "zzz"),
    ]
    assert str(issues[1]) == "spec.replicatedJobs[0].replicaz: unknown field 'replicaz'"
    with pytest.raises(AttributeError):
        issues[0].message = "x"  # frozen
    assert format_path(("metadata", "labels", "app.kubernetes.io/name")) == 'metadata.labels["app.kubernetes.io/name"]'
    assert format_path((0, "a")) == "[0].a"


def test_schema_names_and_dispatch():
    assert schema_names() == [
        "jobset",
        "kubeflow/jaxjob",
        "kubeflow/job",
        "kubeflow/mpijob-v1",
        "kubeflow/mpijob-v2beta1",
        "kubeflow/mxjob",
        "kubeflow/paddlejob",
        "kubeflow/pytorchjob",
        "kubeflow/tfjob",
        "kubeflow/xgboostjob",
    ]
    assert schema_name_for("kubeflow.org/v1", "MPIJob") == "kubeflow/mpijob-v1"
    assert schema_name_for("kubeflow.org/v2beta1", "MPIJob") == "kubeflow/mpijob-v2beta1"
    assert schema_name_for("kubeflow.org/v1", "JAXJob") == "kubeflow/jaxjob"
    assert schema_name_for("kubeflow.org/v1", "MXJob") == "kubeflow/mxjob"
    assert schema_name_for("batch/v1", "Job") is None
    with pytest.raises(ValueError, match="unknown schema"):
        validate({}, "kubeflow/nosuchjob")


def test_every_schema_file_is_a_valid_2020_12_schema_with_matching_id():
    from jsonschema import Draft202012Validator

    for path in sorted(SCHEMAS.rglob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        Draft202012Validator.check_schema(schema)
        rel = path.relative_to(SCHEMAS).as_posix()
        assert schema["$id"] == f"https://kf2jobset.dev/schemas/{rel}"
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def _strict_objects(node, path="#"):
    """Yield paths of object schemas with properties but no additionalProperties."""
    if isinstance(node, dict):
        if "properties" in node and "additionalProperties" not in node and "$ref" not in node:
            yield path
        for k, v in node.items():
            yield from _strict_objects(v, f"{path}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _strict_objects(v, f"{path}/{i}")


def test_schemas_are_strict_everywhere():
    # Objects that list properties close themselves, except overlays that sit next to a
    # $ref (the referenced schema is the closed one) and their nested property overlays.
    loose = []
    for path in sorted(SCHEMAS.rglob("*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        for p in _strict_objects(schema):
            loose.append(f"{path.name}{p[1:]}")
    assert loose == ["jobset.schema.json/$defs/ReplicatedJob/properties/template/properties/spec"]
