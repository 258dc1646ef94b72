"""The mutations tools/validator_vs_apiserver.py applies to a valid JobSet before sending it to kf2jobset's validator
and to the real API server: numbers where quantities go, names at and over their limits, duplicates, broken
policies, unknown fields, wrong types, each drawn from a seeded random.Random."""
from __future__ import annotations

import copy
import json


def _rjobs(js) -> list:
    rj = (js.get("spec") or {}).get("replicatedJobs")
    return rj if isinstance(rj, list) else []


def _rjob(js, rng):
    rj = [r for r in _rjobs(js) if isinstance(r, dict)]
    if not rj:
        raise LookupError("no replicatedJobs")
    return rng.choice(rj)


def _job_spec(js, rng) -> dict:
    return _rjob(js, rng).setdefault("template", {}).setdefault("spec", {})


def _pod_spec(js, rng) -> dict:
    return _job_spec(js, rng).setdefault("template", {}).setdefault("spec", {})


def _container(js, rng) -> dict:
    cs = [c for c in _pod_spec(js, rng).get("containers") or [] if isinstance(c, dict)]
    if not cs:
        raise LookupError("no containers")
    return rng.choice(cs)


FLOATS = [0.5, 1.0, 2.5, 1e3, 1e-3, 1e16, 1.0000000001, 1.00001, -1.0, 0.0, 3, 2 ** 63, 2 ** 53 + 1, 7]
QUANTITY_STRINGS = ["500m", "1.5Gi", "1Gi", "1.5.5", "abc", "-1", "1e3", "1E3", "+1", "1Ki", "0.5", "", " 1", "1\n",
                    "1m", "10Ei", ".5", "5.", "1ki", "1KI", "1e1.5", "0x10", "2", "100M", "1u", "1n", "1.5", "1e-3"]
RESOURCES = ["cpu", "memory", "nvidia.com/gpu", "hugepages-2Mi", "ephemeral-storage", "example.com/foo"]
NAMES = ["ok", "Bad", "a" * 63, "a" * 64, "a" * 40, "1abc", "a.b", "a_b", "abc\n", "-a", "a-", "", "x"]


def _m_float_quantity(js, rng):
    c = _container(js, rng)
    part = rng.choice(["limits", "requests"])
    name = rng.choice(RESOURCES)
    value = rng.choice(FLOATS)
    c.setdefault("resources", {}).setdefault(part, {})[name] = value
    if rng.random() < 0.5:  # the same in the other part (extended resources need request == limit)
        c["resources"].setdefault("limits" if part == "requests" else "requests", {})[name] = value
    return f"{part}.{name}={value!r}"


def _m_string_quantity(js, rng):
    c = _container(js, rng)
    part = rng.choice(["limits", "requests"])
    name = rng.choice(RESOURCES)
    value = rng.choice(QUANTITY_STRINGS)
    c.setdefault("resources", {}).setdefault(part, {})[name] = value
    return f"{part}.{name}={value!r}"


def _quantity(rng):
    return rng.choice(FLOATS + QUANTITY_STRINGS)


def _m_size_limit(js, rng):
    pod = _pod_spec(js, rng)
    value = _quantity(rng)
    pod.setdefault("volumes", []).append({"name": "scratch-x", "emptyDir": {"sizeLimit": value}})
    return f"emptyDir.sizeLimit={value!r}"


