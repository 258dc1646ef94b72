"""One module per framework. Each holds both sides of its contract: what the operator injected into
a pod, and how the JobSet carries the same thing. Both sides are written once, against `Side`, so
they cannot drift; tests then prove the JobSet side reproduces the operator side pod by pod."""
from __future__ import annotations

from importlib import import_module

from ..errors import Problem, UnsupportedError
from .base import Profile


def profile(name: str) -> Profile:
    """The profile a mapping names (`profile: pytorch` -> kf2jobset/frameworks/pytorch.py, PROFILE).
    No registry: a new framework is its mapping file plus its module."""
    if not name.isidentifier() or name == "base":
        raise UnsupportedError(Problem(f"mapping names an invalid framework profile {name!r}", rule="profile"))
    try:
        module = import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        raise UnsupportedError(Problem(f"no framework profile {name!r} (kf2jobset/frameworks/{name}.py)", rule="profile")) from None
    return module.PROFILE
