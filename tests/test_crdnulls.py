"""Nulls as the API server stores a custom resource (kf2jobset/k8s/crdnulls.py).

`cpu:` with no value is a null. The API server drops a null whose CRD field is not nullable and has no
default before it validates (a field with a default gets the default), so the v1 job ran without the
key: kf2jobset converts it (JS072), never refuses it as "inherited". Held here against the real CRDs
(github.com/kubeflow/training-operator@v1.9.4 manifests/base/crds, github.com/kubeflow/mpi-operator@v0.8.2
manifests/base/kubeflow.org_mpijobs.yaml): the API server's rule restated on their openAPIV3Schema gives the
same pruned paths as kf2jobset's schemas, and the premise crdnulls.py rests on (no nullable field, no
preserved unknown fields, every default also the value of an absent key) holds for every v1 CRD.
tests/e2e/test_refusals.py sends the fixture to the real v1 world, which runs it without the keys.
"""
from __future__ import annotations

import copy
import functools

import pytest
import yaml
from click.testing import CliRunner

from kf2jobset.cli.main import main
from kf2jobset.k8s.crdnulls import null_paths, pruned_nulls, schema_at

from . import upstream
from .conftest import FIXTURES
from .jobs import pytorchjob

FIXTURE = FIXTURES / "pytorchjob" / "null-values" / "input.yaml"


@functools.lru_cache(maxsize=None)
def _crd(path) -> dict:
    return yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _crd_files() -> dict[str, object]:
    """`training-operator/<file>` (v1.9.4) and `mpi-operator/<file>` (v0.8.2, MPIJob v2beta1) -> path."""
    out = {f"training-operator/{p.name}": p for p in upstream.training_operator_crds()}
    out["mpi-operator/kubeflow.org_mpijobs.yaml"] = upstream.mpi_v2_crd()
    return out


def _crd_schema(kind_file: str, version: str) -> dict:
    crd = _crd(_crd_files()[kind_file])
    return next(v for v in crd["spec"]["versions"] if v["name"] == version)["schema"]["openAPIV3Schema"]


