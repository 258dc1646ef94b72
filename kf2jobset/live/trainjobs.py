"""`apply --target trainjob`: the objects of a TrainJob conversion created in the order Trainer needs.

Order and ownership: the generated TrainingRuntime first (shared by every TrainJob of that shape, so
one that exists already is kept: its name is derived from its content), then the TrainJob (Trainer's
webhook refuses a TrainJob whose runtime it cannot find), then the companions, owned by the TrainJob
so they go when it goes. A ClusterTrainingRuntime (Trainer's or kf2jobset's bundle) is looked up, never created.
"""
from __future__ import annotations

import copy
import time

from .apierrors import Conflict, Forbidden, NotFound

TRAINER_GROUP, TRAINER_VERSION = "trainer.kubeflow.org", "v1alpha1"
RUNTIME_NOT_SEEN = "must be created before the TrainJob"  # Trainer's webhook, from its informer cache
CACHE_WAIT = 10.0  # seconds: how long a new runtime may take to reach Trainer's cache


def create_trainjob(cluster, objects: list[dict], namespace: str, *, dry_run: bool, warn) -> list[dict]:
    """Create (or, dry_run, validate) every object; returns what the server returned, in order."""
    _require_trainer(cluster)
    trainjob = next(o for o in objects if o.get("kind") == "TrainJob")
    runtimes = [o for o in objects if o.get("kind") == "TrainingRuntime"]
    companions = [o for o in objects if o.get("kind") not in ("TrainJob", "TrainingRuntime")]
    out = []
    for runtime in runtimes:
        try:
            out.append(cluster.create(runtime, namespace, dry_run))
        except Conflict:
            warn(f"trainingruntime.{TRAINER_GROUP}/{runtime['metadata']['name']} exists already: kept (same name, "
                 "same content: it is shared by every TrainJob of this shape)")
    ref = trainjob["spec"]["runtimeRef"]
    if ref.get("kind") == "ClusterTrainingRuntime":
        installed = _require_cluster_runtime(cluster, ref["name"])
        _require_gang(installed, trainjob, warn)
    created = _create_after_runtime(cluster, trainjob, namespace, dry_run, warn, new_runtime=bool(runtimes))
    if created is None:  # a dry run whose runtime does not exist yet: the webhook cannot check the TrainJob
        return out
    out.append(created)
    owner = {"apiVersion": trainjob["apiVersion"], "kind": "TrainJob", "name": created["metadata"]["name"],
             "uid": created["metadata"]["uid"]}
    for obj in companions:
        obj = copy.deepcopy(obj)
        obj.setdefault("metadata", {})["ownerReferences"] = [owner]
        out.append(cluster.create(obj, namespace, dry_run))
    return out


def _create_after_runtime(cluster, trainjob: dict, namespace: str, dry_run: bool, warn, new_runtime: bool):
    deadline = time.monotonic() + CACHE_WAIT
    while True:
        try:
            return cluster.create(trainjob, namespace, dry_run)
        except Forbidden as err:
            if RUNTIME_NOT_SEEN not in str(err):
                raise
            if dry_run and new_runtime:
                warn("the TrainJob was not checked by the server: its TrainingRuntime exists only in this dry run, "
                     "and Trainer's webhook looks the runtime up (it is checked when created with --dry-run=none)")
                return None
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


def _require_trainer(cluster) -> None:
    plurals = cluster.served_plurals(TRAINER_GROUP, TRAINER_VERSION)
    if plurals is None or "trainjobs" not in plurals:
        from ..errors import NotFoundError

        raise NotFoundError(f"the TrainJob CRD (trainjobs.{TRAINER_GROUP}, {TRAINER_VERSION}) is not installed in this "
                            "cluster: install Kubeflow Trainer v2.3 first (or convert with --target jobset)")


def _require_gang(runtime: dict, trainjob: dict, warn) -> None:
    """A TrainJob that needs a gang flavour of kf2jobset's bundle (TJ046) runs only on a runtime in that flavour:
    elsewhere its pods would go to another scheduler, or start one by one."""
    from ..errors import NotFoundError
    from ..targets.bundle_gang import GANG_ANNOTATION, installed_gang, parse

    if not isinstance(runtime, dict):
        return
    needed = parse(((trainjob.get("metadata") or {}).get("annotations") or {}).get(GANG_ANNOTATION))
    have = installed_gang(runtime)
    name = runtime["metadata"]["name"]
    if needed is not None and have != needed:
        raise NotFoundError(
            f"the ClusterTrainingRuntime {name!r} is not in the {needed.flavour} flavour this TrainJob needs "
            f"(podGroupPolicy and schedulerName {needed.scheduler_name}; installed: "
            f"{f'the {have.flavour} flavour, schedulerName {have.scheduler_name}' if have else 'no gang scheduler'}): have the "
            f"platform install it ({needed.command}), or convert with --trainer-runtime per-job")
    if needed is None and have is not None:
        warn(f"the ClusterTrainingRuntime {name!r} is the {have.flavour} flavour of kf2jobset's bundle: this TrainJob's pods "
             f"go to {have.scheduler_name}, whose gang v1's job did not have")


def _require_cluster_runtime(cluster, name: str) -> dict:
    try:
        return cluster.get_cluster_object(TRAINER_GROUP, TRAINER_VERSION, "clustertrainingruntimes", name)
    except NotFound:
        from ..errors import NotFoundError

        from ..targets.bundle_catalog import catalog

        if any(r.name == name for r in catalog()):
            raise NotFoundError(f"the ClusterTrainingRuntime {name!r} of kf2jobset's bundle does not exist in this cluster: "
                                "have the platform install the bundle (kf2jobset runtimes | kubectl apply -f -), or "
                                "convert with --trainer-runtime per-job") from None
        raise NotFoundError(f"the ClusterTrainingRuntime {name!r} does not exist in this cluster: install Trainer's "
                            "default runtimes, or convert with --trainer-runtime per-job") from None