def _m_divisor(js, rng):
    c = _container(js, rng)
    value = _quantity(rng)
    c.setdefault("env", []).append({"name": "CPU_LIMIT_X", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": value}}})
    return f"divisor={value!r}"


def _m_overhead(js, rng):
    value = _quantity(rng)
    _pod_spec(js, rng)["overhead"] = {"cpu": value}
    return f"overhead={value!r}"


def _m_probe_port(js, rng):
    value = rng.choice([8080, 8080.0, 8080.5, "http", "Bad_Name", 0, 70000, "", "toolongportname1", -1, "8080", "a--b", 65535])
    kind = rng.choice(["httpGet", "tcpSocket"])
    handler = {"port": value, **({"path": "/healthz"} if kind == "httpGet" else {})}
    _container(js, rng)[rng.choice(["readinessProbe", "livenessProbe", "startupProbe"])] = {kind: handler}
    return f"{kind}.port={value!r}"


def _m_wrong_type(js, rng):
    target = rng.choice(["replicas", "name", "suspend", "completions", "parallelism", "backoffLimit", "containers",
                         "restartPolicy", "env", "image", "labels"])
    value = rng.choice(["2", 5, "true", 1.5, True, {}, [], None, 2.0, "x"])
    if target == "replicas":
        _rjob(js, rng)["replicas"] = value
    elif target == "name":
        _rjob(js, rng)["name"] = value
    elif target == "suspend":
        js.setdefault("spec", {})["suspend"] = value
    elif target in ("completions", "parallelism", "backoffLimit"):
        _job_spec(js, rng)[target] = value
    elif target in ("containers", "restartPolicy"):
        _pod_spec(js, rng)[target] = value
    elif target in ("env", "image"):
        _container(js, rng)[target] = value
    else:
        js.setdefault("metadata", {})["labels"] = value
    return f"{target}={value!r}"


def _m_jobset_name(js, rng):
    name = rng.choice(NAMES + ["a" * 20, "abc", "a" * 50, "a" * 56])
    js["metadata"]["name"] = name
    js["metadata"].pop("generateName", None)
    return f"name={name!r}"


def _m_generate_name(js, rng):
    value = rng.choice(["job-", "Job-", "a" * 58, "a" * 40 + "-", "a.b-"])
    js["metadata"].pop("name", None)
    js["metadata"]["generateName"] = value
    return f"generateName={value!r}"


def _m_rjob_name(js, rng):
    rj = _rjob(js, rng)
    old, new = rj.get("name"), rng.choice(NAMES + ["worker", "a" * 30])
    rj["name"] = new
    for other in _rjobs(js):  # keep references consistent half the time
        if isinstance(other, dict) and rng.random() < 0.5:
            for dep in other.get("dependsOn") or []:
                if isinstance(dep, dict) and dep.get("name") == old:
                    dep["name"] = new
    sp = (js.get("spec") or {}).get("successPolicy") or {}
    if rng.random() < 0.5 and isinstance(sp.get("targetReplicatedJobs"), list):
        sp["targetReplicatedJobs"] = [new if t == old else t for t in sp["targetReplicatedJobs"]]
    return f"rjob name={new!r}"


def _m_duplicate(js, rng):
    what = rng.choice(["container", "env", "port", "volume", "mount", "rjob", "dependsOn", "initContainer"])
    if what == "rjob":
        js["spec"]["replicatedJobs"].append(copy.deepcopy(_rjob(js, rng)))
    elif what == "container":
        pod = _pod_spec(js, rng)
        pod["containers"].append(copy.deepcopy(rng.choice(pod["containers"])))
    elif what == "initContainer":
        pod = _pod_spec(js, rng)
        c = copy.deepcopy(rng.choice(pod["containers"]))
        pod.setdefault("initContainers", []).append(c)  # same name as a container: the pod rule, not the list map
    elif what == "env":
        c = _container(js, rng)
        c.setdefault("env", []).extend([{"name": "DUP", "value": "1"}, {"name": "DUP", "value": rng.choice(["1", "2"])}])
    elif what == "port":
        c = _container(js, rng)
        proto = rng.choice([None, "TCP", "UDP"])
        second = {"containerPort": 9000, **({"protocol": proto} if proto else {})}
        c.setdefault("ports", []).extend([{"containerPort": 9000}, second])
    elif what == "volume":
        pod = _pod_spec(js, rng)
        pod.setdefault("volumes", []).extend([{"name": "dupv", "emptyDir": {}}, {"name": "dupv", "emptyDir": {}}])
    elif what == "mount":
        pod = _pod_spec(js, rng)
        pod.setdefault("volumes", []).append({"name": "mv", "emptyDir": {}})
        c = rng.choice(pod["containers"])
        c.setdefault("volumeMounts", []).extend([{"name": "mv", "mountPath": "/m"}, {"name": "mv", "mountPath": rng.choice(["/m", "/n"])}])
    else:
        rjs = _rjobs(js)
        if len(rjs) < 2:
            raise LookupError("one rjob")
        rjs[-1]["dependsOn"] = [{"name": rjs[0]["name"], "status": "Ready"}] * 2
    return f"duplicate {what}"


def _m_depends_on(js, rng):
    rjs = _rjobs(js)
    i = rng.randrange(len(rjs))
    names = [r.get("name") for r in rjs if isinstance(r, dict)]
    target = rng.choice(names + ["nope", names[i] if i < len(names) else "x"])
    status = rng.choice(["Ready", "Complete", "Running"])
    count = rng.choice([1, 1, 1, 6])
    rjs[i]["dependsOn"] = [{"name": target, "status": status}] * count if count == 1 else \
        [{"name": f"{target}{k}", "status": status} for k in range(count)]
    if rng.random() < 0.3:
        js["spec"]["startupPolicy"] = {"startupPolicyOrder": rng.choice(["InOrder", "AnyOrder"])}
    return f"rjob[{i}].dependsOn {target}/{status} x{count}"


def _m_success_policy(js, rng):
    names = [r.get("name") for r in _rjobs(js) if isinstance(r, dict)]
    targets = rng.sample(names + ["nope"], k=rng.randint(0, min(2, len(names) + 1)))
    js["spec"]["successPolicy"] = {"operator": rng.choice(["All", "Any", "Some"]), "targetReplicatedJobs": targets}
    return f"successPolicy {targets}"


def _m_failure_policy(js, rng):
    names = [r.get("name") for r in _rjobs(js) if isinstance(r, dict)]
    rules = []
    for _k in range(rng.randint(1, 3)):
        rule = {"name": rng.choice(["r1", "r1", "rule_2", "1bad", "a" * 129, "", "ok:x", "ok-x"]),
                "action": rng.choice(["FailJobSet", "RestartJobSet", "RestartJobSetAndIgnoreMaxRestarts", "RestartJob", "Nope"])}
        if rng.random() < 0.5:
            rule["targetReplicatedJobs"] = rng.sample(names + ["nope"], k=1)
        if rng.random() < 0.5:
            rule["onJobFailureReasons"] = [rng.choice(["BackoffLimitExceeded", "PodFailurePolicy", "Evicted"])]
        rules.append(rule)
    fp = {"maxRestarts": rng.choice([0, 3, -1, 2 ** 31]), "rules": rules}
    if rng.random() < 0.3:
        fp["restartStrategy"] = rng.choice(["Recreate", "BlockingRecreate", "InPlaceRestart", "Bad"])
    js["spec"]["failurePolicy"] = fp
    return f"failurePolicy {json.dumps(fp)[:80]}"


def _m_network(js, rng):
    net = js["spec"].setdefault("network", {})
    value = rng.choice(["svc", "Bad", "a.b", "a" * 63, "a" * 64, "1svc", "abc\n", ""])
    net["subdomain"] = value
    if rng.random() < 0.3:
        net["enableDNSHostnames"] = rng.choice([False, True])
    return f"subdomain={value!r}"


def _m_managed_by(js, rng):
    value = rng.choice(["example.com/ctl", "kueue.x-k8s.io/multikueue", "nope", "a" * 60 + ".io/x", "Example.com/x", "example.com/"])
    js["spec"]["managedBy"] = value
    return f"managedBy={value!r}"


def _m_restart_policy(js, rng):
    value = rng.choice(["Always", "", "Never", "OnFailure", "Sometimes"])
    _pod_spec(js, rng)["restartPolicy"] = value
    if rng.random() < 0.3:
        _job_spec(js, rng)["podFailurePolicy"] = {"rules": [{"action": "FailJob", "onExitCodes": {
            "operator": "In", "values": [42], **({"containerName": rng.choice(["nope", "main"])} if rng.random() < 0.5 else {})}}]}
    return f"restartPolicy={value!r}"


def _m_counts(js, rng):
    spec = _job_spec(js, rng)
    what = rng.choice(["completions", "parallelism", "completionMode", "replicas", "backoffLimit", "activeDeadlineSeconds"])
    if what == "completionMode":
        spec["completionMode"] = rng.choice(["NonIndexed", "Indexed", "Other"])
        if rng.random() < 0.5:
            spec.pop("completions", None)
        return f"completionMode={spec['completionMode']}"
    value = rng.choice([None, 0, -1, 1, 3, 100000, 2 ** 31, 2 ** 31 - 1, 11])
    if what == "replicas":
        rj = _rjob(js, rng)
        if value is None:
            rj.pop("replicas", None)
        else:
            rj["replicas"] = value
    elif value is None:
        spec.pop(what, None)
    else:
        spec[what] = value
    return f"{what}={value!r}"


def _m_metadata(js, rng):
    where = rng.choice(["jobset", "template", "pod"])
    meta = js["metadata"] if where == "jobset" else \
        _rjob(js, rng).setdefault("template", {}).setdefault("metadata", {}) if where == "template" else \
        _job_spec(js, rng).setdefault("template", {}).setdefault("metadata", {})
    kind = rng.choice(["labels", "annotations"])
    key, value = rng.choice([("ok", "v"), ("bad key!", "v"), ("a", "bad value!"), ("a", "v" * 64), ("k" * 64, "v"),
                             ("example.com/k", "v"), ("x/y/z", "v"), ("a", ""), ("a", "v\n"), ("Example.COM/k", "v"),
                             ("jobset.sigs.k8s.io/jobset-name", "other")])
    meta.setdefault(kind, {})[key] = value
    return f"{where} {kind}[{key!r}]={value!r}"


def _m_unknown_field(js, rng):
    target = rng.choice([js, js["spec"], _rjob(js, rng), _job_spec(js, rng), _pod_spec(js, rng), _container(js, rng)])
    target[rng.choice(["foo", "replicaz", "x-extra"])] = 1
    return "unknown field"


def _m_int_range(js, rng):
    what = rng.choice(["terminationGracePeriodSeconds", "activeDeadlineSeconds", "priority", "ttlSecondsAfterFinished"])
    value = rng.choice([-1, 0, 2 ** 31, 2 ** 63, -(2 ** 63) - 1, 5, 1.5])
    if what == "ttlSecondsAfterFinished":
        js["spec"]["ttlSecondsAfterFinished"] = value
    else:
        _pod_spec(js, rng)[what] = value
    return f"{what}={value!r}"


def _m_coordinator(js, rng):
    names = [r.get("name") for r in _rjobs(js) if isinstance(r, dict)]
    coord = {"replicatedJob": rng.choice(names + ["nope"]), "jobIndex": rng.choice([0, 1, -1]), "podIndex": rng.choice([0, 5])}
    js["spec"]["coordinator"] = coord
    return f"coordinator {coord}"


def _m_group_name(js, rng):
    value = rng.choice(["default", "Bad", "g" * 64, "grp", "1g"])
    _rjob(js, rng)["groupName"] = value
    return f"groupName={value!r}"


def _m_container_fields(js, rng):
    c = _container(js, rng)
    what = rng.choice(["name", "image", "port-name", "env-name", "mount", "imagePullPolicy"])
    if what == "name":
        c["name"] = rng.choice(["Bad", "a" * 64, "ok-name", "x\n"])
    elif what == "image":
        c.pop("image", None) if rng.random() < 0.5 else c.__setitem__("image", rng.choice(["", " x", "busybox"]))
    elif what == "port-name":
        c.setdefault("ports", []).append({"containerPort": 7000, "name": rng.choice(["ok", "Bad_Port", "p" * 16, "a--b", "123"])})
    elif what == "env-name":
        c.setdefault("env", []).append({"name": rng.choice(["A=B", "", "ok", "with space", "é"]), "value": "1"})
    elif what == "mount":
        c.setdefault("volumeMounts", []).append({"name": "nope", "mountPath": rng.choice(["/x", ""])})
    else:
        c["imagePullPolicy"] = rng.choice(["Always", "Sometimes"])
    return f"container {what}"


MUTATIONS = [
    _m_float_quantity, _m_float_quantity, _m_string_quantity, _m_string_quantity, _m_size_limit, _m_divisor, _m_overhead,
    _m_probe_port, _m_probe_port, _m_wrong_type, _m_jobset_name, _m_generate_name, _m_rjob_name, _m_duplicate,
    _m_duplicate, _m_depends_on, _m_success_policy, _m_failure_policy, _m_network, _m_managed_by, _m_restart_policy,
    _m_counts, _m_counts, _m_metadata, _m_unknown_field, _m_int_range, _m_coordinator, _m_group_name,
    _m_container_fields,
]
