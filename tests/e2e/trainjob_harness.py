"""The TrainJob target's harness on the trainer stack (tests/e2e/test_trainjob_target.py): a fixture converted
as the CLI converts it, the objects kf2jobset writes created in a namespace (a TrainJob after its runtime, as
`kubectl apply` sends them), the JobSet kf2jobset plans for each TrainJob, how a built JobSet is compared with
it, kf2jobset's bundle installed, and the plain v1 jobs the real-framework runs convert."""
from __future__ import annotations

import copy
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kf2jobset.cli.main import main

from ..fixture_cases import fixture_args, fixture_options
from ..templates import case_values, fill

REPO_FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
CORE_KINDS = {"ConfigMap": "configmaps", "Secret": "secrets"}


def convert_case(case, *extra) -> list[dict] | None:
    """The objects `kf2jobset convert` writes for a fixture (its args and `extra`), or None when it refuses."""
    if "--katib" in fixture_args(case):
        return None
    text = fill((case / "input.yaml").read_text(), case_values(case))
    result = CliRunner().invoke(main, ["convert", "-", *fixture_args(case), *extra], input=text, catch_exceptions=False)
    if result.exit_code != 0:
        return None
    return [d for d in yaml.safe_load_all(result.stdout) if isinstance(d, dict)]


def named_in(obj: dict, ns: str) -> dict:
    """A copy of `obj` in namespace `ns`, a template (generateName) given the name a trial would get."""
    obj = copy.deepcopy(obj)
    obj["metadata"]["namespace"] = ns
    if not obj["metadata"].get("name"):  # a template (generateName): a fixed name here
        obj["metadata"].pop("generateName", None)
        obj["metadata"]["name"] = "trial-abcdefgh"
    return obj


def create_object(custom, core, obj: dict, ns: str, dry_run: str | None = None):
    kind = obj["kind"]
    kw = {"dry_run": dry_run} if dry_run else {}
    if kind in CORE_KINDS:
        return getattr(core, f"create_namespaced_{'config_map' if kind == 'ConfigMap' else 'secret'}")(ns, obj, **kw)
    group, version = obj["apiVersion"].split("/")
    plural = {"TrainJob": "trainjobs", "TrainingRuntime": "trainingruntimes", "JobSet": "jobsets",
              "PodGroup": "podgroups"}[kind]
    return custom.create_namespaced_custom_object(group, version, ns, plural, obj, **kw)


LAGGED: list = []  # TrainJobs Trainer's webhook refused at first because its runtime cache lagged


def create_trainjob_after_its_runtime(custom, core, obj: dict, ns: str):
    """Trainer's webhook looks the runtime up in the controller's informer cache, which can lag the API
    server by a moment: a TrainJob created right after its runtime (what `kubectl apply -f` of
    kf2jobset's file does) may be refused once with "must be created before the TrainJob". Applying
    again is the remedy (TJ001 says so); here: retry for up to 30 s (a loaded machine), and count it."""
    from kubernetes.client.exceptions import ApiException

    deadline = time.monotonic() + 30
    while True:
        try:
            return create_object(custom, core, obj, ns)
        except ApiException as e:
            if obj["kind"] != "TrainJob" or "must be created before the TrainJob" not in str(e.body) or time.monotonic() > deadline:
                raise
            LAGGED.append(obj["metadata"]["name"])
            time.sleep(0.2)


def comparable(js: dict) -> dict:
    """The spec as a pod sees it. Trainer server-side-applies the JobSet from Go structs, which omit an
    empty env value (`value: ""`: the variable is set to "" either way) and may add empty objects
    (`metadata: {}`, `resources: {}`); it writes `suspend: false` explicitly (the TrainJob's)."""
    spec = copy.deepcopy(js["spec"])
    spec.pop("suspend", None)

    def clean(node):
        if isinstance(node, dict):
            if "name" in node and node.get("value") == "" and "valueFrom" not in node:
                node.pop("value")
            for k in list(node):
                clean(node[k])
                if node[k] == {}:
                    node.pop(k)
        elif isinstance(node, list):
            for x in node:
                clean(x)
        return node
    return clean(spec)


