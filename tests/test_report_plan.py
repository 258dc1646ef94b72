"""A report you can plan a migration with.

Several jobs: the report leads with one entry per code (how many jobs, which, the one action) and
then shows per job only what sets it apart; stderr prints one line per code. Categories rank what
needs the user before applying (prerequisite) apart from what keeps its meaning.
"""
from __future__ import annotations

import re

from click.testing import CliRunner

from kf2jobset.cli.main import main
from kf2jobset.files.pipeline import convert_text
from kf2jobset.options import ConvertOptions
from kf2jobset.report import build_report
from kf2jobset.report.render_helpers import apart, by_code, job_id
from kf2jobset.report.render_markdown import _one_by_one

from .conftest import FIXTURES

TEN = FIXTURES / "repos" / "ten-mpijobs"
TEN_FILES = sorted(str(p) for p in TEN.rglob("*.yaml"))


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def report_of(paths: list[str]):
    results = [convert_text(open(p).read(), p, ConvertOptions()) for p in paths]
    return build_report(results, ConvertOptions())


def test_the_fixture_repository_has_ten_mpijobs():
    assert len(TEN_FILES) == 10
    assert all("kind: MPIJob" in open(p).read() for p in TEN_FILES)


def test_ten_alike_jobs_lead_with_a_summary_a_third_as_long_as_job_by_job():
    result = run("report", str(TEN), "--format", "markdown")
    text = result.stdout
    lines = text.splitlines()
    first_job_section = next(i for i, line in enumerate(lines) if line.startswith("#### ") or line.startswith("### `"))
    assert lines.index("### Findings by code") < first_job_section
    assert lines.index("### Before you apply") < lines.index("### Findings by code")
    # the same report laid out job by job (how every job used to be shown)
    job_by_job = len("\n".join(_one_by_one(report_of(TEN_FILES))).splitlines())
    assert len(lines) * 3 <= job_by_job, (len(lines), job_by_job)


def test_each_code_has_one_summary_row_naming_its_jobs():
    rep = report_of(TEN_FILES)
    summaries = by_code(rep)
    codes = [s.code for s in summaries]
    assert len(codes) == len(set(codes)) == len({f.code for f in rep.findings})
    md = run("report", str(TEN), "--format", "markdown").stdout
    for s in summaries:
        summary_rows = [line for line in md.splitlines() if re.search(rf"\| `{s.code}` \| (all \d+|\d+: )", line)]
        assert len(summary_rows) == 1, (s.code, summary_rows)
        assert (f"all {len(s.jobs)}" if len(s.jobs) == 10 else f"{len(s.jobs)}: ") in summary_rows[0]


def test_nothing_a_job_has_is_lost_between_the_summary_and_its_own_section():
    """Over every golden fixture at once (many kinds in one report): each finding of each job is either
    the shared variant of its code (said once in the summary) or listed in that job's own section."""
    rep = report_of(sorted(str(p) for p in FIXTURES.glob("*/*/input.yaml") if "errors" not in p.parts))
    summaries = by_code(rep)
    shared = {s.code: s.shared for s in summaries}
    own = {job_id(fr, job): {id(f) for f in fs} for fr, job, fs in apart(rep, summaries)}
    total = 0
    for fr in rep.files:
        for job in fr.jobs:
            for f in job.findings:
                total += 1
                assert job_id(fr, job) in shared[f.code] or id(f) in own.get(job_id(fr, job), set()), (fr.path, f.code)
    assert len(rep.jobs) > 50 and len(summaries) > 30 and total > len(rep.jobs)  # a real cross-kind report
    # and a job apart is apart for a reason: one of its findings differs from the summary's
    for s in summaries:
        assert s.shared, s.code


def test_stderr_prints_one_line_per_code_and_every_job_with_verbose(tmp_path):
    quiet = run("convert", *TEN_FILES)
    warnings = [line for line in quiet.stderr.splitlines() if line.startswith("kf2jobset: warning:")]
    codes = [re.match(r"kf2jobset: warning: (\w+) in (\d+) jobs", line) for line in warnings]
    assert all(codes) and len({m.group(1) for m in codes}) == len(codes) == 2, warnings
    assert all(m.group(2) == "10" for m in codes)
    loud = run("convert", "--verbose", *TEN_FILES)
    each = [line for line in loud.stderr.splitlines() if line.startswith("kf2jobset: warning:")]
    assert len(each) == 20 and all(any(f"/{p.rsplit('/', 1)[1]}: " in line for p in TEN_FILES) for line in each)
    # repo mode groups the same way
    out = run("convert", str(TEN), "--out-dir", str(tmp_path / "out"))
    grouped = [line for line in out.stderr.splitlines() if line.startswith("kf2jobset: warning:")]
    assert len(grouped) == 2 and out.exit_code == 0


def _notes(path: str):
    (conv,) = convert_text(open(path).read(), path, ConvertOptions()).conversions
    return {n.code: n for n in conv.notes}


def test_what_the_user_must_do_before_applying_ranks_as_prerequisite():
    notes = _notes(TEN_FILES[0])
    for code in ("MPI003", "MPI008"):
        assert notes[code].category == "prerequisite" and notes[code].action and notes[code].printed
    # a report of it fails at --fail-on approximated, not at the default (breaking)
    assert run("report", TEN_FILES[0]).exit_code == 0
    assert run("report", TEN_FILES[0], "--fail-on", "approximated").exit_code == 1


def test_tf002_is_exact_with_one_worker_and_its_action_never_points_at_the_tfjob():
    one = _notes(str(FIXTURES / "tfjob" / "single-replica" / "input.yaml"))
    many = _notes(str(FIXTURES / "tfjob" / "worker-only" / "input.yaml"))
    assert one["TF002"].category == "rewritten" and one["TF002"].action is None
    assert many["TF002"].category == "approximated"
    assert "TFJob" not in (many["TF002"].action or "")


def test_mpi004_warns_only_when_the_launcher_uses_the_script():
    elastic = _notes(str(FIXTURES / "mpijob-v2beta1" / "elastic-horovod" / "input.yaml"))
    plain = _notes(TEN_FILES[0])
    assert elastic["MPI004"].category == "approximated" and elastic["MPI004"].printed
    assert plain["MPI004"].category == "rewritten" and not plain["MPI004"].printed
