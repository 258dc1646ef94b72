"""AppWrapper components (workload.codeflare.dev/v1beta2): a wrapped v1 job becomes a wrapped JobSet.

fixtures/appwrapper holds an AppWrapper with declared podSets (PyTorchJob, MLBatch style, next to a
plain ConfigMap component), one relying on inferred podSets, and a wrapped MPIJob v2beta1 whose hostfile
ConfigMap becomes a component of its own. The goldens (expected.yaml, report.*) are checked by
tests/test_golden.py and tests/test_report_golden.py; here: what the AppWrapper controller requires of
the result (podSets as its InferPodSets computes them for a JobSet, paths that resolve to pod
templates), what must stay (labels, annotations, other components, bytes in repo mode), and refusals.
"""
from __future__ import annotations

import re
import textwrap

import yaml
from click.testing import CliRunner

from kf2jobset import exitcodes
from kf2jobset.cli.main import main
from kf2jobset.k8s.validate import check_jobset

from .conftest import FIXTURES
from .jobs import job_text, replica_text

CASES = FIXTURES / "appwrapper"


def convert(path, *args):
    return CliRunner().invoke(main, ["convert", str(path), *args], catch_exceptions=False)


def load(text: str) -> list:
    return [d for d in yaml.safe_load_all(text) if d is not None]


def at_path(obj: dict, path: str):
    """Resolve an AppWrapper podSet path (`template.spec.replicatedJobs[1].template.spec.template`)
    within a component, as the controller's getValueAtPath does."""
    node = obj
    for name, index in re.findall(r"([^.\[\]]+)|\[(\d+)\]", path):
        node = node[int(index)] if index else node[name]
    return node


def inferred(jobset: dict) -> list[tuple[str, int]]:
    """What appwrapper v1.2 InferPodSets computes for a JobSet: (path, replicas x min(parallelism, completions))."""
    out = []
    for i, rj in enumerate(jobset["spec"]["replicatedJobs"]):
        spec = rj["template"]["spec"]
        pods = min(spec.get("parallelism", 1), spec.get("completions", spec.get("parallelism", 1)))
        out.append((f"template.spec.replicatedJobs[{i}].template.spec.template", rj.get("replicas", 1) * pods))
    return out


def test_declared_podsets_point_at_the_jobset_pod_templates_with_the_replica_counts():
    src = load((CASES / "pytorch-podsets" / "input.yaml").read_text())[0]
    res = convert(CASES / "pytorch-podsets" / "input.yaml")
    assert res.exit_code == 0, res.output
    [aw] = load(res.stdout)
    assert aw["metadata"] == src["metadata"]  # Kueue's queue label on the AppWrapper stays as written
    first, second = aw["spec"]["components"]
    jobset = first["template"]
    assert jobset["kind"] == "JobSet" and jobset["metadata"]["name"] == "llm-finetune"
    assert [(p["path"], p["replicas"]) for p in first["podSets"]] == inferred(jobset)
    assert [p["replicas"] for p in first["podSets"]] == [1, 3]  # master 1, workers 3, as the v1 podSets said
    for ps in first["podSets"]:
        template = at_path(first, ps["path"])
        assert template["spec"]["containers"][0]["image"] == "registry.example.com/team-a/finetune:2.4"
    # the user's own podSet annotation follows its replica type; the topology annotations name JobSet labels
    worker = first["podSets"][1]["annotations"]
    assert worker["team-a.example.com/rack-spread"] == "true"
    assert worker["workload.codeflare.dev.appwrapper/tas-sub-group-index-label"] == "jobset.sigs.k8s.io/job-index"
    assert worker["workload.codeflare.dev.appwrapper/tas-sub-group-count"] == "3"
    assert "team-a.example.com/rack-spread" not in first["podSets"][0]["annotations"]
    assert first["annotations"] == src["spec"]["components"][0]["annotations"]
    assert second == src["spec"]["components"][1]  # a component that is not a job is not touched
    assert check_jobset(jobset) == []


