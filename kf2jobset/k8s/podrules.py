"""Core Kubernetes rules the API server applies to the pods and Jobs kf2jobset writes: the Job
template fields a child Job must pass, the pod template inside it (container, volume and port
names, mount paths, env, resource quantities), and companion ConfigMaps; built on the rules every
object passes (metadata, integer ranges, quantities: objectrules.py).

The JobSet CRD schema does not run these (a CRD only checks its OpenAPI schema), but the JobSet
controller creates the child Jobs and pods from these templates, and the API server rejects them
there; metadata is checked on the JobSet itself. The same rules are run on the v1 job's own pod
templates and metadata at the parse boundary (`check_v1_job`): a problem there is *inherited*, the
v1 API server or the operator's pods would have failed on it too.

Pure: dicts in, `Problem`s out. Facts: Kubernetes core and batch validation (IANA service names
for ports, DNS-1123 labels for container/volume names, resource names and requests/limits).
"""
from __future__ import annotations

import re
from decimal import ROUND_CEILING
from typing import Any

from ..errors import Problem
from .objectrules import (DNS1123_LABEL, DNS1123_SUB, INT32, check_labels, check_numbers, check_object_meta, is_int,
                          problem_at, qualified_name_problem, quantity_problem)
from .quantity import go_string, parse_quantity

CONFIGMAP_MAX = 1024 * 1024  # total bytes of data + binaryData (core MaxSecretSize/ConfigMap limit)
_IANA_SVC = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")
_CONFIGMAP_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_STANDARD_RESOURCES = {"cpu", "memory", "ephemeral-storage", "storage", "pods"}
INDEXED_JOB_MAX = 100_000  # batch validation: completions and parallelism of an Indexed Job
IMAGE_PULL_POLICIES = ("Always", "IfNotPresent", "Never")
DNS_POLICIES = ("ClusterFirstWithHostNet", "ClusterFirst", "Default", "None")
COMPLETION_MODES = ("NonIndexed", "Indexed")
TERMINATION_MESSAGE_POLICIES = ("File", "FallbackToLogsOnError")
PROTOCOLS = ("TCP", "UDP", "SCTP")
_CPU_DIVISORS = ("1m", "1")
_MEMORY_DIVISORS = ("1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei")


def _quantity_value(value: Any):
    """The amount as Go reads it (a Decimal), or None."""
    return parse_quantity(value)


def _overcommit_allowed(name: str) -> bool:
    """Native resources (no domain, or a kubernetes.io domain) other than hugepages may be requested below their limit."""
    return ("/" not in name or "kubernetes.io/" in name) and not name.startswith("hugepages-")


def _resource_name_problem(name: Any) -> str | None:
    if not isinstance(name, str):
        return f"resource name {name!r} must be a string"
    if name in _STANDARD_RESOURCES or name.startswith(("hugepages-", "requests.", "limits.")):
        return None
    why = qualified_name_problem(name)
    if why:
        return f"resource name {why}"
    if "/" not in name:
        return f"resource name {name!r} is not a standard resource; extended resources are domain-prefixed (e.g. nvidia.com/gpu)"
    return None


def _check_resources(res: Any, path: tuple) -> list[Problem]:
    if not isinstance(res, dict):
        return []
    out = []
    values: dict = {}
    for part in ("limits", "requests"):
        block = res.get(part)
        if not isinstance(block, dict):
            continue
        for name, value in block.items():
            out += _resource_entry(name, value, path + (part, str(name)), (part, name), values)
    out += _requests_within_limits(values, path)
    names = {name for _, name in values}
    if any(str(n).startswith("hugepages-") for n in names) and not names & {"cpu", "memory"}:
        out.append(problem_at(path, "huge pages require a cpu or memory request or limit", "hugepages"))
    return out


