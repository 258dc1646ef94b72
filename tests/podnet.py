"""Pieces shared by the test pod runtimes: tests/launchers/harness.py and tests/e2e/nodeagent.py.

Test code only (not part of kf2jobset). Everything here needs root and works only on things the
caller created: network namespaces it named, a bridge inside its own "switch" namespace, files
under /etc/netns/<its namespace>/.

- :func:`run` / :class:`HarnessError`: a command that must succeed;
- :func:`netns_available`: can this process make network namespaces (None) or why not;
- :func:`make_switch` / :func:`add_pod_netns` / :func:`delete_netns`: a bridge in a namespace of its
  own and one namespace per pod joined to it by a veth (``eth0`` inside the pod); nothing is routed
  anywhere else, so pod addresses exist only between the namespaces the caller made;
- :func:`write_netns_etc`: ``/etc/netns/<ns>/{hosts,resolv.conf}``, which ``ip netns exec`` binds
  over /etc/hosts and /etc/resolv.conf for the processes it starts;
- :func:`project`: write Secret/ConfigMap data into a directory the way a volume shows it
  (``items`` select and rename keys, ``mode``/``defaultMode`` set permissions);
- :func:`exec_line`: a shell line that runs argv with exactly the given environment;
- :func:`sshd_config` / :func:`ssh_config`: the ssh server and client settings of MPI pods (keys only).
"""
from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
from pathlib import Path

NETNS_ETC = Path("/etc/netns")


class HarnessError(RuntimeError):
    """The harness itself could not do what a cluster would (not a finding about the JobSet)."""


def run(cmd: list[str], check: bool = True, **kw) -> subprocess.CompletedProcess:
    res = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if check and res.returncode != 0:
        raise HarnessError(f"{' '.join(cmd)} exited {res.returncode}: {res.stderr.strip()}")
    return res


def netns_available() -> str | None:
    """None when network namespaces work here, else why not."""
    if os.geteuid() != 0:
        return "not root"
    name = f"kf2jsprobe{os.getpid()}"
    res = run(["ip", "netns", "add", name], check=False)
    if res.returncode != 0:
        return f"ip netns add failed: {res.stderr.strip()}"
    run(["ip", "netns", "del", name], check=False)
    return None


def make_switch(name: str, address: str | None = None) -> None:
    """A namespace ``name`` holding bridge ``br0`` (with ``address``, e.g. "10.246.0.1/16", if given)."""
    run(["ip", "netns", "add", name])
    sw = ["ip", "-n", name]
    run(sw + ["link", "add", "br0", "type", "bridge"])
    # A fixed address: a bridge left to itself takes the lowest MAC of its ports and changes it when that
    # port goes (a pod torn down); every pod's ARP entry for the bridge address then points nowhere and
    # DNS to it times out until the entries expire.
    run(sw + ["link", "set", "br0", "address", "02:6b:66:32:6a:73"])
    if address:
        run(sw + ["addr", "add", address, "dev", "br0"])
    run(sw + ["link", "set", "br0", "up"])
    run(sw + ["link", "set", "lo", "up"])


def add_pod_netns(switch: str, ns: str, peer: str, address: str) -> None:
    """Namespace ``ns`` with ``eth0`` at ``address`` (CIDR form) whose veth peer ``peer`` is on the switch's br0."""
    run(["ip", "netns", "add", ns])
    sw = ["ip", "-n", switch]
    run(["ip", "-n", ns, "link", "add", "eth0", "type", "veth", "peer", "name", peer, "netns", switch])
    run(sw + ["link", "set", peer, "master", "br0"])
    run(sw + ["link", "set", peer, "up"])
    run(["ip", "-n", ns, "addr", "add", address, "dev", "eth0"])
    run(["ip", "-n", ns, "link", "set", "eth0", "up"])
    run(["ip", "-n", ns, "link", "set", "lo", "up"])


def write_netns_etc(ns: str, hosts: str, resolv_conf: str) -> Path:
    etc = NETNS_ETC / ns
    etc.mkdir(parents=True, exist_ok=True)
    (etc / "hosts").write_text(hosts)
    (etc / "resolv.conf").write_text(resolv_conf)
    return etc


def delete_netns(ns: str) -> None:
    """Kill what still runs in ``ns`` (it can only be ours), delete it and its /etc/netns files."""
    for pid in run(["ip", "netns", "pids", ns], check=False).stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except (ProcessLookupError, ValueError):
            pass
    run(["ip", "netns", "del", ns], check=False)
    shutil.rmtree(NETNS_ETC / ns, ignore_errors=True)


def project(d: Path, data: dict, items, default_mode: int) -> None:
    """Write ``data`` (key -> bytes) into ``d`` as a Secret/ConfigMap volume shows it."""
    for item in items or [{"key": k, "path": k} for k in data]:
        if item["key"] not in data:
            raise HarnessError(f"key {item['key']!r} is not in the volume source")
        f = d / item["path"]
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(data[item["key"]])
        os.chmod(f, item.get("mode", default_mode))


def exec_line(env: dict, argv: list[str], exec_: bool = True) -> str:
    """``exec env -i K=V ... argv`` quoted for /bin/sh: argv runs with exactly ``env``."""
    words = ["env", "-i"] + [f"{k}={v}" for k, v in env.items()] + list(argv)
    return ("exec " if exec_ else "") + " ".join(shlex.quote(w) for w in words)


_SSHD = """\
Port 22
ListenAddress 0.0.0.0
HostKey {hostkey}
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PidFile none
PrintMotd no
"""


def sshd_config(hostkey, keys_dir=None, accept_env: bool = False) -> str:
    """An sshd on port 22 taking keys only: ``keys_dir``'s authorized_keys (sshd's default without it);
    ``accept_env``: with every variable the client sends."""
    return (_SSHD.format(hostkey=hostkey) + ("AcceptEnv *\n" if accept_env else "")
            + (f"AuthorizedKeysFile {keys_dir}/authorized_keys\n" if keys_dir else ""))


def ssh_config(identity_dir=None) -> str:
    """An ssh client that trusts every host without asking, with ``identity_dir``'s id_rsa."""
    return ("Host *\n    StrictHostKeyChecking no\n    UserKnownHostsFile /dev/null\n    LogLevel ERROR\n    BatchMode yes\n"
            + (f"    IdentityFile {identity_dir}/id_rsa\n" if identity_dir else ""))
