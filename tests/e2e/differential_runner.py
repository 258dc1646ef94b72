"""Running the differential's cases: the v1 job in namespace A of the stack its operator belongs to, its
conversion in namespace B, the objects both need (stand-ins for the ConfigMaps and Secrets they name, the
SSH Secret, PriorityClasses), and what the node agent saw of both (an Outcome per case)."""
from __future__ import annotations

import copy
import json
import os
import shutil
import threading
import time
import uuid
from pathlib import Path

import yaml

from kf2jobset.options import ConvertOptions
from kf2jobset.runtime.selectors import SELECTING

from .lazy_stack import LazyStack
from .nodeagent import OWN_COMMAND, NodeAgent
from .differential_cases import Case, KF, KF_PLURAL, V2BETA1, flavour_of
from .differential_compare import (Outcome, World, compare_selectors, compare_worlds, explain_real, jobset_pod_key,
    model_gaps, model_world, observe, operator_pod_key, unconfirmed_claims, world_resolver)


PARALLEL = int(os.environ.get("KF2JOBSET_DIFF_PARALLEL", "6"))
POD_TIMEOUT = 150.0


# listens on a TCP port and accepts (then drops) connections: what a readinessProbe tcpSocket needs
_LISTEN = ("import socket, sys\n"
           "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
           "s.bind(('0.0.0.0', int(sys.argv[1]))); s.listen(64)\n"
           "while True:\n    s.accept()[0].close()\n")


def _probe_port(container: dict) -> int | None:
    """The port of a container's readinessProbe tcpSocket (a named port through its ports), if any."""
    port = ((container.get("readinessProbe") or {}).get("tcpSocket") or {}).get("port")
    if isinstance(port, str) and not port.isdigit():
        port = next((p.get("containerPort") for p in container.get("ports") or [] if p.get("name") == port), None)
    return int(port) if port is not None else None


def stand_in_programs(listen_on_probes: bool = False):
    """Containers run ``sleep infinity``. ``listen_on_probes``: a container whose readinessProbe is a
    tcpSocket listens on that port instead, as the server the image runs would (mpi-operator's examples
    probe sshd on 2222; a JobSet launcher waits for its workers to be Ready)."""
    import sys

    from kf2jobset.frameworks.mpi import HOSTFILE_INIT

    def program(launch):
        if launch.init:
            if launch.container == "init-pytorch":
                return [w.replace("nslookup", "getent hosts") for w in launch.command]
            if launch.container == HOSTFILE_INIT:
                return OWN_COMMAND(launch)
            return ["true"]
        port = _probe_port(launch.spec) if listen_on_probes else None
        if port is not None:
            return [sys.executable, "-c", _LISTEN, str(port)]
        return ["sleep", "infinity"]

    return {"": program}


def referenced_objects(spec: dict) -> dict:
    """ConfigMaps/Secrets a pod spec needs: {("ConfigMap"|"Secret", name): set(keys)}."""
    out: dict = {}

    def add(kind, name, key=None):
        if name:
            s = out.setdefault((kind, name), set())
            if key:
                s.add(key)

    for v in spec.get("volumes") or []:
        _volume_refs(v, add)
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        _container_refs(c, add)
    return out


def _volume_refs(v: dict, add) -> None:
    """The ConfigMaps and Secrets a volume mounts (a projected volume's sources too), handed to `add`."""
    for kind, fld, nm in (("ConfigMap", "configMap", "name"), ("Secret", "secret", "secretName")):
        if fld in v and not v[fld].get("optional"):
            add(kind, v[fld].get(nm))
            for it in v[fld].get("items") or []:
                add(kind, v[fld].get(nm), it.get("key"))
    for src in (v.get("projected") or {}).get("sources") or []:
        for kind, fld in (("ConfigMap", "configMap"), ("Secret", "secret")):
            if fld in src and not src[fld].get("optional"):
                add(kind, src[fld].get("name"))
                for it in src[fld].get("items") or []:
                    add(kind, src[fld].get("name"), it.get("key"))


def _container_refs(c: dict, add) -> None:
    """The ConfigMaps and Secrets a container reads its env from (envFrom, valueFrom), handed to `add`."""
    for ef in c.get("envFrom") or []:
        for kind, fld in (("ConfigMap", "configMapRef"), ("Secret", "secretRef")):
            if fld in ef and not ef[fld].get("optional"):
                add(kind, ef[fld].get("name"))
    for e in c.get("env") or []:
        vf = e.get("valueFrom") or {}
        for kind, fld in (("ConfigMap", "configMapKeyRef"), ("Secret", "secretKeyRef")):
            if fld in vf and not vf[fld].get("optional"):
                add(kind, vf[fld].get("name"), vf[fld].get("key"))


