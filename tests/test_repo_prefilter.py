"""The repo-mode pre-filter holds its promise: a file that cannot hold a v1 job never fails a run.

fixtures/repo-mode/unrelated is a tree of files that mention Kubeflow (a Prometheus config with
`regex: kubeflow;true` and a `%` that is not YAML, alert rules, a tab-indented Grafana dashboard,
Helm values, a CI workflow, a logging config, Markdown, a shell script) and hold no job: every
command exits 0 over it and leaves every byte where it was.
"""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from kf2jobset import exitcodes
from kf2jobset.cli.main import main
from kf2jobset.text import classify

from .conftest import FIXTURES, repo_fixture_tree

UNRELATED = FIXTURES / "repo-mode" / "unrelated"


def snapshot(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture()
def tree(tmp_path, monkeypatch):
    return repo_fixture_tree("unrelated", tmp_path, monkeypatch)


def invoke(*args):
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize("args", [
    ["convert", ".", "--check"],
    ["convert", ".", "--in-place"],
    ["convert", ".", "--in-place", "--fail-on-change"],
    ["convert", ".", "--out-dir", "../out"],
    ["report", "."],
    ["report", ".", "--format", "markdown"],
    ["convert", "."],  # stream mode over a directory
])
def test_no_command_fails_on_files_that_cannot_hold_a_job(tree, args):
    before = snapshot(tree)
    res = invoke(*args)
    assert res.exit_code == exitcodes.OK, res.output
    assert snapshot(tree) == before
    assert "failed" not in res.stderr.replace("0 failed", ""), res.stderr
    assert "Rewriting" not in res.stdout and "Writing" not in res.stdout
    assert not (tree.parent / "out").exists()


def test_the_hooks_pass_the_staged_files(tree):
    # what pre-commit passes: the files its `types_or: [yaml, json]` selects, named explicitly
    staged = sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
    assert "monitoring/prometheus.yml" in staged and "dashboards/training.json" in staged
    before = snapshot(tree)
    for hook in (["convert", "--check"], ["convert", "--in-place", "--fail-on-change"]):
        res = invoke(*hook, *staged)
        assert res.exit_code == exitcodes.OK, res.output
        assert res.stdout == ""
    assert snapshot(tree) == before


def test_the_prometheus_config_is_never_parsed():
    # backslashes, double quotes and "kubeflow", but no kubeflow.org and no job kind: the old escape
    # heuristic sent it to the YAML parser (exit 3 on its `%`)
    text = (UNRELATED / "monitoring" / "prometheus.yml").read_text()
    assert "\\" in text and '"' in text and "kubeflow" in text
    assert classify.classify("monitoring/prometheus.yml", text) == classify.SKIP


def test_an_unparsable_file_without_a_job_kind_key_is_skipped_and_counted(tree):
    # alerts.yaml passes the pre-filter (kubeflow.org, "A PyTorchJob worker") but is not YAML
    text = (tree / "monitoring" / "alerts.yaml").read_text()
    assert classify.may_hold_job(text) and not classify.has_job_evidence(text)
    res = invoke("convert", ".", "--in-place")
    assert "1 skipped (1 unparsable file)" in res.stderr
    assert "monitoring/alerts.yaml:9:24: document 1: invalid YAML" in res.stderr
    assert "skipped (not YAML, and no Kubeflow job in it)" in res.stderr


@pytest.mark.parametrize("text", [
    # the escapes of double-quoted YAML/JSON scalars are read as a parser reads them
    'apiVersion: "kubeflow\\x2eorg/v1"\nkind: PyTorchJob\n',
    '{"apiVersion": "kubeflow\\u002eorg/v1", "kind": "\\u0050yTorchJob"}',
    'apiVersion: "kubeflow\\U0000002eorg/v1"\nkind: "TF\\x4aob"\n',
    'apiVersion: "kubeflow.\\\n    org/v1"\nkind: MPIJob\n',  # an escaped line break joins the lines
    '"\\x6bind": PyTorchJob\napiVersion: kubeflow.org/v1\n',
    '{"apiVersion":"kubeflow.org\\/v1","kind":"XGBoostJob"}',
    "? apiVersion\n: kubeflow.org/v1\n? kind\n: JAXJob\n",
    "apiVersion: kubeflow.org/v1\nkind: &k PaddleJob\n",
])
def test_escaped_and_unusual_spellings_of_a_job_are_candidates(text):
    assert classify.classify("m.yaml", text) == classify.CANDIDATE
    assert classify.has_job_evidence(text) or "&k" in text


@pytest.mark.parametrize("text", [
    'regex: "kubeflow\\\\.org"\nnote: PyTorchJob\n',  # `\\.` is a backslash and a dot: not kubeflow.org
    'script: "sed s/kubeflow\\.org/x/"\nkind: PyTorchJob\n',  # `\.` is no escape a parser decodes
    'a: "kubeflow"\nb: "\\\\d+"\n',
])
def test_backslashes_that_spell_no_group_are_skipped(text):
    assert classify.classify("m.yaml", text) == classify.SKIP


def test_a_job_that_is_not_yaml_still_fails_with_its_position(tree):
    (tree / "job.yaml").write_text('apiVersion: "kubeflow\\x2eorg/v1"\nkind: PyTorchJob\nmetadata:\n  name: x\n  labels: {a: [\n')
    # the commented-out kind in an unparsable file is not a job; the real one above is
    (tree / "notes.yaml").write_text("# kind: PyTorchJob (kubeflow.org/v1)\nvalue: %oops\n")
    for args in (["convert", ".", "--check"], ["convert", ".", "--in-place"], ["report", "."]):
        res = invoke(*args)
        assert res.exit_code == exitcodes.INPUT, res.output
        assert "job.yaml:5:16: document 1: " in res.stdout + res.stderr and "invalid YAML" in res.stdout + res.stderr, res.output
        if "--check" in args:  # and the job is listed as left
            assert "job.yaml:5:16: PyTorchJob (document 1): refused: invalid YAML: " in res.stdout
        assert not [line for line in res.stderr.splitlines() if "notes.yaml" in line and "skipped" not in line]
