"""What a note says about the emitted objects, as data a test can check (tests/test_claims.py).

A note's text is for people; its claims say the same thing to a machine: "this path of the JobSet
holds this value", "no container of this replicatedJob sets MASTER_ADDR", "the ConfigMap has a
hostfile key". The code that makes the note writes its claims beside it, from the same values, so
the report cannot say what the output does not. A note whose text asserts nothing the emitted
objects can show (v1 behaviour, a controller's runtime behaviour) carries `unchecked=` with why.

Paths are dotted keys with bracketed list selectors:
  spec.replicatedJobs[launcher].template.spec.backoffLimit   an element whose `name` is launcher
  spec.replicatedJobs[*].template.spec.backoffLimit          every element
  ...containers[0].ports[containerPort=2222]                  elements whose field equals the text
  metadata.labels[kueue.x-k8s.io/queue-name]                  a map key that has dots
A claim holds for every place its path reaches; a path that reaches nothing fails `equals`,
`present` and `contains`, and passes `absent`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

OPS = ("equals", "absent", "present", "contains", "count", "excludes", "atleast")
_TOKEN = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]")


@dataclass(frozen=True)
class Claim:
    path: str
    op: str = "equals"  # equals | absent | present | contains (a substring or list item) | excludes | count | atleast
    value: Any = None
    target: str = "JobSet"  # or a companion's kind ("ConfigMap", "PodGroup")

    def __post_init__(self):
        if self.op not in OPS:
            raise ValueError(f"unknown claim op {self.op!r}")

    def text(self) -> str:
        where = f"{self.target} {self.path}"
        return where + {"absent": " is absent", "present": " is present"}.get(self.op, f" {self.op} {self.value!r}")


def equals(path: str, value, target: str = "JobSet") -> Claim:
    return Claim(path, "equals", value, target)


def absent(path: str, target: str = "JobSet") -> Claim:
    return Claim(path, "absent", None, target)


def present(path: str, target: str = "JobSet") -> Claim:
    return Claim(path, "present", None, target)


def contains(path: str, value, target: str = "JobSet") -> Claim:
    return Claim(path, "contains", value, target)


def excludes(path: str, value, target: str = "JobSet") -> Claim:
    return Claim(path, "excludes", value, target)


def count(path: str, n: int, target: str = "JobSet") -> Claim:
    return Claim(path, "count", n, target)


def atleast(path: str, n, target: str = "JobSet") -> Claim:
    return Claim(path, "atleast", n, target)


def success(targets: list) -> tuple:
    """The JobSet completes when every Job of `targets` (none: of every replicatedJob) has succeeded."""
    return (equals("spec.successPolicy.operator", "All"),
            equals("spec.successPolicy.targetReplicatedJobs", list(targets)) if targets else
            absent("spec.successPolicy.targetReplicatedJobs"))


def retried_within_backoff(job, rjob_names: dict, rtypes) -> tuple:
    """Each of these replica types' Jobs re-creates a failed pod (a backoffLimit of at least 1)."""
    return tuple(atleast(f"spec.replicatedJobs[{rjob_names[t]}].template.spec.backoffLimit", 1) for t in rtypes)


def pod_path(rjob: str = "*") -> str:
    """The pod template of replicatedJob `rjob` (`*`: every one)."""
    return f"spec.replicatedJobs[{rjob}].template.spec.template"


def tokens(path: str) -> list:
    return [(m.group(1), None) if m.group(1) is not None else (None, m.group(2)) for m in _TOKEN.finditer(path)]


def resolve(node, path: str) -> list:
    """Every value the path reaches (an empty list when it reaches nothing)."""
    found = [node]
    for key, selector in tokens(path):
        nxt = []
        for n in found:
            if key is not None:
                if isinstance(n, dict) and key in n:
                    nxt.append(n[key])
            elif isinstance(n, dict):
                if selector in n:
                    nxt.append(n[selector])
            elif isinstance(n, list):
                nxt += _select(n, selector)
        found = nxt
    return found


def _select(items: list, selector: str) -> list:
    if selector == "*":
        return list(items)
    if selector.isdigit():
        i = int(selector)
        return [items[i]] if i < len(items) else []
    if "=" in selector:
        field, want = selector.split("=", 1)
        return [x for x in items if isinstance(x, dict) and str(x.get(field)) == want]
    return [x for x in items if isinstance(x, dict) and x.get("name") == selector]


def _objects(objects: list[dict], target: str) -> list[dict]:
    kind, _, name = target.partition("/")
    return [o for o in objects if isinstance(o, dict) and o.get("kind") == kind
            and (not name or (o.get("metadata") or {}).get("name") == name)]


def check(claim: Claim, objects: list[dict]) -> str | None:
    """None when the claim holds for `objects` (the JobSet and its companions); else what is wrong."""
    targets = _objects(objects, claim.target)
    values = [v for o in targets for v in resolve(o, claim.path)]
    op, want = claim.op, claim.value
    if op == "count":
        return None if len(values) == want else f"{claim.text()}: found {len(values)}"
    if op == "absent":
        return None if not values else f"{claim.text()}: found {values[0]!r}"
    if op == "excludes":
        bad = [v for v in values if _has(v, want)]
        return None if not bad else f"{claim.text()}: found in {bad[0]!r}"
    if not values:
        return f"{claim.text()}: the path reaches nothing"
    for v in values:
        if op == "equals" and v != want:
            return f"{claim.text()}: is {v!r}"
        if op == "contains" and not _has(v, want):
            return f"{claim.text()}: not in {v!r}"
        if op == "atleast" and not (isinstance(v, int) and v >= want):
            return f"{claim.text()}: is {v!r}"
    return None


def _has(container, item) -> bool:
    if isinstance(container, str):
        return str(item) in container
    if isinstance(container, dict):
        return item in container
    if isinstance(container, list):
        return item in container or any(isinstance(x, dict) and x.get("name") == item for x in container)
    return container == item
