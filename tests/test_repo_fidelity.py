"""Byte fidelity: what is not converted keeps every byte; converted documents keep their comments.

Two tables, as asottile's fixers test: *noop* inputs that must come back byte-identical, and
(input -> property of the output) cases for the splice and for comments moving with their fields.
"""
from __future__ import annotations

import codecs
import json

import pytest
from click.testing import CliRunner
from ruamel.yaml import YAML

from kf2jobset.cli.main import main
from kf2jobset.options import ConvertOptions
from kf2jobset.files.pipeline import convert_text
from kf2jobset.k8s.validate import check_jobset

from .jobs import pytorchjob_text, replica_text

JOB = pytorchjob_text("train", replica_text("Worker", "2"))

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings   # trailing spaces follow   \n\
data:
  flag: "yes"
  octal: 010
  quoted: 'single'
  list: [1,   2]
"""


def run_in_place(tmp_path, name: str, data: bytes, *args: str):
    f = tmp_path / name
    f.write_bytes(data)
    result = CliRunner().invoke(main, ["convert", str(f), "--in-place", *args], catch_exceptions=False)
    return result, f.read_bytes()


# ---- noop: must come back byte-identical ---------------------------------------------------------

NOOP = {
    "configmap-with-quirks": CONFIGMAP.encode(),
    "crlf-service": b"apiVersion: v1\r\nkind: Service\r\nmetadata:\r\n  name: s\r\n",
    "bom": codecs.BOM_UTF8 + CONFIGMAP.encode(),
    "no-final-newline": CONFIGMAP.rstrip("\n").encode(),
    "markers-and-directives": b"%YAML 1.2\n---\na: 1\n...\n---\n# only a comment\n...\n",
    "jobset-already": b"apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\nmetadata:\n  name: x\n  annotations:\n"
                      b"    kf2jobset.dev/source: kubeflow.org/v1/PyTorchJob x\nspec:\n  replicatedJobs: []\n",
    "kubeflow-crd": b"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n"
                    b"  name: pytorchjobs.kubeflow.org\nspec:\n  group: kubeflow.org\n  names:\n    kind: PyTorchJob\n",
    "job-kind-in-a-comment": b"# kind: PyTorchJob (kubeflow.org) was here\napiVersion: v1\nkind: ConfigMap\n",
    "katib-without-flag": b"apiVersion: kubeflow.org/v1beta1\nkind: Experiment\nmetadata: {name: e}\nspec:\n"
                          b"  trialTemplate:\n    trialSpec:\n      apiVersion: kubeflow.org/v1\n      kind: TFJob\n"
                          b"      spec: {tfReplicaSpecs: {Worker: {template: {spec: {containers: [{name: tensorflow, image: i}]}}}}}\n",
    "invalid-yaml-without-jobs": b"a: [1,\nb: {\n",
    "latin-1": "apiVersion: v1\nkind: ConfigMap\ndata: {a: caf\u00e9}\n".encode("latin-1"),
    "helm-template": b"apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  name: {{ .Release.Name }}\n",
    "tabs-and-unicode": "a: \"tab\there\"  # a tab inside the string\nb: \u00fcnic\u00f6de \u2603\n".encode(),
    "empty": b"",
    "only-comments": b"# nothing\n# here\n",
}


@pytest.mark.parametrize("name", NOOP)
def test_noop_files_are_byte_identical(tmp_path, name):
    result, after = run_in_place(tmp_path, "m.yaml", NOOP[name])
    assert after == NOOP[name]
    assert "Rewriting" not in result.stdout
    assert result.exit_code == 0, result.output


def test_noop_stream_pipeline_does_not_touch_unconverted_text():
    for name, data in NOOP.items():
        if name in ("latin-1", "invalid-yaml-without-jobs", "helm-template"):
            continue
        text = data.decode("utf-8-sig")
        r = convert_text(text, "x.yaml", ConvertOptions())
        assert r.new_text is None and not r.errors, name


# ---- splice: the converted document is replaced, every other byte stays --------------------------

def _converted_middle(out: str, before: str, after: str) -> str:
    assert out.startswith(before), "bytes before the converted document changed"
    assert out.endswith(after), "bytes after the converted document changed"
    return out[len(before): len(out) - len(after)]


def _jobsets(text: str) -> list[dict]:
    docs = [d for d in YAML(typ="safe", pure=True).load_all(text) if d]
    return [d for d in docs if d.get("kind") == "JobSet"]


SPLICES = {
    # name: (before, job text, after)
    "licence-header": ("# Copyright 2024 Example\n# SPDX-License-Identifier: Apache-2.0\n", JOB, ""),
    "header-then-separator": ("# header\n---\n# about the job\n", JOB, ""),
    "middle-of-stream": (CONFIGMAP + "---\n", JOB, "---\n" + CONFIGMAP + "...\n"),
    "separator-with-comment": (CONFIGMAP + "--- # the job\n", JOB, "--- # next\n" + CONFIGMAP),
    "end-markers": ("---\n", JOB, "...\n---\nkind: Other\n...\n"),
    "trailing-comments": ("", JOB, "# end of the job\n\n# really the end\n"),
}


@pytest.mark.parametrize("name", SPLICES)
def test_splice_keeps_bytes_around_converted_documents(tmp_path, name):
    before, job, after = SPLICES[name]
    result, out = run_in_place(tmp_path, "m.yaml", (before + job + after).encode())
    assert result.exit_code == 0, result.output
    middle = _converted_middle(out.decode(), before, after)
    assert not middle.startswith("---") or before == "", "no separator is added where the file had one"
    js = _jobsets(middle)
    assert len(js) == 1 and js[0]["metadata"]["name"] == "train"
    assert check_jobset(js[0]) == []


def test_crlf_bom_and_missing_final_newline_survive_conversion(tmp_path):
    text = CONFIGMAP + "---\n" + JOB.rstrip("\n")
    data = codecs.BOM_UTF8 + text.replace("\n", "\r\n").encode()
    result, out = run_in_place(tmp_path, "m.yaml", data)
    assert result.exit_code == 0
    assert out.startswith(codecs.BOM_UTF8 + CONFIGMAP.replace("\n", "\r\n").encode())
    body = out[3:].decode()
    assert "\n" not in body.replace("\r\n", ""), "every line ends in CRLF"
    assert not body.endswith("\n"), "the file had no final newline"
    assert _jobsets(body.replace("\r\n", "\n"))


@pytest.mark.parametrize("dash_indent", [0, 2])
def test_converted_document_uses_the_files_indentation_style(tmp_path, dash_indent):
    job = JOB.replace("            - name", " " * (10 + dash_indent) + "- name").replace(
        "              image", " " * (12 + dash_indent) + "image")
    other = "kind: X\nitems:\n" + " " * dash_indent + "- a\n"
    _result, out = run_in_place(tmp_path, "m.yaml", (other + "---\n" + job).encode())
    text = out.decode()
    key_line = next(n for n, line in enumerate(text.splitlines()) if line.strip() == "targetReplicatedJobs:")
    lines = text.splitlines()
    indent = lambda s: len(s) - len(s.lstrip())  # noqa: E731
    assert indent(lines[key_line + 1]) - indent(lines[key_line]) == dash_indent


def test_json_manifest_stays_json(tmp_path):
    doc = YAML(typ="safe", pure=True).load(JOB)
    data = (json.dumps(doc, indent=4) + "\n").encode()
    result, out = run_in_place(tmp_path, "job.json", data)
    assert result.exit_code == 0
    obj = json.loads(out)
    assert obj["kind"] == "JobSet" and check_jobset(obj) == []
    assert out.decode().splitlines()[1].startswith('    "apiVersion"')


# ---- comments move with the fields they belong to ---------------------------------------------------

COMMENTED = "# the job\n" + pytorchjob_text(
    "train  # the name",
    "# the master\n" + replica_text("Master", image='"img:1"  # pinned', container=(
        "# the command\ncommand:\n  - sh\n  - -c\n  - |\n    # not a comment: script text\n    echo hi  # nor this")),
    "# workers\n" + replica_text("Worker", "2  # two workers", item="# the main container"),
    metadata='labels:\n  team: ml   # owner\n  # cost centre\n  cc: "42"',
    spec="# dropped with runPolicy\nrunPolicy:\n  ttlSecondsAfterFinished: 60  # one minute") + "# end of document\n"


@pytest.fixture(scope="module")
def commented_output():
    r = convert_text(COMMENTED, "c.yaml", ConvertOptions())
    assert not r.errors
    return r


def _line_with(text: str, needle: str) -> int:
    hits = [n for n, line in enumerate(text.splitlines()) if needle in line]
    assert len(hits) == 1, f"{needle!r} found {len(hits)} times"
    return hits[0]


@pytest.mark.parametrize("comment, next_line", [
    ("# the job", "apiVersion: jobset.x-k8s.io/v1alpha2"),
    ("# cost centre", 'cc: "42"'),
    ("# the master", "- name: master"),
    ("# the command", "command:"),
    ("# workers", "- name: worker"),
    ("# the main container", "- name: pytorch"),
])
def test_comment_lines_stay_above_their_field(commented_output, comment, next_line):
    lines = commented_output.new_text.splitlines()
    n = _line_with(commented_output.new_text, comment)
    assert lines[n + 1].strip() == next_line
    assert len(lines[n]) - len(lines[n].lstrip()) == len(lines[n + 1]) - len(lines[n + 1].lstrip()), "same indentation"


@pytest.mark.parametrize("comment, on_line", [
    ("# the name", "name: train"),
    ("# owner", "team: ml"),
    ("# one minute", "ttlSecondsAfterFinished: 60"),
    ("# pinned", 'image: "img:1"'),
    ("# two workers", "replicas: 2"),
])
def test_end_of_line_comments_stay_on_their_field(commented_output, comment, on_line):
    line = commented_output.new_text.splitlines()[_line_with(commented_output.new_text, comment)]
    assert line.strip().startswith(on_line)


def test_script_text_and_trailing_comments_are_untouched(commented_output):
    text = commented_output.new_text
    assert text.endswith("# end of document\n")
    n = _line_with(text, "# not a comment: script text")
    assert text.splitlines()[n + 1].strip() == "echo hi  # nor this"


def test_comments_of_fields_without_a_jobset_counterpart_are_counted(commented_output):
    assert "# dropped with runPolicy" not in commented_output.new_text
    assert commented_output.dropped_comments == 1


def test_katib_experiment_comments(tmp_path):
    exp = """\
apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata:
  name: hp  # the experiment
spec:
  maxTrialCount: 3  # keep it small
  trialTemplate:
    primaryContainerName: tensorflow
    trialSpec:
      apiVersion: kubeflow.org/v1
      kind: TFJob
      spec:
        tfReplicaSpecs:
          Worker:
            replicas: 2  # two trial workers
            template:
              spec:
                containers:
                  - name: tensorflow
                    image: img  # trial image
"""
    r = convert_text(exp, "e.yaml", ConvertOptions(katib=True))
    assert not r.errors and r.new_text
    for comment, field in (("# the experiment", "name: hp"), ("# keep it small", "maxTrialCount: 3"),
                           ("# two trial workers", "replicas: 2"), ("# trial image", "image: img")):
        assert r.new_text.splitlines()[_line_with(r.new_text, comment)].strip().startswith(field)


def test_a_file_without_final_newline_keeps_the_hostfile_data_of_its_last_object(tmp_path):
    """The file's missing final newline is kept, but never at the cost of a block scalar's value: the MPI
    hostfile ConfigMap (last in the output) keeps its trailing line break."""
    import yaml
    from click.testing import CliRunner

    from kf2jobset.cli.main import main

    from .conftest import FIXTURES

    text = (FIXTURES / "mpijob-v2beta1" / "openmpi" / "input.yaml").read_text().rstrip("\n")
    with_nl, without = tmp_path / "a.yaml", tmp_path / "b.yaml"
    with_nl.write_text(text + "\n")
    without.write_text(text)
    result = CliRunner().invoke(main, ["convert", str(with_nl), str(without), "--in-place"], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    a, b = (list(yaml.safe_load_all(p.read_text())) for p in (with_nl, without))
    assert a == b and a[-1]["kind"] == "ConfigMap" and a[-1]["data"]["hostfile"].endswith("\n")
