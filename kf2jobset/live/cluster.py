"""The connection to a cluster and every API call the plugin makes.

Kubeconfig handling follows kubectl, not the Python client's defaults (ux-anchors §2.1):
`--kubeconfig` -> `$KUBECONFIG` (a path list; the FIRST file that sets current-context wins, as in
kubectl) -> `~/.kube/config` -> in-cluster service account. The kubeconfig is never written back
(persist_config=False), nothing is printed (no `load_config()` fallback notice on stdout), and the
default namespace is the context's, else "default".

Every call goes through `Cluster._call`, which hands failures to `apierrors.translate`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterator

from ..version import __version__
from ..api.resources import resource_of
from ..errors import UnsupportedError
from .apierrors import BadKubeconfig, NotFound, translate
from .kinds import LiveKind

from ..k8s.jobset_api import GROUP as JOBSET_GROUP, PLURAL as JOBSET_PLURAL, VERSION as JOBSET_VERSION  # noqa: E402
FIELD_MANAGER = "kf2jobset"
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
DEFAULT_CHUNK_SIZE = 500  # kubectl's --chunk-size default


def _kubeconfig_files(explicit: str | None) -> list[str]:
    if explicit:
        if not os.path.isfile(explicit):
            raise BadKubeconfig(f"kubeconfig {explicit}: no such file")
        return [explicit]
    env = os.environ.get("KUBECONFIG")
    if env:
        paths = [p for p in env.split(os.pathsep) if p]
        found = [p for p in paths if os.path.isfile(p)]
        if not found:
            raise BadKubeconfig(f"KUBECONFIG={env}: none of these files exists")
        return found
    default = os.path.join(os.path.expanduser("~"), ".kube", "config")
    return [default] if os.path.isfile(default) else []


def _first_current_context(files: list[str]) -> str | None:
    """kubectl's merge rule: the first file that sets current-context wins (the Python client takes the last)."""
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    for path in files:
        try:
            with open(path, encoding="utf-8") as fh:
                data = yaml.load(fh)
        except Exception:  # noqa: BLE001 - the client reports unreadable files properly below
            continue
        if isinstance(data, dict) and data.get("current-context"):
            return str(data["current-context"])
    return None


