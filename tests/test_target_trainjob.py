"""`--target trainjob --trainer-runtime generated` (kf2jobset/targets/trainjob.py): every fixture job as a
TrainJob on a generated TrainingRuntime that holds the very JobSet `--target jobset` writes. The real
Trainer v2.3.0 controller holds it in tests/e2e/test_trainjob_target.py; the real API server (Trainer
CRDs) in tests/live/test_trainjob_dry_run.py. The built-in runtime path: tests/test_target_torch_distributed.py."""
from __future__ import annotations

import copy

import pytest
import yaml
from click.testing import CliRunner

from kf2jobset.cli.main import main
from kf2jobset.targets.trainjob import ANCESTOR_LABEL, FRAMEWORK_LABEL, KUEUE_LABELS

from .conftest import FIXTURES
from .templates import case_values, fill, render

CASES = sorted(p.parent for p in FIXTURES.glob("*/*/input.yaml"))


def args_of(case) -> list[str]:
    if not (case / "args").exists():
        return []
    return [a for a in (case / "args").read_text().splitlines() if a.strip() and not a.startswith("#")]


def convert(case, *extra):
    text = fill((case / "input.yaml").read_text(), case_values(case))
    if (case / "render").exists():  # a Go text/template or Jinja file: as its program renders it
        text = render(text, case)
    return CliRunner().invoke(main, ["convert", "-", *args_of(case), *extra], input=text, catch_exceptions=False)


def objects(result) -> list[dict]:
    return [d for d in yaml.safe_load_all(result.stdout) if isinstance(d, dict)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.parent.name}/{c.name}")
def test_every_fixture_becomes_a_trainjob_on_a_runtime_holding_its_jobset(case):
    as_jobset = convert(case)
    as_trainjob = convert(case, "--target", "trainjob", "--trainer-runtime", "generated")
    if as_jobset.exit_code != 0:
        if "[trainjob-no-shared-runtime]" in as_jobset.stderr:  # its args pick the default trainjob mode
            # a runtime of its own takes it (a Katib trial's swept values still may not sit in one)
            katib = "--katib" in args_of(case) and "[katib-trainjob-parameters]" in as_trainjob.stderr
            assert as_trainjob.exit_code == 0 or katib, as_trainjob.stderr
            return
        # refused for the job itself: the same refusal, whichever the target (an Argo step and a trial template
        # held in a ConfigMap are refused for a TrainJob before their job is read: below)
        assert as_trainjob.exit_code in (as_jobset.exit_code, 4 if case.parent.name in ("argo", "katib-configmap") else None)
        assert as_trainjob.stdout == ""
        return
    if case.parent.name == "katib-configmap":  # trial templates held in ConfigMaps: JobSets only, so far
        assert as_trainjob.exit_code == 4 and "katib-configmap-trainjob" in as_trainjob.stderr
        return
    if "--katib" in args_of(case):
        # a generated runtime is shared by every trial, so the swept values may not sit in it
        assert as_trainjob.exit_code == 4 and "katib-trainjob-parameters" in as_trainjob.stderr
        return
    if case.parent.name == "appwrapper":  # no TrainJob inside an AppWrapper (kf2jobset/sources/appwrapper.py says why)
        assert as_trainjob.exit_code == 4 and "cannot become a TrainJob" in as_trainjob.stderr
        return
    if case.parent.name == "argo":  # Argo's conditions cannot read a TrainJob's conditions list
        assert as_trainjob.exit_code == 4 and as_trainjob.stdout == ""
        assert "an Argo resource step waits on conditions" in as_trainjob.stderr and "[embedded-companions]" in as_trainjob.stderr
        return
    assert as_trainjob.exit_code == 0, as_trainjob.stderr
    jobsets = [o for o in objects(as_jobset) if o.get("kind") == "JobSet"]
    out = objects(as_trainjob)
    runtimes = {o["metadata"]["name"]: o for o in out if o.get("kind") == "TrainingRuntime"}
    trainjobs = [o for o in out if o.get("kind") == "TrainJob"]
    assert len(trainjobs) == len(jobsets) and runtimes
    assert not [o for o in out if o.get("kind") == "JobSet"]
    # everything else (ConfigMaps, PodGroups, passed-through documents) is as --target jobset wrote it
    others = lambda objs: [o for o in objs if o.get("kind") not in ("JobSet", "TrainJob", "TrainingRuntime")]  # noqa: E731
    assert others(out) == others(objects(as_jobset))
    for jobset, trainjob in zip(jobsets, trainjobs, strict=False):
        meta = jobset["metadata"]
        ref = trainjob["spec"]["runtimeRef"]
        assert ref == {"apiGroup": "trainer.kubeflow.org", "kind": "TrainingRuntime", "name": ref["name"]}
        runtime = runtimes[ref["name"]]
        # written before the TrainJob (Trainer's webhook wants the runtime to exist), same namespace
        assert out.index(runtime) < out.index(trainjob)
        assert runtime["metadata"].get("namespace") == meta.get("namespace") == trainjob["metadata"].get("namespace")
        assert runtime["metadata"]["labels"][FRAMEWORK_LABEL]
        # the JobSet Trainer builds is kf2jobset's: same spec, named after the TrainJob
        for k in ("name", "generateName"):
            assert trainjob["metadata"].get(k) == meta.get(k)
        spec = copy.deepcopy(jobset["spec"])
        assert trainjob["spec"].get("suspend") == spec.pop("suspend", None)
        assert trainjob["spec"].get("managedBy") == spec.pop("managedBy", None)
        assert runtime["spec"]["template"]["spec"] == spec
        assert "mlPolicy" not in runtime["spec"]  # PlainML: Trainer leaves the template as written
        for rj in spec["replicatedJobs"]:
            job = rj["template"]["spec"]
            assert job.get("parallelism", 1) == job.get("completions", job.get("parallelism", 1))
            assert ANCESTOR_LABEL not in ((rj["template"].get("metadata") or {}).get("labels") or {})
        # labels: the JobSet's reach it through the runtime; Kueue's stay on the TrainJob only
        labels = dict(meta.get("labels") or {})
        runtime_labels = ((runtime["spec"]["template"].get("metadata") or {}).get("labels") or {})
        assert runtime_labels == {k: v for k, v in labels.items() if k not in KUEUE_LABELS}
        assert (trainjob["metadata"].get("labels") or {}) == labels


