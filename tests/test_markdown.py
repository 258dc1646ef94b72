"""Markdown docs: v1 jobs in fenced YAML blocks are converted where they are written (repo mode).

fixtures/markdown/tutorial/input.md is a tutorial page: a PyTorchJob in a ```yaml block, a shell block
and untagged program output that mention jobs, a `kubectl apply -f - <<EOF` heredoc with a TFJob, an
MPIJob v2beta1 in a ~~~yml block indented inside a list item (its hostfile ConfigMap joins the block),
a block of objects that are not jobs, and a block with an XGBoostJob between two other objects.
fixtures/markdown/placeholders/input.md: an envsubst template (converted, placeholders kept) and a
block with Helm actions (left, listed). expected.md is the page after `convert --in-place`
(KF2JOBSET_UPDATE_GOLDEN=1 rewrites it).
"""
from __future__ import annotations

import re
import shutil

import pytest
import yaml
from click.testing import CliRunner

from kf2jobset import exitcodes
from kf2jobset.cli.main import main
from kf2jobset.sources.markdown import fences
from kf2jobset.k8s.validate import check_jobset

from .conftest import FIXTURES, check_golden

CASES = FIXTURES / "markdown"


def run(*args):
    return CliRunner().invoke(main, ["convert", *map(str, args)], catch_exceptions=False)


def blocks(text: str) -> list[tuple[str, str]]:
    """(info, dedented content) of every fenced block, read independently of kf2jobset.sources.markdown."""
    out = []
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        m = re.match(r"( *)(`{3,}|~{3,})(.*)$", lines[i].rstrip("\n"))
        if not m:
            i += 1
            continue
        indent, marker = len(m.group(1)), m.group(2)
        j = i + 1
        while j < len(lines) and not re.fullmatch(rf" *{re.escape(marker)}[{marker[0]}]* *", lines[j].rstrip("\n")):
            j += 1
        out.append((m.group(3).strip(), "".join(line[indent:] if line.strip() else line for line in lines[i + 1:j])))
        i = j + 1
    return out


