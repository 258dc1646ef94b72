"""The objects the stacks (tests/e2e/stack.py) install or send: the upstream webhook configurations registered on
loopback with the test CA, Trainer's runtimes, Volcano's PodGroup CRD, and the sentinel objects whose admission
shows that each webhook is in effect."""
from __future__ import annotations

import base64
import copy
import json
from collections.abc import Iterable
from pathlib import Path

import yaml

from .. import upstream
from ..apiserver_harness import served_crd
from ..tool_errors import ToolUnavailable


TRAINER_GROUP, TRAINER_VERSION = "trainer.kubeflow.org", "v1alpha1"
JOBSET_WEBHOOK_PREFIX = "jobset-"  # config/default's namePrefix


def _json_pointer_set(doc: dict, pointer: str, value, op: str) -> None:
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.lstrip("/").split("/")]
    target = doc
    for p in parts[:-1]:
        target = target[int(p)] if isinstance(target, list) else target[p]
    last = parts[-1]
    if isinstance(target, list):
        if op == "add":  # RFC 6902: insert before the index, "-" appends
            target.insert(len(target) if last == "-" else int(last), value)
        else:
            target[int(last)] = value
    else:
        if op == "replace" and last not in target:
            raise ValueError(f"replace of a missing member: {pointer}")
        target[last] = value


def apply_json6902(doc: dict, ops: Iterable[dict]) -> dict:
    """Apply the ``replace`` and ``add`` operations of a kustomize JSON6902 patch (all upstream uses here)."""
    doc = copy.deepcopy(doc)
    for op in ops:
        if op.get("op") not in ("replace", "add"):
            raise ValueError(f"unsupported patch op {op!r}")
        _json_pointer_set(doc, op["path"], op["value"], op["op"])
    return doc


def loopback_webhooks(doc: dict, name: str, port: int, ca_pem: bytes) -> dict:
    """An upstream webhook configuration pointed at https://127.0.0.1:<port><path> with our CA."""
    doc = copy.deepcopy(doc)
    doc["metadata"] = {"name": name, "labels": {"app.kubernetes.io/managed-by": "kf2jobset-e2e"}}
    for wh in doc["webhooks"]:
        path = wh["clientConfig"]["service"]["path"]
        wh["clientConfig"] = {
            "url": f"https://127.0.0.1:{port}{path}",
            "caBundle": base64.b64encode(ca_pem).decode(),
        }
    return doc


def _load_all(path: Path) -> list[dict]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def operator_webhook_configs(module: Path, port: int, ca_pem: bytes, only: Iterable[str] = ()) -> list[dict]:
    """The operator's ValidatingWebhookConfiguration; ``only``: keep just these webhooks (by name)."""
    base = module / "manifests" / "base" / "webhook"
    (doc,) = _load_all(base / "manifests.yaml")
    ops = yaml.safe_load((base / "patch.yaml").read_text())  # service names and the config's name
    doc = apply_json6902(doc, ops)
    only = set(only)
    if only:
        doc["webhooks"] = [w for w in doc["webhooks"] if w["name"] in only]
        if {w["name"] for w in doc["webhooks"]} != only:
            raise RuntimeError(f"{base / 'manifests.yaml'} has no webhook(s) {sorted(only)}")
    return [loopback_webhooks(doc, doc["metadata"]["name"], port, ca_pem)]


def jobset_webhook_configs(module: Path, port: int, ca_pem: bytes) -> list[dict]:
    comp = module / "config" / "components" / "webhook"
    patches = {  # as config/components/webhook/kustomization.yaml targets them
        "MutatingWebhookConfiguration": comp / "patches" / "mutating-patch.yaml",
        "ValidatingWebhookConfiguration": comp / "patches" / "validating-patch.yaml",
    }
    out = []
    for doc in _load_all(comp / "manifests.yaml"):
        doc = apply_json6902(doc, yaml.safe_load(patches[doc["kind"]].read_text()))
        out.append(loopback_webhooks(doc, JOBSET_WEBHOOK_PREFIX + doc["metadata"]["name"], port, ca_pem))
    return out


def trainer_webhook_configs(module: Path, port: int, ca_pem: bytes) -> list[dict]:
    """Trainer's MutatingWebhookConfiguration + ValidatingWebhookConfiguration as its kustomization makes them
    (``manifests/base/webhook``: the two patches set the names and the runtimes' objectSelectors)."""
    base = module / "manifests" / "base" / "webhook"
    patches = {
        "MutatingWebhookConfiguration": base / "patch_mutating.yaml",
        "ValidatingWebhookConfiguration": base / "patch_validating.yaml",
    }
    out = []
    for doc in _load_all(base / "manifests.yaml"):
        doc = apply_json6902(doc, yaml.safe_load(patches[doc["kind"]].read_text()))
        out.append(loopback_webhooks(doc, doc["metadata"]["name"], port, ca_pem))
    return out


def trainer_crds() -> list[Path]:
    """Trainer v2.3.0's CRDs (github.com/kubeflow/trainer/v2 manifests/base/crds), or ToolUnavailable with why."""
    reason = upstream.absent("trainer")
    if reason:
        raise ToolUnavailable(f"{reason}: no Trainer CRDs or built-in runtimes to install")
    return upstream.trainer_crds()