DMLC_ORDER: dict = {}  # how this controller process ordered the DMLC_* (for the summary)


def either_dmlc_order(expected: dict, built: dict) -> dict:
    """On xgboost-distributed Trainer v2.3 puts the plugin's DMLC_* before or after the trainer env, as the
    controller process happens to order its PlainML and XGBoost plugins (kf2jobset/targets/xgboost_distributed.py):
    a JobSet with the other of those two orders is taken as the predicted one; any other order is not."""
    from kf2jobset.targets.xgboost_distributed import DMLC_ENV

    def env(js):
        rjobs = js["spec"]["replicatedJobs"]
        return rjobs[0]["template"]["spec"]["template"]["spec"]["containers"][0].get("env") or [] if len(rjobs) == 1 else []
    want, have = env(expected), env(built)
    names = [e["name"] for e in want]
    if not set(DMLC_ENV) <= set(names) or names[:len(DMLC_ENV)] != list(DMLC_ENV):
        return built
    swapped = want[len(DMLC_ENV):] + want[:len(DMLC_ENV)]  # the trainer env first, then the DMLC_*
    if [e["name"] for e in have] != [e["name"] for e in swapped]:
        if [e["name"] for e in have] == names:
            DMLC_ORDER["before the trainer env"] = DMLC_ORDER.get("before the trainer env", 0) + 1
        return built
    DMLC_ORDER["after the trainer env"] = DMLC_ORDER.get("after the trainer env", 0) + 1
    built = copy.deepcopy(built)
    n = len(have) - len(DMLC_ENV)
    env(built)[:] = have[n:] + have[:n]
    return built


def differences(expected: dict, built: dict) -> list[str]:
    """Where the JobSet Trainer built differs from kf2jobset's (after the same server's defaulting)."""
    from deepdiff import DeepDiff

    built = either_dmlc_order(expected, built)
    diff = DeepDiff(comparable(expected), comparable(built), ignore_order=False)
    return [f"{k}: {v}" for k, v in diff.items()]


REFUSED_BY_DEFAULT: set = set()  # fixtures the default refuses (no shared runtime), run with per-job instead


def planned_objects(case, runtime: str = "auto") -> tuple[list[dict], list[dict]] | None:
    """(objects `convert --target trainjob` writes, the JobSet each TrainJob must make Trainer build): on a
    generated runtime, the JobSet `--target jobset` writes; on torch-distributed, the one kf2jobset predicts
    (the report compares that one with the v1 pods)."""
    import dataclasses

    from kf2jobset.files.pipeline import convert_text
    from kf2jobset.text.yamlio import to_plain

    if "--katib" in fixture_args(case):
        return None
    options = dataclasses.replace(fixture_options(case), target="trainjob", trainer_runtime=runtime)
    text = fill((case / "input.yaml").read_text(), case_values(case))
    result = convert_text(text, "input.yaml", options)
    if result.errors and all(p.rule == "trainjob-no-shared-runtime" for e in result.errors for p in e.problems):
        # no shared runtime takes it, so the default refuses it: on request, its own runtime
        REFUSED_BY_DEFAULT.add(case)
        result = convert_text(text, "input.yaml", dataclasses.replace(options, trainer_runtime="per-job"))
    if result.errors or result.new_text is None:
        return None
    written = [d for d in yaml.safe_load_all(result.new_text) if isinstance(d, dict)]
    return written, [stand_in_named(to_plain(c.jobset)) for r in result.results for c in r.conversions]


def stand_in_named(jobset: dict) -> dict:
    """A JobSet planned for a TrainJob named at creation carries the report model's stand-in name (in
    PET_MASTER_ADDR, on torch-distributed): here it gets the name _strip gives the TrainJob."""
    import json

    from kf2jobset.runtime.jobset_view import stand_in_name

    if jobset["metadata"].get("name"):
        return jobset
    return json.loads(json.dumps(jobset).replace(stand_in_name(jobset["metadata"]), "trial-abcdefgh"))


