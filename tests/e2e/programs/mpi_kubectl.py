"""A stand-in for the `kubectl` that MPIJob v1's kubectl-delivery image copies into /opt/kube.

Test program (tests/e2e/test_mpi_frameworks.py). Pods of the e2e node agent cannot reach the API
server, and the agent does not serve the exec API. This stand-in does what `kubectl exec` does for
kubexec.sh: it hands its own stdin/stdout/stderr to the test's exec broker (a Unix socket; the fds
travel with SCM_RIGHTS, so the remote process writes straight into them, as streamed by a real exec),
the broker starts the command inside the named pod's container (its mount, UTS and network
namespaces and its environment: see ExecBroker), and this process exits with the command's status.
Closing this process (mpirun killing its rsh agent) ends the remote command, as kubectl exec does.

Only `exec` is implemented:  kubectl exec POD [-c|--container NAME] [-i] [-t] -- ARGV...
"""
from __future__ import annotations

import json
import socket
import sys


def main(argv: list[str]) -> int:
    sock_path, namespace = argv[0], argv[1]
    args = argv[2:]
    if not args or args[0] != "exec":
        print(f"kubectl stand-in: only `exec` is implemented, got {args!r}", file=sys.stderr)
        return 1
    args = args[1:]
    pod, container, command = None, None, []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            command = args[i + 1:]
            break
        if a in ("-c", "--container"):
            container = args[i + 1]
            i += 2
            continue
        if a.startswith("--container="):
            container = a.split("=", 1)[1]
        elif a in ("-n", "--namespace"):
            namespace = args[i + 1]
            i += 2
            continue
        elif a in ("-i", "-t", "-it", "-ti", "--stdin", "--tty", "-q", "--quiet"):
            pass
        elif a.startswith("-"):
            print(f"kubectl stand-in: flag {a!r} not implemented", file=sys.stderr)
            return 1
        elif pod is None:
            pod = a
        else:
            command = args[i:]
            break
        i += 1
    if not pod or not command:
        print("kubectl stand-in: usage: kubectl exec POD [-c CONTAINER] -- COMMAND...", file=sys.stderr)
        return 1
    request = {"op": "exec", "namespace": namespace, "pod": pod, "container": container, "argv": command}
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock_path)
    socket.send_fds(s, [json.dumps(request).encode() + b"\n"], [0, 1, 2])
    data = b""
    while not data.endswith(b"\n"):
        chunk = s.recv(4096)
        if not chunk:
            print("kubectl stand-in: the exec broker closed the stream", file=sys.stderr)
            return 1
        data += chunk
    reply = json.loads(data)
    if "error" in reply:
        print(f"Error from server: {reply['error']}", file=sys.stderr)
        return 1
    return int(reply["exit"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
