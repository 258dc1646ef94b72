"""`--target trainjob` on Trainer's built-in jax-distributed and xgboost-distributed runtimes
(kf2jobset/targets/jax_distributed.py, xgboost_distributed.py), what the three built-ins share
(builtin.py) and the per-field decisions (builtin_fields.py). The report over every fixture and the
corpus, and the goldens: tests/test_target_torch_distributed.py; the real Trainer v2.3.0 builds the
predicted JobSets and runs real JAX and XGBoost programs on them: tests/e2e/test_trainjob_target.py."""
from __future__ import annotations


import pytest
import yaml
from click.testing import CliRunner

from kf2jobset import exitcodes
from kf2jobset.cli.main import main
from kf2jobset.k8s.images import default_pull_policy
from kf2jobset.options import ConvertOptions
from kf2jobset.files.pipeline import convert_text
from kf2jobset.checks.staleness import SIZE_LITERALS_ANNOTATION, SIZED_FOR_ANNOTATION
from kf2jobset.targets import builtin
from kf2jobset.targets.builtin_fields import field_decisions
from kf2jobset.targets.trainjob import BUILTINS, builtin_module

from .conftest import FIXTURES
from .jobset_edits import converted_in_place

TARGETS = FIXTURES / "targets" / "trainjob"


def _convert(text: str, **options):
    result = convert_text(text, "job.yaml", ConvertOptions(target="trainjob", **options))
    (conv,) = [c for r in result.results for c in r.conversions]
    (trainjob,) = [o for o in conv.objects if o["kind"] == "TrainJob"]
    return conv, trainjob


def _refused(text: str) -> str:
    """By default a job no shared runtime takes is refused, saying why (a per-job runtime only on request)."""
    result = convert_text(text, "job.yaml", ConvertOptions(target="trainjob"))
    (error,) = result.errors
    assert error.problems[0].rule == "trainjob-no-shared-runtime"
    return error.problems[0].message


def _env(obj: dict, path="spec.trainer") -> dict:
    node = obj
    for k in path.split("."):
        node = node[k]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in node.get("env") or []}


