"""MPIJob, both APIs, carried on JobSet with the SSH model (as mpi-operator v2beta1 and Trainer v2 do).

Facts: training-operator.md §5 (v1: kubectl exec, bare pod names, kubectl-delivery) and §6
(v2beta1: SSH Secret, FQDN hostfile, per-implementation launcher env).
Key material is never generated: the pods mount a Secret the user names (--ssh-secret).
"""
from __future__ import annotations

from ..errors import Location, Problem, UnsupportedError
from .. import claims
from ..model import DefaultApplied
from ..notes import Note
import re

from .base import HOSTS, EmitContext, OperatorSide, Profile, SizeValue, Side, env, literal_env
from .mpi_hostfile import (  # noqa: F401 - DISCOVER_VAR, HOSTFILE_VAR, is_gpu_launcher: read from here too
    CONFIG_VOLUME,
    DISCOVER_FILE,
    DISCOVER_VAR,
    FIRST_HOST_VAR,
    LINE_VAR,
    HOSTFILE_INIT,
    HOSTFILE_VAR,
    MPI_DIR,
    discover_hosts_script,
    follows_size,
    hostfile_lines,
    implementation,
    init_container,
    is_gpu_launcher,
    jobset_files,
    kubectl_exec,
    mpi_hosts,
    written_claims,
)

SSH_VOLUME = "ssh-auth"
# Open MPI 5 (PRRTE) reads PRTE_MCA_* and ignores the OMPI_MCA_orte_*/plm_rsh_* names v1 and mpi-operator set.
PRTE_HOSTFILE = "PRTE_MCA_prte_default_hostfile"
PRTE_SSH_ARGS = "PRTE_MCA_plm_ssh_args"
# Open MPI options that mpirun 4.x also took with one dash; Open MPI 5's mpirun rejects that spelling.
_ONE_DASH = re.compile(r"^-(bind-to|map-by|rank-by)(=.*)?$")
HOST_NETWORK_DNS = "ClusterFirstWithHostNet"  # what mpi-operator gives host-network pods (newWorker, newLauncherPodTemplate)
ROOT_SSH = "/root/.ssh"


def dns_search(job, ctx) -> str:
    """The search domain that lets Intel MPI and MPICH workers resolve the launcher's short hostname.
    A literal (dnsConfig takes no variables): a manifest without a namespace gets `default` (MPI014)."""
    sub = ctx.options.subdomain or ctx.jobset_name
    return f"{sub}.{job.namespace or 'default'}.svc.{ctx.options.cluster_domain or 'cluster.local'}"


def _service_clash_action(options) -> str:
    """MPI008's way out: --subdomain renames the JobSet's Service, but a shared Trainer runtime refuses it (its
    pods are named under the TrainJob's name), so there only deleting the MPIJob first is offered."""
    from ..targets import target_of

    target = target_of(options)
    if not target.writes_the_jobset and options.trainer_runtime != "per-job":
        return f"delete the MPIJob (and its Service) before applying the {target.kind_written}"
    return (f"delete the MPIJob (and its Service) before applying the {target.kind_written}, or convert this job alone "
            "with --subdomain NAME (a Service name of its own)")


def launcher_env(job, side: Side) -> list[dict]:
    """v2beta1 launcher env (also what a v1 job gets once it moves to SSH)."""
    slots = job.framework["slotsPerWorker"]
    out = [env("K_MPI_JOB_ROLE", "launcher")]
    impl = implementation(job)
    if impl == "OpenMPI":
        out += [
            env("OMPI_MCA_orte_keep_fqdn_hostnames", "true"),
            env("OMPI_MCA_orte_default_hostfile", f"{MPI_DIR}/hostfile"),
            env("OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"),
            env("OMPI_MCA_orte_set_default_slots", slots),
        ]
        if not side.is_operator:  # neither operator set these; Open MPI 4.1 ignores them
            out += [env(PRTE_HOSTFILE, f"{MPI_DIR}/hostfile"), env(PRTE_SSH_ARGS, "-o ConnectionAttempts=10")]
    elif impl == "Intel":
        out += [
            env("I_MPI_HYDRA_HOST_FILE", f"{MPI_DIR}/hostfile"),
            env("I_MPI_HYDRA_BOOTSTRAP_EXEC_EXTRA_ARGS", "-o ConnectionAttempts=10"),
            env("I_MPI_PERHOST", slots),
        ]
    else:  # MPICH
        out += [
            env("HYDRA_HOST_FILE", f"{MPI_DIR}/hostfile"),
            env("HYDRA_LAUNCH_EXTRA_ARGS", "-o ConnectionAttempts=10"),
        ]
    gpu_visible = is_gpu_launcher(job) if kubectl_exec(job) else job.framework.get("runLauncherAsWorker")
    if not gpu_visible:
        out += [env("NVIDIA_VISIBLE_DEVICES", ""), env("NVIDIA_DRIVER_CAPABILITIES", "")]
    return out


