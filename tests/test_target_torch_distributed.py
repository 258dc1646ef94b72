"""`--target trainjob`, built-in path (kf2jobset/targets/torch_distributed.py): PyTorchJobs whose pods share
one template become TrainJobs on Trainer's own `torch-distributed` ClusterTrainingRuntime.

Held here: the goldens of fixtures/targets/trainjob (convert and report); over every fixture and the
upstream corpus, on both `--trainer-runtime` choices, the report explains every difference between the
v1 pods and the pods of the JobSet Trainer builds and every claim holds for that JobSet and the TrainJob;
the TrainJobs pass the rules of Trainer's webhook; which jobs keep a generated runtime, and why. The real
Trainer v2.3.0 builds exactly the predicted JobSet in tests/e2e/test_trainjob_target.py.
"""
from __future__ import annotations

import dataclasses
import json

import pytest
from click.testing import CliRunner

from kf2jobset import claims as claim_rules
from kf2jobset.cli.main import main
from kf2jobset.options import ConvertOptions
from kf2jobset.files.pipeline import convert_text
from kf2jobset.targets import builtin
from kf2jobset.targets import torch_distributed as td
from kf2jobset.targets.builtin_fields import PATCHABLE_POD
from kf2jobset.targets.trainjob import builtin_module
from kf2jobset.k8s.validate import check_jobset
from kf2jobset.text.yamlio import to_plain

from .conftest import FIXTURES, check_golden
from .fixture_cases import CONVERTED_CASES as FIXTURE_CASES
from .fixture_cases import corpus_texts, fixture_args, fixture_options
from .report_helpers import conversion_findings, stable_json, validate_report
from .templates import case_values, fill

TARGET_CASES = sorted(p.parent for p in (FIXTURES / "targets").glob("*/*/input.yaml"))


