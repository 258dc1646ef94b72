"""MPIJob, both APIs, carried on JobSet with the SSH model (as mpi-operator v2beta1 and Trainer v2 do).

Facts: training-operator.md §5 (v1: kubectl exec, bare pod names, kubectl-delivery) and §6
(v2beta1: SSH Secret, FQDN hostfile, per-implementation launcher env).
Key material is never generated: the pods mount a Secret the user names (--ssh-secret).
"""
from __future__ import annotations

from ..errors import Location, Problem, UnsupportedError
from ..notes import Note
from .base import EmitContext, OperatorSide, Profile, Side, env

CONFIG_VOLUME = "mpi-job-config"
SSH_VOLUME = "ssh-auth"
HOSTFILE_VAR = "KF2JOBSET_HOSTFILE"
HOSTFILE_INIT = "kf2jobset-hostfile"
MPI_DIR = "/etc/mpi"
ROOT_SSH = "/root/.ssh"


def implementation(job) -> str:
    return job.framework.get("mpiImplementation") or "OpenMPI"


def is_gpu_launcher(job) -> bool:
    """v1 rule: any launcher container with a resource limit naming a GPU."""
    for c in job.replicas["Launcher"].containers:
        for key in ((c.get("resources") or {}).get("limits") or {}):
            if key.endswith(".com/gpu") or "gpu" in key:
                return True
    return False


def hostfile_lines(job, side: Side) -> list[str]:
    slots = job.framework["slotsPerWorker"]
    impl = implementation(job)
    hosts = []
    if job.is_mpi_v1:
        if is_gpu_launcher(job):
            hosts.append(side.host("Launcher", 0, "mpi"))
    elif job.framework.get("runLauncherAsWorker"):
        hosts.append(side.host("Launcher", 0, "mpi"))
    workers = job.replicas.get("Worker")
    hosts += [side.host("Worker", i, "mpi") for i in range(workers.replicas if workers else 0)]
    if job.is_mpi_v1 or impl == "OpenMPI":
        return [f"{h} slots={slots}" for h in hosts]
    return [f"{h}:{slots}" for h in hosts]


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
    gpu_visible = is_gpu_launcher(job) if job.is_mpi_v1 else job.framework.get("runLauncherAsWorker")
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


def ssh_secret_name(job, ctx: EmitContext) -> str:
    if ctx.options.ssh_secret:
        return ctx.options.ssh_secret
    if ctx.jobset_name:
        return f"{ctx.jobset_name}-ssh"
    raise UnsupportedError(
        "this MPIJob has no name, so the SSH Secret cannot be named after it; pass --ssh-secret NAME "
        "(a kubernetes.io/ssh-auth Secret with ssh-privatekey and ssh-publickey)"
    )


def hostfile_mode(ctx: EmitContext) -> str:
    mode = ctx.options.mpi_hostfile
    if mode == "auto":
        return "configmap" if ctx.jobset_name else "generated"
    if mode == "configmap" and not ctx.jobset_name:
        raise UnsupportedError(
            "--mpi-hostfile configmap needs a known JobSet name (this job has none); use --mpi-hostfile generated"
        )
    return mode


def config_map_name(ctx: EmitContext) -> str:
    return f"{ctx.jobset_name}-mpi-hostfile"


def _mount(container: dict, name: str, path: str) -> None:
    container.setdefault("volumeMounts", []).append({"name": name, "mountPath": path})


