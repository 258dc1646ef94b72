"""One module per framework. Each holds both sides of its contract: what the operator injected into
a pod, and how the JobSet carries the same thing. Both sides are written once, against `Side`, so
they cannot drift; tests then prove the JobSet side reproduces the operator side pod by pod."""
from __future__ import annotations

from importlib import import_module

from .base import Profile

_MODULES = {
    "tensorflow": "tensorflow",
    "pytorch": "pytorch",
    "xgboost": "xgboost",
    "paddle": "paddle",
    "jax": "jax",
    "mpi": "mpi",
}


def profile(name: str) -> Profile:
    return import_module(f"{__name__}.{_MODULES[name]}").PROFILE
