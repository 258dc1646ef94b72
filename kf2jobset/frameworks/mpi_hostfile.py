"""The MPI launcher's /etc/mpi/hostfile and discover_hosts.sh: their lines, and the init container that
writes them at start when the JobSet's name is not known in advance (`--mpi-hostfile generated`).

The operator wrote both files from the replica counts whenever it made the pods. Written at start, they
follow a replica edit too: the launcher's pod count label (`jobset.sigs.k8s.io/global-replicas`, JobSet
v0.7+) less the launcher is the worker count, and worker i's address is the same template with i in it.
`written_files` is the model of that init container's script (the report reads the files through it;
tests/test_mpi_hostfile.py holds it to the script run by /bin/sh).
"""
from __future__ import annotations

from .. import claims
from .base import LABEL_GLOBAL_REPLICAS, EmitContext, Side, env, escape, field_env

MPI_DIR = "/etc/mpi"
CONFIG_VOLUME = "mpi-job-config"
DISCOVER_FILE = "discover_hosts.sh"
HOSTFILE_INIT = "kf2jobset-hostfile"
# literal mode: the files' whole text
HOSTFILE_VAR = "KF2JOBSET_HOSTFILE"
DISCOVER_VAR = "KF2JOBSET_DISCOVER_HOSTS"
# following mode: the pod count and templates the script fills in
POD_COUNT_VAR = "KF2JOBSET_POD_COUNT"
FIRST_HOST_VAR = "KF2JOBSET_FIRST_HOST"  # the launcher, where it is a host of its own hostfile
WORKER_HOST_VAR = "KF2JOBSET_WORKER_HOST"  # worker @i@'s address
LINE_VAR = "KF2JOBSET_HOSTFILE_LINE"  # a hostfile line for @host@
INDEX_MARK, HOST_MARK, HOSTS_MARK = "@i@", "@host@", "@hosts@"  # '@' is in no Kubernetes name
LAUNCHERS = 1  # launcher pods in every MPIJob: the pod count less these is the worker count


def kubectl_exec(job) -> bool:
    """The training operator's MPIJob v1 design (the launcher runs workers through kubectl exec);
    the other MPI mapping is mpi-operator's SSH design."""
    return not job.by_mpi_operator

FOLLOWING_SCRIPT = f"""\
set -e
[ -n "${POD_COUNT_VAR}" ] || {{ echo "kf2jobset-hostfile: no {LABEL_GLOBAL_REPLICAS} label (JobSet v0.7+)" >&2; exit 1; }}
n=$(( {POD_COUNT_VAR} - {LAUNCHERS} ))
hosts=${FIRST_HOST_VAR}
i=0
while [ "$i" -lt "$n" ]; do
  hosts="$hosts ${{{WORKER_HOST_VAR}%%{INDEX_MARK}*}}$i${{{WORKER_HOST_VAR}#*{INDEX_MARK}}}"
  i=$((i + 1))
done
for h in $hosts; do
  printf '%s\\n' "${{{LINE_VAR}%%{HOST_MARK}*}}$h${{{LINE_VAR}#*{HOST_MARK}}}"
done > {MPI_DIR}/hostfile
hosts=${{hosts# }}
printf '%s' "${{{DISCOVER_VAR}%%{HOSTS_MARK}*}}$hosts${{{DISCOVER_VAR}#*{HOSTS_MARK}}}" > {MPI_DIR}/{DISCOVER_FILE}
chmod 0555 {MPI_DIR}/{DISCOVER_FILE}
"""
LITERAL_SCRIPT = (f'printf "%s" "${HOSTFILE_VAR}" > {MPI_DIR}/hostfile && '
                  f'printf "%s" "${DISCOVER_VAR}" > {MPI_DIR}/{DISCOVER_FILE} && chmod 0555 {MPI_DIR}/{DISCOVER_FILE}')


def implementation(job) -> str:
    return job.framework.get("mpiImplementation") or "OpenMPI"


def is_gpu_launcher(job) -> bool:
    """v1 rule: any launcher container with a resource limit naming a GPU."""
    for c in job.replicas["Launcher"].containers:
        for key in ((c.get("resources") or {}).get("limits") or {}):
            if key.endswith(".com/gpu") or "gpu" in key:
                return True
    return False


