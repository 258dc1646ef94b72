"""Gang-scheduled jobs on kf2jobset's bundle (kf2jobset/targets/bundle_gang.py): the flavours `kf2jobset runtimes
--gang` prints, the job landing on its shape's runtime under the same name, what rides in the TrainJob, the
findings per field (TJ045-TJ049), and the check `kubectl kf2jobset apply` makes of the installed runtime. The
PodGroup Trainer makes from a flavour is held to the real Trainer in tests/e2e/test_trainjob_gang.py; every
flavour to the real API server in tests/live/test_trainjob_dry_run.py."""
from __future__ import annotations

import dataclasses

import pytest
import yaml
from click.testing import CliRunner

from kf2jobset.cli.main import main
from kf2jobset.errors import NotFoundError
from kf2jobset.live.trainjobs import _require_gang
from kf2jobset.files.pipeline import convert_text
from kf2jobset.targets import bundle_catalog, bundle_gang
from kf2jobset.targets.bundle_gang import GANG_ANNOTATION, Gang

from .conftest import FIXTURES
from .fixture_cases import fixture_options

FLAVOURS = [Gang("coscheduling", "scheduler-plugins"), Gang("coscheduling", "scheduler-plugins-scheduler"),
            Gang("volcano", "volcano"), Gang("yunikorn", "yunikorn")]


def _convert(case, **kw):
    options = dataclasses.replace(fixture_options(FIXTURES / case), target="trainjob", **kw)
    result = convert_text((FIXTURES / case / "input.yaml").read_text(), "input.yaml", options)
    assert not result.errors, result.errors
    (conv,) = result.conversions
    return conv


def _trainjob(conv):
    (tj,) = [o for o in conv.output if o["kind"] == "TrainJob"]
    return tj


def _pods(jobset):
    return [rj["template"]["spec"]["template"] for rj in jobset["spec"]["replicatedJobs"]]


def _codes(conv, code):
    return [n for n in conv.notes if n.code == code]


@pytest.mark.parametrize("gang", FLAVOURS, ids=lambda g: g.value)
def test_a_flavour_is_the_bundle_under_the_same_names_with_the_gang_added(gang):
    plain = bundle_catalog.runtime_objects()
    flavoured = bundle_catalog.runtime_objects(gang)
    assert [o["metadata"]["name"] for o in flavoured] == [o["metadata"]["name"] for o in plain]
    for mine, base in zip(flavoured, plain, strict=False):
        policy = mine["spec"].pop("podGroupPolicy", None)
        assert policy == {"coscheduling": {"coscheduling": {"scheduleTimeoutSeconds": 60}}, "volcano": {"volcano": {}},
                          "yunikorn": None}[gang.flavour]
        for pod in _pods(mine["spec"]["template"]):
            assert pod["spec"].pop("schedulerName") == gang.scheduler_name
        assert mine["spec"] == base["spec"]  # nothing else differs
        assert mine["metadata"]["labels"][bundle_catalog.GANG_LABEL] == gang.flavour
        assert bundle_gang.installed_gang(bundle_catalog.catalog()[0].object(gang)) == gang
    assert bundle_gang.installed_gang(plain[0]) is None
    assert bundle_gang.parse(gang.value) == gang


def test_runtimes_gang_prints_the_flavour():
    out = CliRunner().invoke(main, ["runtimes", "--gang", "coscheduling", "--gang-scheduler-name",
                                    "scheduler-plugins-scheduler", "kf2jobset-tensorflow"])
    assert out.exit_code == 0, out.output
    (doc,) = [d for d in yaml.safe_load_all(out.stdout) if d]
    assert doc["spec"]["podGroupPolicy"] == {"coscheduling": {"scheduleTimeoutSeconds": 60}}
    assert {p["spec"]["schedulerName"] for p in _pods(doc["spec"]["template"])} == {"scheduler-plugins-scheduler"}
    bad = CliRunner().invoke(main, ["runtimes", "--gang", "volcano", "--gang-scheduler-name", "x"])
    assert bad.exit_code == 2 and "--gang coscheduling" in bad.output


