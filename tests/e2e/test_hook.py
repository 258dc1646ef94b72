"""The pre-commit hooks, run by the real pre-commit (`pre-commit try-repo`) on a temporary git repo.

try-repo needs the hook repository to be a git repo with a HEAD commit: the working tree (tracked
and untracked, not ignored) is copied into a temporary repo and committed, so the test does not
depend on what has been committed here. Each try-repo call builds a fresh hook environment
(pip-installs kf2jobset and its dependencies: ~15-25 s), so both hooks run in each of two calls.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ..conftest import FIXTURES, REPO

pytestmark = pytest.mark.skipif(shutil.which("pre-commit") is None or shutil.which("git") is None,
                                 reason="pre-commit and git are needed")

GIT_ID = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
          "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_AUTHOR_DATE": "2025-01-01T00:00:00Z",
          "GIT_COMMITTER_DATE": "2025-01-01T00:00:00Z"}

JOB = ("# licence header\r\napiVersion: kubeflow.org/v1\r\nkind: PyTorchJob\r\nmetadata:\r\n  name: train\r\n"
       "spec:\r\n  pytorchReplicaSpecs:\r\n    Worker:\r\n      replicas: 2\r\n      template:\r\n        spec:\r\n"
       "          containers:\r\n            - name: pytorch\r\n              image: img:1\r\n")
CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
TEMPLATE = "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\n"


def git(cwd: Path, *args: str, env: dict) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    env = {**os.environ, **GIT_ID, "PRE_COMMIT_HOME": str(tmp_path_factory.mktemp("pre-commit-home")),
           "PRE_COMMIT_COLOR": "never", "SKIP": ""}
    env.pop("PRE_COMMIT", None)
    return env


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory, env):
    """A committed copy of this working tree."""
    dest = tmp_path_factory.mktemp("kf2jobset-src")
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, check=False)
    if listed.returncode == 0:
        for rel in filter(None, listed.stdout.decode().split("\0")):
            src = REPO / rel
            if src.is_file() and not src.is_symlink():
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, dest / rel)
    else:  # not a git checkout: copy the tree
        shutil.copytree(REPO, dest, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns(".git", "__pycache__", "*.egg-info", ".pytest_cache", ".hypothesis"))
    git(dest, "init", "-q", env=env)
    git(dest, "add", "-A", env=env)
    git(dest, "commit", "-q", "-m", "snapshot", env=env)
    return dest


@pytest.fixture(scope="module")
def project(tmp_path_factory, env):
    """The repo the hooks run on: a v1 job (CRLF), a ConfigMap and a Helm template."""
    root = tmp_path_factory.mktemp("project")
    (root / "job.yaml").write_bytes(JOB.encode())
    (root / "cm.yaml").write_text(CONFIGMAP)
    (root / "chart" / "templates").mkdir(parents=True)
    (root / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (root / "chart" / "templates" / "svc.yaml").write_text(TEMPLATE)
    # files that mention Kubeflow without holding a job (a Prometheus config, a dashboard...): never fail a hook
    shutil.copytree(FIXTURES / "repo-mode" / "unrelated", root / "unrelated")
    git(root, "init", "-q", env=env)
    git(root, "add", "-A", env=env)
    git(root, "commit", "-q", "-m", "init", env=env)
    return root


def try_repo(project: Path, hook_repo: Path, env: dict, *hook: str):
    return subprocess.run(["pre-commit", "try-repo", str(hook_repo), *hook, "--all-files"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=600)


def _section(out: str, name: str) -> str:
    """The output of one hook in a try-repo run (from its status line to the next hook's)."""
    start = out.index(name)
    nxt = out.find("kf2jobset (", start + len(name))
    return out[start: nxt if nxt > 0 else len(out)]


def test_hooks_fail_fix_then_pass(project, hook_repo, env):
    # one try-repo run of both hooks, in manifest order: the check fails, then the fixer rewrites
    r = try_repo(project, hook_repo, env)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    check = _section(out, "kf2jobset (no Kubeflow Training Operator jobs left)")
    assert "Failed" in check and "- hook id: kf2jobset-check" in check and "- exit code: 1" in check
    assert "files were modified" not in check
    assert "job.yaml:2: PyTorchJob train (kubeflow.org/v1)" in check
    # pre-commit passes the YAML/JSON files: 4 of the project, 7 of unrelated/ (not its .md and .sh)
    assert "11 files scanned, 1 to convert, 2 skipped (1 Helm template, 1 unparsable file), 0 failed; 1 left: 1 to convert" in check
    unrelated = {p: p.read_bytes() for p in (project / "unrelated").rglob("*") if p.is_file()}
    fix = _section(out, "kf2jobset (convert Kubeflow Training Operator jobs to JobSet)")
    assert "Failed" in fix and "- hook id: kf2jobset-convert" in fix
    assert "- exit code: 1" in fix and "- files were modified by this hook" in fix
    assert "Rewriting job.yaml" in fix
    converted = (project / "job.yaml").read_bytes()
    assert converted.startswith(b"# licence header\r\napiVersion: jobset.x-k8s.io/v1alpha2\r\nkind: JobSet\r\n")
    assert b"\n" not in converted.replace(b"\r\n", b""), "CRLF kept"
    assert (project / "cm.yaml").read_text() == CONFIGMAP
    assert (project / "chart" / "templates" / "svc.yaml").read_text() == TEMPLATE
    assert {p: p.read_bytes() for p in (project / "unrelated").rglob("*") if p.is_file()} == unrelated

    # second run on the converted repo: both hooks pass and change nothing
    subprocess.run(["git", "add", "-A"], cwd=project, env=env, check=True)
    r = try_repo(project, hook_repo, env)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "Passed" in _section(out, "kf2jobset (no Kubeflow Training Operator jobs left)")
    assert "Passed" in _section(out, "kf2jobset (convert Kubeflow Training Operator jobs to JobSet)")
    assert (project / "job.yaml").read_bytes() == converted
