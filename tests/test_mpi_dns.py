"""The DNS search path Intel MPI and MPICH pods get (mpi-operator adds one so that workers resolve
the launcher's short hostname): namespace, cluster domain, and the MPI014 warning without a namespace.
Real MPICH against it: tests/launchers/test_mpi.py."""
from __future__ import annotations

import copy

import pytest

from kf2jobset.core.convert import convert_job
from kf2jobset.options import ConvertOptions

from .conftest import FIXTURES


def _mpijob(implementation: str, namespace: str | None) -> dict:
    import yaml

    job = yaml.safe_load((FIXTURES / "mpijob-v2beta1" / "mpich" / "input.yaml").read_text())
    job = copy.deepcopy(job)
    job["spec"]["mpiImplementation"] = implementation
    if namespace:
        job["metadata"]["namespace"] = namespace
    return job


def _searches(conv) -> set[tuple[str, ...]]:
    return {tuple((rj["template"]["spec"]["template"]["spec"].get("dnsConfig") or {}).get("searches") or ())
            for rj in conv.jobset["spec"]["replicatedJobs"]}


@pytest.mark.parametrize("implementation", ["MPICH", "Intel"])
@pytest.mark.parametrize("namespace, domain, expected, warned", [
    ("hpc", None, "pi-mpich.hpc.svc.cluster.local", False),
    ("hpc", "corp.example", "pi-mpich.hpc.svc.corp.example", False),
    (None, "corp.example", "pi-mpich.default.svc.corp.example", True),
])
def test_search_path_names_namespace_and_domain(implementation, namespace, domain, expected, warned):
    conv = convert_job(_mpijob(implementation, namespace), ConvertOptions(cluster_domain=domain))
    assert _searches(conv) == {(expected,)}  # every pod: launcher and workers
    mpi014 = [n for n in conv.notes if n.code == "MPI014"]
    assert bool(mpi014) == warned
    if warned:
        assert mpi014[0].printed and expected in mpi014[0].message


def test_open_mpi_gets_no_search_path():
    conv = convert_job(_mpijob("OpenMPI", None), ConvertOptions())
    assert _searches(conv) == {()}
    assert not [n for n in conv.notes if n.code == "MPI014"]
