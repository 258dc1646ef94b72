"""`kf2jobset resize` as a JobSet owner runs it after the migration: a converted file with edits of its own
(a comment, an unrelated field) resized in place keeps them; the result is what `convert --check` and `report`
accept; refusals name the file, the document, the line and the value, and write nothing; the elastic bound is
moved only when asked; `--check` names a JobSet resized by hand and offers the command first."""
from __future__ import annotations

import hypothesis.strategies as st
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

from kf2jobset import exitcodes
from kf2jobset.cli.main import main
from kf2jobset.checks.staleness import resized_jobsets
from kf2jobset.text.yamlio import parse_documents, to_plain

from .conftest import FIXTURES
from .jobset_edits import convert_cli, converted_in_place, set_replicas


def resize_cli(*args, stdin=None):
    return CliRunner().invoke(main, ["resize", *map(str, args)], input=stdin)


def _data(text: str) -> list:
    return [to_plain(d.data) for d in parse_documents(text)]


def _user_edited(text: str) -> str:
    """A comment on the JobSet and an image bumped since the conversion: the user's, to survive a resize."""
    text = text.replace("kind: JobSet\n", "kind: JobSet  # owned by the ads team\n", 1)
    return text.replace("image: registry.example.com/wide-deep:3", "image: registry.example.com/wide-deep:4", 1)


def test_in_place_keeps_user_edits_and_equals_a_fresh_conversion(tmp_path):
    work, converted = converted_in_place(tmp_path, (FIXTURES / "tfjob/chief-ps-workers/input.yaml").read_text())
    job = work / "job.yaml"
    job.write_text(_user_edited(converted))
    res = resize_cli(job, "--replicas", "Worker=5", "--in-place")
    assert res.exit_code == 0, res.output
    assert "Worker 3 -> 5" in res.stderr
    text = job.read_text()
    assert "kind: JobSet  # owned by the ads team\n" in text and "wide-deep:4" in text
    bigger = tmp_path / "five" / "job.yaml"
    bigger.parent.mkdir()
    bigger.write_text((FIXTURES / "tfjob/chief-ps-workers/input.yaml").read_text().replace("replicas: 3", "replicas: 5"))
    assert convert_cli("--in-place", bigger.parent).exit_code == 0
    assert _data(text) == _data(_user_edited(bigger.read_text()))  # a fresh conversion at 5, with the user's edits
    check = convert_cli("--check", work)
    assert check.exit_code == 0 and "0 left" in check.stderr, check.stderr
    report = CliRunner().invoke(main, ["report", str(job)])
    assert "resized" not in report.stdout and "reshaped" not in report.stdout, report.stdout


def test_stdin_prints_and_a_refusal_writes_nothing(tmp_path):
    _, converted = converted_in_place(tmp_path, (FIXTURES / "tfjob/chief-ps-workers/input.yaml").read_text())
    res = resize_cli("-", "--replicas", "ps=3", stdin=converted)
    assert res.exit_code == 0, res.output
    assert resized_jobsets(res.stdout) == [] and "ps=3" in res.stdout
    edited = converted.replace(".svc:2223", ".svc:2300", 1)  # a PS port edited in TF_CONFIG by hand
    path = tmp_path / "edited.yaml"
    path.write_text(edited)
    res = resize_cli(path, "--replicas", "Worker=4", "--in-place")
    assert res.exit_code == exitcodes.UNSUPPORTED and path.read_text() == edited
    assert f"{path}:" in res.stderr and "document 1" in res.stderr and "env TF_CONFIG of container tensorflow" in res.stderr
    assert "edited since the conversion" in res.stderr and ".svc:2300" in res.stderr, res.stderr


def test_a_trainjob_size_is_refused_naming_the_way_that_works(tmp_path):
    _, converted = converted_in_place(tmp_path, (FIXTURES / "tfjob/chief-ps-workers/input.yaml").read_text())
    res = resize_cli("-", "--num-nodes", "3", stdin=converted)
    assert res.exit_code == exitcodes.USAGE and res.stdout == ""
    assert "a TrainJob is not resized yet" in res.stderr and "kf2jobset convert --target trainjob" in res.stderr


def test_a_size_v1_refused_is_refused(tmp_path):
    _, converted = converted_in_place(tmp_path, (FIXTURES / "tfjob/chief-ps-workers/input.yaml").read_text())
    res = resize_cli("-", "--replicas", "Chief=2", stdin=converted)
    assert res.exit_code == exitcodes.UNSUPPORTED and res.stdout == ""
    assert "could not have had" in res.stderr and "Chief replicas must be at most 1" in res.stderr, res.stderr


