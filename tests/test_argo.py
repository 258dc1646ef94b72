"""v1 jobs held as YAML text in an Argo resource template's `manifest` (kf2jobset/sources/jobs_in_strings.py), converted
in place: only the manifest scalar and the step's success/failure conditions change, `{{...}}`
placeholders are carried, the emitted JobSet passes the validator and the real CRD, a second run
changes nothing, `--check` lists each job at the manifest's line, and what cannot be converted is one
clear error naming the outer file, line/column and path.

Fixtures: fixtures/argo/<case>/input.yaml (goldens: tests/test_golden.py, tests/test_report_golden.py).
"""
from __future__ import annotations

import json
import re
import shutil

import pytest
import yaml
from click.testing import CliRunner

from kf2jobset.sources import argo_steps
from kf2jobset import exitcodes
from kf2jobset.cli.main import main
from kf2jobset.k8s.validate import check_jobset

from .conftest import FIXTURES

ARGO = FIXTURES / "argo"
CASES = sorted(p.name for p in ARGO.iterdir() if (p / "expected.yaml").exists())  # the refused ones: test_golden
# what Argo would fill in: any values; the JobSet must be valid with them
VALUES = {"{{workflow.name}}": "finetune-x7k2p", "{{workflow.uid}}": "0c9a4e1e-6a3f-4c1b-9a57-3f0b6a1d2e11",
          "{{inputs.parameters.image}}": "registry.example.com/nlp/bert:3.2", "{{inputs.parameters.lr}}": "0.0003",
          "{{inputs.parameters.num_nodes}}": "6", "{{workflow.parameters.mpiSize}}": "3",  # replica counts: numbers
          "{{workflow.parameters.workers}}": "4", "{{inputs.parameters.workers}}": "2", "{{inputs.parameters.ib}}": "1"}


def args_of(case: str) -> list[str]:
    f = ARGO / case / "args"
    return f.read_text().split() if f.exists() else []


@pytest.fixture()
def tree(tmp_path, monkeypatch):
    for case in CASES:
        shutil.copy(ARGO / case / "input.yaml", tmp_path / f"{case}.yaml")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*argv):
    return CliRunner().invoke(main, list(argv))


def steps(text: str):
    """(resource mapping, its node) of every resource step of the file's first document."""
    data = yaml.safe_load(text)
    spec = data["spec"].get("workflowSpec", data["spec"])
    return [t["resource"] for t in spec["templates"] if "resource" in t]


def filled(manifest: str) -> dict:
    for spelling, value in VALUES.items():
        manifest = manifest.replace(spelling, value)
    assert "{{" not in manifest, manifest
    return yaml.safe_load(manifest)


def test_each_case_converts_in_place_with_only_the_manifest_and_conditions_changed(tree, crd_validator):
    originals = {case: (tree / f"{case}.yaml").read_text() for case in CASES}
    for case in CASES:
        res = run("convert", f"{case}.yaml", "--in-place", *args_of(case))
        assert res.exit_code == exitcodes.OK, res.output
        assert res.stdout == f"Rewriting {case}.yaml\n"
    for case, before in originals.items():
        after = (tree / f"{case}.yaml").read_text()
        root = yaml.compose(before)
        # every byte outside the manifest scalar and the conditions is as it was
        spans = []
        for tpl in _templates(root):
            resource = _get(tpl, "resource")
            if resource is None or _get(resource, "action").value == "delete":
                continue
            for key in ("manifest", "successCondition", "failureCondition"):
                node = _get(resource, key)
                if node is not None:
                    spans.append((node.start_mark.index, node.end_mark.index))
        pattern = "".join(re.escape(before[a:b]) + "(.*?)" for a, b in
                          zip([0] + [e for _, e in sorted(spans)], [s for s, _ in sorted(spans)], strict=False))
        assert re.fullmatch(pattern + re.escape(before[sorted(spans)[-1][1]:]), after, re.S), case
        for resource in steps(after):
            if resource["action"] == "delete":
                assert "kind: PyTorchJob" in resource["manifest"]  # not a whole object: left, and listed
                continue
            obj = filled(resource["manifest"])
            assert obj["kind"] == "JobSet" and obj["apiVersion"] == "jobset.x-k8s.io/v1alpha2"
            obj["metadata"].setdefault("name", obj["metadata"].pop("generateName", "x-") + "abcde")
            assert check_jobset(obj) == []
            assert not list(crd_validator.iter_errors(obj))
            assert resource["successCondition"] == "status.terminalState == Completed"


