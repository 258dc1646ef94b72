"""Target `jobset` (the default): the JobSet and its companions (an MPI hostfile ConfigMap, a Volcano
PodGroup), exactly as the core built and validated them."""
from __future__ import annotations


def finish(conversion, options) -> None:
    conversion.output = [conversion.jobset, *conversion.companions]