def test_a_directory_needs_a_name_and_resizes_that_jobset(tmp_path):
    work, _ = converted_in_place(tmp_path, (FIXTURES / "xgboostjob/master-workers/input.yaml").read_text())
    assert resize_cli(work, "--replicas", "Worker=4").exit_code == exitcodes.USAGE
    name = _data((work / "job.yaml").read_text())[0]["metadata"]["name"]
    res = resize_cli(work, "--name", name, "--replicas", "Worker=4", "--in-place")
    assert res.exit_code == 0, res.output
    assert convert_cli("--check", work).exit_code == 0


def test_check_names_a_hand_resize_and_offers_the_command_first(tmp_path):
    work, converted = converted_in_place(tmp_path, (FIXTURES / "tfjob/chief-ps-workers/input.yaml").read_text())
    (work / "job.yaml").write_text(set_replicas(converted, "worker", 5))
    check = convert_cli("--check", work)
    assert check.exit_code == exitcodes.FINDINGS
    assert f"to resize, run `kf2jobset resize {work / 'job.yaml'} --replicas worker=5`" in check.stdout + check.stderr
    res = resize_cli(work / "job.yaml", "--replicas", "worker=5", "--in-place")
    assert res.exit_code == 0, res.output
    assert convert_cli("--check", work).exit_code == 0


def _elastic(tmp_path, workers: int, bound: str):
    text = (FIXTURES / "pytorchjob/elastic-hpa/expected.yaml").read_text()
    assert 'value: "1:4"' in text
    path = tmp_path / "elastic.yaml"
    path.write_text(text.replace('value: "1:4"', f'value: "{bound}"'))
    path.write_text(set_replicas(path.read_text(), "worker", workers))
    return path


def test_an_elastic_job_past_its_bound_is_named_and_moved_only_when_asked(tmp_path):
    path = _elastic(tmp_path, 3, "1:2")  # resized by hand past PET_NNODES 1:2
    check = convert_cli("--check", path)
    assert check.exit_code == exitcodes.FINDINGS
    assert "PET_NNODES bounds the rendezvous at 1:2 nodes, the JobSet runs 3 pods" in check.stdout + check.stderr
    refused = resize_cli(path, "--replicas", "worker=3", "--in-place")
    assert refused.exit_code == exitcodes.UNSUPPORTED and "--elastic-max 3" in refused.stderr, refused.stderr
    moved = resize_cli(path, "--replicas", "worker=3", "--elastic-max", "3", "--in-place")
    assert moved.exit_code == 0, moved.output
    assert 'value: "1:3"' in path.read_text()
    assert convert_cli("--check", path).exit_code == 0


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=st.integers(1, 6), second=st.integers(1, 6), kind=st.sampled_from(["tfjob/chief-ps-workers",
                                                                                "xgboostjob/master-workers",
                                                                                "mxjob/dist-sync",
                                                                                "mpijob-v2beta1/openmpi"]))
def test_n_to_m_then_back_is_the_conversion_at_each_size(tmp_path_factory, first, second, kind):
    """n -> m -> n: each step equals the fresh conversion at its size (workers of each kind)."""
    tmp = tmp_path_factory.mktemp("nm")
    source = (FIXTURES / kind / "input.yaml").read_text()
    flags = ["--accept-mpi-ssh"] if "mpijob" in kind else []
    fresh = {}
    for n in {first, second}:
        d = tmp / f"at{n}"
        d.mkdir()
        (d / "job.yaml").write_text(_workers(source, n))
        assert convert_cli("--in-place", *flags, d).exit_code == 0
        fresh[n] = (d / "job.yaml").read_text()
    step = resize_cli("-", "--replicas", f"Worker={second}", stdin=fresh[first])
    assert step.exit_code == 0, step.output
    assert _data(step.stdout) == _data(fresh[second])
    back = resize_cli("-", "--replicas", f"Worker={first}", stdin=step.stdout)
    assert back.exit_code == 0 and _data(back.stdout) == _data(fresh[first]), back.output


def _workers(text: str, n: int) -> str:
    """The job text with its Worker replicas set to n (the replicas line after `Worker:`)."""
    import re

    out, count = re.subn(r"(\n(\s+)Worker:\n\s+replicas: )\d+", rf"\g<1>{n}", text, count=1)
    assert count == 1, text
    return out