def _resource_entry(name: Any, value: Any, where: tuple, key: tuple, values: dict) -> list[Problem]:
    """One limits or requests entry. One with a valid name and quantity is recorded in `values` under `key`
    (part, name), for the request-against-limit rules that need both sides."""
    why = _resource_name_problem(name)
    if why:
        return [problem_at(where, why, "resource-name")]
    why = quantity_problem(value)
    if why:
        return [problem_at(where, why, "quantity")]
    out = []
    number = _quantity_value(value)
    values[key] = number
    extended = "/" in name and not name.startswith("kubernetes.io/") and not name.startswith("requests.")
    if extended and number is not None and number != int(number):
        out.append(problem_at(where, f"extended resource {name} must be a whole number, got {value!r}", "quantity"))
    if name.startswith("hugepages-"):
        page = parse_quantity(name[len("hugepages-"):])
        if page is None or page <= 0:
            out.append(problem_at(where, f"{name} is not a huge page size", "hugepages"))
        elif number.to_integral_value(rounding=ROUND_CEILING) % page != 0:  # Go compares Value(): rounded up
            out.append(problem_at(where, f"{value!r} is not a positive integer multiple of {name}", "hugepages"))
    return out


def _requests_within_limits(values: dict, path: tuple) -> list[Problem]:
    out = []
    for (part, name), number in values.items():
        if part != "requests" or number is None:
            continue
        limit = values.get(("limits", name))
        if not _overcommit_allowed(name):
            if ("limits", name) not in values:
                out.append(problem_at(path + ("limits",), f"{name}: a limit must be set for a resource that cannot be overcommitted",
                              "resources"))
            elif limit is not None and number != limit:
                out.append(problem_at(path + ("requests", name), f"{name}: request must equal the limit", "resources"))
        elif limit is not None and number > limit:
            out.append(problem_at(path + ("requests", name), f"request {name} must be less than or equal to its limit", "resources"))
    return out


def _port_name_problem(name: Any) -> str | None:
    """IsValidPortName: an IANA service name."""
    if not isinstance(name, str) or len(name) > 15 or not _IANA_SVC.fullmatch(name) or "--" in name \
            or not re.search("[a-z]", name):
        return (f"port name {name!r} must be an IANA service name (at most 15 lower-case letters, digits and '-', "
                "with a letter, no '--')")
    return None


def _port_problem(port: Any) -> str | None:
    """A probe's or handler's int-or-string port: 1-65535, or a port name."""
    if is_int(port):
        return None if 1 <= port <= 65535 else f"port {port} must be between 1 and 65535"
    if isinstance(port, str):
        return _port_name_problem(port)
    return None  # the schema reports other types


def _check_handlers(c: dict, path: tuple) -> list[Problem]:
    out = []
    handlers = [(k, c.get(k)) for k in ("livenessProbe", "readinessProbe", "startupProbe")]
    lifecycle = c.get("lifecycle")
    if isinstance(lifecycle, dict):
        handlers += [(("lifecycle", k), lifecycle.get(k)) for k in ("postStart", "preStop")]
    for key, handler in handlers:
        if not isinstance(handler, dict):
            continue
        for action in ("httpGet", "tcpSocket"):
            act = handler.get(action)
            if isinstance(act, dict) and "port" in act:
                why = _port_problem(act["port"])
                if why:
                    where = path + (key if isinstance(key, tuple) else (key,)) + (action, "port")
                    out.append(problem_at(where, why, "port-number"))
    return out


def _check_divisor(ref: Any, path: tuple) -> list[Problem]:
    """resourceFieldRef: a cpu divisor is 1m or 1; a memory, storage or huge page divisor 1 or a power of 1000 or 1024."""
    if not isinstance(ref, dict) or ref.get("divisor") is None:
        return []
    divisor = parse_quantity(ref.get("divisor"))
    resource = str(ref.get("resource") or "")
    if divisor is None or divisor == 0:
        return []
    allowed = _CPU_DIVISORS if resource.endswith(".cpu") else _MEMORY_DIVISORS
    if go_string(ref.get("divisor")) not in allowed:  # Go compares the quantity's String()
        return [problem_at(path + ("divisor",), f"divisor {ref.get('divisor')!r} is not supported for {resource} (use one of "
                                        f"{', '.join(allowed)})", "divisor")]
    return []


def _env_name_problem(name: Any) -> str | None:
    if not isinstance(name, str) or not name:
        return f"env name {name!r} must be a non-empty string"
    if "=" in name or not (name.isascii() and name.isprintable()):
        return f"env name {name!r} must be printable ASCII characters other than '='"
    return None


