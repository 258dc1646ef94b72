"""Inputs the long fuzz run (tools/fuzz.py, seeds 11 and 12) found after the outside fuzz run's reproducers
(tests/fuzz-findings) were fixed; each one is kept here with the oracle that caught it."""
from __future__ import annotations

from click.testing import CliRunner

from kf2jobset.cli.main import main

from .conftest import FIXTURES


def _convert(text: str, tmp_path, *args):
    f = tmp_path / "input.yaml"
    f.write_text(text)
    return CliRunner().invoke(main, ["convert", str(f), *args])


def test_a_yaml12_octal_passes_as_the_number_kubernetes_reads(tmp_path):
    # yaml.v2 (sigs.k8s.io/yaml) parses ints with strconv.ParseInt(s, 0, 64): `0o17` is 15 to
    # Kubernetes as to YAML 1.2; only the fuzz oracle (PyYAML) read a string there.
    import re

    from .fuzzing import _load_output

    text = (FIXTURES / "xgboostjob" / "run-policy" / "input.yaml").read_text()
    text = re.sub(r"activeDeadlineSeconds: *\d+", "activeDeadlineSeconds: 0o17", text, count=1)
    res = _convert(text, tmp_path)
    assert res.exit_code == 0, res.stderr
    jobset = next(d for d in _load_output(res.stdout) if d.get("kind") == "JobSet")
    assert {rj["template"]["spec"].get("activeDeadlineSeconds") for rj in jobset["spec"]["replicatedJobs"]} == {15}


def test_a_collection_tag_on_a_scalar_is_invalid_yaml_not_a_passthrough(tmp_path):
    res = _convert("apiVersion: []\nkind: !!set TFJob\nmetadata:\n  name: x\n", tmp_path)
    assert res.exit_code == 3 and res.stdout == ""
    assert "invalid YAML" in res.stderr


def test_an_unknown_global_tag_passes_through_as_kubernetes_reads_it(tmp_path):
    # yaml.v2 keeps `!!python/name:x value` as the plain value: a document we do not convert is
    # passed through byte for byte
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: !!python/name:os.system x\n"
    res = _convert(text, tmp_path)
    assert res.exit_code == 0 and res.stdout == text


def test_a_katib_trial_template_that_is_not_a_mapping_is_not_a_crash(tmp_path):
    # tools/fuzz.py retyped trialTemplate to a string: the Katib hint's count read it as a mapping
    text = ("apiVersion: kubeflow.org/v1beta1\nkind: Experiment\nmetadata:\n  name: e\n"
            "spec:\n  trialTemplate: 100m\n")
    res = _convert(text, tmp_path)
    assert "Traceback" not in res.output and not isinstance(res.exception, AttributeError), res.output
    assert res.exit_code == 0, res.output


def test_a_selector_whose_matchlabels_is_not_a_mapping_is_not_a_crash(tmp_path):
    # the seeded fuzz slice (tests/test_fuzz.py) retyped a PodMonitor's matchLabels into a string: the
    # selector model read it as a mapping (AttributeError); the API server refuses such an object, and
    # kf2jobset reads no selector from it
    text = (FIXTURES / "tfjob" / "selecting-objects" / "input.yaml").read_text()
    head, sep, tail = text.rpartition("matchLabels:\n")
    indent = len(head) - len(head.rstrip(" "))
    rest = tail.split("\n")
    while rest and len(rest[0]) - len(rest[0].lstrip(" ")) > indent:
        rest.pop(0)
    res = _convert(head + "matchLabels: mnist-dist\n" + "\n".join(rest), tmp_path, "--katib")
    assert res.exception is None or isinstance(res.exception, SystemExit), res.exception
    assert "Traceback" not in (res.stderr or "") and "AttributeError" not in (res.stderr or "")
