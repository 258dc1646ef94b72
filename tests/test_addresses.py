"""v1 pod addresses the user wrote (kf2jobset/core/addresses.py): which strings are this job's pods, how each
form is rewritten, what is never touched, the companion Services, and that the rewritten pods reach
the same logical pods as under v1 in the runtime model (also after a rename)."""
from __future__ import annotations

import copy

import pytest
import yaml

from kf2jobset.core import addresses
from kf2jobset.core.convert import convert_job
from kf2jobset.mappings import convertible_mapping
from kf2jobset.options import ConvertOptions
from kf2jobset.core.parse import parse_job
from kf2jobset.files.pipeline import convert_text
from kf2jobset.runtime.jobset_view import jobset_world
from kf2jobset.runtime.operator_view import operator_world

N = "$(KF2JOBSET_JOBSET_NAME)"


def pytorch(name="pt", namespace="ns", workers=2, init_env=None, args=None):
    worker = {"replicas": workers, "restartPolicy": "OnFailure", "template": {"spec": {
        "initContainers": [{"name": "wait", "image": "busybox", "command": ["sh", "-c", "true"],
                            "env": init_env or []}],
        "containers": [{"name": "pytorch", "image": "img", **({"args": args} if args else {})}]}}}
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": meta, "spec": {"pytorchReplicaSpecs": {
        "Master": {"replicas": 1, "restartPolicy": "OnFailure",
                   "template": {"spec": {"containers": [{"name": "pytorch", "image": "img"}]}}},
        "Worker": worker}}}


def job_of(doc):
    return parse_job(doc, convertible_mapping(doc["apiVersion"], doc["kind"]))


