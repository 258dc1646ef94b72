"""Which documents are Kubeflow jobs, and where their messages point.

A job kind in other letter case under kubeflow.org (`PytorchJob`, `TfJob`, `MpiJob`) is a kind no API server
serves: `kubectl apply` fails with "no matches for kind", so the object never existed. It is refused naming the
right spelling, in every mode, never passed over; the same misspelling outside kubeflow.org is someone else's
kind and passes through untouched. Jobs that are items of a `kind: List` are cited at their own lines.
"""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kf2jobset import exitcodes
from kf2jobset.cli.main import main
from kf2jobset.mappings import JOB_KINDS

from .conftest import FIXTURES

SERVICE = "apiVersion: v1\nkind: Service\nmetadata:\n  name: keep-me\nspec:\n  clusterIP: None\n"
# the spellings people write, then each kind in lower case and with only its first letter upper case
MISSPELT = sorted({("PytorchJob", "PyTorchJob"), ("TfJob", "TFJob"), ("MpiJob", "MPIJob"), ("TFjob", "TFJob"),
                   ("XgboostJob", "XGBoostJob")}
                  | {(k.lower(), k) for k in JOB_KINDS}
                  | {(k[0] + k[1:].lower(), k) for k in JOB_KINDS if k[1:].lower() != k[1:]})


def run(*argv, input=None):
    return CliRunner().invoke(main, list(argv), input=input)


def misspelt_job(written: str, api: str = "kubeflow.org/v1") -> str:
    return (f"apiVersion: {api}\nkind: {written}\nmetadata:\n  name: train\nspec:\n  runPolicy:\n"
            "    cleanPodPolicy: None\n")


def test_every_kind_has_misspellings_here():
    assert {kind for _, kind in MISSPELT} == set(JOB_KINDS)
    assert all(written != kind for written, kind in MISSPELT)


@pytest.mark.parametrize("written, kind", MISSPELT)
def test_a_misspelt_kind_is_refused_in_stream_mode_naming_the_kind(written, kind):
    result = run("convert", "-", input=SERVICE + "---\n" + misspelt_job(written))
    assert result.exit_code == exitcodes.INPUT and result.stdout == ""
    assert (f"<stdin>:9:1: document 2: kind: {written!r} is not a kind the API server serves (kubectl apply fails: "
            f"no matches for kind \"{written}\" in version \"kubeflow.org/v1\")") in result.stderr
    assert f"the Kubeflow kind is {kind} [kind] (hint: write kind: {kind}" in result.stderr


@pytest.mark.parametrize("written, kind", [("PytorchJob", "PyTorchJob"), ("mpijob", "MPIJob"), ("Xgboostjob", "XGBoostJob")])
def test_a_misspelt_kind_is_named_by_check_in_place_and_report(written, kind, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "jobs").mkdir()
    text = "# the training run\n" + misspelt_job(written)
    (tmp_path / "jobs" / "train.yaml").write_text(text)
    check = run("convert", "jobs", "--check")
    assert check.exit_code == exitcodes.INPUT, check.output
    assert check.stdout.startswith(f"jobs/train.yaml:3:1: {written} train (kubeflow.org/v1): refused: {written!r} is not")
    assert "1 failed; 1 left: 1 refused" in check.stderr
    hook = run("convert", "--check", "jobs/train.yaml")  # the pre-commit hook: files named
    assert hook.exit_code == exitcodes.INPUT and "refused" in hook.stdout
    fixed = run("convert", "jobs", "--in-place")
    assert fixed.exit_code == exitcodes.INPUT and (tmp_path / "jobs" / "train.yaml").read_text() == text
    report = run("report", "jobs/train.yaml", "--format", "json")
    assert report.exit_code == exitcodes.INPUT
    (error,) = json.loads(report.stdout)["files"][0]["errors"]
    assert error["line"] == 3 and error["path"] == "kind" and f"the Kubeflow kind is {kind}" in error["message"]


@pytest.mark.parametrize("api", ["example.com/v1", "ml.example.org/v1alpha1", "v1"])
def test_a_misspelt_kind_outside_kubeflow_passes_through_untouched(api):
    text = SERVICE + "---\n" + misspelt_job("PytorchJob", api)
    result = run("convert", "-", input=text)
    assert result.exit_code == exitcodes.OK and result.stdout == text and result.stderr == ""


def test_a_misspelt_kind_in_held_places_is_named():
    trial = misspelt_job("TfJob").replace("metadata:\n  name: train\n", "")
    held = "\n".join("    " + line for line in trial.splitlines())
    configmap = f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: trial-templates\ndata:\n  tf.yaml: |\n{held}\n"
    listed = run("convert", "--check", "-", input=configmap)
    assert "holds a TfJob (kubeflow.org/v1, a kind no API server serves: it is spelt TFJob)" in listed.stdout
    refused = run("convert", "--katib", "-", input=configmap)
    assert refused.exit_code == exitcodes.INPUT
    assert "<stdin>:8:5: document 1: data[\"tf.yaml\"].kind: 'TfJob' is not a kind the API server serves" in refused.stderr


def test_items_of_a_list_are_cited_at_their_own_lines(tmp_path):
    """--check and the report give each item's line (every kind), errors too, a misspelt kind among them."""
    sources = [FIXTURES / "mpijob-v2beta1" / "openmpi", FIXTURES / "pytorchjob" / "master-workers",
               FIXTURES / "tfjob" / "chief-ps-workers", FIXTURES / "xgboostjob" / "master-workers"]
    lines = ["apiVersion: v1", "kind: List", "items:", "  - apiVersion: v1", "    kind: ConfigMap",
             "    metadata: {name: settings}"]
    starts = []
    for case in sources:
        body = [ln for ln in (case / "input.yaml").read_text().splitlines() if ln.strip() and not ln.startswith("#")]
        starts.append(len(lines) + 1)
        lines += [("  - " if i == 0 else "    ") + ln for i, ln in enumerate(body)]
    path = tmp_path / "list.yaml"
    path.write_text("\n".join(lines) + "\n")
    check = run("convert", "--check", str(path))
    assert [int(ln.split(":")[1]) for ln in check.stdout.splitlines()] == starts
    report = run("report", str(path), "--format", "json")
    assert [job["line"] for job in json.loads(report.stdout)["files"][0]["jobs"]] == starts
    misspelt = "\n".join(lines).replace("kind: TFJob", "kind: TfJob", 1)
    path.write_text(misspelt + "\n")
    refused = run("convert", "--check", str(path))
    tf = starts[2]
    assert f"{path}:{tf + 1}:5: TfJob wide-deep (kubeflow.org/v1): refused: 'TfJob' is not" in refused.stdout
    assert sorted(int(ln.split(":")[1]) for ln in refused.stdout.splitlines()) == [starts[0], starts[1], tf + 1, starts[3]]