def _node(predicted: dict) -> dict:
    return predicted["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]


def test_the_registry_names_a_module_per_built_in_runtime():
    assert {p: builtin_module(p).RUNTIME_NAME for p in BUILTINS} == {
        "pytorch": "torch-distributed", "jax": "jax-distributed", "xgboost": "xgboost-distributed"}
    assert builtin_module("tensorflow") is None
    for p in BUILTINS:
        module = builtin_module(p)
        assert all(callable(getattr(module, f)) for f in ("misfits", "build", "notes", "limits"))
        assert module.PLUGIN.profile == p


def test_a_jaxjob_lands_on_jax_distributed_with_v1s_names_beside_trainers():
    conv, tj = _convert((TARGETS / "jax-spmd" / "input.yaml").read_text())
    assert tj["spec"]["runtimeRef"]["name"] == "jax-distributed" and tj["spec"]["trainer"]["numNodes"] == 3
    env = _env(tj)
    assert env["COORDINATOR_ADDRESS"] == "$(KF2JOBSET_JOBSET_NAME)-node-0-0.$(KF2JOBSET_JOBSET_NAME)"
    assert env["COORDINATOR_PORT"] == "6666" and env["NUM_PROCESSES"] == "$(JAX_NUM_PROCESSES)"
    assert env["PROCESS_ID"] == {"fieldRef": {"fieldPath": builtin.COMPLETION_INDEX}}
    assert SIZED_FOR_ANNOTATION not in (tj["metadata"].get("annotations") or {})  # everything follows numNodes
    node = _node(conv.jobset)
    names = [e["name"] for e in node["env"]]
    # the plugin's variables first: NUM_PROCESSES can read $(JAX_NUM_PROCESSES)
    assert names[:3] == ["JAX_NUM_PROCESSES", "JAX_PROCESS_ID", "JAX_COORDINATOR_ADDRESS"]
    assert dict((e["name"], e.get("value")) for e in node["env"])["JAX_COORDINATOR_ADDRESS"] == "spmd-mnist-node-0-0.spmd-mnist:29500"
    codes = {n.code for n in conv.notes}
    assert {"TJ005", "TJ014", "TJ016", "TJ019", "TJ003"} <= codes and "TJ009" not in codes  # v1: all workers too


def test_a_users_jax_variable_replaces_the_plugins_where_it_stands():
    """Trainer's JAX plugin reserves nothing: the JobSet builder upserts trainer.env after its variables, so a
    JAX_* the v1 job set wins, as it did in the v1 pod."""
    text = (FIXTURES / "jaxjob" / "workers" / "input.yaml").read_text().replace(
        'command: ["python", "train.py"]',
        'command: ["python", "train.py"]\n              env:\n                - name: JAX_COORDINATOR_ADDRESS\n'
        '                  value: coordinator.example:1234')
    conv, tj = _convert(text)
    assert tj["spec"]["runtimeRef"]["name"] == "jax-distributed"
    node = _node(conv.jobset)
    assert [e["name"] for e in node["env"]][:3] == ["JAX_NUM_PROCESSES", "JAX_PROCESS_ID", "JAX_COORDINATOR_ADDRESS"]
    assert _env({"c": node}, "c")["JAX_COORDINATOR_ADDRESS"] == "coordinator.example:1234"


def test_an_xgboostjob_lands_on_xgboost_distributed_and_records_its_host_list():
    conv, tj = _convert((TARGETS / "xgboost-iris" / "input.yaml").read_text())
    assert tj["spec"]["runtimeRef"]["name"] == "xgboost-distributed" and tj["spec"]["trainer"]["numNodes"] == 3
    env = _env(tj)
    assert env["MASTER_ADDR"] == "$(KF2JOBSET_JOBSET_NAME)-node-0-0.$(KF2JOBSET_JOBSET_NAME)"
    assert env["WORKER_ADDRS"] == ",".join(f"$(KF2JOBSET_JOBSET_NAME)-node-0-{i}.$(KF2JOBSET_JOBSET_NAME)" for i in (1, 2))
    # Trainer puts the DMLC_* before or after the trainer env (fixed per controller process): no value may
    # read $(DMLC_NUM_WORKER), so the pod count is written for numNodes, as the host list is
    assert env["WORLD_SIZE"] == "3" and env["RANK"] == {"fieldRef": {"fieldPath": builtin.COMPLETION_INDEX}}
    assert not any("$(DMLC_" in str(v) for v in env.values())
    ann = tj["metadata"]["annotations"]
    assert ann[SIZED_FOR_ANNOTATION] == "numNodes=3" and ann[SIZE_LITERALS_ANNOTATION] == "WORLD_SIZE, WORKER_ADDRS"
    patched = {k for p in tj["spec"]["runtimePatches"]
               for k in (p["trainingRuntimeSpec"]["template"]["metadata"].get("annotations") or {})}
    assert not patched & {SIZED_FOR_ANNOTATION, SIZE_LITERALS_ANNOTATION}
    node = _node(conv.jobset)
    assert [e["name"] for e in node["env"]][:4] == ["DMLC_TRACKER_URI", "DMLC_TRACKER_PORT", "DMLC_TASK_ID", "DMLC_NUM_WORKER"]
    assert "imagePullPolicy" not in node
    assert "dnsPolicy" not in conv.jobset["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    codes = {n.code for n in conv.notes}
    assert {"TJ009", "TJ015", "TJ017", "TJ018", "TJ021"} <= codes and not {"TJ016", "TJ019"} & codes
    (tj005,) = [n for n in conv.notes if n.code == "TJ005"]
    assert "before or after the trainer env" in tj005.message


def test_with_gpus_dmlc_num_worker_counts_gpus_and_world_size_still_counts_the_nodes():
    conv, tj = _convert((TARGETS / "xgboost-gpu" / "input.yaml").read_text())
    env = _env(tj)
    assert env["WORLD_SIZE"] == "4"
    assert tj["metadata"]["annotations"][SIZE_LITERALS_ANNOTATION] == "WORLD_SIZE, WORKER_ADDRS"
    assert _env({"c": _node(conv.jobset)}, "c")["DMLC_NUM_WORKER"] == "8"  # 4 nodes x 2 GPUs (Trainer's count)
    assert {"TJ020", "TJ022"} <= {n.code for n in conv.notes}


@pytest.mark.parametrize("env, words", [
    ([{"name": "DMLC_TASK_ID", "value": "0"}], "reserved by Trainer's xgboost-distributed plugin"),
])
def test_a_variable_trainer_reserves_fits_no_shared_runtime(env, words):
    doc = yaml.safe_load((FIXTURES / "xgboostjob" / "master-workers" / "input.yaml").read_text())
    for spec in doc["spec"]["xgbReplicaSpecs"].values():
        spec["template"]["spec"]["containers"][0]["env"] = env
    assert words in _refused(yaml.safe_dump(doc))


# ---------------------------------------------------------------------------------------------
# per-field decisions


@pytest.mark.parametrize("image, want", [
    ("train", "Always"), ("train:latest", "Always"), ("train:1.2", "IfNotPresent"), ("localhost:5000/train", "Always"),
    ("localhost:5000/train:3", "IfNotPresent"), ("train@sha256:" + "0" * 64, "IfNotPresent"),
    ("train:latest@sha256:" + "0" * 64, "Always"), ("${IMAGE}", None),
])
def test_the_default_pull_policy_is_kubernetes(image, want):
    """(The real API server agrees: tests/live/test_trainjob_dry_run.py.)"""
    assert default_pull_policy(image) == want


def _pod(**container) -> dict:
    return {"containers": [{"name": "c", "image": "r/x:1", **container}]}


@pytest.mark.parametrize("pod, misfit, defaults, pull, ports", [
    (_pod(imagePullPolicy="IfNotPresent"), [], [("imagePullPolicy", "IfNotPresent")], None, []),
    (_pod(imagePullPolicy="Always"), [], [], ("Always", "IfNotPresent"), []),
    (_pod(imagePullPolicy="Never"), [], [], ("Never", "IfNotPresent"), []),
    ({"containers": [{"name": "c", "image": "r/x:latest", "imagePullPolicy": "Never"}]}, ["imagePullPolicy Never"], [], None, []),
    ({**_pod(), "dnsPolicy": "ClusterFirst", "enableServiceLinks": True}, [],
     [("dnsPolicy", "ClusterFirst"), ("enableServiceLinks", True)], None, []),
    ({**_pod(), "dnsPolicy": "None"}, ["pod fields ['dnsPolicy']"], [], None, []),
    ({**_pod(), "priorityClassName": "high"}, ["pod fields ['priorityClassName']"], [], None, []),
    (_pod(terminationMessagePolicy="File"), [], [("terminationMessagePolicy", "File")], None, []),
    (_pod(livenessProbe={"tcpSocket": {"port": 80}}), ["container fields ['livenessProbe']"], [], None, []),
    (_pod(ports=[{"name": "metrics", "containerPort": 8000}]), [], [], None, [{"name": "metrics", "containerPort": 8000}]),
    (_pod(ports=[{"name": "op", "containerPort": 9}]), [], [], None, []),
    (_pod(ports=[{"name": "metrics", "containerPort": 8000, "hostPort": 8000}]), ["bound to the node"], [], None, []),
])
def test_field_decisions(pod, misfit, defaults, pull, ports):
    d = field_decisions(pod, "op")
    assert len(d.misfits) == len(misfit) and all(w in m for w, m in zip(misfit, d.misfits, strict=False)), d.misfits
    assert d.defaults == defaults and d.pull == pull and d.ports == ports


def test_a_kind_loaded_latest_image_with_never_fits_no_shared_runtime():
    doc = yaml.safe_load((FIXTURES / "jaxjob" / "workers" / "input.yaml").read_text())
    c = doc["spec"]["jaxReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    c.update(image="jax-train:latest", imagePullPolicy="Never")
    assert "imagePullPolicy Never" in _refused(yaml.safe_dump(doc))
    conv, tj = _convert(yaml.safe_dump(doc), trainer_runtime="per-job")
    assert tj["spec"]["runtimeRef"]["kind"] == "TrainingRuntime"
    c.update(image="jax-train:0.4")  # a tagged image: IfNotPresent uses the image the node has
    conv, tj = _convert(yaml.safe_dump(doc))
    assert tj["spec"]["runtimeRef"]["name"] == "jax-distributed"
    (tj019,) = [n for n in conv.notes if n.code == "TJ019"]
    assert "IfNotPresent" in tj019.message and "ErrImageNeverPull" in tj019.message


# ---------------------------------------------------------------------------------------------
# numNodes is the size: --check guards what does not follow it


def _in_place(tmp_path, case):
    return converted_in_place(tmp_path, (TARGETS / case / "input.yaml").read_text(), "--target", "trainjob")


def test_a_trainjob_whose_numnodes_is_edited_away_from_its_literals_fails_check(tmp_path):
    work, text = _in_place(tmp_path, "xgboost-iris")
    check = CliRunner().invoke(main, ["convert", "--check", "--target", "trainjob", str(work)])
    assert check.exit_code == 0 and "resized" not in check.stdout, check.stdout
    (work / "job.yaml").write_text(text.replace("numNodes: 3", "numNodes: 5"))
    check = CliRunner().invoke(main, ["convert", "--check", "--target", "trainjob", str(work)])
    assert check.exit_code == exitcodes.FINDINGS, check.stdout + check.stderr
    (line,) = check.stdout.splitlines()
    assert "TrainJob xgboost-iris" in line and "numNodes changed since conversion (numNodes 3 -> 5)" in line
    assert "WORKER_ADDRS" in line


def test_a_trainjob_whose_values_all_follow_numnodes_may_be_resized(tmp_path):
    work, text = _in_place(tmp_path, "jax-spmd")
    assert SIZED_FOR_ANNOTATION not in text
    (work / "job.yaml").write_text(text.replace("numNodes: 3", "numNodes: 6"))
    check = CliRunner().invoke(main, ["convert", "--check", "--target", "trainjob", str(work)])
    assert check.exit_code == 0 and check.stdout == "", check.stdout + check.stderr


def test_a_ttl_and_cleanpodpolicy_all_are_decided_alike_on_a_built_in_and_a_bundle_runtime():
    """A TTL no TrainJob carries does not keep a job off a built-in runtime any more than off a
    bundle one; both say the same (TJ031, TJ036) in place of the JobSet's notes (JS032, JS036)."""
    said = {}
    for case, runtime in (("xgboost-ttl", "xgboost-distributed"), ("tfjob-bundle-ttl", "kf2jobset-tensorflow-chief-ps")):
        conv, trainjob = _convert((TARGETS / case / "input.yaml").read_text())
        assert trainjob["spec"]["runtimeRef"] == {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime",
                                                  "name": runtime}
        assert "ttlSecondsAfterFinished" not in conv.jobset["spec"] and "ttlSecondsAfterFinished" not in trainjob["spec"]
        codes = {n.code: n for n in conv.notes}
        assert not {"JS032", "JS036"} & set(codes)
        said[case] = [(codes[c].code, codes[c].category, codes[c].message, codes[c].action) for c in ("TJ031", "TJ036")]
    built_in, bundle = said.values()
    ttl = "ttlSecondsAfterFinished 3600"
    assert [(c, k, m.replace(ttl, "ttlSecondsAfterFinished 86400"), a) for c, k, m, a in built_in] == bundle
    assert [k for _, k, _, _ in built_in] == ["dropped", "approximated"]
