"""The real v1 Training Operator and the real JobSet + Job controllers on a loopback test cluster.

Test harness only (not part of kf2jobset). :class:`GroundTruthStack` starts, on 127.0.0.1 and free
ports, in one temporary directory:

* etcd 3.6.8 and kube-apiserver v1.36.3, exactly as tests/live does (tests/apiserver_harness.py:
  test CA, ``system:masters`` admin client certificate, RBAC on);
* kube-controller-manager v1.36.3 with only ``job-controller`` and ``garbage-collector-controller``;
* the Kubeflow Training Operator v1.9.4 controllers and validating webhooks
  (tools/testtrainingoperator), its six ``kubeflow.org`` CRDs and its
  ValidatingWebhookConfiguration, both read from the operator's Go module
  (``manifests/base/crds``, ``manifests/base/webhook``);
* the JobSet controller v0.12.0 with its two mutating and two validating webhooks, its CRD and
  webhook configurations read from the jobset Go module (``config/components/...``), run with a
  config file (leader election off, internal cert management off, everything on 127.0.0.1).

Webhook configurations are registered with ``clientConfig.url = https://127.0.0.1:<port><path>``
and ``caBundle`` = the test CA, which also signed each webhook server's certificate (SAN IP
127.0.0.1). Start-up waits until each webhook really answers through the API server (a dry-run
request the webhook must reject or mutate), so a test never races the webhook informers.

Every component talks to the API server as the admin (``system:masters``). There is no scheduler
and no kubelet: Pods stay Pending.

**MPIJob kubeflow.org/v2beta1** belongs to mpi-operator, whose CRD is also named
``mpijobs.kubeflow.org``. One API server cannot hold both CRDs, and one CRD serving v1 and v2beta1
would have both operators reconcile every MPIJob. So ``GroundTruthStack(..., flavour="mpi-operator")``
is a second, separate instance: its own etcd + kube-apiserver, the mpi-operator CRD read from the
mpi-operator Go module (``manifests/base/kubeflow.org_mpijobs.yaml``), kube-controller-manager, the
mpi-operator v0.8.2 controller (tools/testmpioperator: no webhooks upstream) and the same JobSet
controller and webhooks. The Training Operator does not run there.

**MXJob** was removed from the Training Operator in v1.9.0; v1.8.1 is its last release. So
``GroundTruthStack(..., flavour="training-operator-v1.8.1")`` is a third instance: its own etcd +
kube-apiserver, the MXJob CRD read from the v1.8.1 module (``manifests/base/crds/kubeflow.org_mxjobs.yaml``),
the Training Operator v1.8.1 (tools/testtrainingoperator built with v1.8.1.mod) run with ``--enable-scheme=mxjob`` and its
MXJob validating webhook (the ``mxjob`` entry of the module's ``manifests/base/webhook``; it only adds a
deprecation warning), kube-controller-manager and the same JobSet controller and webhooks. Only MXJob
runs there: every other kind is v1.9.4's, so the other five CRDs, schemes and webhooks would only cost
start-up time.

**Kubeflow Trainer v2.3.0** (TrainJob ``trainer.kubeflow.org/v1alpha1``, kf2jobset's second target):
``GroundTruthStack(..., flavour="trainer")`` is a fourth instance: its own etcd + kube-apiserver, the three
Trainer CRDs (TrainJob, TrainingRuntime, ClusterTrainingRuntime) from the module's ``manifests/base/crds``
and the JobSet CRD, kube-controller-manager, the same JobSet controller and webhooks, and the unmodified
Trainer controller manager (tools/testtrainer) with its webhooks on: one MutatingWebhookConfiguration
(TrainJob defaulter) and one ValidatingWebhookConfiguration (ClusterTrainingRuntime, TrainingRuntime,
TrainJob) from the module's ``manifests/base/webhook`` and its two patches (names, objectSelectors). It runs
with a Configuration file (``--config``: webhook, health and metrics on 127.0.0.1, no leader election,
internal cert management off). With cert management off upstream's entry point reads the serving
certificate from controller-runtime's default directory, ``$TMPDIR/k8s-webhook-server/serving-certs``, so
the harness points ``TMPDIR`` of that one process at a directory holding the test-CA-signed certificate.
The built-in ClusterTrainingRuntimes of its ``manifests/base/runtimes`` are applied after the webhooks answer
(through them). The module is github.com/kubeflow/trainer/v2@v2.3.0 in the Go module cache (tests/upstream.py);
without it the flavour raises :class:`ToolUnavailable` with that reason.

Binaries come from ``tools/install-ground-truth.sh`` (built into ~/.cache/kf2jobset on first use;
see tools/README-ground-truth.md). :func:`locate_binaries` builds what is missing when Go is on
PATH and raises :class:`ToolUnavailable` with the reason otherwise.
"""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
import time
from pathlib import Path