_ENV_SOURCES = ("fieldRef", "resourceFieldRef", "configMapKeyRef", "secretKeyRef", "fileKeyRef")


def _check_container(c: Any, path: tuple, volumes: set) -> list[Problem]:
    if not isinstance(c, dict):
        return [problem_at(path, "a container must be a map", "container")]
    out = []
    name = c.get("name")
    if not isinstance(name, str) or len(name) > 63 or not DNS1123_LABEL.fullmatch(name):
        out.append(problem_at(path + ("name",), f"container name {name!r} must be a DNS-1123 label (a-z, 0-9, '-', at most 63)",
                      "container-name"))
    out += _check_ports(c.get("ports") or [], path)
    for i, env in enumerate(c.get("env") or []):
        if isinstance(env, dict):
            out += _check_env(env, path + ("env", i))
    for i, mount in enumerate(c.get("volumeMounts") or []):
        if isinstance(mount, dict):
            out += _check_mount(mount, path + ("volumeMounts", i), volumes)
    out += _check_resources(c.get("resources"), path + ("resources",))
    out += _check_handlers(c, path)
    out += _check_container_enums(c, path)
    return out


def _check_ports(ports: list, path: tuple) -> list[Problem]:
    """Numbers and names of a container's ports (the protocols: `_check_container_enums`)."""
    out = []
    port_names: dict = {}  # unique within a container; two containers of a pod may share one (the real API server)
    for i, port in enumerate(ports):
        ppath = path + ("ports", i)
        if not isinstance(port, dict):
            continue
        number = port.get("containerPort")
        if not is_int(number) or not 1 <= number <= 65535:
            out.append(problem_at(ppath + ("containerPort",), f"containerPort {number!r} must be between 1 and 65535", "port-number"))
        host = port.get("hostPort")
        if host is not None and (not is_int(host) or not 0 <= host <= 65535):
            out.append(problem_at(ppath + ("hostPort",), f"hostPort {host!r} must be between 0 and 65535", "port-number"))
        pname = port.get("name")
        if pname in (None, ""):
            continue
        why = _port_name_problem(pname)
        if why:
            out.append(problem_at(ppath + ("name",), why, "port-name"))
        elif pname in port_names:
            out.append(problem_at(ppath + ("name",), f"port name {pname!r} is used twice in the container", "port-name"))
        else:
            port_names[pname] = ppath
    return out


def _check_env(env: dict, epath: tuple) -> list[Problem]:
    out = []
    why = _env_name_problem(env.get("name"))
    if why:
        out.append(problem_at(epath + ("name",), why, "env-name"))
    source = env.get("valueFrom")
    if source is None:
        return out
    if env.get("value") not in (None, ""):
        out.append(problem_at(epath, "env may not have both value and valueFrom", "env-value-from"))
    if isinstance(source, dict):
        out += _check_divisor(source.get("resourceFieldRef"), epath + ("valueFrom", "resourceFieldRef"))
    count = sum(1 for s in _ENV_SOURCES if isinstance(source, dict) and source.get(s) is not None)
    if count != 1:
        out.append(problem_at(epath + ("valueFrom",), f"valueFrom must name exactly one source ({', '.join(_ENV_SOURCES[:4])}), "
                                              f"got {count}", "env-value-from"))
    return out


def _check_mount(mount: dict, mpath: tuple, volumes: set) -> list[Problem]:
    out = []
    vname = mount.get("name")
    if vname not in volumes:
        out.append(problem_at(mpath + ("name",), f"volumeMount {vname!r} names no volume of the pod", "volume-mount"))
    mp = mount.get("mountPath")
    if not isinstance(mp, str) or not mp:  # (duplicates: list-map keys, checked by the schema)
        out.append(problem_at(mpath + ("mountPath",), "volumeMount needs a mountPath", "volume-mount"))
    sub = mount.get("subPath")
    if isinstance(sub, str) and (sub.startswith("/") or ".." in sub.split("/")):
        out.append(problem_at(mpath + ("subPath",), f"subPath {sub!r} must be a relative path without '..'", "volume-mount"))
    return out


