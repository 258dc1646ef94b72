"""Pod-by-pod comparison of the operator world and the JobSet world.

Pods are paired by role and rank (never by name). Env values are compared after each world's
resolver has replaced addresses by the logical pod they reach, so `pt-master-0` and
`pt-master-0-0.pt` compare equal when both reach master 0.
"""
from __future__ import annotations

import re

from dataclasses import dataclass

from ..frameworks.base import HELPER_PREFIX
from .jobset_view import JobSetWorld
from .operator_view import OperatorWorld

JOB_INJECTED = ("JOB_COMPLETION_INDEX",)


@dataclass(frozen=True)
class EnvDiff:
    pod: tuple[str, int]
    container: str
    var: str
    change: str  # missing | extra | value | order | pod-missing | pod-extra | container-missing
    operator_value: str | None = None
    jobset_value: str | None = None


@dataclass(frozen=True)
class EnvMatch:
    """An env var whose text changed but whose meaning did not (same value after address resolution)."""

    pod: tuple[str, int]
    container: str
    var: str
    operator_value: str
    jobset_value: str
    addresses: tuple  # logical pods the value reaches


def _visible(env: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [(n, v) for n, v in effective(env) if not n.startswith(HELPER_PREFIX) and n not in JOB_INJECTED]


def effective(env: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """What the process gets: the kubelet folds a repeated name into one variable, the later entry
    winning (v1 pods repeated names the operator injected after the user's)."""
    last = {n: i for i, (n, _) in enumerate(env)}
    return [(n, v) for i, (n, v) in enumerate(env) if last[n] == i]


def pair_pods(op: OperatorWorld, js: JobSetWorld):
    """Pods of both worlds paired by role and rank: (pairs, operator pods with no twin, JobSet keys with none)."""
    js_pods = {p.key: p for p in js.pods}
    op_keys = {p.key for p in op.pods}
    pairs = [(p, js_pods[p.key]) for p in op.pods if p.key in js_pods]
    missing = [p for p in op.pods if p.key not in js_pods]
    return pairs, missing, sorted(set(js_pods) - op_keys)


# The models give each pod a made-up IP (operator_view 10.1.k.i, jobset_view 10.2.k.j): a value that differs only by
# them (status.podIP on both sides, the same logical pod) is the pod's own IP in both worlds, not a rewrite
_SIMULATED_IP = re.compile(r"(?<![\d.])10\.[12]\.\d+\.\d+(?![\d.])")


def compare_env(op: OperatorWorld, js: JobSetWorld) -> tuple[list[EnvDiff], list[EnvMatch]]:
    diffs: list[EnvDiff] = []
    rewritten: list[EnvMatch] = []
    pairs, missing, extra = pair_pods(op, js)
    diffs += [EnvDiff(key, "", "", "pod-extra") for key in extra]
    diffs += [EnvDiff(pod.key, "", "", "pod-missing") for pod in missing]
    for pod, other in pairs:
        theirs = {c.get("name"): c for c in other.containers()}
        for c in pod.containers():
            cname = c.get("name")
            if cname not in theirs:
                diffs.append(EnvDiff(pod.key, cname, "", "container-missing"))
                continue
            mine = _visible(pod.env(c))
            yours = _visible(other.env(theirs[cname]))
            d, m = _compare_lists(pod.key, cname, mine, yours, op, js)
            diffs += d
            rewritten += m
    return diffs, rewritten


def _compare_lists(key, cname, mine, yours, op: OperatorWorld, js: JobSetWorld):
    diffs, matches = [], []
    mine_map, yours_map = dict(mine), dict(yours)
    for name, value in mine:
        if name not in yours_map:
            diffs.append(EnvDiff(key, cname, name, "missing", value, None))
            continue
        other = yours_map[name]
        a, b = op.resolver.normalise(value), js.resolver.normalise(other)
        if a != b:
            diffs.append(EnvDiff(key, cname, name, "value", value, other))
        elif value != other and _SIMULATED_IP.sub("IP", value) != _SIMULATED_IP.sub("IP", other):
            matches.append(EnvMatch(key, cname, name, value, other, tuple(op.resolver.addresses_in(value))))
    for name, value in yours:
        if name not in mine_map:
            diffs.append(EnvDiff(key, cname, name, "extra", None, value))
    common_mine = [n for n, _ in mine if n in yours_map]
    common_yours = [n for n, _ in yours if n in mine_map]
    if common_mine != common_yours:
        diffs.append(EnvDiff(key, cname, "*", "order", ",".join(common_mine), ",".join(common_yours)))
    return diffs, matches
