"""The upstream files the tests read come from pinned Go modules, nothing beside the clone (tests/upstream.py).

- every version pinned in tools/upstream-modules.txt is the one the tools/ module building that component
  requires, so the files tests read are those of the release the ground truth runs;
- every corpus file named in tests/upstream.py is in its module (a renamed upstream file fails here, loudly);
- no test, tool or doc reads or cites a directory beside the repository.
"""
from __future__ import annotations

import re
import subprocess

import pytest

from . import upstream
from .conftest import REPO

# the module file under tools/ that requires the pinned module (the ones the install script builds from)
BUILT_FROM = {
    "training-operator": "testtrainingoperator/go.mod",
    "training-operator-v1.8.1": "testtrainingoperator/v1.8.1.mod",  # the same program, built with -modfile
    "mpi-operator": "testmpioperator/go.mod",
    "jobset": "testjobset/go.mod",
    "trainer": "testtrainer/go.mod",
    "scheduler-plugins": "testtrainingoperator/go.mod",  # the PodGroup CRD of the gang-scheduling stacks
    "scheduler-plugins-trainer": "testtrainer/go.mod",  # the PodGroup CRD Trainer's CoScheduling plugin watches
}


@pytest.mark.parametrize("name", sorted(BUILT_FROM))
def test_a_pin_is_the_version_its_component_is_built_from(name):
    module = upstream.modules()[name]
    gomod = (REPO / "tools" / BUILT_FROM[name]).read_text()
    required = re.findall(rf"^\s*(?:require\s+)?{re.escape(module.path)}\s+(v\S+)", gomod, re.M)
    assert required == [module.version], (name, required)


def test_the_install_script_builds_the_pinned_versions():
    out = subprocess.run(["bash", str(REPO / "tools" / "install-ground-truth.sh"), "--print-paths", "jobset-controller",
                          "trainer-controller", "mpi-operator", "training-operator", "training-operator-v1.8.1"],
                         capture_output=True, text=True, check=True).stdout
    for line, name in zip(out.splitlines(), ("jobset", "trainer", "mpi-operator", "training-operator",
                                             "training-operator-v1.8.1"), strict=False):
        assert f"-{upstream.modules()[name].version}-" in line, (name, line)


def test_every_corpus_file_is_in_its_module():
    upstream.need(*upstream.CORPUS)
    files = upstream.corpus()
    assert len(files) == sum(map(len, upstream.CORPUS.values())) >= 47
    assert all(f.path.is_file() for f in files), [f.name for f in files if not f.path.is_file()]
    assert set(upstream.CORPUS) <= set(upstream.modules())


def test_the_crds_and_runtimes_are_there():
    upstream.need("jobset", "training-operator", "mpi-operator", "trainer")
    assert {p.name for p in upstream.training_operator_crds()} == {
        f"kubeflow.org_{k}.yaml" for k in ("tfjobs", "pytorchjobs", "mpijobs", "xgboostjobs", "paddlejobs", "jaxjobs")}
    assert upstream.jobset_crd().is_file() and upstream.mpi_v2_crd().is_file()
    assert len(upstream.trainer_crds()) == 3
    runtimes = {p.stem for p in upstream.trainer_runtimes()}
    assert runtimes >= {"torch_distributed", "jax_distributed", "xgboost_distributed"}


def test_an_absent_module_names_the_command_that_fetches_it(monkeypatch, tmp_path):
    monkeypatch.setattr(upstream, "module_cache", lambda: tmp_path)
    reason = upstream.absent("jobset", "katib")
    assert "sigs.k8s.io/jobset@" in reason and "github.com/kubeflow/katib@" in reason
    assert upstream.INSTALL in reason
    assert upstream.corpus() == []


def test_nothing_reads_or_cites_a_directory_beside_the_repository():
    beside = re.compile(r"\.\./shared|shared/(?:reference|corpus|fuzz-findings)")
    hits = []
    for top in ("tests", "tools", "docs", "benchmarks", "kf2jobset", "schemas", ".ci", "README.md"):
        for path in [REPO / top] if (REPO / top).is_file() else sorted((REPO / top).rglob("*")):
            if path.is_file() and path.name != "test_upstream.py" and path.suffix not in (".pyc", ".sum"):
                text = path.read_text(encoding="utf-8", errors="replace")
                hits += [f"{path.relative_to(REPO)}: {m.group(0)}" for m in beside.finditer(text)]
    assert hits == []