def test_literal_block_stays_literal_and_placeholders_are_carried(tree):
    before = (tree / "workflow-template.yaml").read_text()
    assert run("convert", "workflow-template.yaml", "--in-place").exit_code == exitcodes.OK
    after = (tree / "workflow-template.yaml").read_text()
    assert "        manifest: |\n          apiVersion: jobset.x-k8s.io/v1alpha2\n" in after
    for carried in ('image: "{{inputs.parameters.image}}"', 'value: "{{inputs.parameters.lr}}"',
                    'name: "{{workflow.name}}-bert"'):
        assert carried in after
    # comments inside the manifest move with their block; the one on the parameter stays on its line
    assert re.search(r"\n {32}nvidia.com/gpu: 1\n {30}# requests:\n {30}#   cpu: \"4\"\n", after)
    assert "value: registry.example.com/nlp/bert:3.1   # bumped by CI\n" in after
    # the plain condition stays plain; the one that reads v1 status a JobSet lacks is kept as written
    assert "        successCondition: status.terminalState == Completed\n" in after
    assert "failureCondition: status.replicaStatuses.Master.failed > 0, status.conditions.0.reason == Timeout" in after
    assert before.count("\n") < after.count("\n")


def test_a_second_run_changes_nothing_and_check_lists_only_what_is_left(tree):
    assert run("convert", ".", "--in-place", "--ssh-secret", "osu-ssh").exit_code == exitcodes.OK
    snapshot = {p.name: p.read_bytes() for p in tree.iterdir()}
    res = run("convert", ".", "--in-place", "--ssh-secret", "osu-ssh")
    assert res.exit_code == exitcodes.OK and res.stdout == ""
    assert {p.name: p.read_bytes() for p in tree.iterdir()} == snapshot
    res = run("convert", ".", "--check")
    # the delete step names the v1 job by hand-written text only: listed, with what to do
    assert res.exit_code == exitcodes.FINDINGS
    line = (tree / "workflow-template.yaml").read_text().splitlines().index("    - name: cleanup") + 4
    assert res.stdout.splitlines() == [
        f"./workflow-template.yaml:{line}: PyTorchJob (kubeflow.org/v1): embedded: spec.templates[1].resource.manifest holds a "
        "PyTorchJob (kubeflow.org/v1) inside a WorkflowTemplate: jobs embedded there are not converted automatically; "
        "only create/apply/replace steps are converted: point this step at the JobSet by hand (jobset.x-k8s.io/v1alpha2, "
        "kind JobSet, same name)"]
    assert res.stderr.splitlines()[-1].endswith("0 failed; 1 left: 1 embedded")


def test_check_lists_each_job_at_the_manifest_line_of_the_outer_file(tree):
    res = run("convert", ".", "--check", "--ssh-secret", "osu-ssh")
    assert res.exit_code == exitcodes.FINDINGS
    lines = res.stdout.splitlines()
    assert "./cron-mpijob.yaml:18: MPIJob allreduce- (kubeflow.org/v2beta1) in spec.workflowSpec.templates[0].resource." \
           "manifest: to convert: run kf2jobset convert --in-place --ssh-secret osu-ssh" in lines
    assert "./kfp-resourceop.yaml:24: TFJob mnist- (kubeflow.org/v1) in spec.templates[1].resource.manifest: to convert: " \
           "run kf2jobset convert --in-place --ssh-secret osu-ssh" in lines
    assert "./workflow-template.yaml:27: PyTorchJob {{workflow.name}}-bert (kubeflow.org/v1) in spec.templates[0]." \
           "resource.manifest: to convert: run kf2jobset convert --in-place --ssh-secret osu-ssh" in lines
    assert "./num-nodes-parameter.yaml:24: PyTorchJob pretrain- (kubeflow.org/v1) in spec.templates[0].resource." \
           "manifest: to convert: run kf2jobset convert --in-place --ssh-secret osu-ssh" in lines
    assert "./mpi-size-parameter-generated.yaml:19: MPIJob hvd-bench- (kubeflow.org/v2beta1) in spec.templates[0]." \
           "resource.manifest: to convert: run kf2jobset convert --in-place --ssh-secret osu-ssh" in lines
    assert "./mpi-min-available-parameter.yaml:22: MPIJob horovod-train- (kubeflow.org/v2beta1) in spec.templates[0]." \
           "resource.manifest: to convert: run kf2jobset convert --in-place --ssh-secret osu-ssh" in lines
    assert "./extended-resource-parameter.yaml:23: MPIJob nccl- (kubeflow.org/v2beta1) in spec.templates[0]." \
           "resource.manifest: to convert: run kf2jobset convert --in-place --ssh-secret osu-ssh" in lines
    assert len(lines) == 8  # and the delete step, embedded
    assert res.stderr.splitlines()[-1].endswith("7 files scanned, 7 to convert, 0 skipped, 0 failed; "
                                                "8 left: 7 to convert, 1 embedded")
    assert {p.name: p.read_text() for p in tree.iterdir()} == {
        f"{c}.yaml": (ARGO / c / "input.yaml").read_text() for c in CASES}  # --check writes nothing


