"""Elastic Horovod's --host-discovery-script, executed in the converted launcher pod.

Both --mpi-hostfile modes: the ConfigMap item (mode 0555) and the file the launcher's init container
writes. The script must list every worker in the operator's format (v1 `<host>:<slots>`, v2beta1
`<host>`), read the way Horovod's discovery loop reads it (one host per line, `:slots` optional),
stop listing a worker whose name no longer resolves, and `convert` must warn about it on stderr.
"""
from __future__ import annotations

import pytest

from .common import FIXTURES, convert, hostfile_hosts, tmpdir
from .. import upstream
from .harness import Cluster

pytestmark = pytest.mark.launchers


def elastic_cases():
    out = [pytest.param(FIXTURES / c / "input.yaml", id=c) for c in ("mpijob-v1/elastic", "mpijob-v2beta1/elastic-horovod")]
    for rel in ("training-operator/examples/mpi/tensorflow-mnist-elastic.yaml",
                "mpi-operator-v0.3.0/examples/horovod/tensorflow-mnist-elastic.yaml"):
        module, _, inside = rel.partition("/")
        reason = upstream.absent(module)
        marks = [pytest.mark.skip(reason=reason)] if reason else []
        out.append(pytest.param(upstream.module_dir(module) / inside, id="corpus/" + rel, marks=marks))
    return out


def horovod_hosts(output: str, default_slots: int) -> dict:
    """What Horovod's discovery makes of the script's output: host -> slots."""
    hosts = {}
    for line in output.splitlines():
        line = line.strip()
        if not line:
            continue
        host, _, slots = line.partition(":")
        hosts[host] = int(slots) if slots else default_slots
    return hosts


@pytest.mark.parametrize("mode", ["configmap", "generated"])
@pytest.mark.parametrize("path", elastic_cases())
def test_discover_hosts_lists_every_worker_in_the_operators_format(netns, path, mode):
    v1 = "kubeflow.org/v1" == __import__("yaml").safe_load(path.read_text())["apiVersion"]
    conv = convert(path, ["--accept-mpi-ssh", f"--mpi-hostfile={mode}"])
    assert "MPI004" in conv.stderr and "discover_hosts.sh" in conv.stderr, conv.stderr
    slots = int(conv.source["spec"].get("slotsPerWorker") or 1)
    with Cluster(conv.jobset, conv.companions, conv.secrets(tmpdir())) as cl:
        launcher = cl.pods("launcher")[0]
        res = cl.exec(launcher, ["/bin/sh", "-c", "cat /etc/mpi/hostfile; echo ---; stat -L -c %a /etc/mpi/discover_hosts.sh; "
                                 "echo ---; /etc/mpi/discover_hosts.sh"])
        assert res.returncode == 0, res.stdout
        hostfile, mode_bits, listed = res.stdout.split("---\n")
        assert mode_bits.strip() == "555"
        names = [line.split()[0].split(":")[0] for line in hostfile.splitlines() if line.strip()]
        want = [f"{n}:{slots}" if v1 else n for n in names]
        assert listed.splitlines() == want
        assert [h.split(".")[0] for h in horovod_hosts(listed, slots)] == [h for h, _ in hostfile_hosts(hostfile)]
        assert set(horovod_hosts(listed, slots).values()) == {slots}

        # A worker whose pod is gone no longer resolves: the script stops listing it.
        gone = cl.pods("worker")[-1]
        hosts = cl.hosts_file(launcher).splitlines()
        (__import__("pathlib").Path("/etc/netns") / cl.ns(launcher) / "hosts").write_text(
            "\n".join(line for line in hosts if not line.startswith(gone.ip + "\t")) + "\n")
        res = cl.exec(launcher, ["/etc/mpi/discover_hosts.sh"])
        assert res.returncode == 0, res.stdout
        assert res.stdout.splitlines() == [w for w in want if not w.startswith(gone.hostname + ".")]