def v1_launcher_env(job) -> list[dict]:
    """What the training-operator's kubectl-exec controller injected (§5.2)."""
    c0 = job.replicas["Launcher"].containers[0]
    user = {e.get("name") for e in c0.get("env") or []}
    out = [
        env("OMPI_MCA_plm_rsh_agent", f"{MPI_DIR}/kubexec.sh"),
        env("OMPI_MCA_orte_default_hostfile", f"{MPI_DIR}/hostfile"),
    ]
    if not is_gpu_launcher(job):
        out += [env("NVIDIA_VISIBLE_DEVICES", ""), env("NVIDIA_DRIVER_CAPABILITIES", "")]
    if "I_MPI_HYDRA_BOOTSTRAP" not in user:
        out.append(env("I_MPI_HYDRA_BOOTSTRAP", "rsh"))
    if "I_MPI_HYDRA_BOOTSTRAP_EXEC" not in user:
        out.append(env("I_MPI_HYDRA_BOOTSTRAP_EXEC", f"{MPI_DIR}/kubexec.sh"))
    return out


def _launcher_words(job) -> list[str]:
    c0 = job.replicas["Launcher"].containers[0]
    return [str(w) for key in ("command", "args") for w in (c0.get(key) or [])]


def uses_discovery(job) -> bool:
    """The launcher runs elastic Horovod with the operator's discovery script."""
    words = _launcher_words(job)
    return any(DISCOVER_FILE in w or "host-discovery-script" in w for w in words)


def one_dash_options(job) -> list[str]:
    """Open MPI options spelled with one dash in the launcher's command (also inside `sh -c` text)."""
    found = []
    for w in _launcher_words(job):
        for token in w.split():
            # also the value of an option such as horovodrun's --mpi-args=-bind-to
            for part in (token, token.split("=", 1)[-1]) if token.startswith("--") else (token,):
                m = _ONE_DASH.match(part)
                if m:
                    found.append(f"-{m.group(1)}")
    return found


def ssh_secret_name(job, ctx: EmitContext) -> str:
    if ctx.options.ssh_secret:
        return ctx.options.ssh_secret
    if ctx.jobset_name:
        return f"{ctx.jobset_name}-ssh"
    raise UnsupportedError(Problem(
        "this MPIJob has no name, so the SSH Secret cannot be named after it; pass --ssh-secret NAME "
        "(a kubernetes.io/ssh-auth Secret with ssh-privatekey and ssh-publickey)", rule="ssh-secret-name"))


def _secret_claims(job, ctx: EmitContext, secret: str) -> tuple:
    """Every pod mounts the Secret `secret` at sshAuthMountPath; kf2jobset writes no Secret itself."""
    return (claims.equals(claims.pod_path() + f".spec.volumes[{SSH_VOLUME}].secret.secretName", secret),
            claims.equals(claims.pod_path() + f".spec.containers[0].volumeMounts[{SSH_VOLUME}].mountPath",
                          job.framework["sshAuthMountPath"]))


def _file_claims(job, ctx: EmitContext, key: str, lines, mode: int | None = None) -> tuple:
    """The launcher's /etc/mpi/<key> holds `lines(side)`: in the ConfigMap, or written by the init container."""
    launcher = claims.pod_path(ctx.rjob_names["Launcher"])
    if hostfile_mode(ctx) == "configmap":
        out = tuple(claims.contains(f"data[{key}]", line, target="ConfigMap")
                    for line in lines(ctx.side("Launcher", static=True)))
        if mode is not None:
            out += (claims.equals(f"{launcher}.spec.volumes[{CONFIG_VOLUME}].configMap.items[path={key}].mode", mode),)
        return out
    return written_claims(job, ctx, key, lines)


