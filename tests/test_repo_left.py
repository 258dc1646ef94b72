"""`convert --check` lists every job still in the tree, one line each, with why it is there; the
summary counts those lines by category and the exit code follows the summary.

fixtures/repo-mode/left holds one job of each kind of "left": plain jobs to convert (also an old
v1alpha2 TFJob and a v2beta1 MPIJob, and one inside an Argo Workflow's manifest string), a YAML
template converted with its placeholders, an MPIJob v1 that needs --accept-mpi-ssh, a PaddleJob in an
API version kf2jobset refuses, a job embedded in a Katib trial-template ConfigMap (converted only with
--katib), an envsubst template whose replica count is a placeholder, a Helm chart template (converted
at the source) and a Go template outside any chart (Helm-skipped).
"""
from __future__ import annotations

import re
import shutil
from collections import Counter

import pytest
from click.testing import CliRunner

from kf2jobset import categories, exitcodes
from kf2jobset.cli.main import main
from kf2jobset.repo import check_listing

from .conftest import FIXTURES, repo_fixture_tree

LEFT = FIXTURES / "repo-mode" / "left"
LINE = re.compile(r"^(?P<file>[^:\s]+):(?P<line>\d+)(?::\d+)?: (?P<job>[^:]+): (?P<category>{}):".format(
    "|".join(re.escape(c) for c in categories.ORDER)))
SUMMARY = re.compile(r"(\d+) files? scanned, (\d+) to convert, (\d+) skipped.*?, (\d+) failed; (\d+) left(?:: (.*))?$")


@pytest.fixture()
def tree(tmp_path, monkeypatch):
    return repo_fixture_tree("left", tmp_path, monkeypatch)


def check(*flags):
    """Run --check; return (exit code, {file: [categories]}, summary counts), holding the three to agree."""
    res = CliRunner().invoke(main, ["convert", ".", "--check", *flags])
    listed: dict[str, list[str]] = {}
    for line in res.stdout.splitlines():
        m = LINE.match(line)
        assert m, f"not a job line: {line!r}"
        listed.setdefault(m["file"], []).append(m["category"])
    summary = res.stderr.splitlines()[-1]
    m = SUMMARY.search(summary)
    assert m, summary
    counts = Counter()
    for part in (m[6] or "").split(", "):
        if part:
            n, category = part.split(" ", 1)
            counts[{"need a decision": categories.DECISION, "kustomize patches": categories.PATCH,
                    "stale copies": categories.STALE}.get(category, category)] += int(n)
    assert counts == Counter(c for cats in listed.values() for c in cats), (summary, res.stdout)
    assert int(m[5]) == sum(counts.values())
    failed = int(m[4])
    # the exit code follows the summary: an error outranks what is left; nothing left and nothing failed: 0
    if failed:
        assert res.exit_code in (exitcodes.INPUT, exitcodes.UNSUPPORTED), res.output
    else:
        assert res.exit_code == (exitcodes.FINDINGS if counts else exitcodes.OK), res.output
    return res.exit_code, listed, counts


def test_every_job_is_listed_with_its_reason(tree):
    code, listed, counts = check()
    assert code == exitcodes.UNSUPPORTED
    assert listed == {
        "argo/pipeline.yaml": [categories.TO_CONVERT],
        "chart/templates/job.yaml": [categories.TO_CONVERT],
        "deploy/job.yaml": [categories.HELM],
        "envsubst/scale.yaml.tmpl": [categories.TEMPLATE],
        "envsubst/train.yaml-template": [categories.TO_CONVERT],
        "hpc/lammps-v1.yaml": [categories.DECISION],
        "hpc/legacy-tf.yaml": [categories.TO_CONVERT],
        "hpc/paddle-beta.yaml": [categories.REFUSED],
        "jobs/allreduce.yaml": [categories.TO_CONVERT],
        "jobs/bert.yaml": [categories.TO_CONVERT],
        "katib/trial-templates.yaml": [categories.EMBEDDED],
    }
    res = CliRunner().invoke(main, ["convert", ".", "--check"])
    assert "hpc/lammps-v1.yaml:1:1: MPIJob lammps (kubeflow.org/v1): needs a decision: " in res.stdout
    assert "--accept-mpi-ssh" in res.stdout
    assert ("hpc/paddle-beta.yaml:1:1: PaddleJob ernie-pretrain (kubeflow.org/v1beta1): refused: "
            "PaddleJob kubeflow.org/v1beta1 is not supported") in res.stdout
    assert ("argo/pipeline.yaml:12: PyTorchJob nightly- (kubeflow.org/v1) in spec.templates[0].resource.manifest: "
            "to convert: run kf2jobset convert --in-place") in res.stdout
    assert "katib/trial-templates.yaml:9: TFJob (kubeflow.org/v1): embedded: data[\"tfjob-trial.yaml\"]" in res.stdout
    assert "chart/templates/job.yaml:2: PyTorchJob: to convert: a Helm chart template, converted at the source" in res.stdout
    assert "deploy/job.yaml:3: PyTorchJob: Helm-skipped: " in res.stdout
    assert "Kubeflow v1 job" not in res.stdout  # a v2beta1 MPIJob is listed: say what it is, not "v1"
    assert res.stderr.splitlines()[-1].endswith(
        "; 11 left: 6 to convert, 1 needs a decision, 1 refused, 1 embedded, 1 template, 1 Helm-skipped")


