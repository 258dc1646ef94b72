"""Creating a conversion's objects in a cluster: the order, the checks and the server dry run that
`kubectl kf2jobset apply` and `kf2jobset.live.apply` share. No printing: what the user must hear goes to
`warn`, failures are raised as typed errors.

Order: every object is sent with dryRun=All first (the API server runs the CRDs' schemas and CEL rules
with strict field validation, nothing persists); then, unless only a dry run was asked for, created: the
JobSet first, then its companions owned by it; a TrainJob goes through trainjobs.py (its runtime first).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Callable

from ..errors import Kf2JobSetError, NotFoundError, Problem
from .cluster import JOBSET_GROUP, JOBSET_PLURAL, JOBSET_VERSION
from .kinds import LiveKind
from .objects import TERMINAL_STATES, is_suspended, job_state, kubectl_name, secret_refs
from .scanning import object_ref

ACTIVE_STATES = ("-", "Created", "Running", "Restarting")
Warn = Callable[[str], None]


@dataclass(frozen=True)
class Source:
    """The live v1 job a conversion was read from."""

    kind: LiveKind
    version: str
    obj: dict

    @property
    def name(self) -> str:
        return str((self.obj.get("metadata") or {}).get("name"))


def check_source(source: Source, suspend_source: bool, warn: Warn, *, suspend_hint: str) -> None:
    """Running both the v1 job and its JobSet would run the training twice; a finished one runs it again."""
    ref = object_ref(source.obj)
    state = job_state(source.obj)
    if state in TERMINAL_STATES:
        warn(f"{ref} has {state}: the JobSet runs the training again")
    elif state in ACTIVE_STATES and not is_suspended(source.obj) and not suspend_source:
        warn(f"{ref} is not suspended: once the JobSet exists both run the same training ({suspend_hint})")


def check_secrets(cluster, objects: list[dict], notes: list, namespace: str, warn: Warn) -> None:
    """Warn about Secrets the pods mount that are missing, or that the v1 job's deletion would take along."""
    for secret in secret_refs(objects):
        try:
            owners = cluster.secret_owners(namespace, secret)
        except Kf2JobSetError as err:
            warn(f"cannot check Secret {secret!r} in namespace {namespace}: {err.problems[0]}")
            continue
        if owners is None:
            action = next((n.action for n in notes if n.action and secret in n.action), None)
            if action:  # the core's hint has no namespace: this one has
                action = action.replace("kubectl create secret", f"kubectl -n {namespace} create secret")
            warn(f"Secret {secret!r} not found in namespace {namespace}: pods that mount it will not start"
                 + (f" (hint: {action})" if action else ""))
        elif owners:
            warn(f"Secret {secret!r} is owned by {', '.join(owners)}: deleting the owner deletes the Secret "
                 "the JobSet mounts; remove its ownerReferences (or copy it) before deleting the v1 job")


def create_objects(cluster, objects: list[dict], kind_written: str, namespace: str, *, dry_run: bool,
                   warn: Warn) -> list[dict]:
    """A server dry run of every object, then (not `dry_run`) the objects created; what the server returned
    for the last pass, in order."""
    if kind_written == "TrainJob":
        from .trainjobs import create_trainjob

        checked = create_trainjob(cluster, objects, namespace, dry_run=True, warn=warn if dry_run else _quiet)
        return checked if dry_run else create_trainjob(cluster, objects, namespace, dry_run=False, warn=warn)
    if not cluster.jobset_served():
        raise NotFoundError(
            f"the JobSet CRD ({JOBSET_PLURAL}.{JOBSET_GROUP}, {JOBSET_VERSION}) is not installed in this cluster: "
            "install JobSet first (https://jobset.sigs.k8s.io/docs/installation/)"
        )
    jobset = next(o for o in objects if o.get("kind") == kind_written)
    companions = [o for o in objects if o is not jobset]
    created = _create_owned(cluster, jobset, companions, namespace, dry_run=True)
    return created if dry_run else _create_owned(cluster, jobset, companions, namespace, dry_run=False)


def _quiet(text: str) -> None:
    """The dry run before a real create: what it would say, the create says (or raises)."""


def _create_owned(cluster, jobset: dict, companions: list[dict], namespace: str, *, dry_run: bool) -> list[dict]:
    out = [cluster.create(jobset, namespace, dry_run)]
    owner = {
        "apiVersion": jobset["apiVersion"],
        "kind": "JobSet",
        "name": out[0]["metadata"]["name"],
        "uid": out[0]["metadata"]["uid"],
    }
    for obj in companions:
        obj = copy.deepcopy(obj)
        obj.setdefault("metadata", {})["ownerReferences"] = [owner]
        try:
            out.append(cluster.create(obj, namespace, dry_run))
        except Kf2JobSetError as err:
            if dry_run:
                raise
            raise type(err)([*err.problems, Problem(
                f"{kubectl_name(out[0])} was created, but its companion {kubectl_name(obj)} was not; create it, "
                "or delete the JobSet and retry")]) from None
    return out