import yaml

from ..apiserver_harness import LiveAPIServer, free_ports, spawn, stop, tail, wait_http
from .stack_binaries import COMPONENTS, locate_binaries, module_dir
from .stack_objects import (TRAINER_GROUP, TRAINER_VERSION, VOLCANO_PODGROUP_CRD, expect_denied, expect_denied_cluster,
                            expect_mutated, expect_webhook_called, jobset_webhook_configs, operator_webhook_configs,
                            sentinel_jobset, sentinel_mxjob, sentinel_pytorchjob, sentinel_runtime, sentinel_trainjob,
                            trainer_crds, trainer_runtimes, trainer_webhook_configs)


MPI_COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "mpi-operator", "jobset-controller")
MXJOB_FLAVOUR = "training-operator-v1.8.1"  # the last operator with MXJob (removed in v1.9.0)
MXJOB_COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "training-operator-v1.8.1", "jobset-controller")
# "volcano": the v1 stack with the Training Operator run with --gang-scheduler-name=volcano and a
# PodGroup CRD (scheduling.volcano.sh/v1beta1, written here: schema-less) so that the kind is served.
# No Volcano scheduler runs: nothing moves a PodGroup out of Pending but the test itself.
# "jobset-admission": only the API server and the JobSet controller (its webhooks), no CRD but JobSet's:
# the admission chain a JobSet meets, for tools/validator_vs_apiserver.py. (The controller also
# reconciles, but dry-run requests create nothing.)
ADMISSION_COMPONENTS = ("etcd", "kube-apiserver", "jobset-controller")
TRAINER_FLAVOUR = "trainer"  # Kubeflow Trainer v2.3.0 + JobSet + Job controllers (no v1 operator)
TRAINER_COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "jobset-controller", "trainer-controller")
# "scheduler-plugins": the v1 stack with the Training Operator run with --gang-scheduler-name=scheduler-plugins
# and the real PodGroup CRD (scheduling.x-k8s.io) of the scheduler-plugins module the operator's own build
# pins (tools/testtrainingoperator/go.mod; tools/upstream-modules.txt), read from the Go module cache.
SCHEDULER_PLUGINS_MODULE = "scheduler-plugins"
SCHEDULER_PLUGINS_PODGROUP_CRD = Path("config") / "crd" / "bases" / "scheduling.x-k8s.io_podgroups.yaml"
TRAINER_SCHEDULER_PLUGINS_MODULE = "scheduler-plugins-trainer"  # the release tools/testtrainer/go.mod pins
# "mpi-operator-volcano": the mpi-operator stack with mpi-operator run with --gang-scheduling=volcano and the
# same schema-less Volcano PodGroup CRD: mpi-operator's own PodGroup and pod decoration (podgroup.go).
MPI_FLAVOURS = ("mpi-operator", "mpi-operator-volcano")
FLAVOURS = {"training-operator": COMPONENTS, "mpi-operator": MPI_COMPONENTS, "volcano": COMPONENTS,
            "mpi-operator-volcano": MPI_COMPONENTS,
            "scheduler-plugins": COMPONENTS,
            MXJOB_FLAVOUR: MXJOB_COMPONENTS, "jobset-admission": ADMISSION_COMPONENTS,
            TRAINER_FLAVOUR: TRAINER_COMPONENTS}


# upstream modules, by their names in tools/upstream-modules.txt (the versions the components are built from)
OPERATOR_MODULE = "training-operator"
MXJOB_OPERATOR_MODULE = "training-operator-v1.8.1"
MXJOB_WEBHOOK = "validator.mxjob.training-operator.kubeflow.org"
JOBSET_MODULE = "jobset"
MPI_OPERATOR_MODULE = "mpi-operator"
TRAINER_MODULE = "trainer"

OPERATOR_WEBHOOK_CONFIG = "validator.training-operator.kubeflow.org"  # its name when deployed