def test_inferred_podsets_stay_inferred():
    res = convert(CASES / "pytorch-inferred" / "input.yaml")
    assert res.exit_code == 0, res.output
    [aw] = load(res.stdout)
    [component] = aw["spec"]["components"]
    assert "podSets" not in component  # JobSet is a kind the controller infers podSets for
    assert component["template"]["kind"] == "JobSet"
    assert len(inferred(component["template"])) == 2
    assert "# No podSets: the AppWrapper controller infers them" in res.stdout  # the comment moved with its component


def test_mpi_hostfile_configmap_becomes_a_component_of_its_own(crd_validator):
    res = convert(CASES / "mpi-hostfile" / "input.yaml")
    assert res.exit_code == 0, res.output
    [aw] = load(res.stdout)
    job_component, hostfile = aw["spec"]["components"]
    jobset = job_component["template"]
    assert hostfile == {"template": hostfile["template"]} and hostfile["template"]["kind"] == "ConfigMap"
    mounted = {v["configMap"]["name"] for rj in jobset["spec"]["replicatedJobs"]
               for v in rj["template"]["spec"]["template"]["spec"].get("volumes", []) if "configMap" in v}
    assert hostfile["template"]["metadata"]["name"] in mounted
    assert "osu-bench-worker-1-0.osu-bench slots=4" in hostfile["template"]["data"]["hostfile"]
    assert [(p["path"], p["replicas"]) for p in job_component["podSets"]] == inferred(jobset) == [
        ("template.spec.replicatedJobs[0].template.spec.template", 2),  # workers first: the launcher dependsOn them
        ("template.spec.replicatedJobs[1].template.spec.template", 1)]
    assert [rj["name"] for rj in jobset["spec"]["replicatedJobs"]] == ["worker", "launcher"]
    assert check_jobset(jobset) == []
    errors = list(crd_validator.iter_errors(jobset))
    assert not errors, errors[0].message


PODSET_INFOS = """\
apiVersion: workload.codeflare.dev/v1beta2
kind: AppWrapper
metadata:
  name: admitted
spec:
  components:
  - podSets:
    - path: template.spec.tfReplicaSpecs.Worker.template
      replicas: 2
    - path: template.spec.tfReplicaSpecs.PS.template
      replicas: 1
    podSetInfos:
    - nodeSelector: {pool: gpu}
    - nodeSelector: {pool: cpu}
    template:
""" + textwrap.indent(job_text("TFJob", "admitted", *(replica_text(role, n, image="tf:2.15", name="tensorflow")
                                                     for role, n in (("PS", "1"), ("Worker", "2"))), flow_name=True), " " * 6)


def test_podset_infos_follow_their_podsets(tmp_path):
    f = tmp_path / "tf.yaml"
    f.write_text(PODSET_INFOS)
    res = convert(f)
    assert res.exit_code == 0, res.output
    [aw] = load(res.stdout)
    [component] = aw["spec"]["components"]
    names = [rj["name"] for rj in component["template"]["spec"]["replicatedJobs"]]
    by_name = dict(zip(names, component["podSetInfos"], strict=False))
    assert by_name == {"ps": {"nodeSelector": {"pool": "cpu"}}, "worker": {"nodeSelector": {"pool": "gpu"}}}
    assert [(p["path"], p["replicas"]) for p in component["podSets"]] == inferred(component["template"])
    assert len(component["podSetInfos"]) == len(component["podSets"])


def test_a_podset_that_names_no_replica_fails_the_file_with_its_line(tmp_path):
    f = tmp_path / "bad.yaml"
    f.write_text(PODSET_INFOS.replace("tfReplicaSpecs.PS.template", "tfReplicaSpecs.PS.spec"))
    for args in ([], ["--in-place"]):
        res = convert(f, *args)
        assert res.exit_code == exitcodes.UNSUPPORTED, res.output
        assert f"{f}:10:" in res.stderr and "podSets[1].path 'template.spec.tfReplicaSpecs.PS.spec'" in res.stderr
    assert f.read_text() == PODSET_INFOS.replace("tfReplicaSpecs.PS.template", "tfReplicaSpecs.PS.spec")


def test_trainjob_target_is_refused_inside_an_appwrapper(tmp_path):
    src = (CASES / "pytorch-podsets" / "input.yaml").read_text()
    f = tmp_path / "aw.yaml"
    f.write_text(src)
    for args in ([], ["--check"], ["--in-place"]):
        res = convert(f, "--target", "trainjob", *args)
        assert res.exit_code == exitcodes.UNSUPPORTED, (args, res.output)
        assert "a job inside an AppWrapper cannot become a TrainJob" in res.stderr
        assert f"{f}:20:5:" in res.stderr  # the component's template
    assert f.read_text() == src