def test_alike_jobs_share_one_runtime_and_others_get_their_own():
    text = (FIXTURES / "pytorchjob" / "master-workers" / "input.yaml").read_text()
    two = text + "\n---\n" + text.replace("name: resnet-ddp", "name: resnet-ddp-b")
    other = two + "\n---\n" + text.replace("name: resnet-ddp", "name: resnet-ddp-c").replace('"90"', '"91"')
    result = CliRunner().invoke(main, ["convert", "-", "--target", "trainjob", "--trainer-runtime", "generated"],
                                input=other, catch_exceptions=False)
    out = objects(result)
    runtimes = [o["metadata"]["name"] for o in out if o["kind"] == "TrainingRuntime"]
    refs = [o["spec"]["runtimeRef"]["name"] for o in out if o["kind"] == "TrainJob"]
    assert len(runtimes) == len(set(runtimes)) == 2
    assert refs[0] == refs[1] != refs[2] and set(refs) == set(runtimes)


def test_kueue_labels_go_to_the_trainjob_and_the_report_says_so():
    case = FIXTURES / "scheduling" / "kueue"
    result = convert(case, "--target", "trainjob", "--scheduler", "kueue", "--trainer-runtime", "per-job")
    out = objects(result)
    (trainjob,) = [o for o in out if o["kind"] == "TrainJob"]
    (runtime,) = [o for o in out if o["kind"] == "TrainingRuntime"]
    assert KUEUE_LABELS[0] in trainjob["metadata"]["labels"]
    assert KUEUE_LABELS[0] not in str(runtime)
    report = CliRunner().invoke(main, ["report", str(case / "input.yaml"), "--target", "trainjob",
                                       "--scheduler", "kueue", "--trainer-runtime", "per-job", "--format", "json"],
                             catch_exceptions=False)
    codes = {f["code"] for f in report.stdout and __import__("json").loads(report.stdout)["files"][0]["jobs"][0]["findings"]}
    assert {"TJ001", "TJ002", "TJ003"} <= codes