def _check_container_enums(c: dict, path: tuple) -> list[Problem]:
    """The image, and the container fields that take one of a fixed set of values."""
    out = []
    image = c.get("image")
    if not isinstance(image, str) or not image:
        out.append(problem_at(path + ("image",), "a container needs an image", "image"))
    policy = c.get("terminationMessagePolicy")
    if policy is not None and policy not in TERMINATION_MESSAGE_POLICIES:
        out.append(problem_at(path + ("terminationMessagePolicy",), f"terminationMessagePolicy {policy!r} must be one of "
                                                            f"{', '.join(TERMINATION_MESSAGE_POLICIES)}", "termination-message-policy"))
    for i, port in enumerate(c.get("ports") or []):
        if isinstance(port, dict) and port.get("protocol") is not None and port.get("protocol") not in PROTOCOLS:
            out.append(problem_at(path + ("ports", i, "protocol"),
                                  f"protocol {port.get('protocol')!r} must be one of {', '.join(PROTOCOLS)}", "port-protocol"))
    policy = c.get("imagePullPolicy")
    if policy is not None and policy not in IMAGE_PULL_POLICIES:
        out.append(problem_at(path + ("imagePullPolicy",), f"imagePullPolicy {policy!r} must be one of {', '.join(IMAGE_PULL_POLICIES)}",
                      "image-pull-policy"))
    return out


def check_pod_template(template: Any, path: tuple, added_volumes: tuple = ()) -> list[Problem]:
    """A pod template (metadata + spec) as core validation checks it when the Job creates pods.
    `added_volumes`: names the operator added to the pod before creating it (mountable by the user)."""
    if not isinstance(template, dict):
        return []
    out = check_object_meta(template.get("metadata"), path + ("metadata",))
    spec = template.get("spec")
    if not isinstance(spec, dict):
        return out
    spath = path + ("spec",)
    volumes: set = set(added_volumes)
    for i, vol in enumerate(spec.get("volumes") or []):
        if isinstance(vol, dict):
            out += _check_volume(vol, spath + ("volumes", i), added_volumes)
            volumes.add(vol.get("name"))  # (duplicate names: a list-map key, checked by the schema)
    container_names: set = set()
    for field in ("initContainers", "containers"):  # (duplicates within one list: list-map keys, the schema)
        for i, c in enumerate(spec.get(field) or []):
            out += _check_container(c, spath + (field, i), volumes)
            cname = c.get("name") if isinstance(c, dict) else None
            if field == "containers" and cname in container_names:
                out.append(problem_at(spath + (field, i, "name"), f"container name {cname!r} is also an init container's",
                                      "container-name"))
            container_names.add(cname)
    out += _check_pod_fields(spec, spath)
    return out


def _check_volume(vol: dict, vpath: tuple, added_volumes: tuple) -> list[Problem]:
    out = []
    vname = vol.get("name")
    if not isinstance(vname, str) or len(vname) > 63 or not DNS1123_LABEL.fullmatch(vname):
        out.append(problem_at(vpath + ("name",), f"volume name {vname!r} must be a DNS-1123 label", "volume-name"))
    if vname in added_volumes:
        out.append(problem_at(vpath + ("name",), f"volume name {vname!r} is the one the operator adds to these "
                      "pods, so the pod would list it twice", "volume-name"))
    empty = vol.get("emptyDir")
    if isinstance(empty, dict) and empty.get("sizeLimit") is not None:
        why = quantity_problem(empty["sizeLimit"])
        if why:
            out.append(problem_at(vpath + ("emptyDir", "sizeLimit"), why, "quantity"))
    sources = [k for k, v in vol.items() if k != "name" and v is not None]
    if len(sources) > 1:
        out.append(problem_at(vpath, f"a volume has one source, this one has {len(sources)} ({', '.join(map(str, sources))})",
                              "volume-source"))
    downward = vol.get("downwardAPI")
    for k, item in enumerate((downward.get("items") or []) if isinstance(downward, dict) else []):
        if isinstance(item, dict):
            out += _check_divisor(item.get("resourceFieldRef"), vpath + ("downwardAPI", "items", k, "resourceFieldRef"))
    return out