def pod_templates(obj: dict) -> list[dict]:
    spec = obj.get("spec") or {}
    if obj.get("kind") == "JobSet":
        return [((rj.get("template") or {}).get("spec") or {}).get("template") or {} for rj in spec.get("replicatedJobs") or []]
    return [r.get("template") or {} for k, rs in spec.items() if k.endswith("ReplicaSpecs") for r in (rs or {}).values()]


def create_stand_ins(core, namespace: str, refs: dict, skip: set) -> None:
    from kubernetes.client.rest import ApiException

    for (kind, name), keys in refs.items():
        if (kind, name) in skip:
            continue
        data = {k: f"stand-in for {k}" for k in (keys or {"data"})}
        body = {"metadata": {"name": name}, "data" if kind == "ConfigMap" else "stringData": data}
        try:
            (core.create_namespaced_config_map if kind == "ConfigMap" else core.create_namespaced_secret)(namespace, body)
        except ApiException as e:
            if e.status != 409:
                raise


def _ssh_secret(core, namespace: str, name: str) -> None:
    """The SSH Secret as note MPI003's action makes it: ssh-keygen -t ed25519, type kubernetes.io/ssh-auth."""
    import subprocess
    import tempfile

    if shutil.which("ssh-keygen") is None:
        raise RuntimeError("ssh-keygen not found: needed to create the SSH Secret of an MPIJob v2beta1 conversion")
    with tempfile.TemporaryDirectory() as d:
        key = Path(d) / "key"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)], check=True,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
        data = {"ssh-privatekey": key.read_text(), "ssh-publickey": Path(f"{key}.pub").read_text()}
    core.create_namespaced_secret(namespace, {"metadata": {"name": name}, "type": "kubernetes.io/ssh-auth",
                                              "stringData": data})


def place_converted(namespace: str, conv, mutate) -> tuple[dict, list, set, dict]:
    """Copies of the conversion's JobSet and companions, edited by ``mutate`` (a test's mutation) and put in
    ``namespace``: (JobSet, companions, the companions' (kind, name)s, the objects the JobSet's pod
    templates reference)."""
    jobset = copy.deepcopy(conv.jobset)
    companions = copy.deepcopy(conv.companions)
    if mutate:
        mutate(jobset, companions)
    jobset["metadata"]["namespace"] = namespace
    comp_names = set()
    for c in companions:
        c.setdefault("metadata", {})["namespace"] = namespace
        comp_names.add((c["kind"], c["metadata"].get("name")))
    js_refs: dict = {}
    for t in pod_templates(jobset):
        js_refs.update(referenced_objects(t.get("spec") or {}))
    return jobset, companions, comp_names, js_refs


def apply_companions(core, namespace: str, companions: list) -> str:
    """Creates the ConfigMap companions in ``namespace``; says which others it could not (no such API)."""
    missing = ""
    for c in companions:
        if c["kind"] == "ConfigMap":
            core.create_namespaced_config_map(namespace, c)
        else:
            missing += f"companion {c['kind']} not applied (no such API in the stack); "
    return missing


def create_priority_classes(api, objs) -> None:
    """PriorityClasses the pods name (the API server refuses a pod naming a missing one); cluster-wide."""
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    names = {((t.get("spec") or {}).get("priorityClassName")) for o in objs for t in pod_templates(o)} - {None}
    for name in names:
        try:
            client.SchedulingV1Api(api).create_priority_class({"metadata": {"name": name}, "value": 1000})
        except ApiException as e:
            if e.status != 409:
                raise


# notes that say the v1 job never ran as a whole although its pods were created
V1_STUCK = ("JS063",)


def _failed_services(core, namespace: str) -> list[str]:
    return [e.message for e in core.list_namespaced_event(namespace).items if e.reason == "FailedCreateService"]


def rejection_message(e) -> str:
    try:
        return json.loads(e.body).get("message", str(e))
    except Exception:  # noqa: BLE001
        return str(e)


