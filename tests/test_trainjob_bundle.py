"""`--target trainjob`, bundle path (kf2jobset/targets/bundle*.py, trainer_build.py): jobs no Trainer built-in
runtime keeps run on a shared ClusterTrainingRuntime of kf2jobset's compat bundle, the job itself in the
TrainJob. Held here: the model of what Trainer v2.3.0 builds (PlainML + the JobSet builder), the split of
a job into runtime and TrainJob, the catalog, `kf2jobset runtimes`, the size record and `--check`, and
which jobs stay on a runtime of their own and why. Every difference the report finds between the v1
pods and the pods of the JobSet Trainer builds on a bundle runtime is explained, and every claim holds:
tests/test_target_torch_distributed.py (every fixture and the corpus). The real Trainer builds the
predicted JobSets in tests/e2e/test_trainjob_target.py; the real API server takes the bundle in
tests/live/test_trainjob_dry_run.py."""
from __future__ import annotations

import copy
import dataclasses

import pytest
import yaml
from click.testing import CliRunner

from kf2jobset.cli.main import main
from kf2jobset.errors import UnsupportedError
from kf2jobset.options import ConvertOptions
from kf2jobset.files.pipeline import convert_text
from kf2jobset.targets import bundle, bundle_catalog, bundle_target, trainer_build
from kf2jobset.text.yamlio import to_plain

from .conftest import FIXTURES
from .fixture_cases import corpus_texts, fixture_options

TRAINER = {trainer_build.ANCESTOR_LABEL: "trainer"}


def _runtime(rjobs, ml=True):
    spec = {"template": {"spec": {"replicatedJobs": rjobs}}}
    if ml:
        spec["mlPolicy"] = {"numNodes": 1}
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime",
            "metadata": {"name": "r"}, "spec": spec}


def _rjob(name, labels=None, env=None, parallelism=None):
    job = {"template": {"spec": {"containers": [{"name": "node", **({"env": env} if env else {})}]}}}
    if parallelism:
        job["parallelism"] = parallelism
    return {"name": name, "replicas": 1, "template": {"metadata": {"labels": labels or {}}, "spec": job}}


def _pods(js):
    return {r["name"]: r["template"]["spec"]["parallelism"] for r in js["spec"]["replicatedJobs"]}


# ---------------------------------------------------------------------------------------------
# the model of Trainer's build (trainer_build.py)


def test_numnodes_sizes_the_first_trainer_replicatedjob_only():
    rt = _runtime([_rjob("worker", TRAINER), _rjob("ps", TRAINER), _rjob("chief", TRAINER)])
    js = trainer_build.build(rt, {"metadata": {"name": "t"}, "spec": {"trainer": {"numNodes": 5}}})
    assert _pods(js) == {"worker": 5, "ps": 1, "chief": 1}
    assert all(r["replicas"] == 1 for r in js["spec"]["replicatedJobs"])


