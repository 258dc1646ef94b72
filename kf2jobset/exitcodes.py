"""Exit codes: the one place where outcomes and typed errors become numbers (documented in the README)."""
from __future__ import annotations

OK = 0
FINDINGS = 1  # report: findings at/above --fail-on; check/hook: v1 jobs left or files rewritten
USAGE = 2  # bad flags (click uses 2 as well)
INPUT = 3  # unreadable input: YAML syntax, encoding, an invalid Kubeflow job
UNSUPPORTED = 4  # a valid job that needs a decision (flag) or whose JobSet the API would reject
CLUSTER_AUTH = 5  # kubectl plugin: Unauthorized / Forbidden
CLUSTER_UNREACHABLE = 6  # kubectl plugin: connection refused, timeout, bad kubeconfig
NOT_FOUND = 7  # kubectl plugin: no such object or no such CRD
INTERNAL = 70  # a bug: please report it

_BY_KIND = {
    "input": INPUT,
    "invalid-job": INPUT,
    "unsupported": UNSUPPORTED,
    "rejected-jobset": UNSUPPORTED,
    "usage": USAGE,
    "cluster-auth": CLUSTER_AUTH,
    "cluster-unreachable": CLUSTER_UNREACHABLE,
    "not-found": NOT_FOUND,
}


def for_error(err) -> int:
    return _BY_KIND.get(getattr(err, "kind", ""), INTERNAL)


def worst(codes) -> int:
    """The code to exit with when several files failed differently: the most severe class wins."""
    order = [INTERNAL, CLUSTER_UNREACHABLE, CLUSTER_AUTH, NOT_FOUND, USAGE, INPUT, UNSUPPORTED, FINDINGS, OK]
    codes = set(codes)
    return next((c for c in order if c in codes), OK)