def test_a_coscheduling_gang_is_trainers_podgroup_on_the_shared_runtime():
    conv = _convert("targets/trainjob/gang-coscheduling-tfjob")
    tj = _trainjob(conv)
    assert tj["spec"]["runtimeRef"]["name"] == "kf2jobset-tensorflow"  # the name the plain bundle has
    assert tj["metadata"]["annotations"][GANG_ANNOTATION] == "coscheduling/scheduler-plugins-scheduler"
    assert not [o for o in conv.output if o["kind"] in ("PodGroup", "TrainingRuntime")]
    for pod in _pods(conv.jobset):  # the JobSet Trainer builds on the flavour
        assert pod["metadata"]["labels"]["scheduling.x-k8s.io/pod-group"] == "bert-mwms"
        assert pod["spec"]["schedulerName"] == "scheduler-plugins-scheduler"
    patch = tj["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["spec"]["replicatedJobs"][0]
    assert "metadata" not in patch["template"]["spec"]["template"]  # the label is Trainer's, not the TrainJob's
    (tj045,) = _codes(conv, "TJ045")
    assert "minMember 4" in tj045.message and "cpu=32" in tj045.message
    (timeout,) = _codes(conv, "TJ047")
    assert timeout.message.startswith("scheduleTimeoutSeconds: v1's PodGroup waited 300 s")
    assert "PodGroup" not in tj["metadata"]["annotations"]["kf2jobset.dev/size-literals"]  # Trainer counts numNodes
    assert not _codes(conv, "JS090") and not _codes(conv, "TJ049")


def test_a_volcano_gang_keeps_the_queue_and_reports_what_no_trainjob_carries():
    conv = _convert("targets/trainjob/gang-volcano-pytorch")
    tj = _trainjob(conv)
    assert tj["spec"]["runtimeRef"]["name"] == "kf2jobset-pytorch"
    assert tj["metadata"]["annotations"][GANG_ANNOTATION] == "volcano"
    meta = tj["spec"]["runtimePatches"][0]["trainingRuntimeSpec"]["template"]["metadata"]
    assert meta["annotations"]["scheduling.volcano.sh/queue-name"] == "vision-gpu"
    assert conv.jobset["metadata"]["annotations"]["scheduling.volcano.sh/queue-name"] == "vision-gpu"
    (pod,) = _pods(conv.jobset)
    assert pod["metadata"]["annotations"] == {"scheduling.k8s.io/group-name": "resnet-volcano"}  # no task-spec
    assert pod["spec"]["schedulerName"] == "volcano" and "priorityClassName" not in pod["spec"]
    fields = sorted(n.message.split(":")[0] for n in _codes(conv, "TJ047"))
    assert fields == ["priorityClassName", "volcano.sh/task-spec"]
    assert not [o for o in conv.output if o["kind"] == "PodGroup"]
    assert "minMember 4" in _codes(conv, "TJ045")[0].message


def test_a_smaller_minavailable_is_reported_with_a_warning():
    text = (FIXTURES / "targets/trainjob/gang-volcano-pytorch/input.yaml").read_text().replace(
        "      priorityClass: team-high\n", "      minAvailable: 2\n")
    options = dataclasses.replace(fixture_options(FIXTURES / "targets/trainjob/gang-volcano-pytorch"), target="trainjob")
    (conv,) = convert_text(text, "input.yaml", options).conversions
    (gang,) = [n for n in _codes(conv, "TJ047") if n.message.startswith("minAvailable")]
    assert gang.warn and "minAvailable 2 of the 4 pods" in gang.message


def test_yunikorn_pods_keep_their_metadata_through_runtime_patches():
    conv = _convert("targets/trainjob/gang-yunikorn-tfjob")
    tj = _trainjob(conv)
    assert tj["metadata"]["annotations"][GANG_ANNOTATION] == "yunikorn"
    (pod,) = _pods(conv.jobset)
    assert pod["spec"]["schedulerName"] == "yunikorn"
    assert pod["metadata"]["labels"]["applicationId"] == "mnist-yk-20261101"
    assert pod["metadata"]["annotations"]["yunikorn.apache.org/task-group-name"] == "worker"
    assert _codes(conv, "TJ048") and _codes(conv, "TJ046")
    assert "yunikorn.apache.org/task-groups worker minMember" in tj["metadata"]["annotations"]["kf2jobset.dev/size-literals"]


def test_pods_naming_the_scheduler_without_scheduler_get_a_gang_warning():
    conv = _convert("targets/trainjob/gang-coscheduling-named")
    assert _trainjob(conv)["metadata"]["annotations"][GANG_ANNOTATION] == "coscheduling/scheduler-plugins-scheduler"
    (tj049,) = _codes(conv, "TJ049")
    assert tj049.warn and "--scheduler scheduler-plugins" in tj049.action


def test_a_scheduler_no_flavour_is_for_still_keeps_the_job_off():
    options = dataclasses.replace(fixture_options(FIXTURES / "scheduling/scheduler-plugins-tfjob"), target="trainjob")
    result = convert_text((FIXTURES / "scheduling/scheduler-plugins-tfjob/input.yaml").read_text(), "input.yaml", options)
    (err,) = result.errors
    assert "schedulerName" in err.problems[0].message  # a worker names my-own-scheduler


def test_per_job_still_writes_the_exact_gang():
    conv = _convert("targets/trainjob/gang-coscheduling-tfjob", trainer_runtime="per-job")
    tj = _trainjob(conv)
    assert GANG_ANNOTATION not in tj["metadata"].get("annotations", {})
    assert tj["spec"]["runtimeRef"]["kind"] == "TrainingRuntime"


def test_report_and_repo_mode_name_the_flavour(tmp_path):
    case = FIXTURES / "targets/trainjob/gang-volcano-pytorch"
    report = CliRunner().invoke(main, ["report", str(case / "input.yaml"), "--target", "trainjob", "--scheduler",
                                       "volcano", "--fail-on", "never"])
    assert "kf2jobset-pytorch: kf2jobset bundle, volcano flavour (kf2jobset runtimes --gang volcano" in report.output
    (tmp_path / "job.yaml").write_text((case / "input.yaml").read_text())
    repo = CliRunner().invoke(main, ["convert", str(tmp_path), "--target", "trainjob", "--scheduler", "volcano",
                                     "--out-dir", str(tmp_path / "out")])
    assert "kf2jobset-pytorch (kf2jobset bundle, volcano flavour" in repo.output, repo.output


def _runtime(gang):
    return bundle_catalog.catalog()[0].object(gang)


def test_apply_refuses_a_runtime_not_in_the_flavour_the_trainjob_needs():
    tj = {"metadata": {"name": "j", "annotations": {GANG_ANNOTATION: "volcano"}}}
    warnings = []
    _require_gang(_runtime(Gang("volcano", "volcano")), tj, warnings.append)
    assert not warnings
    for installed in (None, Gang("yunikorn", "yunikorn"), Gang("coscheduling", "scheduler-plugins")):
        with pytest.raises(NotFoundError, match=r"kf2jobset runtimes --gang volcano \| kubectl apply"):
            _require_gang(_runtime(installed), tj, warnings.append)
    named = {"metadata": {"name": "j", "annotations": {GANG_ANNOTATION: "coscheduling/scheduler-plugins-scheduler"}}}
    with pytest.raises(NotFoundError, match="--gang-scheduler-name scheduler-plugins-scheduler"):
        _require_gang(_runtime(Gang("coscheduling", "scheduler-plugins")), named, warnings.append)
    _require_gang(_runtime(Gang("volcano", "volcano")), {"metadata": {"name": "plain"}}, warnings.append)
    assert len(warnings) == 1 and "volcano flavour" in warnings[0]