def _api_server_prunes(value, schema: dict | None, path=()) -> list[tuple]:
    """PruneNonNullableNullsWithoutDefaults and Default restated: map entries whose value is null, whose
    field has a schema that is not nullable. (With a default the API server puts it in; with none it
    deletes the key: either way the null is gone.) List items and fields without a schema are left."""
    out = []
    if schema is None:
        return out
    if isinstance(value, dict):
        for k, v in value.items():
            if not path and k == "metadata":
                continue
            sub = (schema.get("properties") or {}).get(k)
            if sub is None and isinstance(schema.get("additionalProperties"), dict):
                sub = schema["additionalProperties"]
            if v is None and sub is not None and not sub.get("nullable"):
                out.append(path + (k,))
            else:
                out += _api_server_prunes(v, sub, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += _api_server_prunes(v, schema.get("items"), path + (i,))
    return out


def test_the_fixture_converts_with_one_stderr_line_for_the_nulls_that_held_values():
    result = CliRunner().invoke(main, ["convert", str(FIXTURE)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "JS072" in line]
    assert len(lines) == 1, lines  # one line per code per job
    assert "limits.cpu" in lines[0] and "nodeSelector.accelerator" in lines[0]
    assert "protocol" not in lines[0]  # the CRD's default TCP: the same as an unwritten protocol
    assert "volumes" not in lines[0] and "schedulingPolicy" not in lines[0]  # a null list / object is an empty one
    assert "inherited" not in result.stderr
    out = list(yaml.safe_load_all(result.stdout))[0]
    for rjob in out["spec"]["replicatedJobs"]:
        pod = rjob["template"]["spec"]["template"]["spec"]
        assert "cpu" not in pod["containers"][0]["resources"]["limits"]
        assert None not in (pod.get("nodeSelector") or {}).values()


def test_the_issue_reproducer_shape_converts():
    doc = pytorchjob("nulls", workers=0, image="example.com/train:1", restart_policy=None,
                     container={"resources": {"limits": {"cpu": None, "memory": "1Gi"}}})
    result = CliRunner().invoke(main, ["convert", "-"], input=yaml.safe_dump(doc), catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert "JS072" in result.stderr and "quantity None" not in result.stderr


def test_a_null_field_the_schema_does_not_know_is_an_unknown_field():
    doc = yaml.safe_load(FIXTURE.read_text())
    doc["spec"]["runPolicy"]["cleanpodpolicy"] = None
    nulls, unknown = pruned_nulls(doc, "kubeflow/pytorchjob")
    assert unknown == [("spec", "runPolicy", "cleanpodpolicy")]
    assert ("spec", "runPolicy", "cleanpodpolicy") not in [n.path for n in nulls]


def test_a_null_list_item_is_not_pruned_and_is_refused():
    doc = yaml.safe_load(FIXTURE.read_text())
    doc["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["args"] = ["--epochs", None]
    assert not [p for p in null_paths(doc) if p[-1] == 1]
    result = CliRunner().invoke(main, ["convert", "-"], input=yaml.safe_dump(doc), catch_exceptions=False)
    assert result.exit_code == 3 and "args[1]" in result.stderr


def test_top_level_metadata_is_not_read_through_the_crd_schema():
    doc = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "x", "labels": {"a": None}}}
    assert null_paths(doc) == []


def test_what_a_field_holds():
    at = lambda *p: schema_at("kubeflow/pytorchjob", ("spec", "pytorchReplicaSpecs", "Worker", "template", "spec") + p)  # noqa: E731
    assert at("containers", 0, "resources", "limits", "cpu") not in (None,)
    assert at("containers", 0, "resourcez") is None
    assert at("containers", 0, "ports", 0, "protocol").get("default") == "TCP"


@pytest.mark.parametrize("crd,version,schema", [
    ("training-operator/kubeflow.org_pytorchjobs.yaml", "v1", "kubeflow/pytorchjob"),
    ("training-operator/kubeflow.org_tfjobs.yaml", "v1", "kubeflow/tfjob"),
    ("mpi-operator/kubeflow.org_mpijobs.yaml", "v2beta1", "kubeflow/mpijob-v2beta1"),
])
def test_kf2jobset_prunes_the_nulls_the_real_crd_prunes(crd, version, schema):
    doc = yaml.safe_load(FIXTURE.read_text())
    if schema != "kubeflow/pytorchjob":  # the same replica spec under the kind's field
        specs = doc["spec"].pop("pytorchReplicaSpecs")
        doc["kind"] = "TFJob" if schema == "kubeflow/tfjob" else "MPIJob"
        doc["apiVersion"] = f"kubeflow.org/{version}"
        field = "tfReplicaSpecs" if schema == "kubeflow/tfjob" else "mpiReplicaSpecs"
        doc["spec"][field] = {("Chief" if schema == "kubeflow/tfjob" else "Launcher"): specs["Master"],
                              "Worker": specs["Worker"]}
        doc["spec"]["slotsPerWorker" if field == "mpiReplicaSpecs" else "enableDynamicWorker"] = None
    real = _api_server_prunes(copy.deepcopy(doc), _crd_schema(crd, version))
    nulls, unknown = pruned_nulls(doc, schema)
    assert sorted(map(str, [n.path for n in nulls])) == sorted(map(str, real))
    assert unknown == []


def test_the_v1_crds_mark_nothing_nullable_and_keep_no_unknown_fields():
    """crdnulls.py's premise: a null map value under spec is an absent key on every v1 CRD."""
    seen = 0

    def walk(s):
        nonlocal seen
        if isinstance(s, dict):
            assert not s.get("nullable"), s
            assert not s.get("x-kubernetes-preserve-unknown-fields"), s
            seen += 1
            for v in s.values():
                walk(v)
        elif isinstance(s, list):
            for v in s:
                walk(v)

    for _name, path in sorted(_crd_files().items()):
        crd = _crd(path)
        for v in crd["spec"]["versions"]:
            walk(v["schema"]["openAPIV3Schema"]["properties"]["spec"])
    assert seen > 1000
