"""--subdomain names the JobSet's headless Service. JobSet creates that Service for the first JobSet and reuses it
as it is for the next (selector: the first JobSet's pods), so two JobSets of one namespace under one subdomain leave
the second's addresses unresolved: a run that would write them is refused (stream convert, report, the API), repo
mode refuses the flag (it converts many files), and one job alone — or jobs of different namespaces — convert."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from kf2jobset import exitcodes
from kf2jobset.cli.main import main
from kf2jobset.errors import UsageError
from kf2jobset.options import ConvertOptions, shared_subdomain

from .jobs import pytorchjob_yaml


def _two(ns_a, ns_b) -> str:
    a, b = pytorchjob_yaml("a", workers=1), pytorchjob_yaml("b", workers=1)
    if ns_a:
        a = a.replace("  name: a\n", f"  name: a\n  namespace: {ns_a}\n", 1)
    if ns_b:
        b = b.replace("  name: b\n", f"  name: b\n  namespace: {ns_b}\n", 1)
    return a + "---\n" + b


@pytest.mark.parametrize("namespaces, refused", [((None, None), True), (("ml", "ml"), True), (("ml", "cv"), False)])
def test_two_jobsets_of_one_namespace_under_one_subdomain_are_refused(tmp_path, namespaces, refused):
    (tmp_path / "jobs.yaml").write_text(_two(*namespaces))
    for command in (["convert"], ["report"]):
        out = CliRunner().invoke(main, [*command, str(tmp_path / "jobs.yaml"), "--subdomain", "shared"])
        if refused:
            said = "--subdomain 'shared' would be the Service of several JobSets"
            assert out.exit_code == exitcodes.USAGE and said in out.output, out.output
        else:
            assert out.exit_code == exitcodes.OK, out.output


def test_one_job_converts_with_it_and_repo_mode_refuses_it(tmp_path):
    (tmp_path / "job.yaml").write_text(pytorchjob_yaml("a", workers=1))
    out = CliRunner().invoke(main, ["convert", str(tmp_path / "job.yaml"), "--subdomain", "mine"])
    assert out.exit_code == exitcodes.OK and "subdomain: mine" in out.stdout
    for mode in ("--in-place", "--check"):
        out = CliRunner().invoke(main, ["convert", str(tmp_path), mode, "--subdomain", "mine"])
        assert out.exit_code == exitcodes.USAGE and "--subdomain names one job's Service" in out.output, out.output


def test_the_rule_alone():
    opts = ConvertOptions(subdomain="s")
    assert shared_subdomain(ConvertOptions(), [None, None]) is None
    assert shared_subdomain(opts, ["a", "b", None]) is None
    assert isinstance(shared_subdomain(opts, ["a", None, "a"]), UsageError)