def trainer_runtimes() -> list[dict]:
    """The built-in ClusterTrainingRuntimes Trainer installs by default (its manifests/base/runtimes/*.yaml)."""
    trainer_crds()  # the same module: ToolUnavailable with why
    docs = []
    for path in upstream.trainer_runtimes():
        docs += [d for d in _load_all(path) if d.get("kind") == "ClusterTrainingRuntime"]
    return docs


def sentinel_pytorchjob() -> dict:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "kf2jobset-webhook-probe"},
        "spec": {
            "pytorchReplicaSpecs": {  # lower-case replica key: the operator's webhook refuses it
                "worker": {"replicas": 1, "template": {"spec": {"containers": [{"name": "pytorch", "image": "x"}]}}}
            }
        },
    }


def sentinel_mxjob() -> dict:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "MXJob",
        "metadata": {"name": "kf2jobset-webhook-probe"},
        "spec": {
            "jobMode": "MXTrain",
            "mxReplicaSpecs": {
                "Scheduler": {"replicas": 1, "template": {"spec": {"containers": [{"name": "mxnet", "image": "x"}]}}}
            },
        },
    }


def sentinel_jobset(coordinator: str | None = None) -> dict:
    js = {
        "apiVersion": "jobset.x-k8s.io/v1alpha2",
        "kind": "JobSet",
        "metadata": {"name": "kf2jobset-webhook-probe"},
        "spec": {
            "replicatedJobs": [
                {
                    "name": "w",
                    "replicas": 1,
                    "template": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "x"}]}}}},
                }
            ]
        },
    }
    if coordinator:
        js["spec"]["coordinator"] = {"replicatedJob": coordinator}
    return js


def sentinel_runtime(kind: str) -> dict:
    """A (Cluster)TrainingRuntime whose trainer-ancestor replicatedJob has no ``node`` container: Trainer's
    runtime webhooks refuse it (validateReplicatedJobs)."""
    return {
        "apiVersion": f"{TRAINER_GROUP}/{TRAINER_VERSION}",
        "kind": kind,
        "metadata": {"name": "kf2jobset-webhook-probe"},
        "spec": {"template": {"spec": {"replicatedJobs": [{
            "name": "node",
            "template": {
                "metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}},
                "spec": {"template": {"spec": {"containers": [{"name": "not-node", "image": "x"}]}}},
            },
        }]}}},
    }


def sentinel_trainjob(runtime: str = "torch-distributed") -> dict:
    return {
        "apiVersion": f"{TRAINER_GROUP}/{TRAINER_VERSION}",
        "kind": "TrainJob",
        "metadata": {"name": "kf2jobset-webhook-probe"},
        "spec": {"runtimeRef": {"name": runtime}, "runtimePatches": [{"manager": "kf2jobset.example/probe"}]},
    }


def expect_denied_cluster(custom, plural, body, webhook) -> tuple[bool, str]:
    return expect_denied(custom, TRAINER_GROUP, TRAINER_VERSION, plural, body, webhook, cluster=True)


def expect_denied(custom, group, version, plural, body, webhook, cluster: bool = False) -> tuple[bool, str]:
    from kubernetes.client.rest import ApiException

    try:
        if cluster:
            custom.create_cluster_custom_object(group, version, plural, body, dry_run="All")
        else:
            custom.create_namespaced_custom_object(group, version, "default", plural, body, dry_run="All")
    except ApiException as e:
        try:
            text = json.loads(e.body).get("message", "")
        except (TypeError, ValueError):
            text = str(e.body)
        return (f'admission webhook "{webhook}" denied the request' in text), text
    return False, "admitted"


WEBHOOK_CALLS = "apiserver_admission_webhook_admission_duration_seconds_count{"


def expect_webhook_called(api, custom, group, version, plural, body, webhook) -> tuple[bool, str]:
    """A dry-run create that the API server passed through ``webhook`` (its admission metric counts the
    call). For a webhook that denies nothing: v1.8.1's MXJob webhook only returns a deprecation warning,
    and that warning has a newline in it, so the API server drops it (warning headers must not contain
    control characters) and the answer carries no trace of the webhook."""
    custom.create_namespaced_custom_object(group, version, "default", plural, body, dry_run="All")
    resp = api.call_api("GET", api.configuration.host + "/metrics")
    resp.read()
    calls = sum(float(line.rsplit(" ", 1)[1]) for line in resp.data.decode().splitlines()
                if line.startswith(WEBHOOK_CALLS) and f'name="{webhook}"' in line)
    return calls > 0, f"{webhook}: {calls:.0f} calls in the API server's admission metrics"


def expect_mutated(custom) -> tuple[bool, str]:
    out = custom.create_namespaced_custom_object(
        "jobset.x-k8s.io", "v1alpha2", "default", "jobsets", sentinel_jobset(), dry_run="All"
    )
    pod_spec = out["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    # the mutating webhook defaults restartPolicy to OnFailure; the CRD has no such default
    return pod_spec.get("restartPolicy") == "OnFailure", json.dumps(pod_spec)


VOLCANO_PODGROUP_CRD = served_crd("scheduling.volcano.sh", "PodGroup", "podgroups", "v1beta1")