@pytest.mark.parametrize("flags, words", [
    (["--trainer-version", "v2.2"], "Kubeflow Trainer v2.3 only"),
    (["--trainer-version", "two"], "expected a version"),
])
def test_what_is_not_written_is_refused_as_a_usage_error(flags, words):
    result = CliRunner().invoke(main, ["convert", str(FIXTURES / "pytorchjob" / "master-workers" / "input.yaml"),
                                       "--target", "trainjob", *flags])
    assert result.exit_code == 2 and words in result.stderr and result.stdout == ""


def test_a_jobset_whose_jobs_run_several_pods_is_refused_not_shrunk():
    from kf2jobset.errors import UnsupportedError
    from kf2jobset.targets.trainjob import _check_pod_counts

    spec = {"replicatedJobs": [{"name": "w", "template": {"spec": {"completions": 4}}}]}
    with pytest.raises(UnsupportedError, match="completions = parallelism"):
        _check_pod_counts(spec)
    _check_pod_counts({"replicatedJobs": [{"name": "w", "template": {"spec": {"completions": 4, "parallelism": 4}}}]})


def _tj004(path: str, *args) -> str:
    import json

    out = CliRunner().invoke(main, ["report", path, "--target", "trainjob", "--format", "json", *args],
                             catch_exceptions=False)
    (msg,) = [f["message"] for fr in json.loads(out.stdout)["files"] for j in fr["jobs"] for f in j["findings"]
              if f["code"] == "TJ004"]
    return msg


def test_the_report_says_which_runtime_and_why():
    assert "built-in ClusterTrainingRuntime 'torch-distributed'" in _tj004(str(FIXTURES / "pytorchjob" / "master-workers" / "input.yaml"))
    assert "--trainer-runtime per-job" in _tj004(str(FIXTURES / "pytorchjob" / "master-workers" / "input.yaml"),
                                                   "--trainer-runtime", "generated")
    # what fits no shared runtime is refused by default, naming why and the two ways out
    for path, args, words in [(("pytorchjob", "elastic-hpa"), (), "elasticPolicy"),
                              (("pytorchjob", "env-override"), (), "Master and Worker templates differ"),
                              (("pytorchjob", "master-workers"), ("--subdomain", "x"), "--subdomain"),
                              (("tfjob", "chief-ps-workers"), (), "no built-in runtime")]:
        path = str(FIXTURES.joinpath(*path, "input.yaml"))
        refused = CliRunner().invoke(main, ["convert", path, "--target", "trainjob", *args])
        assert refused.exit_code == 4 and refused.stdout == "" and words in refused.stderr, refused.stderr
        assert "[trainjob-no-shared-runtime]" in refused.stderr
        assert "--trainer-runtime per-job" in refused.stderr and "--target jobset" in refused.stderr


def test_katib_trials_become_trainjobs_with_katibs_trainjob_conventions():
    case = FIXTURES / "katib" / "pytorch-trial"
    result = CliRunner().invoke(main, ["convert", str(case / "input.yaml"), "--katib", "--target", "trainjob"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    (experiment,) = objects(result)
    template = experiment["spec"]["trialTemplate"]
    trial = template["trialSpec"]
    assert trial["kind"] == "TrainJob" and "name" not in trial["metadata"]  # Katib names each trial
    assert trial["spec"]["runtimeRef"]["name"] == "torch-distributed"
    assert "${trialParameters.learningRate}" in " ".join(trial["spec"]["trainer"]["command"])
    # Katib's defaults for TrainJob trials (pkg/apis/controller/experiments/v1beta1/constants.go)
    assert template["successCondition"] == 'status.conditions.#(type=="Complete")#|#(status=="True")#'
    assert template["failureCondition"] == 'status.conditions.#(type=="Failed")#|#(status=="True")#'
    assert template["primaryPodLabels"] == {"jobset.sigs.k8s.io/replicatedjob-name": "node",
                                            "batch.kubernetes.io/job-completion-index": "0"}
    assert template["primaryContainerName"] == "node"