class MPIProfile(Profile):
    name = "mpi"

    # ---- env: the JobSet side is always the SSH model; the operator side depends on the API ----
    def env(self, job, rtype: str, side: Side) -> list[dict]:
        if side.is_operator and job.is_mpi_v1:
            return v1_launcher_env(job) if rtype == "Launcher" else []
        if rtype == "Launcher":
            return launcher_env(job, side)
        if job.is_mpi_v1:
            return []  # v1 workers had no env; they only need sshd now
        return [env("K_MPI_JOB_ROLE", "worker")]

    def operator_pod(self, job, rtype: str, index: int, pod: dict, side: OperatorSide) -> None:
        spec = pod["spec"]
        c0 = spec["containers"][0]
        if job.is_mpi_v1:
            if rtype == "Worker":
                if not c0.get("command"):
                    c0["command"] = ["sleep", "365d"]
                _mount(c0, CONFIG_VOLUME, MPI_DIR)
            else:
                spec.setdefault("initContainers", []).append({
                    "name": "kubectl-delivery",
                    "image": "ghcr.io/kubeflow/training-v1/kubectl-delivery:latest",
                    "imagePullPolicy": "IfNotPresent",
                    "env": [env("TARGET_DIR", "/opt/kube"), env("NAMESPACE", side.namespace)],
                })
                _mount(c0, "mpi-job-kubectl", "/opt/kube")
                _mount(c0, CONFIG_VOLUME, MPI_DIR)
            return
        spec["hostname"] = side.host(rtype, index)
        spec["subdomain"] = side.name
        if rtype == "Worker" and not c0.get("command") and not c0.get("args"):
            c0["command"] = ["/usr/sbin/sshd", "-De"]
        _mount(c0, SSH_VOLUME, job.framework["sshAuthMountPath"])
        if rtype == "Launcher":
            _mount(c0, CONFIG_VOLUME, MPI_DIR)

    def hostfile(self, job, side: Side) -> str:
        return "".join(line + "\n" for line in hostfile_lines(job, side))

    def jobset_pod(self, job, rtype: str, template: dict, ctx: EmitContext) -> None:
        spec = template["spec"]
        c0 = spec["containers"][0]
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
            sub = ctx.options.subdomain or ctx.jobset_name
            search = f"{sub}.{job.namespace or 'default'}.svc.cluster.local"
            spec.setdefault("dnsConfig", {}).setdefault("searches", []).append(search)
        if rtype != "Launcher":
            return
        _mount(c0, CONFIG_VOLUME, MPI_DIR)
        if hostfile_mode(ctx) == "configmap":
            volumes.append({
                "name": CONFIG_VOLUME,
                "configMap": {"name": config_map_name(ctx), "items": [{"key": "hostfile", "path": "hostfile", "mode": 0o444}]},
            })
            return
        # No known name: write the hostfile at start-up from the pod's own jobset-name label.
        side = ctx.side("Launcher")
        content = self.hostfile(job, side)
        volumes.append({"name": CONFIG_VOLUME, "emptyDir": {}})
        spec.setdefault("initContainers", []).append({
            "name": HOSTFILE_INIT,
            "image": c0["image"],
            "command": ["/bin/sh", "-c", f'printf "%s" "${HOSTFILE_VAR}" > {MPI_DIR}/hostfile'],
            "env": side.helper_env() + [{"name": HOSTFILE_VAR, "value": content}],
            "volumeMounts": [{"name": CONFIG_VOLUME, "mountPath": MPI_DIR}],
        })

    def companions(self, job, ctx: EmitContext) -> list[dict]:
        if hostfile_mode(ctx) != "configmap":
            return []
        meta = {"name": config_map_name(ctx), "labels": {"app.kubernetes.io/managed-by": "kf2jobset", "jobset.sigs.k8s.io/jobset-name": ctx.jobset_name}}
        if job.namespace:
            meta["namespace"] = job.namespace
        return [{
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta,
            "data": {"hostfile": self.hostfile(job, ctx.side("Launcher", static=True))},
        }]

    def notes(self, job, ctx: EmitContext) -> None:
        secret = ssh_secret_name(job, ctx)
        create = (
            f"create the Secret before the JobSet: ssh-keygen -t ed25519 -N '' -f key && kubectl create secret generic "
            f"{secret} --type=kubernetes.io/ssh-auth --from-file=ssh-privatekey=key --from-file=ssh-publickey=key.pub"
        )
        if job.is_mpi_v1:
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
            ))
            if job.framework.get("mainContainer"):
                ctx.note(Note("MPI002", "dropped", "mainContainer only chose the `kubectl exec` target; SSH reaches the pod's sshd",
                              source_path="spec.mainContainer"))
        else:
            if ctx.jobset_name and not ctx.options.subdomain:
                ctx.note(Note(
                    "MPI008", "approximated",
                    f"mpi-operator created a headless Service named {ctx.jobset_name!r}; the JobSet's Service has the "
                    "same name, and JobSet reuses an existing Service as it is (with the MPIJob's selector), so "
                    "hostnames would not resolve while the old Service exists", warn=True,
                    target_path="spec.network.subdomain",
                    action="delete the MPIJob (and its Service) before applying the JobSet, or pass --subdomain",
                ))
            ctx.note(Note(
                "MPI003", "rewritten",
                f"the mpi-operator generated the SSH key Secret <job>-ssh; the JobSet mounts the Secret {secret!r} "
                "that you provide (kf2jobset never writes key material)",
                source_path="spec.mpiReplicaSpecs", target_path="volumes[ssh-auth]", action=create,
                explains=(("secret", "ssh"),), warn=True,
            ))
        if not job.is_mpi_v1 and job.has("Worker"):
            ctx.note(Note(
                "MPI007", "approximated",
                "mpi-operator never replaced a failed worker pod and did not fail the MPIJob for it (the launcher, "
                "retried by its Job, failed instead); in the JobSet a worker Job that fails fails the JobSet",
                source_path="spec.mpiReplicaSpecs.Worker.restartPolicy", replica_type="Worker",
                explains=(("failure", "Worker"), ("backoffLimit", "Worker")),
            ))
        ctx.note(Note(
            "MPI004", "approximated",
            "discover_hosts.sh (elastic Horovod host discovery, rewritten by the operator as workers came and went) "
            "is not provided: the hostfile lists the fixed set of worker hostnames",
            source_path="spec.mpiReplicaSpecs.Worker", explains=(("file", "discover_hosts.sh"),),
        ))
        if hostfile_mode(ctx) == "generated":
            ctx.note(Note(
                "MPI005", "rewritten",
                "the JobSet name is not known in advance, so an init container in the launcher writes "
                "/etc/mpi/hostfile from the pod's jobset-name label instead of a ConfigMap",
                target_path=f"initContainers[{HOSTFILE_INIT}]", explains=(("init", HOSTFILE_INIT),),
            ))
        if job.framework.get("launcherCreationPolicy") == "AtStartup" and not job.is_mpi_v1 and job.has("Worker"):
            ctx.note(Note(
                "MPI006", "approximated",
                "launcherCreationPolicy AtStartup created the launcher with the workers; the JobSet starts it "
                "once every worker is Ready (dependsOn), which avoids ssh retries",
                source_path="spec.launcherCreationPolicy", explains=(("start", "Launcher"),),
            ))


PROFILE = MPIProfile()