def test_without_an_ml_policy_the_counts_are_the_jobs_parallelism_and_resources_are_not_merged():
    rt = _runtime([_rjob("worker", TRAINER), _rjob("ps", TRAINER, parallelism=3)], ml=False)
    tj = {"metadata": {"name": "t"}, "spec": {"trainer": {"numNodes": 2, "resourcesPerNode": {"limits": {"cpu": "1"}}}}}
    js = trainer_build.build(rt, tj)
    assert _pods(js) == {"worker": 2, "ps": 3}
    assert all("resources" not in r["template"]["spec"]["template"]["spec"]["containers"][0]
               for r in js["spec"]["replicatedJobs"])
    js = trainer_build.build(_runtime([_rjob("worker", TRAINER), _rjob("ps", TRAINER)]), tj)
    assert all(r["template"]["spec"]["template"]["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "1"}}
               for r in js["spec"]["replicatedJobs"])


def test_the_trainer_env_follows_the_runtimes_and_replaces_a_name_in_place():
    runtime_env = [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    rt = _runtime([_rjob("worker", TRAINER, env=runtime_env), _rjob("plain", env=runtime_env)])
    tj = {"metadata": {"name": "t"}, "spec": {"trainer": {"image": "img", "command": ["x"], "env": [
        {"name": "C", "value": "$(A)"}, {"name": "A", "value": "9"},
        {"name": "R", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}]}}}
    js = trainer_build.build(rt, tj)
    worker, plain = (r["template"]["spec"]["template"]["spec"]["containers"][0] for r in js["spec"]["replicatedJobs"])
    assert [e["name"] for e in worker["env"]] == ["A", "B", "C", "R"] and worker["env"][0]["value"] == "9"
    assert worker["env"][3]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}  # Trainer copies fieldPath only
    assert worker["image"] == "img" and "image" not in plain and plain["env"] == runtime_env


def test_runtime_patches_merge_by_name_and_keep_the_runtimes_order():
    rt = _runtime([_rjob("worker", TRAINER), _rjob("ps", TRAINER)])
    tj = {"metadata": {"name": "t"}, "spec": {"runtimePatches": [{"manager": "m", "trainingRuntimeSpec": {"template": {
        "metadata": {"labels": {"team": "a"}},
        "spec": {"replicatedJobs": [
            {"name": "ps", "template": {"spec": {"template": {"spec": {
                "nodeSelector": {"pool": "cpu"},
                "containers": [{"name": "node", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}]}}}}},
            {"name": "worker", "template": {"metadata": {"labels": {"x": "y"}}}}]}}}}]}}
    js = trainer_build.build(rt, tj)
    assert [r["name"] for r in js["spec"]["replicatedJobs"]] == ["worker", "ps"]
    ps = js["spec"]["replicatedJobs"][1]["template"]["spec"]["template"]["spec"]
    assert ps["nodeSelector"] == {"pool": "cpu"}
    assert ps["containers"] == [{"name": "node", "volumeMounts": [{"name": "v", "mountPath": "/v"}]}]
    assert js["metadata"]["labels"] == {"team": "a"}
    assert js["spec"]["replicatedJobs"][0]["template"]["metadata"]["labels"] == {**TRAINER, "x": "y"}


def test_a_runtime_with_an_ml_source_is_not_modelled():
    rt = _runtime([_rjob("node", TRAINER)])
    rt["spec"]["mlPolicy"]["torch"] = {}
    with pytest.raises(trainer_build.UnsupportedRuntime):
        trainer_build.build(rt, {"metadata": {"name": "t"}, "spec": {}})


# ---------------------------------------------------------------------------------------------
# the catalog and `kf2jobset runtimes`


def test_every_bundle_runtime_is_a_valid_shared_runtime():
    for r in bundle_catalog.catalog():
        obj = r.object()
        assert obj["metadata"]["labels"][bundle_catalog.FRAMEWORK_LABEL] == r.framework
        rjobs = obj["spec"]["template"]["spec"]["replicatedJobs"]
        for rj in rjobs:  # the rules of Trainer's runtime webhook, and a trainer label on every role
            assert rj["replicas"] == 1 and rj["template"]["metadata"]["labels"] == TRAINER
            containers = rj["template"]["spec"]["template"]["spec"]["containers"]
            assert [c["name"] for c in containers] == ["node"] and "image" not in containers[0]
        assert obj["spec"]["mlPolicy"] == {"numNodes": 1}
        assert not rjobs[0].get("dependsOn")  # JobSet refuses dependsOn on the first replicatedJob
        # independent of any one job: no name, no namespace, no size beyond one pod per fixed role
        text = yaml.safe_dump(obj)
        assert "bundle" not in text.replace("kf2jobset.dev/bundle", "") and "registry.example.com" not in text
        assert all("parallelism" not in rj["template"]["spec"] for rj in rjobs)


def test_the_runtimes_command_prints_the_bundle():
    result = CliRunner().invoke(main, ["runtimes"])
    assert result.exit_code == 0
    objs = [d for d in yaml.safe_load_all(result.stdout) if d]
    assert [o["metadata"]["name"] for o in objs] == [r.name for r in bundle_catalog.catalog()]
    assert all(o["kind"] == "ClusterTrainingRuntime" for o in objs)
    listing = CliRunner().invoke(main, ["runtimes", "--list"])
    assert listing.exit_code == 0 and len(listing.stdout.splitlines()) == len(objs)
    one = CliRunner().invoke(main, ["runtimes", "kf2jobset-tensorflow"])
    assert [d["metadata"]["name"] for d in yaml.safe_load_all(one.stdout) if d] == ["kf2jobset-tensorflow"]
    bad = CliRunner().invoke(main, ["runtimes", "kf2jobset-nope"])
    assert bad.exit_code == 2 and "kf2jobset runtimes --list" in bad.output


def test_at_most_twelve_cluster_runtimes_with_trainers_own():
    assert len(bundle_catalog.catalog()) + 3 <= 12  # torch-, jax-, xgboost-distributed


def test_an_mpijob_runs_its_launcher_command_from_the_trainjobs_args():
    conv = _convert("targets/trainjob/mpi-bundle")
    tj = _trainjob(conv)
    assert tj["spec"]["runtimeRef"]["name"] == "kf2jobset-mpi"
    trainer = tj["spec"]["trainer"]
    assert "command" not in trainer and trainer["args"][:3] == ["mpirun", "-np", "3"] and trainer["numNodes"] == 3
    js = conv.jobset
    launcher, worker = (next(r for r in js["spec"]["replicatedJobs"] if r["name"] == n) for n in ("launcher", "worker"))
    node = launcher["template"]["spec"]["template"]["spec"]["containers"][0]
    assert node["command"] == bundle.ENTRY_COMMAND and node["args"] == trainer["args"]
    wnode = worker["template"]["spec"]["template"]["spec"]["containers"][0]
    assert wnode["command"] == ["/bin/sh", "-c", "exec /usr/sbin/sshd -De"] and wnode["args"] == trainer["args"]
    assert launcher["dependsOn"] == [{"name": "worker", "status": "Ready"}]
    (hostfile,) = [o for o in conv.output if o["kind"] == "ConfigMap"]
    assert hostfile["data"]["hostfile"].split("\n")[:3] == [f"hvd-bert-worker-0-{i}.hvd-bert.nlp.svc slots=1" for i in range(3)]
    assert bundle._dispatch(conv.planned_jobset, conv.planned_jobset["spec"]["replicatedJobs"]) == ("launcher", None)


# ---------------------------------------------------------------------------------------------
# the split of a job (bundle.py)


def _convert(case, **kw):
    options = dataclasses.replace(fixture_options(FIXTURES / case), target="trainjob", **kw)
    result = convert_text((FIXTURES / case / "input.yaml").read_text(), "input.yaml", options)
    (conv,) = result.conversions
    return conv


def _trainjob(conv):
    (tj,) = [o for o in conv.output if o["kind"] == "TrainJob"]
    return tj


def test_a_chief_ps_job_runs_on_the_bundle_with_its_role_read_from_the_runtime():
    conv = _convert("targets/trainjob/tfjob-bundle")
    tj = _trainjob(conv)
    assert tj["spec"]["runtimeRef"] == {"apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime",
                                        "name": "kf2jobset-tensorflow-chief-ps"}
    trainer = tj["spec"]["trainer"]
    assert trainer["numNodes"] == 4 and trainer["image"] == "registry.example.com/recsys/ctr-model:2.15.1"
    (tf_config,) = trainer["env"]
    assert '"type":"$(KF2JOBSET_REPLICA_TYPE)"' in tf_config["value"]
    assert "$(KF2JOBSET_JOBSET_NAME)-worker-0-3." in tf_config["value"]  # worker 3: completion index 3 of Job worker
    assert not [o for o in conv.output if o["kind"] == "TrainingRuntime"]
    js = conv.jobset  # the JobSet Trainer builds
    assert _pods(js) == {"worker": 4, "chief": 1, "ps": 1}
    for rj in js["spec"]["replicatedJobs"]:
        pod = rj["template"]["spec"]["template"]["spec"]
        assert pod["nodeSelector"] == {"pool": "gpu-a100"} and pod["volumes"][0]["name"] == "models"
        assert {"name": bundle.ROLE_VAR, "value": rj["name"]} in pod["containers"][0]["env"]
    assert tj["metadata"]["annotations"]["kf2jobset.dev/sized-for"] == "numNodes=4"


def _refusal(case) -> str:
    """The default's refusal of a job no shared runtime takes (a per-job runtime only on request)."""
    options = dataclasses.replace(fixture_options(FIXTURES / case), target="trainjob", trainer_runtime="auto")
    result = convert_text((FIXTURES / case / "input.yaml").read_text(), "input.yaml", options)
    (error,) = result.errors
    assert isinstance(error, UnsupportedError) and not result.conversions
    (problem,) = error.problems
    assert problem.rule == "trainjob-no-shared-runtime" and "fits no shared ClusterTrainingRuntime" in problem.message
    assert "--trainer-runtime per-job" in problem.hint and "--target jobset" in problem.hint
    return problem.message


def test_a_value_that_differs_between_roles_in_more_than_the_role_is_refused_by_default():
    assert "TF_CONFIG differs between roles in more than the role's name" in _refusal("tfjob/dynamic-worker")
    conv = _convert("tfjob/dynamic-worker", trainer_runtime="per-job")
    assert [o["kind"] for o in conv.output if o["kind"].endswith("Runtime")] == ["TrainingRuntime"]


@pytest.mark.parametrize("case, words", [
    ("targets/trainjob/tfjob-two-ps", "more than one pod in ps (2)"),
    ("tfjob/all-workers", "init or sidecar containers"),
    ("pytorchjob/env-override", "the roles' pod templates differ"),
    ("errors/trainjob-role-asks-more", "the ps asks for more memory than the worker"),
    ("errors/trainjob-never-retried", "differs from kf2jobset-tensorflow-onfailure only by a retry limit of 0"),
    ("tfjob/v1beta2-run-policy", "no runtime of kf2jobset's bundle has this shape (worker x numNodes, master; "
                                 "worker: restartPolicy OnFailure, backoffLimit 4"),
])
def test_jobs_a_shared_runtime_cannot_carry_say_exactly_why(case, words):
    assert words in _refusal(case)


def test_trainer_runtime_per_job_and_its_old_name_keep_todays_mode():
    for value in ("per-job", "generated"):
        conv = _convert("targets/trainjob/tfjob-bundle", trainer_runtime=value)
        assert [o["kind"] for o in conv.output][0] == "TrainingRuntime"
        assert _trainjob(conv)["spec"]["runtimeRef"]["kind"] == "TrainingRuntime"


def test_role_templating_needs_every_difference_to_be_the_role_name():
    roles = {"ps": "ps", "worker": "worker"}
    same = bundle._template({"ps": {"name": "X", "value": '{"task":"ps","hosts":["a-ps-0"]}'},
                             "worker": {"name": "X", "value": '{"task":"worker","hosts":["a-ps-0"]}'}}, roles)
    assert same == {"name": "X", "value": '{"task":"$(KF2JOBSET_REPLICA_TYPE)","hosts":["a-ps-0"]}'}
    assert bundle._template({"ps": {"name": "X", "value": "ps-1"}, "worker": {"name": "X", "value": "worker-2"}}, roles) is None
    assert bundle._template({"ps": {"name": "X", "value": "a"}, "worker": {"name": "X", "valueFrom": {}}}, roles) is None


@pytest.mark.parametrize("image, policy", [("reg/x:1.2", "IfNotPresent"), ("reg/x", "Always"), ("reg/x:latest", "Always"),
                                           ("reg:5000/x", "Always"), ("reg:5000/x:3", "IfNotPresent"),
                                           ("reg/x@sha256:abc", "IfNotPresent")])
def test_the_api_servers_default_pull_policy(image, policy):
    assert bundle_target.default_pull_policy(image) == policy


def test_a_bundle_trainjob_whose_numnodes_was_edited_fails_check(tmp_path):
    conv = _convert("targets/trainjob/tfjob-bundle")
    tj = copy.deepcopy(to_plain(_trainjob(conv)))
    (tmp_path / "tj.yaml").write_text(yaml.safe_dump(tj))
    ok = CliRunner().invoke(main, ["convert", str(tmp_path), "--check"])
    assert ok.exit_code == 0, ok.output
    tj["spec"]["trainer"]["numNodes"] = 6
    (tmp_path / "tj.yaml").write_text(yaml.safe_dump(tj))
    stale = CliRunner().invoke(main, ["convert", str(tmp_path), "--check"])
    assert stale.exit_code == 1 and "numNodes changed since conversion (numNodes 4 -> 6)" in stale.output
    assert "TF_CONFIG (cluster host lists)" in stale.output


def test_repo_mode_and_the_report_list_the_runtimes_a_tree_needs(tmp_path):
    for case in ("targets/trainjob/tfjob-bundle", "pytorchjob/master-workers", "tfjob/all-workers"):
        (tmp_path / f"{case.replace('/', '-')}.yaml").write_text((FIXTURES / case / "input.yaml").read_text())
    check = CliRunner().invoke(main, ["convert", str(tmp_path), "--target", "trainjob", "--check"])
    assert check.exit_code == 4 and "tfjob-all-workers.yaml:1:1: TFJob mwms-all (kubeflow.org/v1): needs a decision: " \
        "TFJob 'mwms-all' fits no shared ClusterTrainingRuntime" in check.stdout
    run = CliRunner().invoke(main, ["convert", str(tmp_path), "--target", "trainjob", "--in-place"])
    # the job no shared runtime takes stays as written, refused with why; the others are converted
    assert run.exit_code == 4 and "[trainjob-no-shared-runtime]" in run.stderr
    assert "kind: TFJob" in (tmp_path / "tfjob-all-workers.yaml").read_text()
    assert ("ClusterTrainingRuntimes the TrainJobs need: kf2jobset-tensorflow-chief-ps (kf2jobset bundle (kf2jobset "
            "runtimes | kubectl apply -f -)); torch-distributed (built in (installed with Kubeflow Trainer))") in run.output
    report = CliRunner().invoke(main, ["report", str(FIXTURES / "targets/trainjob/tfjob-bundle/input.yaml"),
                                       str(FIXTURES / "tfjob/all-workers/input.yaml"), "--target", "trainjob",
                                       "--format", "json", "--fail-on", "never"])
    import json

    assert json.loads(report.stdout)["runtimes"] == [  # the refused job needs none
        {"name": "kf2jobset-tensorflow-chief-ps", "kind": "ClusterTrainingRuntime",
         "install": "kf2jobset bundle (kf2jobset runtimes | kubectl apply -f -)", "trainJobs": 1}]
    assert '"rule": "trainjob-no-shared-runtime"' in report.stdout


def test_a_katib_tfjob_sweep_runs_its_trials_on_the_bundle():
    result = CliRunner().invoke(main, ["convert", str(FIXTURES / "targets/trainjob/katib-tf-trials/input.yaml"),
                                       "--katib", "--target", "trainjob"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    (experiment,) = [d for d in yaml.safe_load_all(result.stdout) if d]
    template = experiment["spec"]["trialTemplate"]
    assert template["trialSpec"]["spec"]["runtimeRef"]["name"] == "kf2jobset-tensorflow"
    assert template["trialSpec"]["spec"]["trainer"]["args"] == ["--batch-size=${trialParameters.batchSize}"]
    assert template["primaryPodLabels"] == {"jobset.sigs.k8s.io/replicatedjob-name": "worker",
                                            "batch.kubernetes.io/job-completion-index": "0"}


def test_the_bundle_path_writes_no_namespaced_runtime_for_the_corpus_tf_examples():
    seen = 0
    for where, text in corpus_texts():
        if "tensorflow" not in where or "mpi" in where:
            continue
        result = convert_text(text, where, ConvertOptions(target="trainjob"))
        for conv in result.conversions:
            seen += 1
            assert not [o for o in conv.output if o["kind"] == "TrainingRuntime"], where
    assert seen >= 5


def test_the_census_of_every_fixture_and_the_corpus():
    """tools/trainjob_census.py (the figures in docs/trainjob.md): the ClusterTrainingRuntimes the TrainJobs name stay within
    Trainer's own and the bundle, and the jobs on shared runtimes do not fall back (the figures in
    docs/trainjob.md)."""
    import importlib.util

    from . import upstream
    from .conftest import REPO

    upstream.need(*upstream.CORPUS)
    spec = importlib.util.spec_from_file_location("trainjob_census", REPO / "tools" / "trainjob_census.py")
    census = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(census)
    data = census.census(census.corpus_files())
    named = set(data["cluster runtimes referenced"])
    assert named <= set(bundle_catalog.BUILT_IN) | {r.name for r in bundle_catalog.catalog()}
    assert len(named) <= 12
    shared = sum(data["cluster runtimes referenced"].values())
    assert shared == data["trainer image+numNodes"] >= 60  # every TrainJob on a shared runtime has both
    assert data["namespaced runtimes"] <= data["trainjobs"] - shared  # only jobs on no shared runtime write one


def test_the_census_shapes_are_the_jobs_refused_for_their_shape_alone():
    """`trainjob_census.py --shapes` (what one more runtime would take): every job it lists is refused by default,
    its one bundle reason is the missing shape, no job is listed twice, and the count is the census's count of
    that reason, the biggest group first."""
    import importlib.util

    from . import upstream
    from .conftest import REPO

    upstream.need(*upstream.CORPUS)
    spec = importlib.util.spec_from_file_location("trainjob_census", REPO / "tools" / "trainjob_census.py")
    census = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(census)
    corpus = census.corpus_files()
    groups = census.shapes(corpus)
    data = census.census(corpus)
    listed = [job for _, jobs in groups for job in jobs]
    assert len(listed) == len(set(listed)) > 0
    assert set(listed) <= set(data["refused jobs"])
    assert len(listed) == sum(n for why, n in data["why per-job or refused"].items() if why.split(": ", 1)[1] == census.NO_SHAPE)
    assert [len(jobs) for _, jobs in groups] == sorted((len(jobs) for _, jobs in groups), reverse=True)


def test_mpi008_offers_subdomain_only_where_it_keeps_the_job_converting():
    """MPI008's action: `--subdomain` on the JobSet target and the per-job runtime; on a shared runtime (which
    refuses --subdomain) only deleting the MPIJob first — and that advice, followed, still converts."""
    from kf2jobset.options import ConvertOptions
    from kf2jobset.files.pipeline import convert_text

    text = (FIXTURES / "mpijob-v2beta1" / "openmpi" / "input.yaml").read_text()

    def mpi008(**kw):
        result = convert_text(text, "job.yaml", ConvertOptions(ssh_secret="mpi-ssh", **kw))
        (note,) = [n for c in result.conversions for n in c.notes if n.code == "MPI008"]
        return note.action, result

    shared, _ = mpi008(target="trainjob")
    assert "--subdomain" not in shared and "TrainJob" in shared
    for kw in ({}, {"target": "trainjob", "trainer_runtime": "per-job"}):
        action, _ = mpi008(**kw)
        assert "--subdomain" in action
        assert not convert_text(text, "job.yaml", ConvertOptions(ssh_secret="mpi-ssh", subdomain="pi-hosts", **kw)).errors


@pytest.mark.parametrize("args", [[], ["--gang", "volcano"], ["--gang", "coscheduling"],
                                  ["--gang", "coscheduling", "--gang-scheduler-name", "scheduler-plugins-scheduler"],
                                  ["--gang", "yunikorn"]])
def test_the_install_command_in_the_header_prints_this_very_stream(args):
    """A platform re-runs the command the stream's header names (on upgrade): it must print the same flavour."""
    import shlex

    from click.testing import CliRunner

    from kf2jobset.cli.main import main

    out = CliRunner().invoke(main, ["runtimes", *args])
    assert out.exit_code == 0, out.output
    (line,) = [ln for ln in out.output.splitlines() if "install once: " in ln]
    command, _, rest = line.split("install once: ", 1)[1].partition(" | ")
    assert rest == "kubectl apply -f -"
    words = shlex.split(command)
    assert words[:2] == ["kf2jobset", "runtimes"]
    again = CliRunner().invoke(main, words[1:])
    assert again.exit_code == 0 and again.output == out.output


def test_mpi008_only_where_the_jobsets_service_keeps_the_mpijobs_name():
    """mpi-operator names its headless Service after the MPIJob: converted under another name (--name), the JobSet's
    Service does not clash with it, and MPI008 is not said."""
    from kf2jobset.options import ConvertOptions
    from kf2jobset.files.pipeline import convert_text

    text = (FIXTURES / "mpijob-v2beta1" / "openmpi" / "input.yaml").read_text()
    codes = {n: [x.code for c in convert_text(text, "job.yaml", ConvertOptions(ssh_secret="s", name=n)).conversions
                 for x in c.notes] for n in (None, "pi-new")}
    assert "MPI008" in codes[None] and "MPI008" not in codes["pi-new"]