def _command_kept(job, ctx: EmitContext, rtype: str) -> tuple:
    """The container's command and args as the user wrote them."""
    c0 = (job.replicas[rtype].template.get("spec") or {}).get("containers", [{}])[0]
    path = claims.pod_path(ctx.rjob_names[rtype]) + ".spec.containers[0]"
    return tuple(claims.equals(f"{path}.{k}", c0[k]) if c0.get(k) is not None else claims.absent(f"{path}.{k}")
                 for k in ("command", "args"))


def hostfile_mode(ctx: EmitContext) -> str:
    mode = ctx.options.mpi_hostfile
    if mode == "auto":
        return "configmap" if ctx.jobset_name else "generated"
    if mode == "configmap" and not ctx.jobset_name:
        raise UnsupportedError(Problem(
            "--mpi-hostfile configmap needs a known JobSet name (this job has none); use --mpi-hostfile generated",
            rule="mpi-hostfile-name"))
    return mode


def config_map_name(ctx: EmitContext) -> str:
    return f"{ctx.jobset_name}-mpi-hostfile"


def _user_env_names(job, rtype: str) -> set:
    c0 = job.replicas[rtype].containers[0]
    return {e.get("name") for e in c0.get("env") or [] if isinstance(e, dict)}


def _mount(container: dict, name: str, path: str) -> None:
    container.setdefault("volumeMounts", []).append({"name": name, "mountPath": path})