def test_warnings_name_the_step_and_the_rewritten_conditions(tree):
    res = run("convert", "workflow-template.yaml")
    assert res.exit_code == exitcodes.OK
    assert ("AR001 Argo step spec.templates[0].resource: successCondition `status.replicaStatuses.Master.succeeded > 0` "
            "now reads `status.terminalState == Completed`") in res.stderr
    assert "AR002 Argo step spec.templates[0].resource: failureCondition" in res.stderr
    # Argo fills its own placeholders: no envsubst advice; the name's length limit is still said
    assert "TPL001" not in res.stderr and "envsubst" not in res.stderr
    assert "TPL002 metadata.name {{workflow.name}}-bert holds Argo placeholder(s)" in res.stderr
    assert "KF2JOBSET_ARGO" not in res.output


def test_a_placeholder_where_the_value_is_needed_is_one_error_at_the_outer_line(tree):
    path = tree / "workflow-template.yaml"
    text = path.read_text().replace("restartPolicy: OnFailure", "restartPolicy: {{inputs.parameters.policy}}")
    path.write_text(text)
    res = run("convert", "workflow-template.yaml")
    assert res.exit_code == exitcodes.INPUT and res.stdout == ""
    line = text.splitlines().index("                restartPolicy: {{inputs.parameters.policy}}") + 1
    assert (f"workflow-template.yaml:{line}:17: document 1: spec.templates[0].resource.manifest.spec.pytorchReplicaSpecs."
            "Master.restartPolicy: Argo placeholder {{inputs.parameters.policy}} where kf2jobset needs the value: the "
            "restart policy decides") in res.stderr
    assert "write the value into the manifest" in res.stderr
    # repo mode: left untouched, listed as a template
    assert run("convert", ".", "--in-place", "--ssh-secret", "s").exit_code == exitcodes.OK
    assert path.read_text() == text
    res = run("convert", "workflow-template.yaml", "--check")
    assert res.stdout.startswith(f"workflow-template.yaml:{line}:17: PyTorchJob {{{{workflow.name}}}}-bert (kubeflow.org/v1): "
                                 "template: Argo placeholder {{inputs.parameters.policy}}")


def test_companions_cannot_join_a_resource_step(tree):
    path = tree / "cron-mpijob.yaml"
    path.write_text(path.read_text().replace("generateName: allreduce-", "name: allreduce"))
    before = path.read_text()
    res = run("convert", "cron-mpijob.yaml", "--in-place", "--mpi-hostfile", "configmap")
    assert res.exit_code == exitcodes.UNSUPPORTED
    assert ("cron-mpijob.yaml:18:21: document 1: spec.workflowSpec.templates[0].resource.manifest: an Argo resource step "
            "creates one object") in res.stderr
    assert "also needs ConfigMap [embedded-companions]" in res.stderr and "--mpi-hostfile generated" in res.stderr
    assert path.read_text() == before  # all or nothing per file
    res = run("convert", "kfp-resourceop.yaml", "--target", "trainjob")
    assert res.exit_code == exitcodes.UNSUPPORTED and res.stdout == ""
    assert "--target trainjob: an Argo resource step waits on conditions" in res.stderr and "--target jobset" in res.stderr