@pytest.mark.parametrize("case", TARGET_CASES, ids=lambda c: f"{c.parent.name}/{c.name}")
def test_target_goldens(case, tmp_path, monkeypatch):
    result = CliRunner().invoke(main, ["convert", str(case / "input.yaml"), *fixture_args(case)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    check_golden(case / "expected.yaml", result.stdout)
    monkeypatch.chdir(case)
    out = tmp_path / "report.json"
    report = CliRunner().invoke(main, ["report", "input.yaml", *fixture_args(case), "--format", "markdown",
                                       "--format", f"json:{out}"], catch_exceptions=False)
    data = json.loads(out.read_text())
    validate_report(data)
    assert not [f for file in data["files"] for j in file["jobs"] for f in j["findings"] if f["category"] == "unexplained"]
    check_golden(case / "report.md", report.stdout)
    check_golden(case / "report.json", stable_json(data))


def test_the_target_goldens_cover_both_paths():
    refs = {json.dumps(o["spec"]["runtimeRef"]["kind"]) for c in TARGET_CASES
            for o in __import__("yaml").safe_load_all((c / "expected.yaml").read_text()) if o and o.get("kind") == "TrainJob"}
    assert refs == {'"ClusterTrainingRuntime"', '"TrainingRuntime"'}


# ---------------------------------------------------------------------------------------------
# every fixture and the corpus, both runtime choices


def _all_jobs(runtime: str, filled: bool = False):
    """(name, text, options) of every fixture job and the corpus; `filled`: envsubst templates with their
    case's values put in (as they will be applied)."""
    out = []
    for case in FIXTURE_CASES + TARGET_CASES:
        options = dataclasses.replace(fixture_options(case), target="trainjob", katib=False, trainer_runtime=runtime)
        text = (case / "input.yaml").read_text()
        out.append((case.name, fill(text, case_values(case)) if filled else text, options))
    for where, text in corpus_texts():
        out.append((where, text, ConvertOptions(accept_mpi_ssh=True, ssh_secret="mpi-ssh", target="trainjob",
                                                trainer_runtime=runtime)))
    return out


@pytest.fixture(scope="module", params=["auto", "generated"])
def judged_trainjobs(request):
    pairs = []
    for name, text, options in _all_jobs(request.param):
        pairs += [(name, conv, f) for conv, f in conversion_findings(text, name, options)]
    return request.param, pairs


def test_every_difference_is_explained_and_every_claim_holds(judged_trainjobs):
    runtime, pairs = judged_trainjobs
    unexplained = sorted({f"{name}: {f.code} {f.message[:100]}" for name, _, f in pairs if f.category == "unexplained"})
    assert unexplained == []
    false = []
    for name, conv, f in pairs:
        for c in f.claims:
            # "JobSet" claims are about the JobSet Trainer builds: the plan's on a generated runtime, the
            # predicted one on torch-distributed (both held against the real Trainer in tests/e2e)
            problem = claim_rules.check(c, [conv.jobset, *conv.objects])
            if problem:
                false.append(f"{name} {f.code}: {problem}")
    assert false == []
    builtin = {id(conv) for _, conv, f in pairs if f.code == "TJ004" and f.message.startswith("built-in")}
    assert (len(builtin) >= 30) if runtime == "auto" else not builtin


def _builtin_conversions():
    out = []
    for name, text, options in _all_jobs("auto", filled=True):
        result = convert_text(text, name, options)
        for res in result.results:
            out += [(name, c) for c in res.conversions if isinstance(c.layout, builtin.NodeLayout)]
    return out


BUILTIN = _builtin_conversions()


def test_the_builtin_path_is_taken_by_the_jobs_that_fit():
    names = {n for n, _ in BUILTIN}
    assert {"master-workers", "torch-gpu-patches", "torch-cpu-auto", "active-deadline", "jax-spmd", "workers",
            "xgboost-iris", "xgboost-gpu"} <= names
    kinds = {c.job.kind for _, c in BUILTIN}
    assert kinds == {"PyTorchJob", "JAXJob", "XGBoostJob"}
    assert len(BUILTIN) >= 30


@pytest.mark.parametrize("name, conv", BUILTIN, ids=[n for n, _ in BUILTIN])
def test_a_builtin_trainjob_is_one_trainers_webhook_admits(name, conv):
    (trainjob,) = [o for o in conv.objects if o["kind"] == "TrainJob"]
    spec = trainjob["spec"]
    module = builtin_module(conv.job.mapping.profile)
    assert spec["runtimeRef"] == {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime",
                                  "name": module.RUNTIME_NAME}
    trainer = spec["trainer"]
    # the torch and XGBoost plugins refuse their own variables in trainer.env; runtimePatches may not set
    # env on `node`
    assert not {e["name"] for e in trainer.get("env") or []} & set(module.PLUGIN.reserved)
    for patch in spec.get("runtimePatches") or []:
        assert "/" in patch["manager"] and "." in patch["manager"].split("/")[0]
        for rj in ((patch["trainingRuntimeSpec"]["template"].get("spec") or {}).get("replicatedJobs") or []):
            assert rj["name"] == "node"
            pod = ((rj.get("template") or {}).get("spec") or {}).get("template", {}).get("spec") or {}
            assert set(pod) <= set(PATCHABLE_POD) | {"containers"}
            for c in pod.get("containers") or []:
                assert c["name"] == "node" and set(c) <= {"name", "volumeMounts", "securityContext"}
    assert trainer["numNodes"] == sum(r.replicas for r in conv.plan.rjobs)
    assert not any(o["kind"] == "TrainingRuntime" for o in conv.objects)
    # the JobSet Trainer builds passes the JobSet rules, and its node container is trainer.env then the
    # PET_* (torch), or the plugin's variables then trainer.env (JAX, XGBoost)
    predicted = to_plain(conv.jobset)
    meta = predicted["metadata"]
    named = meta if meta.get("name") or meta.get("generateName") else {**meta, "name": "t" * conv.assumed_name_length}
    assert check_jobset({**predicted, "metadata": named}) == []
    (node,) = predicted["spec"]["replicatedJobs"]
    env = node["template"]["spec"]["template"]["spec"]["containers"][0]["env"]
    mine = [e["name"] for e in trainer.get("env") or []]
    own = [n for n in module.PLUGIN.written if n not in mine]
    assert [e["name"] for e in env] == (mine + own if not module.PLUGIN.env_first else own + mine)


@pytest.mark.parametrize("name, conv", BUILTIN, ids=[n for n, _ in BUILTIN])
def test_rank_world_size_and_master_address_are_v1s_on_every_pod(name, conv):
    """Through the report's own models: the v1 pods and the pods of the predicted JobSet, paired by rank."""
    from kf2jobset.runtime.compare import compare_env, effective
    from kf2jobset.runtime.jobset_view import jobset_world
    from kf2jobset.runtime.operator_view import operator_world

    op = operator_world(conv.job)
    js = jobset_world(to_plain(conv.jobset), roles=conv.pods.pod_roles, containers=conv.pods.container_names)
    assert sorted(p.key for p in op.pods) == sorted(p.key for p in js.pods)
    diffs, _ = compare_env(op, js)
    v1_contract = ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "PET_NNODES", "WORKER_ADDRS", "WORKER_PORT",
                   "COORDINATOR_ADDRESS", "COORDINATOR_PORT", "NUM_PROCESSES", "PROCESS_ID")
    assert not [d for d in diffs if d.var in v1_contract]
    (addr, addr_plugin), (rank, rank_plugin) = builtin_module(conv.job.mapping.profile).PLUGIN.rank_vars
    by_key = {p.key: p for p in js.pods}
    master = next(p for p in js.pods if p.annotations[builtin.COMPLETION_INDEX.split("'")[1]] == "0")
    for p in op.pods:
        ours = by_key[p.key]
        env = dict(effective(ours.env(ours.spec["containers"][0])))
        v1 = dict(effective(p.env(p.spec["containers"][0])))
        assert env[rank_plugin] == ours.annotations["batch.kubernetes.io/job-completion-index"]
        if rank in v1:  # (a PyTorchJob without a Master got no RANK or MASTER_ADDR from v1)
            assert env[rank] == env[rank_plugin] == v1[rank]
            node0 = js.resolver.normalise(f"{master.hostname}.{master.subdomain}")
            assert js.resolver.normalise(env[addr]) == node0
            assert js.resolver.normalise(env[addr_plugin].rsplit(":", 1)[0]) == node0  # (JAX's carries the port)


@pytest.mark.parametrize("case, words", [
    ("pytorchjob/env-override", "Master and Worker templates differ"),
    ("pytorchjob/elastic-hpa", "elasticPolicy"),
    ("pytorchjob/sidecar", "init or sidecar containers"),
    ("pytorchjob/keep-kubeflow-labels", "pod templates differ"),
    ("scheduling/kueue", "priorityClassName"),
    ("tfjob/chief-ps-workers", "no built-in runtime that keeps TFJob's v1 contract"),
])
def test_jobs_that_do_not_fit_are_refused_by_default_and_say_why(case, words):
    case = FIXTURES / case
    options = dataclasses.replace(fixture_options(case), target="trainjob")
    assert words in _refusal((case / "input.yaml").read_text(), options)
    # on request, a runtime of the job's own
    result = convert_text((case / "input.yaml").read_text(), "input.yaml", dataclasses.replace(options, trainer_runtime="per-job"))
    (conv,) = [c for r in result.results for c in r.conversions]
    assert any(o["kind"] == "TrainingRuntime" for o in conv.objects) and conv.layout is None


def _refusal(text: str, options: ConvertOptions) -> str:
    """No shared runtime takes the job: the default refuses it (exit 4) naming why."""
    result = convert_text(text, "input.yaml", options)
    (error,) = result.errors
    (problem,) = error.problems
    assert problem.rule == "trainjob-no-shared-runtime" and not result.conversions
    return problem.message


def test_trainer_runtime_generated_keeps_every_job_on_a_generated_runtime():
    case = FIXTURES / "pytorchjob" / "master-workers"
    auto = CliRunner().invoke(main, ["convert", str(case / "input.yaml"), "--target", "trainjob"])
    generated = CliRunner().invoke(main, ["convert", str(case / "input.yaml"), "--target", "trainjob",
                                          "--trainer-runtime", "generated"])
    assert "ClusterTrainingRuntime" in auto.stdout and "kind: TrainingRuntime" not in auto.stdout
    assert "kind: TrainingRuntime" in generated.stdout and "torch-distributed" not in generated.stdout
    bad = CliRunner().invoke(main, ["convert", str(case / "input.yaml"), "--target", "trainjob",
                                    "--trainer-runtime", "builtin"])
    assert bad.exit_code == 2 and "--trainer-runtime" in bad.stderr


@pytest.mark.parametrize("resources, nproc, want", [
    ({"limits": {"nvidia.com/gpu": 8}}, "auto", "auto"),
    ({"requests": {"amd.com/gpu": "2"}, "limits": {"cpu": "4"}}, "auto", "auto"),
    ({"requests": {"cpu": "1500m"}}, "auto", "2"),  # Go's Quantity.Value rounds up
    ({"requests": {"cpu": "3"}, "limits": {"cpu": "8"}}, "auto", "3"),
    ({"limits": {"cpu": "6"}}, "auto", "6"),
    ({}, "auto", "1"),
    ({"requests": {"cpu": "100m"}}, "auto", "1"),
    ({"limits": {"nvidia.com/gpu": 8}}, "4", "4"),
])
def test_pet_nproc_per_node_is_what_trainers_torch_plugin_sets(resources, nproc, want):
    job = type("Job", (), {"framework": {"nprocPerNode": nproc}})()
    assert td.nproc_per_node(job, resources) == want


def test_a_prediction_that_loses_the_rank_is_caught_by_the_report(monkeypatch):
    """If the built-in path stopped carrying RANK, the report would say so (not explain it away)."""
    real = builtin.trainer_env

    def without_rank(*args):
        env, follows, fixed = real(*args)
        return [e for e in env if e["name"] != "RANK"], follows, fixed
    monkeypatch.setattr(builtin, "trainer_env", without_rank)
    case = FIXTURES / "pytorchjob" / "master-workers"
    options = ConvertOptions(target="trainjob")
    pairs = conversion_findings((case / "input.yaml").read_text(), "input.yaml", options)
    assert any(f.category == "unexplained" and "RANK" in f.message for _, f in pairs)


@pytest.mark.parametrize("change, words", [
    (lambda c: c.update(env=[{"name": f"V{i}", "value": "x"} for i in range(130)]), "env entries"),
    (lambda c: c.update(args=["--x"] * 129), "args entries"),
    # a valid reference (a name of 251 characters, the kubelet's limit is 255: else JS064) with a long tag and digest
    (lambda c: c.update(image="registry.example.com/" + "a" * 230 + ":" + "t" * 128 + "@sha512:" + "0" * 128),
     "image name over 500"),
])
def test_what_the_trainjob_crd_would_refuse_fits_no_shared_runtime(change, words):
    import yaml

    doc = yaml.safe_load((FIXTURES / "pytorchjob" / "master-workers" / "input.yaml").read_text())
    for spec in doc["spec"]["pytorchReplicaSpecs"].values():
        change(spec["template"]["spec"]["containers"][0])
    assert words in _refusal(yaml.safe_dump(doc), ConvertOptions(target="trainjob"))


COMMENTED = """\
# nightly DDP smoke test
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: smoke
  labels:
    team: ml
    #stage: nightly
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        metadata:
          annotations:
            owner: ml
            # budget: q3
        spec:
          containers:
            - name: pytorch
              image: registry.example.com/smoke:1
              command: ["python", "smoke.py"]
              #args: ["--steps", "10"]
              env:
                - name: DATASET
                  value: /data/mini
                # - name: LOG_LEVEL
                #   value: debug
              volumeMounts:
                - name: data
                  mountPath: /data
                #- name: scratch
                #  mountPath: /scratch
          volumes:
            - name: data
              emptyDir: {}
            #- name: scratch
            #  emptyDir: {}
          # nodeSelector:
          #   pool: cpu
"""


# each comment's text -> the text uncommented as a user does it (the field's first line decides whether
# the space after `#` goes too)
UNCOMMENTED = {"#stage: nightly": "stage: nightly", "# budget: q3": "budget: q3",
               '#args: ["--steps", "10"]': 'args: ["--steps", "10"]', "# - name: LOG_LEVEL": "- name: LOG_LEVEL",
               "#   value: debug": "  value: debug", "#- name: scratch": "- name: scratch",
               "#  mountPath: /scratch": "  mountPath: /scratch", "# nodeSelector:": "nodeSelector:",
               "#   pool: cpu": "  pool: cpu", "#  emptyDir: {}": "  emptyDir: {}"}


def _uncomment(text: str) -> str:
    out = []
    for line in text.splitlines():
        body = line.lstrip(" ")
        out.append(line[:len(line) - len(body)] + UNCOMMENTED.get(body, body))
    return "\n".join(out) + "\n"


def test_commented_out_fields_move_with_their_fields_to_the_trainjob():
    """Repo mode on the built-in path: a commented-out field lands beside its live siblings in the
    TrainJob (trainer fields, runtimePatches), so uncommenting it there does what uncommenting it in
    the v1 job would have done."""
    import yaml

    options = ConvertOptions(target="trainjob")
    out = convert_text(COMMENTED, "smoke.yaml", options)
    assert out.dropped_comments == 0 and out.new_text
    (tj,) = [d for d in yaml.safe_load_all(out.new_text) if d]
    assert tj["spec"]["runtimeRef"]["name"] == "torch-distributed"
    assert "    team: ml\n    #stage: nightly\n" in out.new_text  # a JobSet label's comment: on the TrainJob
    uncommented_out = [d for d in yaml.safe_load_all(_uncomment(out.new_text)) if d]
    direct = convert_text(_uncomment(COMMENTED), "smoke.yaml", options)
    (want,) = [d for d in yaml.safe_load_all(direct.new_text) if d]
    # the one place a comment cannot follow its field: JobSet labels are written twice, on the TrainJob
    # and (for the JobSet) in runtimePatches; the comment stays with the TrainJob's
    del want["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["metadata"]["labels"]["stage"]
    assert uncommented_out == [want]