COMPONENT_TIMEOUT = 60.0
PORT_NAMES = ("kcm", "operator-webhook", "operator-metrics", "operator-probe", "jobset-webhook", "jobset-metrics",
              "jobset-probe", "mpi-operator-probe", "trainer-webhook", "trainer-metrics", "trainer-probe")


# ---------------------------------------------------------------------------------------------
# the stack


class GroundTruthStack:
    """etcd + kube-apiserver + kube-controller-manager + training operator + JobSet controller.

    ``flavour="mpi-operator"``: mpi-operator (MPIJob kubeflow.org/v2beta1) instead of the training
    operator, on its own etcd + API server (see the module docstring). ``flavour="training-operator-v1.8.1"``:
    the Training Operator v1.8.1 with only MXJob, likewise on its own etcd + API server. ``flavour="trainer"``:
    the Kubeflow Trainer v2.3.0 controller and webhooks instead of a v1 operator, with its CRDs and built-in
    ClusterTrainingRuntimes, likewise on its own etcd + API server."""

    def __init__(self, binaries: dict[str, str], workdir: Path, flavour: str = "training-operator") -> None:
        if flavour not in FLAVOURS:
            raise ValueError(f"unknown stack flavour {flavour!r} (one of {', '.join(FLAVOURS)})")
        self.flavour = flavour
        self.binaries = binaries
        self.workdir = workdir
        self.apiserver = LiveAPIServer(binaries["kube-apiserver"], binaries["etcd"], workdir)
        self.kubeconfig = ""
        self.procs: dict[str, subprocess.Popen] = {}
        self.logs: dict[str, Path] = {
            "etcd": self.apiserver.etcd_log,
            "kube-apiserver": self.apiserver.apiserver_log,
        }
        self.ports: dict[str, int] = {}
        self.timings: dict[str, float] = {}
        self.startup_seconds = 0.0
        self.webhook_configs: list[dict] = []
        self.trainer_runtime_names: list[str] = []  # the built-in ClusterTrainingRuntimes applied (flavour "trainer")

    # ---- lifecycle
    def start(self) -> None:
        t0 = time.monotonic()
        mark = t0

        def lap(name: str) -> None:
            nonlocal mark
            now = time.monotonic()
            self.timings[name] = round(now - mark, 2)
            mark = now

        mpi = self.flavour in MPI_FLAVOURS
        mx = self.flavour == MXJOB_FLAVOUR
        admission = self.flavour == "jobset-admission"
        trainer = self.flavour == TRAINER_FLAVOUR
        trainer_crd_files = trainer_crds() if trainer else []  # before anything starts: no module, no stack
        operator_mod = None if admission else module_dir(
            MPI_OPERATOR_MODULE if mpi else MXJOB_OPERATOR_MODULE if mx else TRAINER_MODULE if trainer
            else OPERATOR_MODULE)
        jobset_mod = module_dir(JOBSET_MODULE)
        lap("locate upstream modules")

        self.apiserver.start()
        self.kubeconfig = self.apiserver.kubeconfig
        certs = self.apiserver._certs
        lap("etcd + kube-apiserver")

        crds = self._crd_files(operator_mod, jobset_mod, trainer_crd_files)
        self.apiserver.install_crds(crds)
        kinds = ('none' if admission else 'MPIJob v2beta1' if mpi else 'MXJob' if mx else '3 Trainer + 2 PodGroup' if trainer
                 else '6 kubeflow.org')
        lap(f"CRDs ({kinds} + JobSet)")

        op_dir = None if mpi or admission else self._webhook_cert_dir("trainer" if trainer else "training-operator", certs)
        js_dir = self._webhook_cert_dir("jobset-controller", certs)
        # after the CRDs: the garbage collector would otherwise redo discovery for each new CRD
        for attempt in range(3):  # a free port can be taken by another process before we bind it
            self.ports = dict(zip(PORT_NAMES, free_ports(len(PORT_NAMES)), strict=False))
            if not admission:  # the admission stack needs no Job controller and no operator
                self._start_kcm()
                if mpi:
                    self._start_mpi_operator()
                elif trainer:
                    self._start_trainer(op_dir)
                else:
                    self._start_operator(op_dir)
            self._start_jobset(js_dir)
            try:
                self._wait_ready()
                break
            except (RuntimeError, TimeoutError):
                clash = any("address already in use" in tail(self.logs[n], 20) for n in self.procs)
                for name in list(self.procs):
                    stop(self.procs.pop(name))
                if not clash or attempt == 2:
                    raise
        lap("controllers ready")

        ca_pem = certs.ca_crt.read_bytes()
        if trainer:
            self.webhook_configs = trainer_webhook_configs(operator_mod, self.ports["trainer-webhook"], ca_pem)
        else:
            self.webhook_configs = [] if mpi or admission else operator_webhook_configs(
                operator_mod, self.ports["operator-webhook"], ca_pem, only=[MXJOB_WEBHOOK] if mx else ())
        self.webhook_configs += jobset_webhook_configs(jobset_mod, self.ports["jobset-webhook"], ca_pem)
        self._register_webhooks(self.webhook_configs)
        self._wait_webhooks_effective()
        lap("webhooks registered and answering")
        if trainer:
            self._apply_trainer_runtimes()
            lap("built-in ClusterTrainingRuntimes applied (through the webhook)")
        self.startup_seconds = round(time.monotonic() - t0, 2)


    def _crd_files(self, operator_mod, jobset_mod, trainer_crd_files: list) -> list:
        """The CRDs the flavour's stack serves: its operator's kinds, the PodGroups its gang scheduler reads, JobSet."""
        mpi = self.flavour in MPI_FLAVOURS
        mx = self.flavour == MXJOB_FLAVOUR
        admission = self.flavour == "jobset-admission"
        trainer = self.flavour == TRAINER_FLAVOUR
        if admission:
            crds = []
        elif mpi:  # the v2beta1 MPIJob CRD (it has the same name as the v1 one: hence this separate stack)
            crds = [operator_mod / "manifests" / "base" / "kubeflow.org_mpijobs.yaml"]
        elif mx:  # v1.8.1's MXJob CRD only
            crds = [operator_mod / "manifests" / "base" / "crds" / "kubeflow.org_mxjobs.yaml"]
        elif trainer:  # TrainJob, TrainingRuntime, ClusterTrainingRuntime
            crds = list(trainer_crd_files)
            # and the PodGroup of the scheduler-plugins release Trainer pins, present before Trainer starts as its
            # CoScheduling plugin needs (podGroupPolicy.coscheduling: tests/e2e/test_trainjob_gang.py)
            crds.append(module_dir(TRAINER_SCHEDULER_PLUGINS_MODULE) / SCHEDULER_PLUGINS_PODGROUP_CRD)
        else:
            crds = sorted((operator_mod / "manifests" / "base" / "crds").glob("kubeflow.org_*.yaml"))
        if self.flavour in ("volcano", "mpi-operator-volcano") or trainer:
            # (trainer: Trainer's Volcano plugin builds PodGroups only if the kind is served when it starts; the bundle's
            # volcano flavour, tests/e2e/test_trainjob_gang.py)
            pg_crd = self.workdir / "volcano-podgroup-crd.yaml"
            pg_crd.write_text(yaml.safe_dump(VOLCANO_PODGROUP_CRD, sort_keys=False))
            crds.append(pg_crd)
        if self.flavour == "scheduler-plugins":
            crds.append(module_dir(SCHEDULER_PLUGINS_MODULE) / SCHEDULER_PLUGINS_PODGROUP_CRD)
        crds.append(jobset_mod / "config" / "components" / "crd" / "bases" / "jobset.x-k8s.io_jobsets.yaml")
        return crds
    def stop(self) -> None:
        for name in reversed(list(self.procs)):
            stop(self.procs[name])
        self.apiserver.stop()

    def running(self) -> dict[str, bool]:
        out = {n: p.poll() is None for n, p in self.procs.items()}
        out["kube-apiserver+etcd"] = self.apiserver.server_running()
        return out

    # ---- components
    def _spawn(self, name: str, cmd: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
        log = self.workdir / f"{name}.log"
        self.logs[name] = log
        proc = spawn(cmd, log, env=dict(os.environ, KUBECONFIG=self.kubeconfig, **(env or {})))
        self.procs[name] = proc
        return proc

    def _webhook_cert_dir(self, name: str, certs) -> Path:
        crt, key = certs.issue(f"{name}-webhook", "127.0.0.1", server=True)  # SAN IP:127.0.0.1
        d = self.workdir / f"{name}-certs"
        d.mkdir()
        shutil.copy(crt, d / "tls.crt")
        shutil.copy(key, d / "tls.key")
        return d

    def _start_kcm(self) -> None:
        kc = self.kubeconfig
        self._spawn(
            "kube-controller-manager",
            [
                self.binaries["kube-controller-manager"],
                f"--kubeconfig={kc}",
                # no --authentication/authorization-kubeconfig: nothing but the harness calls its
                # /healthz (always allowed), and the delegated lookups would only log errors
                "--controllers=job-controller,garbage-collector-controller",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={self.ports['kcm']}",
                f"--cert-dir={self.workdir / 'kcm-certs'}",
                "--profiling=false",
            ],
        )

    def _start_operator(self, cert_dir: Path) -> None:
        mx = self.flavour == MXJOB_FLAVOUR
        self._spawn(
            "training-operator",
            [
                self.binaries[MXJOB_FLAVOUR if mx else "training-operator"],
                f"--kubeconfig={self.kubeconfig}",
                "--webhook-host=127.0.0.1",
                f"--webhook-server-port={self.ports['operator-webhook']}",
                f"--webhook-cert-dir={cert_dir}",
                f"--metrics-bind-address=127.0.0.1:{self.ports['operator-metrics']}",
                f"--health-probe-bind-address=127.0.0.1:{self.ports['operator-probe']}",
                *([f"--gang-scheduler-name={self.flavour}"] if self.flavour in ("volcano", "scheduler-plugins") else []),
                *(["--enable-scheme=mxjob"] if mx else []),
            ],
        )

    def _start_mpi_operator(self) -> None:
        self._spawn(
            "mpi-operator",
            [
                self.binaries["mpi-operator"],
                f"--kubeConfig={self.kubeconfig}",  # KUBECONFIG (set by _spawn) wins anyway, as upstream
                f"--health-probe-bind-address=127.0.0.1:{self.ports['mpi-operator-probe']}",
                # upstream's client defaults (5 QPS, burst 10) would throttle a dozen jobs started at once
                "--kube-api-qps=100",
                "--kube-api-burst=200",
                "--threadiness=4",
                # no --cluster-domain (hostfile: <pod>.<job>.<ns>.svc); --gang-scheduling only on its flavour
                *(["--gang-scheduling=volcano"] if self.flavour == "mpi-operator-volcano" else []),
            ],
        )

    def _start_jobset(self, cert_dir: Path) -> None:
        config = {
            "apiVersion": "config.jobset.x-k8s.io/v1alpha1",
            "kind": "Configuration",
            "leaderElection": {"leaderElect": False},
            "internalCertManagement": {"enable": False},
            "webhook": {"host": "127.0.0.1", "port": self.ports["jobset-webhook"], "certDir": str(cert_dir)},
            "metrics": {"bindAddress": f"127.0.0.1:{self.ports['jobset-metrics']}"},
            "health": {"healthProbeBindAddress": f"127.0.0.1:{self.ports['jobset-probe']}"},
        }
        path = self.workdir / "jobset-config.yaml"
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        self._spawn(
            "jobset-controller",
            [self.binaries["jobset-controller"], f"--kubeconfig={self.kubeconfig}", f"--config={path}"],
        )

    def _start_trainer(self, cert_dir: Path) -> None:
        config = {
            "apiVersion": "config.trainer.kubeflow.org/v1alpha1",
            "kind": "Configuration",
            # no leaderElection: upstream's default then is off (one controller per test API server)
            "certManagement": {"enable": False},
            "webhook": {"host": "127.0.0.1", "port": self.ports["trainer-webhook"]},
            "metrics": {"bindAddress": f"127.0.0.1:{self.ports['trainer-metrics']}", "secureServing": False},
            "health": {"healthProbeBindAddress": f"127.0.0.1:{self.ports['trainer-probe']}"},
        }
        path = self.workdir / "trainer-config.yaml"
        path.write_text(yaml.safe_dump(config, sort_keys=False))
        # the Configuration has no certDir: controller-runtime's default is $TMPDIR/k8s-webhook-server/serving-certs
        tmp = self.workdir / "trainer-tmp"
        serving = tmp / "k8s-webhook-server" / "serving-certs"
        serving.mkdir(parents=True, exist_ok=True)
        for f in ("tls.crt", "tls.key"):
            shutil.copy(cert_dir / f, serving / f)
        self._spawn(
            "trainer-controller",
            # --zap-log-level=2 as upstream's Deployment (manifests/base/manager/manager_config_patch.yaml)
            [self.binaries["trainer-controller"], f"--kubeconfig={self.kubeconfig}", f"--config={path}",
             "--zap-log-level=2"],
            env={"TMPDIR": str(tmp)},
        )

    def _apply_trainer_runtimes(self) -> None:
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        with self.api_client() as api:
            custom = client.CustomObjectsApi(api)
            for doc in trainer_runtimes():
                try:
                    custom.create_cluster_custom_object(TRAINER_GROUP, TRAINER_VERSION, "clustertrainingruntimes", doc)
                except ApiException as e:
                    if e.status != 409:
                        raise
        self.trainer_runtime_names = sorted(d["metadata"]["name"] for d in trainer_runtimes())
        self._wait_trainjob_defaulter()

    def _wait_trainjob_defaulter(self, timeout: float = 30.0) -> None:
        """The TrainJob mutating webhook answers: it stamps ``runtimePatches[].time`` on a dry-run create."""
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        deadline = time.monotonic() + timeout
        last = ""
        with self.api_client() as api:
            custom = client.CustomObjectsApi(api)
            while time.monotonic() < deadline:
                try:
                    out = custom.create_namespaced_custom_object(
                        TRAINER_GROUP, TRAINER_VERSION, "default", "trainjobs", sentinel_trainjob(), dry_run="All")
                    if (out["spec"].get("runtimePatches") or [{}])[0].get("time"):
                        return
                    last = json.dumps(out["spec"])
                except ApiException as e:
                    last = f"HTTP {e.status}: {e.body}"
                time.sleep(0.1)
        raise TimeoutError(f"the TrainJob defaulter webhook did not answer: {last[:500]}")

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + COMPONENT_TIMEOUT
        insecure = ssl.create_default_context()
        insecure.check_hostname = False
        insecure.verify_mode = ssl.CERT_NONE  # kube-controller-manager's self-signed serving cert
        if self.flavour == "jobset-admission":
            wait_http(f"http://127.0.0.1:{self.ports['jobset-probe']}/readyz", deadline, self.procs["jobset-controller"],
                      self.logs["jobset-controller"])
            return
        wait_http(
            f"https://127.0.0.1:{self.ports['kcm']}/healthz",
            deadline,
            self.procs["kube-controller-manager"],
            self.logs["kube-controller-manager"],
            insecure,
        )
        operator = (("mpi-operator", "mpi-operator-probe") if self.flavour in MPI_FLAVOURS
                    else ("trainer-controller", "trainer-probe") if self.flavour == TRAINER_FLAVOUR
                    else ("training-operator", "operator-probe"))
        for name, port in (operator, ("jobset-controller", "jobset-probe")):
            wait_http(f"http://127.0.0.1:{self.ports[port]}/readyz", deadline, self.procs[name], self.logs[name])

    def _register_webhooks(self, docs: list[dict]) -> None:
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        with self.api_client() as api:
            adm = client.AdmissionregistrationV1Api(api)
            for doc in docs:
                create, replace, read = {
                    "ValidatingWebhookConfiguration": (
                        adm.create_validating_webhook_configuration,
                        adm.replace_validating_webhook_configuration,
                        adm.read_validating_webhook_configuration,
                    ),
                    "MutatingWebhookConfiguration": (
                        adm.create_mutating_webhook_configuration,
                        adm.replace_mutating_webhook_configuration,
                        adm.read_mutating_webhook_configuration,
                    ),
                }[doc["kind"]]
                try:
                    create(doc)
                except ApiException as e:
                    if e.status != 409:
                        raise
                    rv = read(doc["metadata"]["name"]).metadata.resource_version
                    replace(doc["metadata"]["name"], dict(doc, metadata=dict(doc["metadata"], resourceVersion=rv)))

    def _wait_webhooks_effective(self, timeout: float = 30.0) -> None:
        """Dry-run requests until each webhook server answers through the API server."""
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        deadline = time.monotonic() + timeout
        with self.api_client() as api:
            custom = client.CustomObjectsApi(api)
            checks = {
                "training-operator validating": lambda: expect_denied(
                    custom,
                    "kubeflow.org",
                    "v1",
                    "pytorchjobs",
                    sentinel_pytorchjob(),
                    "validator.pytorchjob.training-operator.kubeflow.org",
                ),
                "jobset validating": lambda: expect_denied(
                    custom,
                    "jobset.x-k8s.io",
                    "v1alpha2",
                    "jobsets",
                    sentinel_jobset(coordinator="missing"),
                    "vjobset.kb.io",
                ),
                "jobset mutating": lambda: expect_mutated(custom),
            }
            if self.flavour in (*MPI_FLAVOURS, "jobset-admission"):  # no training-operator webhooks there
                del checks["training-operator validating"]
            elif self.flavour == TRAINER_FLAVOUR:  # Trainer's three validating webhooks instead
                del checks["training-operator validating"]
                checks.update({
                    "trainer clustertrainingruntime validating": lambda: expect_denied_cluster(
                        custom, "clustertrainingruntimes", sentinel_runtime("ClusterTrainingRuntime"),
                        "validator.clustertrainingruntime.trainer.kubeflow.org"),
                    "trainer trainingruntime validating": lambda: expect_denied(
                        custom, TRAINER_GROUP, TRAINER_VERSION, "trainingruntimes", sentinel_runtime("TrainingRuntime"),
                        "validator.trainingruntime.trainer.kubeflow.org"),
                    "trainer trainjob validating": lambda: expect_denied(
                        custom, TRAINER_GROUP, TRAINER_VERSION, "trainjobs",
                        sentinel_trainjob(runtime="kf2jobset-no-such-runtime"), "validator.trainjob.trainer.kubeflow.org"),
                })
            elif self.flavour == MXJOB_FLAVOUR:  # v1.8.1's MXJob webhook denies nothing (see expect_webhook_called)
                checks["training-operator validating"] = lambda: expect_webhook_called(
                    api, custom, "kubeflow.org", "v1", "mxjobs", sentinel_mxjob(), MXJOB_WEBHOOK)
            pending = dict(checks)
            last: dict[str, str] = {}
            while pending and time.monotonic() < deadline:
                for name, check in list(pending.items()):
                    try:
                        ok, why = check()
                    except ApiException as e:
                        ok, why = False, f"HTTP {e.status}: {e.body}"
                    if ok:
                        del pending[name]
                    else:
                        last[name] = why
                if pending:
                    time.sleep(0.1)
            if pending:
                raise TimeoutError(
                    "webhooks not effective: " + "; ".join(f"{n}: {last.get(n, '')[:500]}" for n in pending)
                )

    # ---- helpers for tests
    def api_client(self):
        return self.apiserver.api_client()

    def log_tail(self, name: str, n: int = 40) -> str:
        return tail(self.logs[name], n)

    def kubectl_env(self) -> dict[str, str]:
        return dict(os.environ, KUBECONFIG=self.kubeconfig)


def start_stack(workdir: Path, binaries: dict[str, str] | None = None, flavour: str = "training-operator") -> GroundTruthStack:
    """Locate (or build) the binaries and start the stack; on failure stop what was started."""
    stack = GroundTruthStack(binaries or locate_binaries(components=FLAVOURS[flavour]), workdir, flavour)
    try:
        stack.start()
    except BaseException:
        stack.stop()
        raise
    return stack


def wait_for(predicate, timeout: float = 60.0, interval: float = 0.2, what: str = "condition"):
    """Poll ``predicate()`` until it returns a truthy value; return it or raise TimeoutError."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    raise TimeoutError(f"timed out after {timeout}s waiting for {what} (last: {last!r})")


def main() -> None:  # pragma: no cover - manual use: python -m tests.e2e.stack
    """Start the stack (argument: its flavour, default training-operator), print where it is, wait for
    Ctrl-C (KF2JOBSET_KEEP_E2E_DIR=1 keeps the dir)."""
    import tempfile

    import sys

    flavour = sys.argv[1] if len(sys.argv) > 1 else "training-operator"  # or: mpi-operator, training-operator-v1.8.1, trainer
    workdir = Path(tempfile.mkdtemp(prefix="kf2jobset-e2e-"))
    stack = start_stack(workdir, flavour=flavour)
    info = {
        "kubeconfig": stack.kubeconfig,
        "workdir": str(workdir),
        "startup_seconds": stack.startup_seconds,
        "timings": stack.timings,
        "ports": stack.ports,
    }
    print(json.dumps(info, indent=2), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        stack.stop()
        if not os.environ.get("KF2JOBSET_KEEP_E2E_DIR"):
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":  # pragma: no cover
    main()