def outside_blocks(text: str, converted: set[int]) -> list[str]:
    """The text outside the converted blocks (by block number), one string per gap."""
    lines = text.splitlines(keepends=True)
    cuts = []
    n = 0
    i = 0
    while i < len(lines):
        m = re.match(r"( *)(`{3,}|~{3,})", lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not re.fullmatch(rf" *{re.escape(m.group(2))}[{m.group(2)[0]}]* *\n?", lines[j]):
            j += 1
        if n in converted:
            cuts.append((i + 1, j))
        n += 1
        i = j + 1
    gaps, at = [], 0
    for first, end in cuts:
        gaps.append("".join(lines[at:first]))
        at = end
    gaps.append("".join(lines[at:]))
    return gaps


@pytest.fixture
def tutorial(tmp_path):
    shutil.copy(CASES / "tutorial" / "input.md", tmp_path / "tutorial.md")
    return tmp_path / "tutorial.md"


def test_in_place_converts_the_job_blocks_and_keeps_every_other_byte(tutorial):
    src = tutorial.read_text()
    res = run(tutorial, "--in-place")
    assert res.exit_code == 0, res.output
    assert res.stdout == f"Rewriting {tutorial}\n"
    new = tutorial.read_text()
    check_golden(CASES / "tutorial" / "expected.md", new)
    # blocks 0 (PyTorchJob), 4 (MPIJob in a list item) and 6 (XGBoostJob between two objects) are converted
    assert outside_blocks(new, {0, 4, 6}) == outside_blocks(src, {0, 4, 6})
    before, after = blocks(src), blocks(new)
    assert len(before) == len(after) == 7
    for i in (1, 2, 3, 5):
        assert after[i] == before[i]  # shell, output, heredoc and non-job blocks: untouched
    kinds = [[d["kind"] for d in yaml.safe_load_all(after[i][1])] for i in (0, 4, 6)]
    assert kinds == [["JobSet"], ["JobSet", "ConfigMap"], ["PersistentVolumeClaim", "JobSet", "Secret"]]
    assert after[0][1].startswith("# ResNet-50 on ImageNet, one master and two workers.\n")  # its comment stays
    # the list item's block keeps its indentation: every line of it, companions included
    item = new[new.index("   ~~~yml\n"):new.index("   ~~~\n")]
    assert all(line.startswith("   ") or not line for line in item.split("\n"))
    for i in (0, 4, 6):
        for doc in yaml.safe_load_all(after[i][1]):
            if doc["kind"] == "JobSet":
                assert check_jobset(doc) == [], doc["metadata"]["name"]


def test_converting_twice_changes_nothing(tutorial):
    assert run(tutorial, "--in-place").exit_code == 0
    once = tutorial.read_bytes()
    again = run(tutorial, "--in-place")
    assert again.exit_code == 0 and again.stdout == ""
    assert tutorial.read_bytes() == once
    check = run(tutorial, "--check")
    # only the heredoc is left: a shell block is never rewritten
    assert check.exit_code == exitcodes.FINDINGS
    # the kind: line of the heredoc in the converted page (the JobSets above it are longer than their jobs)
    heredoc = next(i for i, line in enumerate(once.decode().splitlines(), 1) if "<<" in line and "EOF" in line) + 2
    assert check.stdout == (f"{tutorial}:{heredoc}: TFJob: embedded: in a ```bash block (a shell heredoc?): never rewritten; "
                            "convert the YAML (kf2jobset convert - reads stdin) and paste it back\n")
    assert "0 to convert" in check.stderr and "1 left: 1 embedded" in check.stderr


def test_check_lists_every_job_at_the_markdown_files_own_lines(tutorial):
    src = tutorial.read_text()
    res = run(tutorial, "--check")
    assert res.exit_code == exitcodes.FINDINGS
    lines = res.stdout.splitlines()
    assert [re.match(r"[^:]+:(\d+): (\w+)", line).groups() for line in lines] == [
        ("12", "PyTorchJob"), ("60", "TFJob"), ("82", "MPIJob"), ("146", "XGBoostJob")]
    text_lines = src.splitlines()
    for line in lines:
        number, kind = re.match(r"[^:]+:(\d+): (\w+)", line).groups()
        assert kind in text_lines[int(number) - 1] or kind == "TFJob" and text_lines[int(number) - 1] == "kind: TFJob" \
            or text_lines[int(number) - 1].strip().startswith("apiVersion"), line
    assert "1 file scanned, 1 to convert" in res.stderr and "4 left: 3 to convert, 1 embedded" in res.stderr
    assert tutorial.read_text() == src


def test_directory_walks_take_markdown_only_with_docs(tutorial):
    root = tutorial.parent
    (root / "job.yaml").write_text((FIXTURES / "pytorchjob" / "master-workers" / "input.yaml").read_text())
    plain = run(root, "--check")
    assert "1 file scanned" in plain.stderr and "tutorial.md" not in plain.stdout
    docs = run(root, "--check", "--docs")
    assert "2 files scanned, 2 to convert" in docs.stderr
    assert docs.stdout.count("tutorial.md:") == 4
    src = tutorial.read_text()
    assert run(root, "--in-place").exit_code == 0 and tutorial.read_text() == src  # no --docs: docs untouched
    assert run(root, "--in-place", "--docs").exit_code == 0 and tutorial.read_text() != src


def test_the_prefilter_reads_markdown_that_mentions_no_job_never(tmp_path, monkeypatch):
    from kf2jobset.sources import markdown
    from kf2jobset.text import classify

    (tmp_path / "notes.md").write_text("# Notes\n\n```yaml\napiVersion: v1\nkind: ConfigMap\n```\n")
    (tmp_path / "prose.md").write_text("We moved from kubeflow.org jobs to JobSet; see `PyTorchJob` docs.\n")
    assert classify.classify("notes.md", (tmp_path / "notes.md").read_text()) == classify.SKIP
    assert classify.classify("prose.md", (tmp_path / "prose.md").read_text()) == classify.MARKDOWN
    called = []
    real = markdown.convert_markdown
    monkeypatch.setattr(markdown, "convert_markdown", lambda *a, **k: called.append(a[1]) or real(*a, **k))
    res = run(tmp_path, "--check", "--docs")
    assert res.exit_code == 0, res.output
    assert called == [str(tmp_path / "prose.md")]  # mentions a job kind: its blocks are looked at (it has none)


def test_a_block_that_cannot_be_converted_fails_the_file_with_markdown_positions(tmp_path):
    page = tmp_path / "mpi.md"
    src = ("# MPI\n\n```yaml\n" + (FIXTURES / "pytorchjob" / "master-workers" / "input.yaml").read_text() + "```\n\n"
           "- step one:\n\n  ```yaml\n  apiVersion: kubeflow.org/v1\n  kind: MPIJob\n  metadata:\n    name: old\n"
           "  spec:\n    mpiReplicaSpecs:\n      Launcher:\n        replicas: 1\n        template:\n          spec:\n"
           "            containers: [{name: l, image: 'mpi:1'}]\n      Worker:\n        replicas: two\n        template:\n"
           "          spec:\n            containers: [{name: w, image: 'mpi:1'}]\n  ```\n")
    page.write_text(src)
    lines = src.splitlines()
    bad = next(i for i, line in enumerate(lines) if "replicas: two" in line) + 1
    for args in (["--in-place"], ["--check"]):
        res = run(page, *args)
        assert res.exit_code == exitcodes.INPUT, res.output
        col = lines[bad - 1].index("replicas") + 1  # the field's key, in the list item's indented block
        assert f"{page}:{bad}:{col}:" in res.stderr, res.stderr
    assert page.read_text() == src  # all or nothing: the convertible PyTorchJob block is not rewritten either
    check = run(page, "--check")
    assert f"{page}:5: PyTorchJob" in check.stdout  # its apiVersion line, after the comment and f"{page}:{bad}:" in check.stdout


def test_an_untagged_heredoc_is_listed_and_untagged_yaml_is_converted(tmp_path):
    page = tmp_path / "readme.md"
    job = (FIXTURES / "pytorchjob" / "master-workers" / "input.yaml").read_text()
    src = f"Run:\n\n```\ncat <<EOF | kubectl apply -f -\n{job}EOF\n```\n\nor save:\n\n```\n{job}```\n"
    page.write_text(src)
    check = run(page, "--check")
    lines = check.stdout.splitlines()
    assert len(lines) == 2 and "embedded: in an untagged block that is not YAML" in lines[0] and ": to convert:" in lines[1]
    assert run(page, "--in-place").exit_code == 0
    first, second = blocks(page.read_text())
    assert first == blocks(src)[0] and "kind: JobSet" in second[1]


def test_envsubst_placeholders_are_kept_and_helm_blocks_are_listed(tmp_path):
    page = tmp_path / "placeholders.md"
    shutil.copy(CASES / "placeholders" / "input.md", page)
    check = run(page, "--check")
    assert check.stdout.splitlines() == [
        f"{page}:6: TFJob mnist (kubeflow.org/v1): to convert: run kf2jobset convert --in-place",
        f"{page}:33: PyTorchJob: Helm-skipped: a YAML block with Helm template actions: not converted; render it first, "
        "then edit the block"]
    res = run(page, "--in-place")
    assert res.exit_code == 0, res.output
    new = page.read_text()
    check_golden(CASES / "placeholders" / "expected.md", new)
    converted = blocks(new)[0][1]
    assert "image: ${REGISTRY}/mnist:${TAG}" in converted and "namespace: ${NAMESPACE}" in converted
    assert "kind: JobSet" in converted
    assert blocks(new)[1] == blocks((CASES / "placeholders" / "input.md").read_text())[1]


def scale_page(tmp_path, case: str):
    """A page whose YAML block is the fixture's job with its 3 workers as `${WORKERS}`: (page, its text)."""
    page = tmp_path / "scale.md"
    src = "Scale it:\n\n```yaml\n" + (FIXTURES / case / "input.yaml").read_text().replace(
        "replicas: 3", "replicas: ${WORKERS}") + "```\n"
    page.write_text(src)
    return page, src


def test_a_replica_count_placeholder_skips_the_page_as_a_template(tmp_path):
    """A TFJob's TF_CONFIG is written from the count: the page is left as a template."""
    page, src = scale_page(tmp_path, "tfjob/chief-ps-workers")
    res = run(page, "--in-place")
    assert res.exit_code == 0 and page.read_text() == src, res.output
    assert "skipped (envsubst template)" in res.stderr
    check = run(page, "--check")
    assert ": template: " in check.stdout and "1 left: 1 template" in check.stderr


def test_a_replica_count_placeholder_the_jobset_can_carry_converts(tmp_path):
    """A PyTorchJob's size-derived values follow the count (SZ001): the block converts, placeholder kept."""
    page, _ = scale_page(tmp_path, "pytorchjob/master-workers")
    res = run(page, "--in-place")
    assert res.exit_code == 0, res.output
    assert "kind: JobSet" in page.read_text() and "replicas: ${WORKERS}" in page.read_text()


def test_trainjob_target_puts_the_runtime_into_the_same_block(tutorial):
    res = run(tutorial, "--in-place", "--target", "trainjob", "--trainer-runtime", "generated", "--accept-mpi-ssh")
    assert res.exit_code == 0, res.output
    first = blocks(tutorial.read_text())[0][1]
    assert [d["kind"] for d in yaml.safe_load_all(first)] == ["TrainingRuntime", "TrainJob"]


def test_a_job_that_fits_torch_distributed_becomes_one_trainjob_in_its_block(tutorial):
    res = run(tutorial, "--in-place", "--target", "trainjob", "--accept-mpi-ssh")
    assert res.exit_code == 0, res.output
    first = blocks(tutorial.read_text())[0][1]
    (tj,) = list(yaml.safe_load_all(first))
    assert tj["kind"] == "TrainJob" and tj["spec"]["runtimeRef"]["name"] == "torch-distributed"


def test_crlf_pages_stay_crlf(tmp_path):
    page = tmp_path / "win.md"
    src = ("Intro\r\n\r\n```yaml\r\n" + (FIXTURES / "tfjob" / "chief-ps-workers" / "input.yaml").read_text()
           .replace("\n", "\r\n") + "```\r\nEnd\r\n")
    page.write_bytes(src.encode())
    assert run(page, "--in-place").exit_code == 0
    new = page.read_bytes().decode()
    assert new.startswith("Intro\r\n\r\n```yaml\r\n") and new.endswith("```\r\nEnd\r\n")
    assert "\n" not in new.replace("\r\n", "")
    assert "kind: JobSet" in new


def test_fence_rules():
    text = ("````md\n```yaml\nkind: PyTorchJob\n```\n````\n"  # a longer fence holds a shorter one: one md block
            "~~~\nplain\n~~~~\n"  # closed by a longer fence of the same character
            "```yaml\nunclosed: block\n")
    found = fences(text.splitlines(keepends=True))
    assert [(f.first, f.end, f.info) for f in found] == [(1, 4, "md"), (6, 7, ""), (9, 10, "yaml")]


def test_stream_mode_says_how_to_convert_a_markdown_file(tutorial):
    res = run(tutorial)
    assert res.exit_code == exitcodes.USAGE and res.stdout == ""
    assert "a Markdown file is converted where it is" in res.stderr


def test_report_gives_the_markdown_lines(tutorial):
    import json

    res = CliRunner().invoke(main, ["report", str(tutorial), "--format", "json"])
    data = json.loads(res.stdout)
    jobs = data["files"][0]["jobs"]
    assert [(j["kind"], j["line"]) for j in jobs] == [("PyTorchJob", 12), ("MPIJob", 82), ("XGBoostJob", 146)]
