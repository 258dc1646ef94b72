"""Where the API server serves an object kf2jobset writes: group, version, plural, and whether it lives in a
namespace. What `kubectl kf2jobset apply` creates objects at, and what Python callers of
CustomObjectsApi pass (`create_namespaced_custom_object(group, version, namespace, plural, body)`)."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# kinds kf2jobset names that live outside namespaces (a TrainJob may name one; kf2jobset's runtimes bundle is one)
CLUSTER_SCOPED = ("ClusterTrainingRuntime",)


@dataclass(frozen=True)
class Resource:
    group: str  # "" for the core group (ConfigMap, Service)
    version: str
    plural: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        """kubectl's spelling: jobsets.jobset.x-k8s.io/v1alpha2, configmaps/v1."""
        return f"{self.plural}.{self.group}/{self.version}" if self.group else f"{self.plural}/{self.version}"


def resource_of(obj: Mapping[str, Any]) -> Resource:
    """The resource of an object kf2jobset wrote. Plurals are the lower-cased kind + "s", as every kind it
    writes is named by its CRD or the core API (jobsets, trainjobs, trainingruntimes, podgroups, configmaps,
    services); tests/live holds them against the API server's discovery."""
    api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
    if not api_version or not kind:
        raise ValueError(f"not a Kubernetes object: apiVersion {obj.get('apiVersion')!r}, kind {obj.get('kind')!r}")
    group, _, version = api_version.rpartition("/")
    return Resource(group, version, kind.lower() + "s", kind not in CLUSTER_SCOPED)
