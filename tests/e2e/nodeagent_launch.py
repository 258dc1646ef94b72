"""What the tests map container images to (a `Program`) and the record of each container start
(`Launch`: what the kubelet would have handed the runtime, and what the agent ran instead). Tests
read these records through NodeAgent.launches/log.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Union

Program = Union[list, tuple, Callable[["Launch"], "list[str] | None"]]


def OWN_COMMAND(launch: "Launch") -> list[str]:  # noqa: N802 - a constant-like program
    """A program that runs the container's own command + args (after ``$(VAR)`` expansion)."""
    return launch.command


@dataclass
class Launch:
    """One container start: what the kubelet would have handed the runtime (and what ran)."""

    namespace: str
    pod: str
    container: str
    image: str
    init: bool
    restart: int
    hostname: str
    pod_ip: str
    env: list  # [(name, value)] in the kubelet's order of definition (no runtime additions)
    command: list  # command + args after $(VAR) expansion (what the image would have run)
    argv: list = field(default_factory=list)  # what the agent ran instead
    mounts: dict = field(default_factory=dict)  # mountPath -> source directory/file on this machine
    working_dir: str = ""
    spec: dict = field(default_factory=dict)  # the container as the API has it
    log: str = ""
    labels: dict = field(default_factory=dict)  # the pod's labels when the container started
    pod_spec: dict = field(default_factory=dict)  # the pod's spec (restartPolicy, volumes, ...)