@pytest.mark.parametrize("style", ["double", "folded", "strip", "indicator", "crlf"])
def test_scalar_styles(tmp_path, style):
    job = ("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: t\nspec:\n  pytorchReplicaSpecs:\n"
           "    Worker:\n      replicas: 1\n      template:\n        spec:\n          containers:\n"
           "          - name: pytorch\n            image: '{{inputs.parameters.image}}'\n")
    head = ("apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata:\n  name: w\nspec:\n  templates:\n  - name: t\n"
            "    resource:\n      action: create\n")
    body = {
        "double": "      manifest: " + json.dumps(job) + "\n",
        "folded": "      manifest: >\n" + "".join("        " + ln + "\n\n" for ln in job.splitlines()),
        "strip": "      manifest: |-\n" + "".join("        " + ln + "\n" for ln in job.splitlines()),
        "indicator": "      manifest: |4\n" + "".join("          " + ln + "\n" for ln in job.splitlines()),
        "crlf": "      manifest: |\n" + "".join("        " + ln + "\n" for ln in job.splitlines()),
    }[style]
    text = head + body + "      successCondition: status.replicaStatuses.Worker.succeeded > 0\n"
    if style == "crlf":
        text = text.replace("\n", "\r\n")
    assert yaml.safe_load(text)["spec"]["templates"][0]["resource"]["manifest"].startswith("apiVersion: kubeflow.org/v1\n")
    f = tmp_path / "wf.yaml"
    f.write_bytes(text.encode())
    res = run("convert", str(f), "--in-place")
    assert res.exit_code == exitcodes.OK, res.output
    out = f.read_bytes().decode()
    resource = yaml.safe_load(out)["spec"]["templates"][0]["resource"]
    js = filled(resource["manifest"])
    assert js["kind"] == "JobSet" and check_jobset(js) == []
    assert resource["successCondition"] == "status.terminalState == Completed"
    assert js["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["image"] == \
        VALUES["{{inputs.parameters.image}}"]
    assert out.startswith(head.replace("\n", "\r\n") if style == "crlf" else head)
    header = out.replace("\r\n", "\n")[len(head):].splitlines()[0].strip()
    assert header == {"double": None, "folded": "manifest: |", "strip": "manifest: |-",
                      "indicator": "manifest: |", "crlf": "manifest: |"}[style] or header.startswith('manifest: "')
    if style == "crlf":
        assert "\n" not in out.replace("\r\n", "")
    assert run("convert", str(f), "--check").exit_code == exitcodes.OK  # nothing left


def test_a_json_workflow_stays_json(tmp_path):
    src = yaml.safe_load((ARGO / "kfp-resourceop" / "input.yaml").read_text())
    f = tmp_path / "wf.json"
    f.write_text(json.dumps(src, indent=2) + "\n")
    res = run("convert", str(f), "--in-place")
    assert res.exit_code == exitcodes.OK, res.output
    data = json.loads(f.read_text())
    resource = data["spec"]["templates"][1]["resource"]
    assert resource["successCondition"] == "status.terminalState == Completed"
    assert filled(resource["manifest"])["kind"] == "JobSet"
    src["spec"]["templates"][1]["resource"] = data["spec"]["templates"][1]["resource"]
    assert data == src  # nothing else changed


def test_condition_translation():
    t = argo_steps.translate_condition
    assert t("successCondition", "status.replicaStatuses.Worker.succeeded > 0") == argo_steps.JOBSET_SUCCESS
    assert t("successCondition", "status.replicaStatuses.Worker.succeeded = 2, status.replicaStatuses.PS.succeeded == 1") \
        == argo_steps.JOBSET_SUCCESS
    assert t("successCondition", "status.replicaStatuses.Worker.succeeded in (2, 3)") == argo_steps.JOBSET_SUCCESS
    assert t("failureCondition", "status.replicaStatuses.Launcher.failed > 0") == argo_steps.JOBSET_FAILURE
    # a failure counter in a success condition, an upper bound, conditions, anything else: not said
    for kept in ("status.replicaStatuses.Worker.failed > 0", "status.replicaStatuses.Worker.succeeded < 2",
                 "status.replicaStatuses.Worker.active > 0", "status.conditions.0.type == Succeeded",
                 "status.replicaStatuses.Worker.succeeded > 0, status.phase == Done"):
        assert t("successCondition", kept) is None, kept
    notes = argo_steps.condition_notes({"successCondition": ("status.phase == Done", None),
                                     "failureCondition": ("status.replicaStatuses.Worker.failed > 0", argo_steps.JOBSET_FAILURE)},
                                    ("spec", "templates", 0, "resource"))
    assert [(n.code, n.category) for n in notes] == [("AR001", "approximated"), ("AR002", "breaking")]
    assert "status.terminalState == Completed" in notes[1].action


def test_report_carries_the_outer_lines():
    res = run("report", str(ARGO / "workflow-template" / "input.yaml"), "--format", "json", "--fail-on", "never")
    assert res.exit_code == exitcodes.OK, res.output
    job = json.loads(res.stdout)["files"][0]["jobs"][0]
    assert (job["line"], job["embeddedPath"]) == (27, "spec.templates[0].resource.manifest")
    codes = {f["code"]: f for f in job["findings"]}
    assert codes["AR002"]["category"] == "breaking" and codes["TPL002"]["line"] == 27


def _templates(root):
    spec = _get(root, "spec")
    spec = _get(spec, "workflowSpec") or spec
    return _get(spec, "templates").value


def _get(node, key):
    if node is None or not isinstance(node, yaml.MappingNode):
        return None
    return next((v for k, v in node.value if k.value == key), None)


def test_envsubst_variables_beside_argo_placeholders(tmp_path):
    text = (ARGO / "workflow-template" / "input.yaml").read_text().replace(
        'image: "{{inputs.parameters.image}}"', 'image: "${REGISTRY}/bert:{{inputs.parameters.tag}}"')
    f = tmp_path / "wf.yaml"
    f.write_text(text)
    res = run("convert", str(f))
    assert res.exit_code == exitcodes.OK, res.output
    assert res.stdout.count('image: "${REGISTRY}/bert:{{inputs.parameters.tag}}"') == 2
    tpl001 = next(line for line in res.stderr.splitlines() if "TPL001" in line)
    assert "it still needs REGISTRY (action: substitute when applying, naming the variables: envsubst '${REGISTRY}' <" in tpl001


def test_a_manifest_with_escapes_is_found_by_the_pre_filter(tmp_path):
    """`"kubeflow\\u002eorg/v1"` inside a double-quoted manifest: the pre-filter decodes escapes first."""
    job = ("apiVersion: kubeflow\\u002eorg/v1\\nkind: PyTorchJob\\nmetadata:\\n  name: esc\\nspec:\\n  pytorchReplicaSpecs:\\n"
           "    Worker:\\n      replicas: 1\\n      template:\\n        spec:\\n          containers:\\n"
           "          - {name: pytorch, image: busybox}\\n")
    f = tmp_path / "wf.yaml"
    f.write_text("apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: w}\nspec:\n  templates:\n"
                 f"  - name: t\n    resource:\n      action: create\n      manifest: \"{job}\"\n")
    assert "kubeflow.org" not in f.read_text()
    res = run("convert", str(tmp_path), "--check")
    assert res.exit_code == exitcodes.FINDINGS
    assert res.stdout == f"{f}:9: PyTorchJob esc (kubeflow.org/v1) in spec.templates[0].resource.manifest: to convert: " \
                         "run kf2jobset convert --in-place\n"
    assert run("convert", str(tmp_path), "--in-place").exit_code == exitcodes.OK
    assert filled(yaml.safe_load(f.read_text())["spec"]["templates"][0]["resource"]["manifest"])["kind"] == "JobSet"


def test_a_double_quoted_manifest_over_several_lines_stays_so(tree):
    assert run("convert", "cron-mpijob.yaml", "--in-place", *args_of("cron-mpijob")).exit_code == exitcodes.OK
    lines = (tree / "cron-mpijob.yaml").read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("          manifest: "))
    assert lines[start] == '          manifest: "apiVersion: jobset.x-k8s.io/v1alpha2\\n\\'
    assert lines[start + 3] == "            \\  generateName: allreduce-\\n\\"  # a leading space is escaped
    assert lines[-1].endswith('mountPath: /etc/mpi\\n"') and len(lines) > start + 100