def slots_suffix(job) -> str:
    """What follows a host on its hostfile line: Open MPI's ` slots=N`, Intel MPI's and MPICH's `:N`."""
    slots = job.framework["slotsPerWorker"]
    return f" slots={slots}" if kubectl_exec(job) or implementation(job) == "OpenMPI" else f":{slots}"


def first_hosts(job, side: Side) -> list[str]:
    """The launcher, where the operator listed it first: a v1 GPU launcher, v2beta1 runLauncherAsWorker."""
    first = is_gpu_launcher(job) if kubectl_exec(job) else job.framework.get("runLauncherAsWorker")
    return [side.host("Launcher", 0, "mpi")] if first else []


def mpi_hosts(job, side: Side) -> list[str]:
    """The hosts of the hostfile and of discover_hosts.sh, in the operator's order."""
    workers = job.replicas.get("Worker")
    return first_hosts(job, side) + [side.host("Worker", i, "mpi") for i in range(workers.replicas if workers else 0)]


def hostfile_lines(job, side: Side) -> list[str]:
    return [h + slots_suffix(job) for h in mpi_hosts(job, side)]


def discover_hosts_script(job, side: Side, hosts: str | None = None) -> str:
    """Elastic Horovod's --host-discovery-script, in the operator's line format (`hosts`: the list
    written into it, by default the job's hosts).

    The operator rewrote the file as worker pods became Running (v1: `echo <pod>:<slots>`; v2beta1:
    `echo <fqdn>`). A JobSet has no such writer, so the script asks at each call: it prints a host
    when its name resolves (the headless Service publishes a pod once it has an address), and every
    host when the image has no `getent` to ask with.
    """
    suffix = f":{job.framework['slotsPerWorker']}" if kubectl_exec(job) else ""
    hosts = " ".join(mpi_hosts(job, side)) if hosts is None else hosts
    return (
        "#!/bin/sh\n"
        "# Written by kf2jobset: elastic Horovod host discovery (--host-discovery-script).\n"
        "# Prints the hosts whose DNS name resolves; every host if getent is missing.\n"
        f"for host in {hosts}; do\n"
        "  if ! command -v getent >/dev/null 2>&1 || getent hosts \"$host\" >/dev/null 2>&1; then\n"
        f"    echo \"$host{suffix}\"\n"
        "  fi\n"
        "done\n"
    )


def follows_size(job, ctx: EmitContext) -> bool:
    """The init container can write the files from the pod count: the label exists and counts the v1
    pods (ctx.size_follows), one launcher, and the workers in one replicatedJob (worker i is job-index i)."""
    segments = (ctx.segments or {}).get("Worker") or ()
    return (ctx.size_follows and job.has("Worker") and len(segments) == 1
            and job.replicas["Launcher"].replicas == LAUNCHERS)


def init_container(job, ctx: EmitContext, image: str) -> dict:
    """The launcher's first init container: writes the files into the emptyDir at MPI_DIR."""
    side = ctx.side("Launcher")
    if follows_size(job, ctx):
        first = first_hosts(job, side)
        values = [env(WORKER_HOST_VAR, side.host("Worker", INDEX_MARK, "mpi")), env(LINE_VAR, HOST_MARK + slots_suffix(job)),
                  env(DISCOVER_VAR, discover_hosts_script(job, side, HOSTS_MARK))]
        values = ([field_env(POD_COUNT_VAR, f"metadata.labels['{LABEL_GLOBAL_REPLICAS}']")]
                  + [env(FIRST_HOST_VAR, h) for h in first] + values)
        script = escape(FOLLOWING_SCRIPT)  # its $(( )) is the shell's, not a Kubernetes reference
        ctx.follows_files += [(f"{MPI_DIR}/{key}", count_claim(ctx)) for key in ("hostfile", DISCOVER_FILE)]
    else:
        values = [env(HOSTFILE_VAR, "".join(line + "\n" for line in hostfile_lines(job, side))),
                  env(DISCOVER_VAR, discover_hosts_script(job, side))]
        script = LITERAL_SCRIPT
    return {
        "name": HOSTFILE_INIT,
        "image": image,
        "command": ["/bin/sh", "-c", script],
        "env": side.helper_env() + values,  # the helpers the addresses need come first
        "volumeMounts": [{"name": CONFIG_VOLUME, "mountPath": MPI_DIR}],
    }


