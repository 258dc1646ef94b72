"""The kubectl plugin (`kubectl kf2jobset`, also `kf2jobset live`): v1 jobs read from a cluster.

Layout (kopf-like: one place per concern):

* ``kinds``     the v1 job kinds the plugin reads (group, plural, versions) and KIND parsing; pure
* ``objects``   what the plugin does to live objects: strip server fields, state, replicas,
                worst finding, Secret references; pure
* ``apierrors`` the ONE place where HTTP/connection failures become typed errors (exit codes 5/6/7)
* ``cluster``   the connection (kubeconfig -> ApiClient, never written back) and every API call
* ``applying``  the checks, server dry run and order of creating a conversion's objects (apply, and Python)
* ``plugin``    click commands: get, scan, apply
* ``client``    the same for Python: ``kf2jobset.live.convert``, ``.apply``, ``.connect`` (exported here)

Only ``cluster`` and ``apierrors`` import the `kubernetes` package, and only when a command runs,
so `kf2jobset convert` never pays for it; the Python names load on first use, like the package's.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what the lazy names below are, for type checkers and IDEs (never run)
    from .client import Applied as Applied
    from .client import LiveConverted as LiveConverted
    from .client import apply as apply
    from .client import connect as connect
    from .client import convert as convert
    from .cluster import Cluster as Cluster

__all__ = ["Applied", "Cluster", "LiveConverted", "apply", "connect", "convert"]


def __getattr__(name: str) -> object:
    if name == "Cluster":
        from .cluster import Cluster

        return Cluster
    if name in __all__:
        from . import client

        return getattr(client, name)
    raise AttributeError(f"module 'kf2jobset.live' has no attribute {name!r}")