def check_rejection_said(o, webhook: str) -> None:
    """A job the ``webhook`` rejected never ran: kf2jobset must say so, by refusing it as inherited or by
    converting it with JS080."""
    if o.kf2jobset_refused:
        assert "inherited" in o.conv_message, (
            f"the {webhook} webhook rejects this job ({o.detail}); kf2jobset refuses it without saying v1 did: {o.conv_message}")
        return
    assert "JS080" in o.conv_message, f"the {webhook} webhook rejects this job ({o.detail}) but kf2jobset converts it without saying so"


_CONVERT_LOCK = threading.Lock()


class Runner:
    """Runs cases on one stack + node agent. ``others``: {stack flavour: the Runner of that stack, or
    anything whose ``result()`` gives one (:class:`LazyStackRunner`)}, to which the cases of that flavour
    are handed (MPIJob kubeflow.org/v2beta1: "mpi-operator"; MXJob: "training-operator-v1.8.1").
    ``mpi``: the same for "mpi-operator" alone (older callers)."""

    def __init__(self, stack, agent: NodeAgent, mpi=None, others: dict | None = None):
        self.stack, self.agent = stack, agent
        self.others = dict(others or {})
        if mpi is not None:
            self.others["mpi-operator"] = mpi

    @property
    def mpi(self):
        return self.others.get("mpi-operator")

    @property
    def flavour(self) -> str:
        f = getattr(self.stack, "flavour", "training-operator")
        return "training-operator" if f == "volcano" else f  # the volcano stack runs what the main one runs

    @property
    def serves_v2beta1(self) -> bool:
        return self.flavour == "mpi-operator"

    def new_namespace(self, core, tag: str) -> str:
        name = f"d{tag}-{uuid.uuid4().hex[:8]}"
        core.create_namespace({"metadata": {"name": name}})
        with self.agent.lock:
            self.agent.namespaces.add(name)
        return name

    def convert(self, job: dict, options: ConvertOptions):
        conv, jr, err, _ = self.convert_with_peers(job, options, [])
        return conv, jr, err

    def convert_with_peers(self, job: dict, options: ConvertOptions, peers: list, same_names: bool = False):
        """The job converted in one file with `peers` (objects of its file, put in the job's namespace):
        (conversion, job report, error, the peers as the converted file has them: its selecting objects,
        or with `same_names` its objects of the peers' kinds and names, e.g. ConfigMaps)."""
        from kf2jobset.files.pipeline import convert_text
        from kf2jobset.report.build import build_report

        ns = (job.get("metadata") or {}).get("namespace")
        peers = [copy.deepcopy(p) for p in peers]
        for p in peers:
            p.setdefault("metadata", {})["namespace"] = ns
        text = yaml.safe_dump_all([job, *peers], sort_keys=False)
        with _CONVERT_LOCK:  # kf2jobset is a CLI: one conversion at a time (its caches are not thread-safe)
            result = convert_text(text, "job.yaml", options)
            if result.errors:
                return None, None, "; ".join(str(e) for e in result.errors), []
            (conv,) = [c for r in result.results for c in r.conversions]
            report = build_report([result], options)
        (jr,) = report.files[0].jobs
        names = {(p.get("kind"), (p.get("metadata") or {}).get("name")) for p in peers}
        after = [d for d in yaml.safe_load_all(result.new_text or text) if isinstance(d, dict) and (
            (d.get("kind"), (d.get("metadata") or {}).get("name")) in names if same_names else d.get("kind") in SELECTING)]
        return conv, jr, "", after

    def run(self, case: Case, mutate=None) -> Outcome:
        t0 = time.monotonic()
        out = Outcome(case)
        try:
            other = self.others.get(flavour_of(case.job)) if flavour_of(case.job) != self.flavour else None
            if other is not None:
                other = other.result() if hasattr(other, "result") else other  # raises if it did not start
                return other.run(case, mutate)
            self._run(case, out, mutate)
        except Exception as e:  # noqa: BLE001 - reported per case
            import traceback

            out.status, out.detail = "failed", f"{type(e).__name__}: {e}\n{traceback.format_exc()[-2500:]}"
        out.seconds = time.monotonic() - t0
        return out

    # one case end to end on the real stack, not split: only a KF2JOBSET_E2E run could check the split
    def _run(self, case: Case, out: Outcome, mutate) -> None:  # noqa: C901
        from kubernetes import client
        from kubernetes.client.rest import ApiException

        job = copy.deepcopy(case.job)
        v2 = job.get("apiVersion") == V2BETA1
        if flavour_of(job) != self.flavour:
            out.status, out.detail = "skipped", (
                f"{job.get('apiVersion')} {job.get('kind')} runs on a {flavour_of(job)} stack; "
                f"this Runner has a {self.flavour} stack and none of that flavour")
            return
        kf_version = "v2beta1" if v2 else "v1"
        launcher_as_worker = v2 and bool((job.get("spec") or {}).get("runLauncherAsWorker"))
        meta = job.setdefault("metadata", {})
        if not meta.get("name") and not meta.get("generateName"):
            meta["name"] = "trial-" + uuid.uuid4().hex[:6]  # a Katib trial: Katib names it
        with self.stack.api_client() as api:
            core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
            ns_a, ns_b = self.new_namespace(core, "a"), self.new_namespace(core, "b")
            job_a = copy.deepcopy(job)
            job_a["metadata"]["namespace"] = ns_a
            job_b = copy.deepcopy(job)
            job_b["metadata"]["namespace"] = ns_b
            conv, jr, err, peers_b = self.convert_with_peers(job_b, case.options, case.peers)  # the job as written
            if case.resize and conv is not None:
                self._resize_v1(case, conv, job_a)  # before the operator sees it
            out.conv_message, out.kf2jobset_refused = err, conv is None
            if conv is not None:
                out.conv_message = " ".join(f"{n.code}: {n.message}" for n in conv.notes if n.code in ("JS080", *V1_STUCK))
            plural = KF_PLURAL[job["kind"]]
            # v1 side first: the webhook decides whether it ever ran
            v1_refs = {}
            for t in pod_templates(job_a):
                v1_refs.update(referenced_objects(t.get("spec") or {}))
            create_stand_ins(core, ns_a, v1_refs, set())
            create_priority_classes(api, [job_a, conv.jobset] if conv is not None else [job_a])
            try:
                created = custom.create_namespaced_custom_object("kubeflow.org", kf_version, ns_a, plural, job_a)
            except ApiException as e:
                if e.status in (400, 403, 422) and "denied the request" in (e.body or ""):
                    out.status, out.detail = "rejected", rejection_message(e)
                    return
                if case.refused and conv is None and e.status in (400, 422):  # the CRD's schema refused it
                    out.status, out.detail = "refused", f"the API server refused it (HTTP {e.status}): {rejection_message(e)}"
                    return
                raise
            name_a = created["metadata"]["name"]
            if conv is None:
                refusal = self._refused_by_controller(core, ns_a, name_a, job["kind"])
                if refusal:
                    out.status, out.detail = "refused", refusal
                    return
                raise AssertionError(f"the operator accepted the job and made pods but kf2jobset refused it: {err}")
            if case.refused:
                raise AssertionError(f"{case.id} has expected-error.txt but kf2jobset converted it")
            jobset, companions, comp_names, js_refs = place_converted(ns_b, conv, mutate)
            model_job = self._resize_jobset(case, conv, job_a, jobset) if case.resize else conv.job
            create_stand_ins(core, ns_b, v1_refs, comp_names)
            if v2:  # the SSH Secret MPI003 tells the user to create (mpi-operator generated <job>-ssh in A)
                for (kind, sname) in js_refs:
                    if kind == "Secret" and any(n.code == "MPI003" and repr(sname) in n.message for n in conv.notes):
                        _ssh_secret(core, ns_b, sname)
                        comp_names.add((kind, sname))
            create_stand_ins(core, ns_b, js_refs, comp_names | set(v1_refs))
            out.detail += apply_companions(core, ns_b, companions)
            created_js = custom.create_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", ns_b, "jobsets", jobset)
            name_b = created_js["metadata"]["name"]

            expected = sum(s.replicas for s in model_job.replicas.values())
            out.jobs_pods = expected
            suspended = conv.job.run_policy.suspend
            if suspended:
                time.sleep(4)
                for ns in (ns_a, ns_b):
                    pods = core.list_namespaced_pod(ns).items
                    assert not pods, f"runPolicy.suspend: {ns} has pods {[p.metadata.name for p in pods]}"
                out.detail += "suspended: no pods in either world; resumed to compare; "
                custom.patch_namespaced_custom_object("kubeflow.org", kf_version, ns_a, plural, name_a,
                                                      {"spec": {"runPolicy": {"suspend": False}}})
                custom.patch_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", ns_b, "jobsets", name_b,
                                                      {"spec": {"suspend": False}})

            roles = conv.pods.pod_roles
            renamed = getattr(conv.pods, "container_names", None)

            def key_a(labels):
                if v2:  # mpi-operator: job-role, and no replica-type label
                    t, i = labels.get(KF + "job-role"), int(labels.get(KF + "replica-index", "0"))  # launcher: none
                    if t == "worker" and launcher_as_worker:
                        i -= 1  # the launcher holds replica-index 0, worker i has i+1
                    return (t, i) if t in ("launcher", "worker") else None
                return operator_pod_key(labels)

            key_b = jobset_pod_key(roles)

            ctr_count = {(s.lower()): len((spec.template.get("spec") or {}).get("containers") or [])
                         for s, spec in conv.job.replicas.items()}

            def started(ns, key_of):
                per = {}
                for x in self.agent.launches(ns):
                    k = key_of(x.labels)
                    if k is not None and not x.init:
                        per.setdefault((x.pod, k), set()).add(x.container)
                full = [p for (p, k), cs in per.items() if len(cs) >= ctr_count.get(k[0], 1)]
                return len(full) >= expected

            deadline = time.monotonic() + POD_TIMEOUT
            while not (started(ns_a, key_a) and started(ns_b, key_b)):
                failed = _failed_services(core, ns_a)
                if failed and started(ns_b, key_b):
                    # the operator could not create a pod's Service: under v1 the others never reach it
                    out.status, out.detail = "stuck", "; ".join(failed)
                    for call in (lambda: custom.delete_namespaced_custom_object("kubeflow.org", kf_version, ns_a, plural, name_a),
                                 lambda: custom.delete_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", ns_b, "jobsets", name_b)):
                        try:
                            call()
                        except ApiException:
                            pass
                    return
                if time.monotonic() > deadline:
                    raise AssertionError(
                        f"pods did not all start within {POD_TIMEOUT:.0f} s: v1 {len({x.pod for x in self.agent.launches(ns_a)})}, "
                        f"JobSet {len({x.pod for x in self.agent.launches(ns_b)})} of {expected}; "
                        f"v1 pods {[(p.metadata.name, p.status.phase) for p in core.list_namespaced_pod(ns_a).items]}; "
                        f"JobSet pods {[(p.metadata.name, p.status.phase) for p in core.list_namespaced_pod(ns_b).items]}; "
                        f"agent: {self.agent.events[-5:]}")
                time.sleep(0.5)
            # let Ready reach the API and the agent's DNS table
            domain = case.options.cluster_domain or "cluster.local"
            worlds = {}
            # v1 MPIJob: the launcher reached pods by name (kubectl exec). mpi-operator: pods are
            # <hostname>.<job> under the Service <job> (2 labels), and the bare hostname resolves
            # through the search path mpi-operator adds (and on the pod itself).
            for ns, name, key_of, by_name, min_labels in ((ns_a, name_a, key_a, "hostname" if v2 else job["kind"] == "MPIJob",
                                                           2 if v2 else 1),
                                                          (ns_b, name_b, key_b, False, 2)):
                pods = observe(self.agent, ns, key_of, renamed if ns == ns_b else None)
                ips = {p.ip for p in pods.values()}
                stable_until = time.monotonic() + 30  # under load the agent's DNS table can lag
                while time.monotonic() < stable_until:
                    table = dict(self.agent._dns_table)
                    covered = {ip for k, v in table.items() if k.endswith(f".{ns}.svc.{domain}") for ip in v}
                    if ips <= covered or by_name is True:
                        break
                    time.sleep(0.3)
                table = {k: v for k, v in self.agent._dns_table.items() if f".{ns}." in k}
                pods = observe(self.agent, ns, key_of, renamed if ns == ns_b else None)  # files read while the pods run
                by_key = {p.key: p for p in pods.values()}
                worlds[ns] = World(ns, name, by_key, world_resolver(table, ns, list(by_key.values()), domain, by_name, min_labels), table)
            op, js = worlds[ns_a], worlds[ns_b]
            rename = {}
            if meta.get("generateName"):
                rename = {ns_a: {name_a: "<generated>"}, ns_b: {name_b: "<generated>"}}
            real = compare_worlds(op, js, rename)

            def pods_selected(ns, selector):
                return {p.metadata.name for p in core.list_namespaced_pod(ns, label_selector=selector).items}

            sel_diffs, out.selectors = compare_selectors(op, js, conv, case.peers, peers_b, pods_selected)
            real += sel_diffs
            for d in real:
                why = explain_real(d, conv.notes, jr.findings)
                out.diffs.append((d, why))
                out.aspects.add(d.aspect)
                if why is None:
                    out.unexplained.append(d)
            # the report's per-pod evidence is about the job as converted; a resized job has other pods
            out.unconfirmed = [] if case.resize else unconfirmed_claims(jr.findings, real)
            from kf2jobset.runtime.jobset_view import jobset_world
            from kf2jobset.runtime.operator_view import operator_world

            opm = operator_world(model_job, name=name_a, namespace=ns_a, cluster_domain=case.options.cluster_domain)
            jsm = jobset_world(jobset, name=name_b, namespace=ns_b, cluster_domain=case.options.cluster_domain, roles=roles,
                               containers=renamed)
            out.gaps = {"operator": model_gaps(model_world(opm, op), op), "jobset": model_gaps(model_world(jsm, js), js)}
            # clean up: the pods stop, their sandboxes go
            for call in (lambda: custom.delete_namespaced_custom_object("kubeflow.org", kf_version, ns_a, plural, name_a,
                                                                        propagation_policy="Background"),
                         lambda: custom.delete_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", ns_b, "jobsets", name_b,
                                                                        propagation_policy="Background")):
                try:
                    call()
                except ApiException:
                    pass


    @staticmethod
    def _resize_v1(case: Case, conv, job_a: dict) -> None:
        """The v1 job edited: the replica type's count (before the operator sees it)."""
        rtype, new = case.resize
        specs = next(k for k in job_a["spec"] if k.endswith("ReplicaSpecs"))
        job_a["spec"][specs][conv.job.replicas[rtype].source_key]["replicas"] = new

    @staticmethod
    def _resize_jobset(case: Case, conv, job_a: dict, jobset: dict):
        """The JobSet kf2jobset wrote for the ORIGINAL job edited the same way as the v1 job: the
        replicatedJob holding the type's last pods. Returns the edited v1 job as kf2jobset reads it (for
        the runtime model)."""
        from kf2jobset.core.convert import convert_job

        rtype, new = case.resize
        name, first, _ = conv.plan.segments[rtype][-1]
        (rjob,) = [r for r in jobset["spec"]["replicatedJobs"] if r["name"] == name]
        rjob["replicas"] = new - first
        return convert_job(copy.deepcopy(job_a), case.options).job

    def _refused_by_controller(self, core, namespace: str, name: str, kind: str, timeout: float = 30.0) -> str:
        """How the operator refused a stored job (a Warning event whose reason ends in FailedValidation,
        and no pod), or "" when it made pods or said nothing within ``timeout``. The v1.8.1 MXJob
        controller validates in Reconcile (ValidateV1MXJob) and names the event with MPIJob's kind."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            pods = core.list_namespaced_pod(namespace).items
            if pods:
                return ""
            events = [e for e in core.list_namespaced_event(namespace).items
                      if e.involved_object and e.involved_object.name == name and e.involved_object.kind == kind
                      and e.type == "Warning" and (e.reason or "").endswith("FailedValidation")]
            if events:
                time.sleep(2)  # a controller that refuses does not make pods a moment later
                if core.list_namespaced_pod(namespace).items:
                    return ""
                return f"the {kind} controller refused it (event {events[0].reason}: {events[0].message})"
            time.sleep(0.5)
        return ""


class LazyStackRunner(LazyStack):
    """Another stack (:class:`LazyStack`) and its node agent: :meth:`result` is a :class:`Runner` on them."""

    def __init__(self, flavour: str = "mpi-operator", subnet: str = "10.247", listen_on_probes: bool = True) -> None:
        super().__init__(flavour)
        self.subnet, self.listen_on_probes = subnet, listen_on_probes
        self._t0 = time.monotonic()
        self._agent: NodeAgent | None = None

    def _start(self):
        self._t0 = time.monotonic()
        return super()._start()

    def _up(self, stack) -> Runner:
        self._agent = NodeAgent(stack.kubeconfig, stand_in_programs(listen_on_probes=self.listen_on_probes), namespaces=set(),
                                scheduler_names=("default-scheduler", "volcano", "yunikorn"), backoff=(0.5, 5.0),
                                subnet=self.subnet)  # volcano: the JobSet side of scheduling/volcano-mpijob
        self._agent.start()
        print(f"\n[differential] {self.flavour} stack up in {stack.startup_seconds:.1f} s, with its node agent "
              f"{time.monotonic() - self._t0:.1f} s: {stack.timings}")
        return Runner(stack, self._agent)

    def _down(self) -> None:
        if self._agent is not None:
            self._agent.stop()
            shutil.rmtree(self._agent.workdir, ignore_errors=True)