def _check_pod_fields(spec: dict, spath: tuple) -> list[Problem]:
    """The pod spec's own fields: overhead, dnsPolicy, deadline, and the names it refers to or gives its pods."""
    out = []
    overhead = spec.get("overhead")
    for name, value in (overhead.items() if isinstance(overhead, dict) else ()):
        why = quantity_problem(value)
        if why:
            out.append(problem_at(spath + ("overhead", str(name)), why, "quantity"))
    policy = spec.get("dnsPolicy")
    if policy is not None and policy not in DNS_POLICIES:
        out.append(problem_at(spath + ("dnsPolicy",), f"dnsPolicy {policy!r} must be one of {', '.join(DNS_POLICIES)}", "dns-policy"))
    deadline = spec.get("activeDeadlineSeconds")
    if is_int(deadline) and not 1 <= deadline <= INT32[1]:
        out.append(problem_at(spath + ("activeDeadlineSeconds",),
                              f"a pod's activeDeadlineSeconds must be between 1 and {INT32[1]}, got {deadline}", "positive"))
    for field in ("hostname", "subdomain"):
        value = spec.get(field)
        if value not in (None, "") and (not isinstance(value, str) or len(value) > 63 or not DNS1123_LABEL.fullmatch(value)):
            out.append(problem_at(spath + (field,), f"{field} {value!r} must be a DNS-1123 label", field))
    # (schedulerName is not checked: the API server takes any string there, tests/e2e/test_refusals.py)
    for field in ("serviceAccountName", "priorityClassName"):
        value = spec.get(field)
        if value not in (None, "") and (not isinstance(value, str) or len(value) > 253 or not DNS1123_SUB.fullmatch(value)):
            out.append(problem_at(spath + (field,), f"{field} {value!r} must be a DNS-1123 subdomain", field))
    out += check_labels(spec.get("nodeSelector"), spath + ("nodeSelector",))
    return out


def check_jobset_objects(jobset: dict) -> list[Problem]:
    """The core rules on a JobSet: its metadata, numbers, and each child Job's template and pods."""
    out = check_object_meta(jobset.get("metadata"), ("metadata",), dns1035_generate_name=True)
    out += check_numbers(jobset.get("spec"), ("spec",))
    spec = jobset.get("spec") or {}
    for i, rj in enumerate(spec.get("replicatedJobs") or []):
        if not isinstance(rj, dict):
            continue
        template = rj.get("template") or {}
        tpath = ("spec", "replicatedJobs", i, "template")
        out += check_object_meta(template.get("metadata"), tpath + ("metadata",))
        job_spec = template.get("spec") or {}
        out += check_pod_template(job_spec.get("template"), tpath + ("spec", "template"))
        containers = ((job_spec.get("template") or {}).get("spec") or {}).get("containers")
        if isinstance(containers, list) and not containers:
            out.append(problem_at(tpath + ("spec", "template", "spec", "containers"), "a pod needs at least one container", "container"))
        out += _check_job_spec(job_spec, tpath + ("spec",))
    return out


def _check_job_spec(job_spec: Any, path: tuple) -> list[Problem]:
    """batch/v1 Job rules on the child Job's own fields (the template's are check_pod_template's)."""
    if not isinstance(job_spec, dict):
        return []
    out = []
    mode = job_spec.get("completionMode")
    if mode is not None and mode not in COMPLETION_MODES:
        out.append(problem_at(path + ("completionMode",), f"completionMode {mode!r} must be NonIndexed or Indexed", "completion-mode"))
    if mode == "Indexed":
        # parallelism always; completions only with backoffLimitPerIndex (batch validation)
        for field in ("completions", "parallelism") if job_spec.get("backoffLimitPerIndex") is not None else ("parallelism",):
            value = job_spec.get(field)
            if is_int(value) and value > INDEXED_JOB_MAX:
                out.append(problem_at(path + (field,), f"an Indexed Job's {field} must be at most {INDEXED_JOB_MAX}, got {value}",
                                      "indexed-limit"))
    return out