def rewritten(text: str, doc=None, **opts) -> str:
    """The worker init container's env value after conversion."""
    doc = doc or pytorch(init_env=[{"name": "PEER", "value": text}])
    conv = convert_job(doc, ConvertOptions(**opts))
    pod = conv.jobset["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]
    return next(e["value"] for e in pod["initContainers"][0]["env"] if e["name"] == "PEER")


@pytest.mark.parametrize("text, want", [
    ("pt-master-0", f"{N}-master-0-0.{N}"),
    ("pt-worker-1:29500", f"{N}-worker-1-0.{N}:29500"),
    ("pt-master-0.ns", f"{N}-master-0-0.{N}.ns"),
    ("pt-master-0.ns.svc", f"{N}-master-0-0.{N}.ns.svc"),
    ("pt-master-0.ns.svc.cluster.local:23456", f"{N}-master-0-0.{N}.ns.svc.cluster.local:23456"),
    ("tcp://pt-master-0:23456", f"tcp://{N}-master-0-0.{N}:23456"),
    ("pt-worker-0,pt-worker-1", f"{N}-worker-0-0.{N},{N}-worker-1-0.{N}"),
    ("ssh root@pt-worker-0 hostname", f"ssh root@{N}-worker-0-0.{N} hostname"),
    ("pt-master-0.", f"{N}-master-0-0.{N}."),  # end of a sentence
])
def test_every_form_is_rewritten_to_the_same_pod(text, want):
    assert rewritten(text) == want


@pytest.mark.parametrize("text", [
    "pt2-master-0",  # another job
    "my-pt-master-0",  # a longer name ending like it
    "xpt-master-0",
    "pt-master-0x", "pt-master-01", "pt-master-0-0",  # longer words
    "pt-master-1", "pt-worker-2",  # pods this job never had
    "pt-chief-0",  # a type it has not
    "pt-master-0.other-ns", "pt-master-0.other-ns.svc",  # another namespace
    "pt-master-0.ns.svc.example.org",  # another domain
    "pt-master-0.ns.svc.cluster.local.evil",  # a longer name
    "gs://bucket/pt-master-0/ckpt",  # a path segment
    "PT-MASTER-0",  # not how the operator spelled it
    "pt_master_0",
])
def test_what_only_looks_similar_is_left_alone(text):
    assert rewritten(text) == text


def test_cluster_domain_and_pinned_subdomain():
    assert rewritten("pt-master-0.ns.svc.corp.internal", cluster_domain="corp.internal") == \
        f"{N}-master-0-0.{N}.ns.svc.corp.internal"
    assert rewritten("pt-master-0.ns.svc.cluster.local", cluster_domain="corp.internal") == \
        f"{N}-master-0-0.{N}.ns.svc.cluster.local"  # runtime/pods.dns_names: v1 answered it too
    assert rewritten("pt-master-0", subdomain="net") == f"{N}-master-0-0.net"


def test_manifest_without_namespace_keeps_the_namespace_written():
    doc = pytorch(namespace=None, init_env=[{"name": "PEER", "value": "pt-master-0.team-a.svc"}])
    assert rewritten("", doc=doc) == f"{N}-master-0-0.{N}.team-a.svc"


def test_helper_is_defined_before_the_first_reference():
    conv = convert_job(pytorch(init_env=[{"name": "A", "value": "x"}, {"name": "PEER", "value": "pt-master-0"}],
                               args=["--peer=pt-worker-1"]), ConvertOptions())
    pod = conv.jobset["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]
    init_env = pod["initContainers"][0]["env"]
    assert init_env[0]["name"] == "KF2JOBSET_JOBSET_NAME" and init_env[0]["valueFrom"]
    assert [e["name"] for e in init_env].count("KF2JOBSET_JOBSET_NAME") == 1
    main = pod["containers"][0]
    assert main["args"] == [f"--peer={N}-worker-1-0.{N}"]
    assert [e["name"] for e in main["env"]].count("KF2JOBSET_JOBSET_NAME") == 1
    codes = [n.code for n in conv.notes if n.code == "JS065"]
    assert len(codes) == 2


def test_user_owned_helper_name_gets_the_literal_jobset_name():
    doc = pytorch(init_env=[{"name": "KF2JOBSET_JOBSET_NAME", "value": "mine"}, {"name": "PEER", "value": "pt-master-0"}])
    assert rewritten("", doc=doc) == "pt-master-0-0.pt"


@pytest.mark.parametrize("name", [None, "renamed"])
def test_rewritten_addresses_reach_the_same_pods_in_the_runtime_model(name):
    doc = pytorch(init_env=[{"name": "PEER", "value": "pt-worker-1.ns.svc:1"}],
                  args=["--master", "pt-master-0.ns:23456"])
    opts = ConvertOptions(name=name)
    conv = convert_job(doc, opts)
    job = job_of(doc)
    op = operator_world(job)
    js = jobset_world(conv.jobset)
    pairs = [(p, q) for p in op.pods for q in js.pods if p.key == ("worker", 0) and q.key == ("worker", 0)]
    assert len(pairs) == 1
    for op_pod, js_pod in pairs:
        init_op, init_js = op_pod.containers(init=True)[0], js_pod.containers(init=True)[0]
        a = dict(op_pod.env(init_op))["PEER"]
        b = dict(js_pod.env(init_js))["PEER"]
        assert op.resolver.normalise(a) == js.resolver.normalise(b) == "<pod worker/1>:1"


def test_mpi_v2beta1_hostnames_and_v1_pod_names():
    v2 = {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": {"name": "m", "namespace": "s"},
          "spec": {"mpiReplicaSpecs": {
              "Launcher": {"replicas": 1, "template": {"spec": {"containers": [{"name": "l", "image": "i", "args": [
                  "m-worker-0.m.s.svc m-worker-1.m m-launcher.m m-worker-0 m-worker-1.other"]}]}}},
              "Worker": {"replicas": 2, "template": {"spec": {"containers": [{"name": "w", "image": "i"}]}}}}}}
    found = addresses.find(v2["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["args"][0],
                           job_of(v2))
    assert [(f.text, f.rtype, f.index, f.suffix) for f in found] == [
        ("m-worker-0.m.s.svc", "Worker", 0, ".s.svc"), ("m-worker-1.m", "Worker", 1, ""), ("m-launcher.m", "Launcher", 0, "")]
    v1 = copy.deepcopy(v2)
    v1["apiVersion"] = "kubeflow.org/v1"
    v1["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["name"] = "mpi"
    v1["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["name"] = "mpi"
    found = addresses.find("m-worker-0 m-worker-1.m m-launcher", job_of(v1))
    assert [(f.text, f.rtype, f.index) for f in found] == [("m-worker-0", "Worker", 0), ("m-launcher", "Launcher", 0)]


CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: peers
  namespace: ns
data:
  hosts: |
    pt-worker-1.ns.svc
    pt-master-0
  other: pt2-worker-0
---
"""


def test_configmap_addresses_get_v1_services_selecting_jobset_pods():
    text = CONFIGMAP + yaml.safe_dump(pytorch())
    result = convert_text(text, "f.yaml", ConvertOptions())
    assert not result.errors
    services = [o for o in result.conversions[0].objects if o["kind"] == "Service"]
    assert [(s["metadata"]["name"], s["spec"]["selector"]["jobset.sigs.k8s.io/replicatedjob-name"],
             s["spec"]["selector"]["jobset.sigs.k8s.io/job-index"]) for s in services] == [
        ("pt-master-0", "master", "0"), ("pt-worker-1", "worker", "1")]
    assert all(s["spec"]["clusterIP"] == "None" and s["spec"]["selector"]["jobset.sigs.k8s.io/jobset-name"] == "pt"
               for s in services)
    assert CONFIGMAP in result.new_text  # the ConfigMap passes through byte for byte
    note = next(n for n in result.conversions[0].notes if n.code == "JS066")
    assert note.category == "prerequisite" and "ConfigMap peers data[hosts]" in note.message


def test_configmap_of_another_namespace_is_not_read():
    text = CONFIGMAP.replace("namespace: ns", "namespace: elsewhere") + yaml.safe_dump(pytorch())
    result = convert_text(text, "f.yaml", ConvertOptions())
    assert not [o for o in result.conversions[0].objects if o["kind"] == "Service"]


def test_v1_pod_services_for_every_pod():
    conv = convert_job(pytorch(), ConvertOptions(v1_pod_services=True))
    names = [o["metadata"]["name"] for o in conv.objects if o["kind"] == "Service"]
    assert names == ["pt-master-0", "pt-worker-0", "pt-worker-1"]
    assert all(o["spec"]["ports"] == [{"name": "pytorchjob-port", "port": 23456}]
               for o in conv.objects if o["kind"] == "Service")


def test_no_name_no_literal_addresses():
    doc = pytorch(init_env=[{"name": "PEER", "value": "pt-master-0"}])
    doc["metadata"] = {"generateName": "pt-"}
    assert rewritten("", doc=doc) == "pt-master-0"