def test_a_katib_experiment_created_by_a_step_converts_with_katib_and_keeps_its_conditions(tmp_path):
    manifest = ("apiVersion: kubeflow.org/v1beta1\nkind: Experiment\nmetadata:\n  name: \"{{workflow.name}}\"\nspec:\n"
                "  trialTemplate:\n    primaryContainerName: pytorch\n    trialSpec:\n      apiVersion: kubeflow.org/v1\n"
                "      kind: PyTorchJob\n      spec:\n        pytorchReplicaSpecs:\n"
                "          Worker:\n            replicas: 2\n"
                "            template:\n              spec:\n                containers:\n"
                "                - {name: pytorch, image: busybox}\n")
    f = tmp_path / "wf.yaml"
    f.write_text("apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {generateName: tune-}\nspec:\n  templates:\n"
                 "  - name: tune\n    resource:\n      action: create\n      successCondition: status.trialsSucceeded > 4\n"
                 "      manifest: |\n" + "".join("        " + ln + "\n" for ln in manifest.splitlines()))
    res = run("convert", str(f), "--katib")
    assert res.exit_code == exitcodes.OK, res.output
    resource = yaml.safe_load(res.stdout)["spec"]["templates"][0]["resource"]
    assert resource["successCondition"] == "status.trialsSucceeded > 4"  # about the Experiment, not a job
    experiment = filled(resource["manifest"])
    assert experiment["spec"]["trialTemplate"]["trialSpec"]["kind"] == "JobSet"
    assert "AR00" not in res.stderr


