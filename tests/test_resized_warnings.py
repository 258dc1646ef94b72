"""`resized` is said by every mode (docs/repo-mode.md): a converted JobSet or TrainJob whose size was edited
since conversion, while the values written for the old size were not, is listed by `convert --check`
and warned of, in the same words, by `report` (text, markdown, json, github) and by `convert` to stdout
and `--in-place`; none of those changes its exit code for it. One that keeps its recorded size is not
mentioned."""
from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from kf2jobset import exitcodes
from kf2jobset.cli.main import main

from .conftest import FIXTURES
from .jobset_edits import convert_cli, converted_in_place, set_replicas
from .report_helpers import validate_report


def _more_nodes(text: str) -> tuple[str, str]:
    was = int(re.search(r"\n    numNodes: (\d+)\n", text).group(1))
    return text.replace(f"\n    numNodes: {was}\n", f"\n    numNodes: {was + 1}\n", 1), f"numNodes {was} -> {was + 1}"


def _more_workers(text: str) -> tuple[str, str]:
    was = int(re.search(r"\n(\s*)- name: worker\n\1  replicas: (\d+)", text).group(2))
    return set_replicas(text, "worker", was + 1), f"worker {was} -> {was + 1}"


# (fixture, conversion flags, the edit a user makes after converting, the object, a value still for the old size)
CASES = [
    ("targets/trainjob/pytorch-bundle", ["--target", "trainjob"], _more_nodes, "TrainJob bert-finetune", "WORLD_SIZE"),
    ("tfjob/chief-ps-workers", [], _more_workers, "JobSet wide-deep", "TF_CONFIG"),
]


def report_cli(*args):
    return CliRunner().invoke(main, ["report", *map(str, args)])


@pytest.fixture(params=CASES, ids=[c[0] for c in CASES])
def converted(request, tmp_path):
    """(repo, converted file, its text, flags, edit, object, literal): a job converted in place."""
    case, flags, edit, obj, literal = request.param
    work, text = converted_in_place(tmp_path, (FIXTURES / case / "input.yaml").read_text(), *flags)
    return work, work / "job.yaml", text, flags, edit, obj, literal


@pytest.fixture
def resized(converted):
    """The same, with its size edited by hand: (repo, file, flags, the --check line, object, change, literal)."""
    work, path, text, flags, edit, obj, literal = converted
    edited, change = edit(text)
    path.write_text(edited)
    check = convert_cli("--check", *flags, path)
    assert check.exit_code == exitcodes.FINDINGS, check.stdout + check.stderr
    (line,) = check.stdout.splitlines()
    assert line.startswith(f"{path}:") and f"{obj} " in line and ": resized: " in line, line
    assert change in line and literal in line, line
    return work, path, flags, line, obj, change, literal


@pytest.mark.parametrize("named", ["file", "directory"])
def test_report_text_warns_as_check_lists(resized, named):
    work, path, flags, line, *_ = resized
    res = report_cli(*flags, path if named == "file" else work)
    assert res.exit_code == exitcodes.OK, res.stdout + res.stderr
    assert f"warning: {line}" in res.stdout.splitlines(), res.stdout
    assert "0 jobs in 1 file: no changes; 1 resized (warning); nothing at or above" in res.stdout, res.stdout
    if named == "directory":  # found by the walk, though no v1 job kind is named in it
        assert "1 file scanned, 0 jobs in 0 files, 1 resized" in res.stderr, res.stderr


def test_report_json_and_markdown_carry_it(resized):
    work, path, flags, line, obj, change, literal = resized
    res = report_cli(*flags, "--format", "json", path)
    assert res.exit_code == exitcodes.OK, res.stdout + res.stderr
    data = json.loads(res.stdout)
    validate_report(data)
    assert data["summary"]["warnings"] == 1 and data["summary"]["failing"] == 0
    (w,) = data["files"][0]["warnings"]
    assert w["category"] == "resized" and w["object"].startswith(obj + " (")
    assert line == f"{path}:{w['line']}: {w['object']}: resized: {w['message']}"
    md = report_cli(*flags, "--format", "markdown", path)
    assert md.exit_code == exitcodes.OK and "### Warnings" in md.stdout, md.stdout
    (item,) = [x for x in md.stdout.splitlines() if x.startswith("- ⚠️ ")]
    assert f"`{path}` line {w['line']}: {w['object']}: resized: " in item and literal in item, item
    gh = report_cli(*flags, "--format", "github", path)
    assert f"::warning file={path},line={w['line']},title=resized%3A {obj} " in gh.stdout, gh.stdout


def test_stream_and_in_place_convert_warn_and_change_nothing(resized):
    work, path, flags, line, *_ = resized
    before = path.read_text()
    res = convert_cli(*flags, path)
    assert res.exit_code == exitcodes.OK and res.stdout == before, res.stderr
    assert f"kf2jobset: warning: {line}" in res.stderr.splitlines(), res.stderr
    res = convert_cli("--in-place", *flags, path)
    assert res.exit_code == exitcodes.OK and path.read_text() == before, res.stderr
    assert f"kf2jobset: warning: {line}" in res.stderr.splitlines(), res.stderr


def test_one_of_its_recorded_size_is_not_mentioned(converted):
    work, path, text, flags, *_ = converted
    assert "kf2jobset.dev/sized-for" in text  # what the check reads is there, and matches
    for args in ([path], [work], ["--format", "json", path]):
        res = report_cli(*flags, *args)
        assert res.exit_code == exitcodes.OK and "resized" not in res.stdout + res.stderr, res.stdout + res.stderr
    assert '"warnings"' not in res.stdout and json.loads(res.stdout)["files"][0]["jobs"] == []
    assert f"{path}: no Kubeflow jobs" in report_cli(*flags, path).stdout
    for mode in ([], ["--in-place"]):
        res = convert_cli(*mode, *flags, path)
        assert res.exit_code == exitcodes.OK and "resized" not in res.stderr, res.stderr