def test_repo_mode_counts_rewrites_and_is_idempotent(tmp_path):
    sources = {}
    for case in ("pytorch-podsets", "pytorch-inferred", "mpi-hostfile"):
        sources[case] = (CASES / case / "input.yaml").read_text()
        (tmp_path / f"{case}.yaml").write_text(sources[case])
    check = CliRunner().invoke(main, ["convert", str(tmp_path), "--check"])
    assert check.exit_code == exitcodes.FINDINGS
    lines = sorted(check.stdout.splitlines())
    todo = "to convert: run kf2jobset convert --in-place"
    assert lines == [f"{tmp_path}/mpi-hostfile.yaml:15: MPIJob osu-bench (kubeflow.org/v2beta1): {todo}",
                     f"{tmp_path}/pytorch-inferred.yaml:10: PyTorchJob mnist-ddp (kubeflow.org/v1): {todo}",
                     f"{tmp_path}/pytorch-podsets.yaml:20: PyTorchJob llm-finetune (kubeflow.org/v1): {todo}"]
    assert "3 left: 3 to convert" in check.stderr
    done = CliRunner().invoke(main, ["convert", str(tmp_path), "--in-place"])
    assert done.exit_code == 0, done.output
    for case, src in sources.items():
        new = (tmp_path / f"{case}.yaml").read_text()
        assert new == (CASES / case / "expected.yaml").read_text()  # the same text as the stream mode
        # what precedes the first component is every byte as written (comments included)
        head = src[:src.index("  components:\n")]
        assert new.startswith(head)
    again = CliRunner().invoke(main, ["convert", str(tmp_path), "--in-place"])
    assert again.exit_code == 0 and "Rewriting" not in again.stdout
    clean = CliRunner().invoke(main, ["convert", str(tmp_path), "--check"])
    assert clean.exit_code == 0 and "0 left" in clean.stderr


def test_report_locates_the_wrapped_job():
    res = CliRunner().invoke(main, ["report", str(CASES / "pytorch-podsets" / "input.yaml"), "--format", "json"])
    import json

    data = json.loads(res.stdout)
    [job] = data["files"][0]["jobs"]
    assert job["embeddedPath"] == "spec.components[0].template" and job["line"] == 20
    assert any(f["code"] == "AW001" for f in job["findings"])


def test_every_wrapped_jobset_in_the_goldens_passes_our_validator_and_the_real_crd(crd_validator):
    found = 0
    for expected in sorted(CASES.glob("*/expected.yaml")):
        for aw in load(expected.read_text()):
            for component in aw["spec"]["components"]:
                template = component["template"]
                if template["kind"] != "JobSet":
                    continue
                found += 1
                assert check_jobset(template) == [], expected
                errors = list(crd_validator.iter_errors(template))
                assert not errors, (expected, errors[0].message)
                if "podSets" in component:
                    assert [(p["path"], p["replicas"]) for p in component["podSets"]] == inferred(template)
                    for ps in component["podSets"]:
                        assert at_path(component, ps["path"])["spec"]["containers"]
    assert found == 3


def test_podset_infos_of_inferred_pytorch_podsets_follow_master_and_worker(tmp_path):
    src = (CASES / "pytorch-inferred" / "input.yaml").read_text().replace(
        "  - template:\n", "  - podSetInfos:\n    - labels: {role: master-pool}\n    - labels: {role: worker-pool}\n    template:\n", 1)
    f = tmp_path / "admitted.yaml"
    f.write_text(src)
    res = convert(f)
    assert res.exit_code == 0, res.output
    [component] = load(res.stdout)[0]["spec"]["components"]
    assert "podSets" not in component
    names = [rj["name"] for rj in component["template"]["spec"]["replicatedJobs"]]
    assert dict(zip(names, component["podSetInfos"], strict=False)) == {"master": {"labels": {"role": "master-pool"}},
                                                          "worker": {"labels": {"role": "worker-pool"}}}