def test_placeholders_in_fields_the_conversion_only_copies_or_leaves_out_are_carried(tree):
    # schedulingPolicy.minAvailable with no --scheduler: left out with the field (JS040), nothing to fill in
    res = run("convert", "mpi-min-available-parameter.yaml", *args_of("mpi-min-available-parameter"))
    assert res.exit_code == exitcodes.OK, res.output
    manifest = steps(res.stdout)[0]["manifest"]
    assert "minAvailable" not in manifest and "schedulingPolicy" not in manifest
    assert "JS040" in res.stderr and "TPL001" not in res.stderr
    # an extended resource quantity in requests and limits: copied as written, for the API server to check
    res = run("convert", "extended-resource-parameter.yaml", *args_of("extended-resource-parameter"))
    assert res.exit_code == exitcodes.OK, res.output
    worker = filled(steps(res.stdout)[0]["manifest"])["spec"]["replicatedJobs"][0]
    resources = worker["template"]["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert resources["requests"]["rdma/ib"] == resources["limits"]["rdma/ib"] == "1"
    assert worker["replicas"] == 2
    for stand_in in ("10e-1", "20e-1", "90001", "KF2JOBSET_ARGO"):
        assert stand_in not in res.output


def test_a_quantity_placeholder_beside_a_different_one_is_left_to_the_api_server(tree):
    # requests and limits from two parameters: whether they are equal is known once Argo fills them in
    path = tree / "extended-resource-parameter.yaml"
    text = path.read_text()
    at = text.rindex("rdma/ib: {{inputs.parameters.ib}}")
    path.write_text(text[:at] + "rdma/ib: {{inputs.parameters.ib_limit}}" + text[at + len("rdma/ib: {{inputs.parameters.ib}}"):])
    res = run("convert", "extended-resource-parameter.yaml", *args_of("extended-resource-parameter"))
    assert res.exit_code == exitcodes.OK, res.output
    assert 'rdma/ib: "{{inputs.parameters.ib_limit}}"' in res.stdout and 'rdma/ib: "{{inputs.parameters.ib}}"' in res.stdout


MPI_SHAPES = {"kubeflow.org/v2beta1": "Worker.replicas", "kubeflow.org/v1": "Worker.replicas",
              "kubeflow.org/v1alpha2": "Worker.replicas", "kubeflow.org/v1alpha1": "spec.replicas"}  # where the count is


@pytest.mark.parametrize("api_version", sorted(MPI_SHAPES))
def test_a_worker_count_placeholder_is_refused_naming_the_generated_hostfile_in_every_mpijob_shape(tmp_path, api_version):
    case = "mpi-v1alpha1-size-parameter" if api_version.endswith("v1alpha1") else "mpi-v1-size-parameter"
    text = (ARGO / case / "input.yaml").read_text()
    text = re.sub(r"apiVersion: kubeflow\.org/v\w+", f"apiVersion: {api_version}", text)
    (tmp_path / "wf.yaml").write_text(text)
    common = ["--ssh-secret", "s", "--accept-mpi-ssh"]
    res = run("convert", str(tmp_path / "wf.yaml"), *common, "--mpi-hostfile", "auto")
    assert res.exit_code == exitcodes.INPUT and res.stdout == ""
    assert f"{MPI_SHAPES[api_version].split('.')[-1]}: Argo placeholder" in res.stderr
    assert "with --mpi-hostfile generated the launcher writes them at start from its pod count" in res.stderr
    res = run("convert", str(tmp_path / "wf.yaml"), *common, "--mpi-hostfile", "generated")
    assert res.exit_code == exitcodes.OK, res.output
    replicas = re.findall(r"replicas: (.*)", steps(res.stdout)[0]["manifest"])
    assert any(r.startswith("{{") and "parameters.workers}}" in r for r in replicas), replicas