@dataclass
class Cluster:
    api_client: Any
    namespace: str  # the context's namespace (or the service account's), else "default"
    context: str | None
    server: str
    timeout: float | None = None  # seconds per request; None = no limit
    _served: dict = field(default_factory=dict)

    # ---- connecting

    @classmethod
    def connect(cls, kubeconfig: str | None = None, context: str | None = None,
                request_timeout: float | None = None) -> "Cluster":
        from kubernetes import client, config
        from kubernetes.config.config_exception import ConfigException

        files = _kubeconfig_files(kubeconfig)
        try:
            if files:
                joined = os.pathsep.join(files)
                context = context or _first_current_context(files)
                api_client = config.new_client_from_config(config_file=joined, context=context, persist_config=False)
                namespace = _context_namespace(joined, context)
            elif os.environ.get("KUBERNETES_SERVICE_HOST"):
                from kubernetes.config.incluster_config import InClusterConfigLoader

                cfg = client.Configuration()
                InClusterConfigLoader(os.path.join(SA_DIR, "token"), os.path.join(SA_DIR, "ca.crt")).load_and_set(cfg)
                api_client = client.ApiClient(cfg)
                namespace = _read(os.path.join(SA_DIR, "namespace")) or "default"
                context = None
            else:
                raise BadKubeconfig(
                    "no kubeconfig: use --kubeconfig, set KUBECONFIG, or create ~/.kube/config "
                    "(in a pod, the service account is used)"
                )
        except ConfigException as exc:
            raise BadKubeconfig(f"kubeconfig: {exc}") from None
        except OSError as exc:
            raise BadKubeconfig(f"kubeconfig: {exc.filename or ''}: {exc.strerror or exc}") from None
        api_client.user_agent = f"kf2jobset/{__version__}"
        return cls(api_client, namespace, context, api_client.configuration.host, request_timeout)

    @classmethod
    def of(cls, api_client: Any, namespace: str = "default", request_timeout: float | None = None) -> "Cluster":
        """A connection on the caller's `kubernetes.client.ApiClient` (its configuration, its credentials)."""
        return cls(api_client, namespace, None, api_client.configuration.host, request_timeout)

    def close(self) -> None:
        self.api_client.close()

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- the one funnel for API calls

    def _call(self, action: str, fn, *args, **kwargs):
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError as Urllib3Error

        if self.timeout:
            kwargs["_request_timeout"] = self.timeout
        try:
            return fn(*args, **kwargs)
        except (ApiException, Urllib3Error, ConnectionError, TimeoutError) as exc:
            raise translate(exc, action, self.server) from None

    def _custom(self):
        from kubernetes import client

        return client.CustomObjectsApi(self.api_client)

    # ---- discovery

    def served_plurals(self, group: str, version: str) -> frozenset[str] | None:
        """Resources served at group/version (discovery, readable by every authenticated user); None: not served."""
        key = (group, version)
        if key not in self._served:
            try:
                res = self._call(f"discover {group}/{version}", self._custom().get_api_resources, group, version)
            except NotFound:
                self._served[key] = None
            else:
                self._served[key] = frozenset(r.name for r in res.resources or () if "/" not in r.name)
        return self._served[key]

    def served_version(self, kind: LiveKind) -> str | None:
        """The version of `kind` to read: the first of kind.versions the cluster serves; None = no CRD."""
        for version in kind.versions:
            plurals = self.served_plurals(kind.group, version)
            if plurals is not None and kind.plural in plurals:
                return version
        return None

    def jobset_served(self) -> bool:
        plurals = self.served_plurals(JOBSET_GROUP, JOBSET_VERSION)
        return plurals is not None and JOBSET_PLURAL in plurals

    # ---- reading v1 jobs

    def list_pages(self, kind: LiveKind, version: str, namespace: str | None, selector: str | None = None,
                   chunk_size: int = DEFAULT_CHUNK_SIZE) -> Iterator[list[dict]]:
        """Every object of kind (namespace None = all namespaces), a page of `chunk_size` objects at a
        time (limit/continue)."""
        api = self._custom()
        where = f"in namespace {namespace}" if namespace else "in all namespaces"
        action = f"list {kind.resource} {where}"
        api_version = f"{kind.group}/{version}"
        token = None
        while True:
            kw: dict = {}
            if chunk_size > 0:
                kw["limit"] = chunk_size
            if token:
                kw["_continue"] = token
            if selector:
                kw["label_selector"] = selector
            if namespace:
                page = self._call(action, api.list_namespaced_custom_object, kind.group, version, namespace, kind.plural, **kw)
            else:
                page = self._call(action, api.list_cluster_custom_object, kind.group, version, kind.plural, **kw)
            items = page.pop("items", None) or []
            for item in items:
                # list items may omit apiVersion/kind (they are on the list); the converter needs them
                item.setdefault("apiVersion", api_version)
                item.setdefault("kind", kind.kind)
            token = (page.get("metadata") or {}).get("continue")
            yield items
            if not token:
                return

    def get_job(self, kind: LiveKind, version: str, namespace: str, name: str) -> dict:
        return self._call(f"get {kind.resource} {name!r} in namespace {namespace}",
                          self._custom().get_namespaced_custom_object, kind.group, version, namespace, kind.plural, name)

    # ---- writing

    def create(self, obj: dict, namespace: str, dry_run: bool) -> dict:
        """Create one object with strict field validation (unknown or duplicate fields are errors)."""
        kind = obj.get("kind", "")
        name = (obj.get("metadata") or {}).get("name") or (obj.get("metadata") or {}).get("generateName", "")
        action = f"create {kind} {name!r} in namespace {namespace}" + (" (server dry run)" if dry_run else "")
        kw = {"field_validation": "Strict", "field_manager": FIELD_MANAGER}
        if dry_run:
            kw["dry_run"] = "All"
        resource = resource_of(obj)
        if not resource.group:  # the core group: the typed client's call for each core kind the converter writes
            from kubernetes import client

            core = client.CoreV1Api(self.api_client)
            call = {"ConfigMap": core.create_namespaced_config_map, "Service": core.create_namespaced_service}.get(kind)
            if call is None:  # anything else here is a bug
                raise UnsupportedError(f"kf2jobset cannot create core objects of kind {kind}")
            return self.api_client.sanitize_for_serialization(self._call(action, call, namespace, obj, **kw))
        group, version, plural = resource.group, resource.version, resource.plural
        try:
            return self._call(action, self._custom().create_namespaced_custom_object, group, version, namespace,
                              plural, obj, **kw)
        except NotFound as err:
            if err.message.startswith("namespaces "):  # namespaces "x" not found: the resource itself is served
                raise
            raise NotFound(f"cannot {action}: {plural}.{group}/{version} is not served by this cluster "
                           f"(is the {kind} CRD installed?)") from None

    def get_cluster_object(self, group: str, version: str, plural: str, name: str) -> dict:
        return self._call(f"get {plural}.{group} {name!r}", self._custom().get_cluster_custom_object,
                          group, version, plural, name)

    def suspend_job(self, kind: LiveKind, version: str, namespace: str, name: str, dry_run: bool) -> dict:
        """runPolicy.suspend=true by JSON merge patch (nothing else changes)."""
        body = {"spec": {"runPolicy": {"suspend": True}}}
        kw = {"field_validation": "Strict", "field_manager": FIELD_MANAGER}
        if dry_run:
            kw["dry_run"] = "All"
        return self._call(f"suspend {kind.resource} {name!r} in namespace {namespace}",
                          self._custom().patch_namespaced_custom_object, kind.group, version, namespace, kind.plural,
                          name, body, **kw)

    def secret_owners(self, namespace: str, name: str) -> list[str] | None:
        """None when the Secret does not exist, else its owners ("MPIJob/pi"); raises when unknown (Forbidden)."""
        from kubernetes import client

        try:
            # only the metadata is needed; the typed client has no metadata-only read, so the data is dropped
            secret = self._call(f"get Secret {name!r} in namespace {namespace}",
                                client.CoreV1Api(self.api_client).read_namespaced_secret, name, namespace)
        except NotFound:
            return None
        refs = (secret.metadata.owner_references if secret.metadata else None) or []
        return [f"{r.kind}/{r.name}" for r in refs]

def _context_namespace(config_file: str, context: str | None) -> str:
    from kubernetes import config

    contexts, active = config.list_kube_config_contexts(config_file=config_file)
    chosen = next((c for c in contexts or () if c.get("name") == context), None) if context else active
    return str(((chosen or {}).get("context") or {}).get("namespace") or "default")


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().strip() or None
    except OSError:
        return None
