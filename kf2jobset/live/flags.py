"""The kubectl flags the plugin parses itself (kubectl neither parses nor forwards its own flags to
plugins): --kubeconfig, --context, -n/--namespace, --request-timeout (connection_options),
-A/--all-namespaces, -l/--selector, --chunk-size (selection_options), the same flags accepted
before the command name (hoist_flags), and the cluster connection they describe.
"""
from __future__ import annotations

import re

import click

from ..errors import UsageError
from .cluster import DEFAULT_CHUNK_SIZE

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")


def parse_timeout(text: str) -> float | None:
    """kubectl's --request-timeout: `0` (no limit), `30` (seconds), `1m30s`, `500ms` -> seconds or None."""
    text = (text or "0").strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", text):
        seconds = float(text)
    else:
        parts = _DURATION.findall(text)
        if not parts or "".join(n + u for n, u in parts) != text:
            raise UsageError(f"--request-timeout {text!r}: expected a duration such as 0, 30, 30s, 1m or 500ms")
        scale = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
        seconds = sum(float(n) * scale[u] for n, u in parts)
    return seconds or None


# ---------------------------------------------------------------------------------------------
# options: the kubectl flags the plugin parses itself


def connection_options(func):
    opts = [
        click.option("--kubeconfig", metavar="PATH", help="Kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)."),
        click.option("--context", metavar="NAME", help="Kubeconfig context (default: the current context)."),
        click.option("-n", "--namespace", metavar="NS", help="Namespace (default: the context's, else default)."),
        click.option("--request-timeout", default="0", show_default=True, metavar="DURATION",
                     help="Limit for each API request (e.g. 30s, 1m); 0 = none."),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def selection_options(func):
    opts = [
        click.option("-A", "--all-namespaces", is_flag=True, help="Every namespace (ignores -n and the context's namespace)."),
        click.option("-l", "--selector", metavar="SELECTOR", help="Label selector, e.g. team=ml,env!=dev."),
        click.option("--chunk-size", type=click.IntRange(min=0), default=DEFAULT_CHUNK_SIZE, show_default=True,
                     help="List this many objects per request (limit/continue); 0 = all at once."),
    ]
    for opt in reversed(opts):
        func = opt(func)
    return func


def connect(kw: dict):
    from .cluster import Cluster

    return Cluster.connect(kw.pop("kubeconfig"), kw.pop("context"), parse_timeout(kw.pop("request_timeout")))



_VALUE_FLAGS = {"--kubeconfig", "--context", "-n", "--namespace", "--request-timeout", "-l", "--selector",
                "-o", "--output", "--chunk-size"}
_BOOL_FLAGS = {"-A", "--all-namespaces"}


def hoist_flags(args: list[str], commands) -> list[str]:
    """Move standard flags given before the command name to after it; anything else is left to click."""
    lead: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in commands:
            return [arg, *lead, *args[i + 1:]] if lead else args
        flag = arg.split("=", 1)[0]
        if flag in _VALUE_FLAGS and "=" not in arg and i + 1 < len(args):
            lead += args[i:i + 2]
            i += 2
        elif flag in _VALUE_FLAGS or arg in _BOOL_FLAGS:
            lead.append(arg)
            i += 1
        else:
            return args
    return args
