"""Resource names a chart's values write as keys: `{{ .Values.gpuResource }}: {{ .Values.gpus }}`, or
`{{ $key }}: {{ $value }}` in a `range` over `.Values.devices`, under a container's `resources.limits` or
`resources.requests`.

Such a key decides nothing the conversion reads, as long as the conversion treats every resource name
alike: it is carried, as any value is. The stand-in is a name the API server's rules accept and read as
a native resource (no domain of its own, so no rule ties its request to its limit): `kfqr.kubernetes.io/`
before the token, which is taken off again in what the conversion writes, so that the key is a plain
token from then on. That the conversion does treat the name alike is checked, not assumed: the base
variant is converted again with well-known names in its place (a GPU, cpu, memory); where one of them
changes more than the name itself (an MPI launcher holding a GPU comes first in the hostfile, a gang
scheduler sums GPUs), the key is refused with its field and the post-renderer named. A name whose
conversion fails (it repeats a key the template writes too) says nothing either way, as the values that
would make it cannot be installed.

Pure: plans and texts in, texts out or a Refusal.
"""
from __future__ import annotations

import re

from ...errors import Kf2JobSetError, format_path
from .refusal import Refusal
from .reorder import reorder_like

PREFIX = "kfqr.kubernetes.io/"
_PREFIXED = re.compile(re.escape(PREFIX) + r"(kfq[ab][0-9]{4}z)")
# names the conversion could read differently from any other
WELL_KNOWN = ("nvidia.com/gpu", "cpu", "memory")


def holds_resource_names(path: tuple) -> bool:
    """A map whose keys are resource names: a container's (or the pod's) resources.limits / requests."""
    return len(path) >= 2 and path[-2] == "resources" and path[-1] in ("limits", "requests")


def unprefixed(text: str) -> str:
    """The stand-in names as their bare tokens."""
    return _PREFIXED.sub(r"\1", text) if PREFIX in text else text


def check(work, base) -> None:
    """The base variant converted with each well-known name for each resource-name key: the same lines but
    for the name, or the key is refused."""
    p = work.program
    for share in sorted(p.plan.resource_names, key=str):
        key = next(k for k in p.slots if p.share.get(k, k) == share)
        token = str(p.token(key, 0))
        for name in WELL_KNOWN:
            p.named = {share: name}
            try:
                out = work._run(p.render(base.choice, 0, base.iterations))
            finally:
                p.named = {}
            if isinstance(out, Kf2JobSetError):
                continue
            lines = reorder_like(out[0].split("\n"), work.reference) if work.reference is not None else out[0].split("\n")
            if len(lines) == len(base.raw) and all(a.replace(token, name) == b for a, b in zip(base.raw, lines, strict=False)):
                continue
            slot = p.slots[key]
            where = next((path for path, k in work.paths.items() if p.share.get(k, k) == share), ("?",))
            changed = next((b.strip() for a, b in zip(base.raw, lines, strict=False) if a.replace(token, name) != b),
                           "its lines")
            raise Refusal(f"{{{{ {slot.source} }}}} writes a resource name at {format_path(where[:-1])}, which the "
                          f"conversion reads: with {name} there it writes another job, not just another name (near: "
                          f"{work.restore_text(changed)})", slot.line, slot.file, key)
