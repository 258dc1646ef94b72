"""Jobs the tests write: one builder for the small PyTorchJob most tests start from (as a dict or as the
block-style YAML users write); job_text/replica_text, the skeleton of the job texts whose exact spelling
a test is about (each test gives only its quirk lines); and a few such texts."""
from __future__ import annotations

import copy
import textwrap

import yaml


def pytorchjob(name: str = "train", *, master: int = 1, workers: int = 2, image: str = "img:1",
               restart_policy: str | None = "OnFailure", namespace: str | None = None, container: dict | None = None,
               api_version: str = "kubeflow.org/v1") -> dict:
    """A PyTorchJob of ``master`` Masters and ``workers`` Workers (a role with 0 is left out), each pod one
    container ``pytorch`` running ``image``, with the fields of ``container`` added."""
    def replica(count: int) -> dict:
        spec: dict = {"replicas": count}
        if restart_policy:
            spec["restartPolicy"] = restart_policy
        spec["template"] = {"spec": {"containers": [{"name": "pytorch", "image": image,
                                                     **copy.deepcopy(container or {})}]}}
        return spec

    specs = {role: replica(count) for role, count in (("Master", master), ("Worker", workers)) if count}
    metadata = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": api_version, "kind": "PyTorchJob", "metadata": metadata,
            "spec": {"pytorchReplicaSpecs": specs}}


class _BlockStyle(yaml.SafeDumper):
    """Block style with list items indented under their key, as the Kubeflow examples write them."""

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


def as_yaml(obj: dict) -> str:
    return yaml.dump(obj, Dumper=_BlockStyle, sort_keys=False, default_flow_style=False)


def pytorchjob_yaml(name: str = "train", **kw) -> str:
    """:func:`pytorchjob` as YAML text."""
    return as_yaml(pytorchjob(name, **kw))


def _indented(text: str, spaces: int) -> str:
    return textwrap.indent(text, " " * spaces)


def _lines(text: str) -> str:
    return text if not text or text.endswith("\n") else text + "\n"


def replica_text(role: str, replicas: str = "1", *, image: str = "img:1", replica: str = "", container: str = "",
                 pod: str = "", item: str = "", dash: str = "  ", name: str = "pytorch") -> str:
    """One replica spec of a v1 job as the block YAML users write, at column 0 (:func:`job_text` indents it):
    ``replicas`` and ``image`` as written (a trailing comment may follow), one container ``name``. The quirks
    a test is about are lines, each indented as under its place: ``replica`` under ``replicas:``,
    ``container`` under ``image:``, ``pod`` under ``containers:`` (after it), ``item`` just before the
    container's list item; ``dash`` indents that item under ``containers:`` ('' for the indentless style)."""
    item_col = 6 + len(dash)
    return (f"{role}:\n  replicas: {replicas}\n" + _indented(_lines(replica), 2)
            + "  template:\n    spec:\n      containers:\n" + _indented(_lines(item), item_col)
            + " " * item_col + f"- name: {name}\n" + " " * (item_col + 2) + f"image: {image}\n"
            + _indented(_lines(container), item_col + 2) + _indented(_lines(pod), 6))


_SPECS = {"PyTorchJob": "pytorchReplicaSpecs", "TFJob": "tfReplicaSpecs", "MPIJob": "mpiReplicaSpecs"}


def job_text(kind: str, name: str | None, *replicas: str, api_version: str = "kubeflow.org/v1", metadata: str = "",
             spec: str = "", flow_name: bool = False) -> str:
    """A v1 job as block YAML text whose spelling a test asserts on (line numbers, comments, nulls):
    ``name`` as written (``None``: no metadata, as in a template; ``flow_name``: ``metadata: {name: ...}``),
    the lines of ``metadata`` under it, of ``spec`` before the replica specs, then the replica specs
    (:func:`replica_text`, with any comment lines around them)."""
    head = f"apiVersion: {api_version}\nkind: {kind}\n"
    if name is not None and flow_name:
        head += f"metadata: {{name: {name}}}\n"
    elif name is not None:
        head += f"metadata:\n  name: {name}\n" + _indented(_lines(metadata), 2)
    return (head + "spec:\n" + _indented(_lines(spec), 2) + f"  {_SPECS[kind]}:\n"
            + "".join(_indented(r, 4) for r in replicas))


def pytorchjob_text(name: str | None, *replicas: str, **kw) -> str:
    """:func:`job_text` of a PyTorchJob."""
    return job_text("PyTorchJob", name, *replicas, **kw)


def mnist_tfjob() -> dict:
    """A TFJob of two workers using most kinds of field a schema holds (quantities, named and numbered ports)."""
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "mnist", "namespace": "default"},
        "spec": {
            "runPolicy": {"cleanPodPolicy": "None"},
            "tfReplicaSpecs": {
                "Worker": {
                    "replicas": 2,
                    "restartPolicy": "OnFailure",
                    "template": {
                        "metadata": {"labels": {"app": "mnist"}},
                        "spec": {
                            "containers": [
                                {
                                    "name": "tensorflow",
                                    "image": "example.com/mnist:1",
                                    "resources": {"limits": {"cpu": 1, "memory": "2Gi", "nvidia.com/gpu": 1}},
                                    "readinessProbe": {"tcpSocket": {"port": "tfjob-port"}},
                                    "livenessProbe": {"httpGet": {"port": 8080, "path": "/"}},
                                }
                            ]
                        },
                    },
                }
            },
        },
    }


def leader_workers_jobset() -> dict:
    """A JobSet of a leader and workers that start once it is Ready, with success and failure policies."""
    def rjob(name, **extra):
        return {
            "name": name,
            "replicas": 1,
            "template": {
                "spec": {
                    "parallelism": 1,
                    "completions": 1,
                    "template": {
                        "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}
                    },
                }
            },
            **extra,
        }

    return {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "js"},
        "spec": {
            "replicatedJobs": [rjob("leader"), rjob("workers", dependsOn=[{"name": "leader", "status": "Ready"}])],
            "successPolicy": {"operator": "All", "targetReplicatedJobs": ["leader"]},
            "failurePolicy": {"maxRestarts": 3, "rules": [{"name": "r0", "action": "FailJobSet"}]},
            "network": {"enableDNSHostnames": True, "publishNotReadyAddresses": True},
        },
    }


# An octal file mode (0644, 420 to Kubernetes) and a ``{workers}`` placeholder for the Worker count: the
# YAML 1.1 readings Kubernetes applies and a YAML 1.2 reader does not. Its line numbers are asserted.
OCTAL_PYTORCHJOB = pytorchjob_text(
    "oct",
    replica_text("Master", image="trainer:1", container="volumeMounts: [{name: cfg, mountPath: /cfg}]",
                 pod="volumes:\n  - name: cfg\n    configMap: {name: cfg, defaultMode: 0644}"),
    replica_text("Worker", "{workers}", image="trainer:1"), flow_name=True)
