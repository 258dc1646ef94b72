"""A stand-in for MPIJob v1's kubectl-delivery init container image.

Test program (tests/e2e/test_mpi_frameworks.py). The real image copies `kubectl` into $TARGET_DIR
and blocks until every worker pod listed in /etc/mpi/hostfile is Running and Ready
(github.com/kubeflow/mpi-operator@v0.3.0 cmd/kubectl-delivery/app/server.go). This one writes the kubectl
stand-in (programs/mpi_kubectl.py, bound to the test's exec broker and to $NAMESPACE) into $TARGET_DIR,
then asks the broker -- which answers from the pods the API server has, as `kubectl get` would -- until
every listed pod is Ready.

usage: mpi_delivery.py BROKER_SOCKET PYTHON KUBECTL_PY [TIMEOUT_SECONDS]
"""
from __future__ import annotations

import json
import os
import socket
import sys
import time


def ask(sock_path: str, request: dict) -> dict:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock_path)
    s.sendall(json.dumps(request).encode() + b"\n")
    data = b""
    while not data.endswith(b"\n"):
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    return json.loads(data or b"{}")


def main(argv: list[str]) -> int:
    sock_path, python, kubectl_py = argv[:3]
    timeout = float(argv[3]) if len(argv) > 3 else 120.0
    target, namespace = os.environ["TARGET_DIR"], os.environ["NAMESPACE"]
    path = os.path.join(target, "kubectl")
    with open(path, "w") as f:
        f.write(f"#!/bin/sh\nexec {python} -I {kubectl_py} {sock_path} {namespace} \"$@\"\n")
    os.chmod(path, 0o755)
    hosts = []
    with open("/etc/mpi/hostfile") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                hosts.append(line.split()[0])
    me = socket.gethostname()
    hosts = [h for h in hosts if h != me]  # a GPU launcher lists itself first: only the workers are awaited
    deadline = time.monotonic() + timeout
    while True:
        waiting = [h for h in hosts if not ask(sock_path, {"op": "ready", "namespace": namespace, "pod": h}).get("ready")]
        if not waiting:
            print(f"kubectl delivered to {path}; pods Ready: {' '.join(hosts)}", flush=True)
            return 0
        if time.monotonic() > deadline:
            print(f"timed out waiting for {waiting}", file=sys.stderr)
            return 1
        time.sleep(0.3)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