@pytest.fixture
def bundle(custom):
    """kf2jobset's compat bundle installed as the platform installs it (`kf2jobset runtimes | kubectl apply`);
    the real API server and Trainer's webhook take every runtime of it."""
    from kubernetes.client.exceptions import ApiException

    out = CliRunner().invoke(main, ["runtimes"], catch_exceptions=False)
    names = []
    for obj in (d for d in yaml.safe_load_all(out.stdout) if d):
        try:
            custom.create_cluster_custom_object("trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes", obj)
        except ApiException as e:
            if e.status != 409:  # installed by an earlier test of this stack
                raise
        names.append(obj["metadata"]["name"])
    return names


def on_its_gang_flavour(custom, trainjob: dict) -> None:
    """A TrainJob that needs a gang flavour of kf2jobset's bundle (TJ046) is pointed at that flavour of its runtime,
    installed under the name `<runtime>-<flavour>` beside the plain bundle (the JobSet Trainer builds does not name
    the runtime)."""
    from kubernetes.client.exceptions import ApiException

    from kf2jobset.targets.bundle_catalog import catalog
    from kf2jobset.targets.bundle_gang import GANG_ANNOTATION, parse

    gang = parse((trainjob["metadata"].get("annotations") or {}).get(GANG_ANNOTATION))
    if gang is None:
        return
    ref = trainjob["spec"]["runtimeRef"]
    obj = next(r for r in catalog() if r.name == ref["name"]).object(gang)
    obj["metadata"]["name"] = ref["name"] = f"{ref['name']}-{gang.value.replace('/', '-')}"[:63]
    try:
        custom.create_cluster_custom_object("trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes", obj)
    except ApiException as e:
        if e.status != 409:  # installed for an earlier fixture
            raise


def v1_pytorchjob(name: str, image: str, workers: int, command: list, nproc: str | None = None) -> dict:
    pod = {"spec": {"containers": [{"name": "pytorch", "image": image, "command": command}]}}
    spec = {"pytorchReplicaSpecs": {"Master": {"replicas": 1, "template": copy.deepcopy(pod)},
                                    "Worker": {"replicas": workers, "template": copy.deepcopy(pod)}}}
    if nproc:
        spec["nprocPerNode"] = nproc
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": name}, "spec": spec}


def v1_jax_or_xgboost_job(kind: str, name: str, image: str, pods: int) -> dict:
    """A v1 JAXJob (workers only) or XGBoostJob (a master, the rest workers) of `pods` identical pods."""
    pod = {"spec": {"containers": [{"name": kind.lower(), "image": image}]}}
    if kind == "JAX":
        specs = {"jaxReplicaSpecs": {"Worker": {"replicas": pods, "restartPolicy": "OnFailure", "template": pod}}}
    else:
        specs = {"xgbReplicaSpecs": {"Master": {"replicas": 1, "restartPolicy": "Never", "template": copy.deepcopy(pod)},
                                     "Worker": {"replicas": pods - 1, "restartPolicy": "ExitCode",
                                                "template": copy.deepcopy(pod)}}}
    return {"apiVersion": "kubeflow.org/v1", "kind": f"{kind}Job", "metadata": {"name": name}, "spec": specs}


def v1_tfjob(name: str, image: str, workers: int) -> dict:
    spec = {"replicas": 1, "restartPolicy": "Never",
            "template": {"spec": {"containers": [{"name": "tensorflow", "image": image, "command": ["python", "task.py"]}]}}}
    specs = {"Chief": spec, "PS": copy.deepcopy(spec), "Worker": {**copy.deepcopy(spec), "replicas": workers}}
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": name}, "spec": {"tfReplicaSpecs": specs}}


# An MPI launcher's stand-in for mpirun: resolves every host of its hostfile, reports them and its args.
MPI_PROBE = r"""
import json, socket, sys, time
hosts = [line.split()[0] for line in open("/etc/mpi/hostfile") if line.strip()]
deadline, seen = time.time() + 90, {}
for h in hosts:
    while True:
        try:
            seen[h] = socket.gethostbyname(h)
            break
        except socket.gaierror:
            if time.time() > deadline:
                raise
            time.sleep(0.2)
print("KF2JS-MPI " + json.dumps({"argv": sys.argv[1:], "hosts": seen}), flush=True)
"""