def check_configmap(cm: dict, path: tuple = ()) -> list[Problem]:
    """A companion ConfigMap as the API server validates it."""
    meta = cm.get("metadata") or {}
    out = []
    name = meta.get("name")
    if not isinstance(name, str) or len(name) > 253 or not DNS1123_SUB.fullmatch(name):
        out.append(problem_at(path + ("metadata", "name"), f"ConfigMap name {name!r} must be a DNS-1123 subdomain", "configmap-name"))
    out += check_object_meta(meta, path + ("metadata",))
    total = 0
    for field in ("data", "binaryData"):
        block = cm.get(field)
        if block is None:
            continue
        if not isinstance(block, dict):
            out.append(problem_at(path + (field,), f"{field} must be a map", "configmap-data"))
            continue
        for key, value in block.items():
            if not isinstance(key, str) or len(key) > 253 or not _CONFIGMAP_KEY.fullmatch(key) or key in (".", ".."):
                out.append(problem_at(path + (field, str(key)), f"ConfigMap key {key!r} must be alphanumerics, '-', '_' or '.'",
                                      "configmap-key"))
            if not isinstance(value, str):
                out.append(problem_at(path + (field, str(key)), "ConfigMap values must be strings", "configmap-data"))
                continue
            total += len(value.encode())
    if total > CONFIGMAP_MAX:
        out.append(problem_at(path + ("data",), f"ConfigMap data is {total} bytes, more than 1 MiB", "configmap-size"))
    return out


INHERITED = " (inherited: the v1 API server or the operator's pods rejected this too)"


def _operator_pod_name(job_name: str, rtype: str) -> str:
    """The name the Training Operator (and mpi-operator) gives pod 0 of a replica type: job-type-0,
    the type lower-cased, '/' made '-'."""
    return f"{job_name}-{rtype.lower()}-0".replace("/", "-")


def check_v1_job(doc: dict, mapping) -> list[Problem]:
    """The same rules on a v1 job's pods as the operator made them (its template plus the volumes
    the operator added, under the names it gave them): what fails here failed under v1 too
    (inherited). Replica specs the operator made no pods for (mapping `unknownReplicaTypes: ignore`)
    get only the numeric checks. See `run_policy_problems` for spec.runPolicy."""
    field = mapping.replica_specs_field
    meta = doc.get("metadata")
    out = check_object_meta(meta, ("metadata",))
    name = (meta.get("name") if isinstance(meta, dict) else None) or "x"
    spec = doc.get("spec") or {}
    specs = spec.get(field)
    if isinstance(specs, dict):
        for key, raw in specs.items():
            if isinstance(raw, dict):
                rpath = ("spec", field, key)
                out += check_numbers(raw.get("template"), rpath + ("template",))
                if key not in mapping.known_types and mapping.unknown_replica_types == "ignore":
                    continue
                pod = _operator_pod_name(str(name), str(key))
                if len(pod) <= 253 and not DNS1123_SUB.match(pod):
                    out.append(problem_at(rpath, f"replica type {key!r}: the operator names its pods {pod[:-2]}-<index>, which is "
                                         "not a DNS-1123 subdomain", "replica-type-name"))
                out += check_pod_template(raw.get("template"), rpath + ("template",), mapping.operator_volumes.get(key, ()))
    for p in out:
        p.message += INHERITED
    return out + run_policy_problems(doc)[0]


def run_policy_problems(doc: dict) -> tuple[list[Problem], list[Problem]]:
    """Numbers of spec.runPolicy, which the JobSet's child Jobs carry, as (what v1 refused too, what
    only the JobSet refuses). Facts from the real operator (tests/e2e/test_refusals.py): the v1 CRD
    rejects a number outside its int32/int64 field; a negative backoffLimit is accepted, but the
    operator fails the job at once, before it creates a pod; a non-positive activeDeadlineSeconds is
    accepted and the pods are created (the job then fails at its deadline)."""
    inherited, jobset_only = [], []
    for p in check_numbers((doc.get("spec") or {}).get("runPolicy"), ("spec", "runPolicy")):
        if p.rule == "integer-range":
            p.message += INHERITED
            inherited.append(p)
        elif p.location.path[-1] == "backoffLimit":
            p.message += " (inherited: the v1 operator failed such a job at once, before creating a pod)"
            inherited.append(p)
        else:
            p.message += " (the JobSet carries it, and the API server rejects it there; the v1 operator accepted it)"
            jobset_only.append(p)
    return inherited, jobset_only
