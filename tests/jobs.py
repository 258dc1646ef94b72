"""Jobs the tests write: one builder for the small PyTorchJob most tests start from (as a dict or as the
block-style YAML users write), and the few job texts whose exact spelling a test is about."""
from __future__ import annotations

import copy

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
OCTAL_PYTORCHJOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: oct}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
            - name: pytorch
              image: trainer:1
              volumeMounts: [{name: cfg, mountPath: /cfg}]
          volumes:
            - name: cfg
              configMap: {name: cfg, defaultMode: 0644}
    Worker:
      replicas: {workers}
      template:
        spec:
          containers:
            - name: pytorch
              image: trainer:1
"""
