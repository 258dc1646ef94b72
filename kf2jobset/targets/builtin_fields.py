"""Pod and container fields a TrainJob on a built-in runtime cannot carry, decided one by one.

A TrainJob sets the node container's image, command, args, env and resources (`spec.trainer`) and, through
`runtimePatches`, the pod fields of Trainer v2.3's PodSpecPatch and the container's volumeMounts and
securityContext (ContainerPatch); nothing else. A field outside those is not by itself a reason to leave
the built-in runtime:

* at the value the API server fills in when it is absent (Kubernetes' defaulting, SetDefaults_PodSpec and
  SetDefaults_Container): left out, the pod gets the same value (TJ018);
* imagePullPolicy: the node gets Kubernetes' default for the image, Always for a `:latest` or untagged
  image, else IfNotPresent (held against the real API server in tests/live/test_trainjob_dry_run.py). A
  different value is approximated (TJ019), except Never where the default is Always: the kubelet would pull
  an image that may exist only on the nodes, and the pods would not start;
* ports: a declared port is informational (a process listens on any port whether declared or not), so a
  port the user declared is approximated (TJ020); one bound to the node (hostPort, hostIP) is not;
* the rest (probes, lifecycle hooks, workingDir, envFrom, priorityClassName, schedulerName, hostNetwork,
  init containers and sidecars, ...) changes what runs or where: the job keeps a generated runtime.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..k8s.images import default_pull_policy

# What a TrainJob may set on a built-in runtime's pods (v2.3 PodSpecPatch), plus what spec.trainer sets
PATCHABLE_POD = ("serviceAccountName", "volumes", "imagePullSecrets", "securityContext", "nodeSelector",
                 "affinity", "tolerations", "schedulingGates", "terminationGracePeriodSeconds")
CARRIED_CONTAINER = ("name", "image", "command", "args", "env", "resources", "volumeMounts", "securityContext", "ports")
POD_DEFAULTS = {"dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler", "enableServiceLinks": True,
                "hostNetwork": False, "hostIPC": False, "hostPID": False, "shareProcessNamespace": False,
                "setHostnameAsFQDN": False}
CONTAINER_DEFAULTS = {"terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                      "stdin": False, "stdinOnce": False, "tty": False}


@dataclass
class Decisions:
    misfits: list = field(default_factory=list)  # why the job keeps a generated runtime
    defaults: list = field(default_factory=list)  # (field, value) left to the API server's defaulting
    pull: tuple | None = None  # (imagePullPolicy written, the one the node gets) when they differ
    ports: list = field(default_factory=list)  # ports the user declared, not declared on the node container


def field_decisions(pod: dict, operator_port: str) -> Decisions:
    """The decisions for the fields of a pod template (its first container is the node container)."""
    out = Decisions()
    extra = []
    for key in sorted(set(pod) - set(PATCHABLE_POD) - {"containers", "restartPolicy"}):
        if key in POD_DEFAULTS and pod[key] == POD_DEFAULTS[key]:
            out.defaults.append((key, pod[key]))
        else:
            extra.append(key)
    if extra:
        out.misfits.append(f"pod fields {extra} (not settable through runtimePatches)")
    containers = pod.get("containers") or []
    if pod.get("initContainers") or len(containers) != 1:
        out.misfits.append("init or sidecar containers (a TrainJob can add none)")
    for c in containers[:1]:
        _decide_node_container(c, operator_port, out)
    return out


def _decide_node_container(c: dict, operator_port: str, out: Decisions) -> None:
    extra = []
    for key in sorted(set(c) - set(CARRIED_CONTAINER)):
        if key in CONTAINER_DEFAULTS and c[key] == CONTAINER_DEFAULTS[key]:
            out.defaults.append((key, c[key]))
        elif key != "imagePullPolicy":
            extra.append(key)
    if extra:
        out.misfits.append(f"container fields {extra} (not settable on the node container)")
    _decide_pull_policy(c, out)
    for p in c.get("ports") or []:
        if p.get("hostPort") or p.get("hostIP"):
            out.misfits.append(f"container port {p.get('name') or p.get('containerPort')} bound to the node "
                               "(hostPort: a TrainJob cannot declare ports)")
        elif p.get("name") != operator_port:
            out.ports.append(p)


def _decide_pull_policy(c: dict, out: Decisions) -> None:
    """The node gets Kubernetes' default pull policy for its image; what that changes."""
    policy, default = c.get("imagePullPolicy"), default_pull_policy(str(c.get("image") or ""))
    if policy is not None and policy == default:
        out.defaults.append(("imagePullPolicy", policy))
    elif policy == "Never" and default != "IfNotPresent":
        out.misfits.append("imagePullPolicy Never on an image the node would pull on every start (Kubernetes' "
                           "default for it is Always; the TrainJob cannot say Never)")
    elif policy is not None:
        out.pull = (policy, default)