def _init_env(ctx: EmitContext) -> str:
    return claims.pod_path(ctx.rjob_names["Launcher"]) + f".spec.initContainers[{HOSTFILE_INIT}].env"


def count_claim(ctx: EmitContext):
    """The init container reads the pod count from the global-replicas label."""
    return claims.equals(f"{_init_env(ctx)}[{POD_COUNT_VAR}].valueFrom.fieldRef.fieldPath",
                         f"metadata.labels['{LABEL_GLOBAL_REPLICAS}']")


def written_claims(job, ctx: EmitContext, key: str, lines) -> tuple:
    """The init container writes `lines(side)` into MPI_DIR/<key>: as the file's text, or (following the
    size) from the templates, whose filled-in lines are those of the job as written."""
    side = ctx.side("Launcher")
    if not follows_size(job, ctx):
        var = HOSTFILE_VAR if key == "hostfile" else DISCOVER_VAR
        return tuple(claims.contains(f"{_init_env(ctx)}[{var}].value", line) for line in lines(side))
    out = (count_claim(ctx), claims.equals(f"{_init_env(ctx)}[{WORKER_HOST_VAR}].value", side.host("Worker", INDEX_MARK, "mpi")))
    if key == "hostfile":
        out += (claims.equals(f"{_init_env(ctx)}[{LINE_VAR}].value", HOST_MARK + slots_suffix(job)),)
    return out


def written_files(env_values: dict) -> dict:
    """What the init container's script writes, from its env as the kubelet resolved it: {file: text}
    (nothing where the script fails)."""
    if POD_COUNT_VAR not in env_values:
        return {key: env_values[var] for key, var in (("hostfile", HOSTFILE_VAR), (DISCOVER_FILE, DISCOVER_VAR))
                if var in env_values}
    count = str(env_values[POD_COUNT_VAR]).strip()
    if not count.isdigit():
        return {}
    pre, _, post = str(env_values.get(WORKER_HOST_VAR, "")).partition(INDEX_MARK)
    hosts = str(env_values.get(FIRST_HOST_VAR, "")).split()
    hosts += [f"{pre}{i}{post}" for i in range(int(count) - LAUNCHERS)]
    line_pre, _, line_post = str(env_values.get(LINE_VAR, "")).partition(HOST_MARK)
    script_pre, _, script_post = str(env_values.get(DISCOVER_VAR, "")).partition(HOSTS_MARK)
    return {"hostfile": "".join(f"{line_pre}{h}{line_post}\n" for h in hosts),
            DISCOVER_FILE: f"{script_pre}{' '.join(hosts)}{script_post}"}


def jobset_files(js, companions: list) -> dict:
    """What the JobSet's launcher finds under /etc/mpi: a ConfigMap's keys, or what the init container writes
    (`js`: runtime.jobset_view.JobSetWorld)."""
    launcher = next((p for p in js.pods if p.key[0] == "launcher"), None)
    if launcher is None:
        return {}
    mount = None
    for c in launcher.containers():
        for m in c.get("volumeMounts") or []:
            if m.get("mountPath") == MPI_DIR:
                mount = m.get("name")
    if mount is None:
        return {}
    volume = next((v for v in launcher.spec.get("volumes") or [] if v.get("name") == mount), {})
    if "configMap" in volume:
        name = volume["configMap"].get("name")
        cm = next((c for c in companions if c.get("kind") == "ConfigMap" and (c.get("metadata") or {}).get("name") == name), None)
        data = (cm or {}).get("data") or {}
        items = volume["configMap"].get("items")
        keys = [i.get("path") for i in items] if items else list(data)
        return {k: data.get(k) for k in keys}
    if "downwardAPI" in volume:  # a Katib trial's files, from the launcher's annotations (kf2jobset/sources/katib_files.py)
        fields = {i.get("path"): (i.get("fieldRef") or {}).get("fieldPath", "") for i in volume["downwardAPI"].get("items") or []}
        return {k: launcher.annotations.get(f[len("metadata.annotations['"):-2]) for k, f in fields.items()
                if f.startswith("metadata.annotations['")}
    files = {}
    for c in launcher.containers(init=True):
        if c.get("name") == HOSTFILE_INIT:
            files.update(written_files(dict(launcher.env(c))))
    return files