def test_after_in_place_only_what_could_not_be_converted_is_left(tree):
    template = (tree / "envsubst" / "train.yaml-template").read_text()
    res = CliRunner().invoke(main, ["convert", ".", "--in-place"])
    assert res.exit_code == exitcodes.UNSUPPORTED, res.output
    assert sorted(line for line in res.stdout.splitlines()) == [
        "Rewriting argo/pipeline.yaml", "Rewriting chart/templates/job.yaml", "Rewriting envsubst/train.yaml-template",
        "Rewriting hpc/legacy-tf.yaml",
        "Rewriting jobs/allreduce.yaml", "Rewriting jobs/bert.yaml"]
    converted = (tree / "envsubst" / "train.yaml-template").read_text()
    assert converted != template and "kind: JobSet" in converted
    for placeholder in ("llama-${RUN_ID}", "${REGISTRY}/llm/llama:${TAG}", "value: ${DATASET}"):
        assert placeholder in converted  # carried through

    code, listed, counts = check()
    assert code == exitcodes.UNSUPPORTED
    assert counts == Counter({categories.DECISION: 1, categories.REFUSED: 1, categories.EMBEDDED: 1, categories.TEMPLATE: 1,
                              categories.HELM: 1})

    # the decisions taken, the refused job rewritten by hand (here: removed)
    (tree / "hpc" / "paddle-beta.yaml").unlink()
    res = CliRunner().invoke(main, ["convert", ".", "--in-place", "--accept-mpi-ssh"])
    assert res.exit_code == exitcodes.OK, res.output
    code, listed, counts = check("--accept-mpi-ssh")
    assert code == exitcodes.FINDINGS
    assert counts == Counter({categories.EMBEDDED: 1, categories.TEMPLATE: 1, categories.HELM: 1})

    # a job inside a ConfigMap value is counted without --katib: exit 1 says so, and the summary with it
    for gone in ("deploy", "envsubst/scale.yaml.tmpl"):
        path = tree / gone
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    code, listed, counts = check()
    assert (code, listed, counts) == (exitcodes.FINDINGS, {"katib/trial-templates.yaml": [categories.EMBEDDED]},
                                      Counter({categories.EMBEDDED: 1}))
    # with --katib it converts in place, and nothing is left
    res = CliRunner().invoke(main, ["convert", ".", "--in-place", "--katib"])
    assert (res.exit_code, res.stdout) == (exitcodes.OK, "Rewriting katib/trial-templates.yaml\n"), res.output
    code, listed, counts = check("--katib")
    assert (code, listed, counts) == (exitcodes.OK, {}, Counter())

    (tree / "katib" / "trial-templates.yaml").unlink()
    code, listed, counts = check()
    assert (code, listed, counts) == (exitcodes.OK, {}, Counter())
    res = CliRunner().invoke(main, ["convert", ".", "--check"])
    assert res.stderr.splitlines()[-1].endswith(", 0 failed; 0 left")


def test_a_template_that_is_not_yaml_is_listed_not_failed(tree):
    (tree / "envsubst" / "jinja.yaml.tmpl").write_text(
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: j\n{% if gpu %}\nspec: {}\n{% endif %}\n")
    res = CliRunner().invoke(main, ["convert", "envsubst", "--in-place"])
    assert res.exit_code == exitcodes.OK, res.output
    # another template language: named as such, with the construct and the way forward
    assert "skipped (Jinja file): envsubst/jinja.yaml.tmpl:5:1: document 1: Jinja template text {% if gpu %} (line 5)" in res.stderr
    res = CliRunner().invoke(main, ["convert", "envsubst", "--check"])
    assert "envsubst/jinja.yaml.tmpl:5:1: PyTorchJob j (kubeflow.org/v1): template: Jinja template text {% if gpu %}" in res.stdout
    assert "render the template first" in res.stdout


def test_summary_counts_read_naturally():
    assert check_listing.counted({}) == "0 left"
    assert check_listing.counted({categories.DECISION: 1, categories.TO_CONVERT: 2}) == "3 left: 2 to convert, 1 needs a decision"
    assert check_listing.counted({categories.DECISION: 2, categories.STALE: 1}) == "3 left: 2 need a decision, 1 stale copy"