class MPIProfile(Profile):
    name = "mpi"
    # In the companion ConfigMap (its keys) or, with --mpi-hostfile generated, in the init container's env
    size_values = (SizeValue(f"{MPI_DIR}/hostfile", HOSTS, keys=("hostfile", HOSTFILE_VAR)),
                   SizeValue(f"{MPI_DIR}/{DISCOVER_FILE}", HOSTS, keys=(DISCOVER_FILE, DISCOVER_VAR)))
    pod_names_in_files = True  # the hostfile and discover_hosts.sh list the pods by name

    def fields_from_pods(self, pods: dict, stream: list) -> tuple[dict, dict]:
        launcher = pods.get("Launcher") or {}
        values = literal_env(launcher)
        spec = launcher.get("spec") or {}
        volumes = {v.get("name"): v for v in spec.get("volumes") or [] if isinstance(v, dict)}
        mounted = (volumes.get(CONFIG_VOLUME) or {}).get("configMap") or {}
        options: dict = {"mpi_hostfile": "configmap" if mounted else "generated"}
        secret = ((volumes.get(SSH_VOLUME) or {}).get("secret") or {}).get("secretName")
        if secret:
            options["ssh_secret"] = secret
        data = next((d.get("data") or {} for d in stream if isinstance(d, dict) and d.get("kind") == "ConfigMap"
                     and (d.get("metadata") or {}).get("name") == mounted.get("name")), {}) if mounted else {}
        hostfile = str(data.get("hostfile") or values.get(HOSTFILE_VAR) or values.get(LINE_VAR) or "")
        first = hostfile.split("\n")[0]
        slots = re.search(r"(?: slots=|:)(\d+)\s*$", first)
        fields: dict = {"slotsPerWorker": int(slots.group(1)) if slots else 1}
        if "I_MPI_HYDRA_HOST_FILE" in values:
            fields["mpiImplementation"] = "Intel"
        elif "HYDRA_HOST_FILE" in values:
            fields["mpiImplementation"] = "MPICH"
        if "-launcher-" in first or values.get(FIRST_HOST_VAR):
            fields["runLauncherAsWorker"] = True
        return fields, options

    def spec_fields(self, spec: dict, replicas: dict):
        slots = spec.get("slotsPerWorker")
        defaults = [DefaultApplied(("spec", "slotsPerWorker"), 1, "operator default")] if slots is None else []
        return {"slotsPerWorker": 1 if slots is None else int(slots), "mainContainer": spec.get("mainContainer"),
                "runLauncherAsWorker": bool(spec.get("runLauncherAsWorker", False)),
                "sshAuthMountPath": spec.get("sshAuthMountPath") or "/root/.ssh",
                "launcherCreationPolicy": spec.get("launcherCreationPolicy") or "AtStartup",
                "mpiImplementation": spec.get("mpiImplementation") or "OpenMPI"}, [], defaults

    def operator_files(self, job, side_of) -> dict:
        """What the operator put under /etc/mpi for the launcher."""
        if not job.has("Launcher"):
            return {}
        files = {"hostfile": self.hostfile(job, side_of("Launcher", 0)), DISCOVER_FILE: None}
        if kubectl_exec(job):
            files["kubexec.sh"] = None
        return files

    def jobset_files(self, js, companions: list) -> dict:
        return jobset_files(js, companions)

    # ---- env: the JobSet side is always the SSH model; the operator side depends on the API ----
    def env(self, job, rtype: str, side: Side) -> list[dict]:
        if side.is_operator and kubectl_exec(job):
            return v1_launcher_env(job) if rtype == "Launcher" else []
        if rtype == "Launcher":
            return launcher_env(job, side)
        if kubectl_exec(job):
            return []  # v1 workers had no env; they only need sshd now
        return [env("K_MPI_JOB_ROLE", "worker")]

    def operator_pod(self, job, rtype: str, index: int, pod: dict, side: OperatorSide) -> None:
        spec = pod["spec"]
        c0 = spec["containers"][0]
        if kubectl_exec(job):
            if rtype == "Worker":
                if not c0.get("command"):
                    c0["command"], c0["args"] = ["sleep"], ["365d"]  # the template's args are replaced too
                _mount(c0, CONFIG_VOLUME, MPI_DIR)
            else:
                spec.setdefault("initContainers", []).append({
                    "name": "kubectl-delivery",
                    "image": "ghcr.io/kubeflow/training-v1/kubectl-delivery:latest",
                    "imagePullPolicy": "IfNotPresent",
                    "env": [env("TARGET_DIR", "/opt/kube"), env("NAMESPACE", side.namespace)],
                    "volumeMounts": [{"name": "mpi-job-kubectl", "mountPath": "/opt/kube"},
                                     {"name": CONFIG_VOLUME, "mountPath": MPI_DIR}],
                    "resources": {k: {"cpu": "100m", "memory": "512Mi", "ephemeral-storage": "5Gi"} for k in ("limits", "requests")},
                })
                _mount(c0, "mpi-job-kubectl", "/opt/kube")
                _mount(c0, CONFIG_VOLUME, MPI_DIR)
            return
        spec["hostname"] = side.host(rtype, index)
        spec["subdomain"] = side.name
        if spec.get("hostNetwork"):
            spec["dnsPolicy"] = HOST_NETWORK_DNS  # mpi-operator overrides the user's policy here
        if rtype == "Worker" and not c0.get("command") and not c0.get("args"):
            c0["command"] = ["/usr/sbin/sshd", "-De"]
        _mount(c0, SSH_VOLUME, job.framework["sshAuthMountPath"])
        if rtype == "Launcher":
            _mount(c0, CONFIG_VOLUME, MPI_DIR)

    def size_literals(self, job) -> list[str]:
        return [f"{MPI_DIR}/hostfile", f"{MPI_DIR}/{DISCOVER_FILE}"]

    def hostfile(self, job, side: Side) -> str:
        return "".join(line + "\n" for line in hostfile_lines(job, side))

    def jobset_pod(self, job, rtype: str, template: dict, ctx: EmitContext) -> None:
        spec = template["spec"]
        c0 = spec["containers"][0]
        if spec.get("hostNetwork") and (not kubectl_exec(job) or not spec.get("dnsPolicy")):
            # A host-network pod resolves through the node's DNS unless told otherwise; the hostfile's
            # names need the cluster's. v1's kubectl exec needed no DNS, so there the user's policy stays.
            spec["dnsPolicy"] = HOST_NETWORK_DNS
        if rtype == "Worker" and not c0.get("command") and not c0.get("args"):
            c0["command"] = ["/usr/sbin/sshd", "-De"]
        mount_path = job.framework["sshAuthMountPath"]
        secret = {
            "secretName": ssh_secret_name(job, ctx),
            "items": [
                {"key": "ssh-privatekey", "path": "id_rsa"},
                {"key": "ssh-publickey", "path": "id_rsa.pub"},
                {"key": "ssh-publickey", "path": "authorized_keys"},
            ],
        }
        if mount_path == ROOT_SSH:
            secret["defaultMode"] = 0o600
        volumes = spec.setdefault("volumes", [])
        volumes.append({"name": SSH_VOLUME, "secret": secret})
        _mount(c0, SSH_VOLUME, mount_path)
        if implementation(job) != "OpenMPI" and ctx.jobset_name:
            # Intel MPI and MPICH resolve short worker names through the search path (mpi-operator does this too).
            search = dns_search(job, ctx)
            spec.setdefault("dnsConfig", {}).setdefault("searches", []).append(search)
        if rtype != "Launcher":
            return
        _mount(c0, CONFIG_VOLUME, MPI_DIR)
        if hostfile_mode(ctx) == "configmap":
            volumes.append({
                "name": CONFIG_VOLUME,
                "configMap": {"name": config_map_name(ctx), "items": [
                    {"key": "hostfile", "path": "hostfile", "mode": 0o444},
                    {"key": DISCOVER_FILE, "path": DISCOVER_FILE, "mode": 0o555},
                ]},
            })
            return
        # No known name: write the files at start-up from the pod's own jobset-name label (and pod count).
        volumes.append({"name": CONFIG_VOLUME, "emptyDir": {}})
        # First of the init containers: under v1 the hostfile existed before any container of the pod
        # started, and a user's init container may read it (fixtures/mpijob-v2beta1/init-reads-operator-volumes).
        spec.setdefault("initContainers", []).insert(0, init_container(job, ctx, c0["image"]))

    def companions(self, job, ctx: EmitContext) -> list[dict]:
        if hostfile_mode(ctx) != "configmap":
            return []
        meta = {"name": config_map_name(ctx),
                "labels": {"app.kubernetes.io/managed-by": "kf2jobset", "jobset.sigs.k8s.io/jobset-name": ctx.jobset_name}}
        if job.namespace:
            meta["namespace"] = job.namespace
        return [{
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta,
            "data": {"hostfile": self.hostfile(job, ctx.side("Launcher", static=True)),
                     DISCOVER_FILE: discover_hosts_script(job, ctx.side("Launcher", static=True))},
        }]

    def notes(self, job, ctx: EmitContext) -> None:
        secret = ssh_secret_name(job, ctx)
        create = (
            f"create the Secret before the JobSet: ssh-keygen -t ed25519 -N '' -f key && kubectl "
            f"{f'-n {job.namespace} ' if job.namespace else ''}create secret generic "
            f"{secret} --type=kubernetes.io/ssh-auth --from-file=ssh-privatekey=key --from-file=ssh-publickey=key.pub"
        )
        if kubectl_exec(job):
            if not ctx.options.accept_mpi_ssh:
                raise UnsupportedError(Problem(
                    "MPIJob kubeflow.org/v1 ran mpirun through `kubectl exec` (kubectl-delivery, RBAC, bare pod "
                    "names). A JobSet cannot do that; the converted job uses SSH like mpi-operator v2beta1, which "
                    "needs sshd in the worker image and an SSH key Secret",
                    Location(path=("apiVersion",)), rule="mpi-exec-to-ssh",
                    hint="re-run with --accept-mpi-ssh to accept this breaking change"))
            ctx.note(Note(
                "MPI001", "breaking",
                "MPIJob v1 launched ranks with `kubectl exec` (kubexec.sh, kubectl-delivery init container, a Role "
                "allowing pods/exec); the JobSet launches them over SSH: worker images must run sshd and the "
                f"pods mount the SSH Secret {secret!r}",
                source_path="spec.mpiReplicaSpecs", target_path="spec.replicatedJobs",
                action=create + "; make sure the worker image has sshd",
                explains=(("env", "OMPI_MCA_plm_rsh_agent"), ("env", "I_MPI_HYDRA_BOOTSTRAP"),
                          ("env", "I_MPI_HYDRA_BOOTSTRAP_EXEC"), ("init", "kubectl-delivery"),
                          ("command", "Worker"), ("mount", "/opt/kube"), ("env", "K_MPI_JOB_ROLE"),
                          ("env", "OMPI_MCA_orte_keep_fqdn_hostnames"), ("env", "OMPI_MCA_plm_rsh_args"),
                          ("env", "OMPI_MCA_orte_set_default_slots"), ("mount", job.framework["sshAuthMountPath"]),
                          ("hostfile", "names"), ("mount", MPI_DIR), ("file", "kubexec.sh")),
                claims=_secret_claims(job, ctx, secret) + (
                    claims.absent(claims.pod_path() + ".spec.initContainers[kubectl-delivery]"),),
            ))
            if job.framework.get("mainContainer"):
                ctx.note(Note("MPI002", "dropped", "mainContainer only chose the `kubectl exec` target; SSH reaches the pod's sshd",
                              source_path="spec.mainContainer",
                              unchecked="mainContainer has no JobSet field; that SSH reaches sshd is MPI001's claim"))
            self._v1_failure_notes(job, ctx)
        else:
            # mpi-operator named its Service after the MPIJob: a clash only where the JobSet's Service keeps that name
            if ctx.jobset_name and not ctx.options.subdomain and ctx.jobset_name == job.name:
                ctx.note(Note(
                    "MPI008", "prerequisite",
                    f"mpi-operator created a headless Service named {ctx.jobset_name!r}; the JobSet's Service has the "
                    "same name, and JobSet reuses an existing Service as it is (with the MPIJob's selector), so "
                    "hostnames would not resolve while the old Service exists", warn=True,
                    target_path="spec.network.subdomain",
                    action=_service_clash_action(ctx.options),
                    claims=(claims.equals("metadata.name", ctx.jobset_name), claims.absent("spec.network.subdomain")),
                ))
            ctx.note(Note(
                "MPI003", "prerequisite",
                f"the mpi-operator generated the SSH key Secret <job>-ssh; the JobSet mounts the Secret {secret!r} "
                "that you provide (kf2jobset never writes key material)",
                source_path="spec.mpiReplicaSpecs", target_path="volumes[ssh-auth]", action=create,
                # the key files in the pods differ with the key (seen on the real mpi-operator v0.8.2)
                explains=(("secret", "ssh"), ("file", "id_rsa"), ("file", "id_rsa.pub"), ("file", "authorized_keys")),
                warn=True, claims=_secret_claims(job, ctx, secret) + (claims.absent("kind", target="Secret"),),
            ))
        if not kubectl_exec(job) and job.has("Worker"):
            ctx.note(Note(
                "MPI007", "approximated",
                "mpi-operator never replaced a failed worker pod and did not fail the MPIJob for it (the launcher, "
                "retried by its Job, failed instead); in the JobSet a worker Job that fails fails the JobSet",
                source_path="spec.mpiReplicaSpecs.Worker.restartPolicy", replica_type="Worker",
                explains=(("failure", "Worker"), ("backoffLimit", "Worker")),
                claims=(claims.absent("spec.failurePolicy"),),
            ))
        if implementation(job) != "OpenMPI" and ctx.jobset_name and not job.namespace:
            ctx.note(Note(
                "MPI014", "prerequisite",
                f"{'Intel MPI' if implementation(job) == 'Intel' else implementation(job)} workers reach the launcher by its short "
                f"hostname through the pods' DNS search "
                f"path, which must name the namespace; this manifest has none, so it names `default` "
                f"({dns_search(job, ctx)}): created in another namespace, the workers cannot resolve the launcher "
                "and the run hangs",
                source_path="metadata.namespace", target_path="spec.replicatedJobs[*].template.spec.template.spec.dnsConfig",
                action="set metadata.namespace (e.g. through kustomize's namespace) before converting, "
                       "or apply the JobSet in namespace default",
                warn=True, claims=(claims.contains(claims.pod_path() + ".spec.dnsConfig.searches", dns_search(job, ctx)),),
            ))
        elastic = uses_discovery(job)
        fmt = "<host>:<slots>" if kubectl_exec(job) else "<host>"
        ctx.note(Note(
            # unused by the launcher: the file differs, the run does not
            "MPI004", "approximated" if elastic else "rewritten",
            f"/etc/mpi/{DISCOVER_FILE} (mode 0555) lists the workers by their JobSet hostnames in the operator's format "
            f"({fmt}), but the operator rewrote it as worker pods became Running and the JobSet has no such writer: "
            "this script prints a worker once its DNS name resolves (the headless Service publishes a pod as soon as it "
            "has an address, before it is Ready; every worker if the image has no getent), and the JobSet never adds "
            "or removes workers, so horovodrun --max-np cannot grow past the workers listed"
            + ("" if elastic else " (this launcher does not mention the script)"),
            source_path="spec.mpiReplicaSpecs.Worker", target_path=f"/etc/mpi/{DISCOVER_FILE}",
            action="size the Worker replicatedJob for the run; expect a worker that fails to stay listed until "
                   "its pod is gone" if elastic else None,
            explains=(("file", DISCOVER_FILE),), warn=elastic,
            claims=_file_claims(job, ctx, DISCOVER_FILE, lambda side: mpi_hosts(job, side), 0o555),
        ))
        # PRTE_* names the user set stay theirs (emit: JS062); the note names only what kf2jobset adds.
        prte = [f"{n}={v}" for n, v in ((PRTE_HOSTFILE, f"{MPI_DIR}/hostfile"), (PRTE_SSH_ARGS, "-o ConnectionAttempts=10"))
                if n not in _user_env_names(job, "Launcher")]
        if implementation(job) == "OpenMPI" and prte:
            ctx.note(Note(
                "MPI009", "rewritten",
                f"the launcher also gets {' and '.join(prte)}, "
                "which " + ("the training-operator" if kubectl_exec(job) else "mpi-operator") + " did not set: Open MPI 5 "
                "(PRRTE) ignores OMPI_MCA_orte_default_hostfile, orte_set_default_slots and plm_rsh_args, and without a "
                "hostfile runs every rank on the launcher (or fails with 'not enough slots'); Open MPI 4.1 ignores the "
                "PRTE_MCA_ names, so it runs as before",
                target_path="spec.replicatedJobs[launcher].template.spec.template.spec.containers[0].env",
                replica_type="Launcher", explains=(("env", PRTE_HOSTFILE), ("env", PRTE_SSH_ARGS)),
                claims=tuple(claims.equals(claims.pod_path(ctx.rjob_names["Launcher"]) + f".spec.containers[*].env[{n}].value", v)
                             for n, v in (x.split("=", 1) for x in prte)),
            ))
            words = [w for w in one_dash_options(job)]
            if words:
                ctx.note(Note(
                    "MPI010", "unchanged",
                    f"the launcher's command uses {', '.join(sorted(set(words)))} with one dash: Open MPI 4.1's mpirun "
                    "accepts it, Open MPI 5's does not (it stops, reading the option's value as the program to run); "
                    "kf2jobset never rewrites your command",
                    source_path="spec.mpiReplicaSpecs.Launcher.template.spec.containers[0]", replica_type="Launcher",
                    action="write --bind-to / --map-by / --rank-by (two dashes, accepted by both) before moving to an "
                           "Open MPI 5 image",
                    claims=_command_kept(job, ctx, "Launcher"),
                ))
        if implementation(job) == "MPICH" and job.framework.get("runLauncherAsWorker"):
            ctx.note(Note(
                "MPI011", "unchanged",
                "runLauncherAsWorker with MPICH: the hostfile's first line is the launcher itself, and MPICH 4.0's "
                "hydra reaches that line over ssh like any other (MPICH 5 starts those ranks locally), so the launcher "
                "must run sshd and accept the key too; this is how mpi-operator ran it",
                source_path="spec.runLauncherAsWorker", replica_type="Launcher",
                action="with MPICH 4.x, start sshd in the launcher container before mpirun (or use MPICH 5)",
                claims=_file_claims(job, ctx, "hostfile", lambda side: hostfile_lines(job, side)[:1]),
            ))
        if hostfile_mode(ctx) == "generated":
            ctx.note(Note(
                "MPI005", "rewritten",
                "the JobSet name is not known in advance, so an init container in the launcher writes "
                "/etc/mpi/hostfile from the pod's jobset-name label"
                + (" and pod count (SZ001)" if follows_size(job, ctx) else "") + " instead of a ConfigMap",
                target_path=f"initContainers[{HOSTFILE_INIT}]", explains=(("init", HOSTFILE_INIT),),
                claims=(claims.present(claims.pod_path(ctx.rjob_names["Launcher"]) + f".spec.initContainers[{HOSTFILE_INIT}]"),
                        claims.absent("kind", target="ConfigMap")),
            ))
        if (job.framework.get("launcherCreationPolicy") == "AtStartup" and not kubectl_exec(job) and job.has("Worker")
                and ctx.start_order):  # else JS092: the launcher starts with the workers, as AtStartup made it
            ctx.note(Note(
                "MPI006", "approximated",
                "launcherCreationPolicy AtStartup created the launcher with the workers; the JobSet starts it "
                "once every worker is Ready (dependsOn), which avoids ssh retries",
                source_path="spec.launcherCreationPolicy", explains=(("start", "Launcher"),),
                claims=(claims.equals(f"spec.replicatedJobs[{ctx.rjob_names['Launcher']}].dependsOn[{ctx.rjob_names['Worker']}]"
                                      ".status", "Ready") if ctx.options.has("dependsOn") else
                        claims.equals("spec.startupPolicy.startupPolicyOrder", "InOrder"),),
            ))

    def _v1_failure_notes(self, job, ctx: EmitContext) -> None:
        """MPIJob v1's own failed-pod rule (training-operator.md §5.3), seen on the real v1.9.4 operator."""
        if job.run_policy.backoff_limit == 0:
            return  # the common backoffLimit check fails the job on the first failed pod, as the JobSet does
        for rtype, spec in job.replicas.items():
            src = f"spec.mpiReplicaSpecs.{spec.source_key}.restartPolicy"
            if spec.restart_policy == "ExitCode":
                ctx.note(Note(
                    "MPI012", "approximated",
                    f"{rtype}: under restartPolicy ExitCode MPIJob v1 marked the job Restarting when a pod failed but never "
                    "re-created the pod, so the job neither failed nor went on, whatever the exit code; in the JobSet exit "
                    "codes 1-127 fail it and other failures re-create the pod",
                    source_path=src, replica_type=rtype, explains=(("failure", rtype), ("backoffLimit", rtype)),
                    claims=(claims.present(f"spec.replicatedJobs[{ctx.rjob_names[rtype]}].template.spec.podFailurePolicy"),
                            *claims.retried_within_backoff(job, ctx.rjob_names, [rtype])),
                ))
            elif spec.restart_policy in ("OnFailure", "Always"):
                ctx.note(Note(
                    "MPI013", "approximated",
                    f"{rtype}: MPIJob v1 failed the whole job when a pod reached phase Failed, also under restartPolicy "
                    f"{spec.restart_policy} (an eviction, a pod deadline); in the JobSet the pod's Job re-creates it "
                    "instead (exits under OnFailure are restarted in place in both worlds)",
                    source_path=src, replica_type=rtype, explains=(("failure", rtype),),
                    claims=claims.retried_within_backoff(job, ctx.rjob_names, [rtype])
                    + (claims.equals(claims.pod_path(ctx.rjob_names[rtype]) + ".spec.restartPolicy", "OnFailure"),),
                ))

    def operator_success(self, job) -> tuple:
        return ("all", ("launcher",))

    def operator_start(self, job, rtype: str):
        if rtype == "Launcher" and job.has("Worker") and job.replicas["Worker"].replicas > 0:
            if kubectl_exec(job):
                return ("after", (("worker", "Ready"),))  # kubectl-delivery waits for every worker Ready
            if job.framework.get("launcherCreationPolicy") == "WaitForWorkersReady":
                return ("after", (("worker", "Ready"),))
        return "at-once"

    def operator_failure(self, job, rtype: str, policy: str) -> str:
        if kubectl_exec(job):
            return "stuck" if policy == "ExitCode" else "fail-job"  # pods are never recreated
        return "recreate" if rtype == "Launcher" else "launcher-decides"  # the launcher is a batch Job

    def operator_retries(self, job, rtype: str, policy: str):
        if kubectl_exec(job):
            return super().operator_retries(job, rtype, policy)
        if rtype == "Launcher":
            bl = job.run_policy.backoff_limit
            return (int(bl) if bl is not None else 6, "per Job")  # the launcher Job's own backoffLimit
        # A worker pod was never replaced: Never means no retry, OnFailure the kubelet's restarts in place.
        return 0 if policy == "Never" else None

    def operator_job_rules(self, job, rules: dict) -> None:
        if kubectl_exec(job):
            return
        # mpi-operator v2beta1: the launcher is a batch Job that carries the deadline and the TTL.
        rp = job.run_policy
        rules["cleanPodPolicy"] = "keep-all" if rp.clean_pod_policy == "None" else "delete-workers"
        if rp.active_deadline_seconds is not None:
            rules["activeDeadlineSeconds"] = (int(rp.active_deadline_seconds), "launcher Job")
        if rp.ttl_seconds_after_finished is not None:
            rules["ttl"] = (int(rp.ttl_seconds_after_finished), "launcher Job")


PROFILE = MPIProfile()
