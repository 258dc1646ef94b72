"""Shared test helpers: repo paths, golden-file handling, the real JobSet CRD (upstream files: tests/upstream.py),
and how the README's `python -m pytest` spreads over the machine's cores."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
UPDATE_GOLDEN = os.environ.get("KF2JOBSET_UPDATE_GOLDEN") == "1"
# Workers of the whole default suite (pytest-xdist, in the test extras); 0 runs it in this one process.
WORKERS = int(os.environ.get("KF2JOBSET_TEST_WORKERS", "2"))

# assertions in the helper modules (harness moved out of the test modules) explain themselves as in tests
pytest.register_assert_rewrite(*(".".join(p.relative_to(REPO).with_suffix("").parts)
                                  for p in sorted(Path(__file__).parent.rglob("*.py"))
                                  if not p.name.startswith(("test_", "conftest", "__init__"))))


@pytest.hookimpl(tryfirst=True)  # before xdist's own, which turns -n into workers
def pytest_cmdline_main(config: pytest.Config) -> None:
    """The whole default suite (no path, test selection or -n given; the e2e suites not asked for) runs
    on WORKERS workers, one test file at a time each (module fixtures are built once), tests/live on one
    worker (they share one test API server)."""
    if (WORKERS < 2 or os.environ.get("PYTEST_XDIST_WORKER") or os.environ.get("KF2JOBSET_E2E") == "1"
            or not config.pluginmanager.hasplugin("xdist") or config.option.numprocesses is not None
            or config.args_source != pytest.Config.ArgsSource.TESTPATHS or config.option.collectonly
            or config.option.usepdb or config.option.markexpr or config.option.keyword):
        return
    config.option.numprocesses = WORKERS
    config.option.dist = "loadfile"


def pytest_xdist_make_scheduler(config: pytest.Config, log):
    if config.option.dist != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class OneApiServer(LoadFileScheduling):
        """A test file per unit of work, but tests/live as one unit: its session fixture starts the API server."""

        def _split_scope(self, nodeid: str) -> str:
            return "tests/live" if nodeid.startswith("tests/live/") else super()._split_scope(nodeid)

    return OneApiServer(config, log)


def mapping_fixture_dirs() -> list[str]:
    """One fixture directory per mapping file, named like it (mappings/mpijob-v1.yaml -> fixtures/mpijob-v1):
    a kind added by its mapping is not covered until its fixtures exist."""
    return sorted(p.stem for p in (REPO / "mappings").glob("*.yaml"))


def repo_fixture_tree(name: str, tmp_path: Path, monkeypatch) -> Path:
    """A copy of fixtures/repo-mode/<name> to run repo mode in (the working directory)."""
    import shutil

    root = tmp_path / "repo"
    shutil.copytree(FIXTURES / "repo-mode" / name, root)
    monkeypatch.chdir(root)
    return root


def check_golden(path: Path, actual: str) -> None:
    """Compare with a golden file; KF2JOBSET_UPDATE_GOLDEN=1 rewrites it (review the diff!)."""
    if UPDATE_GOLDEN:
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"golden file {path} missing; run with KF2JOBSET_UPDATE_GOLDEN=1 and review it"
    expected = path.read_text(encoding="utf-8")
    assert actual == expected, f"{path} differs from the output (KF2JOBSET_UPDATE_GOLDEN=1 rewrites it)"


@pytest.fixture(scope="session")
def crd_validator():
    """The REAL JobSet CRD schema (sigs.k8s.io/jobset@v0.12.0, config/components/crd/bases), made strict like
    fieldValidation=Strict, with its list-map/list-set declarations enforced as the API server does."""
    from jsonschema import Draft7Validator, validators
    from ruamel.yaml import YAML

    from kf2jobset.k8s.schemas import _list_type

    from . import upstream

    crd = YAML(typ="safe").load(upstream.jobset_crd().read_text())
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return validators.extend(Draft7Validator, {"x-kubernetes-list-type": _list_type})(strict_structural(schema))


def strict_structural(node):
    """A CRD structural schema as JSON Schema that rejects unknown fields, as strict field validation does."""
    if isinstance(node, dict):
        kept = ("x-kubernetes-list-type", "x-kubernetes-list-map-keys")
        out = {k: strict_structural(v) for k, v in node.items()
               if (k in kept or not k.startswith("x-kubernetes")) and k != "format"}
        if node.get("type") == "object" and "properties" in node and not node.get("x-kubernetes-preserve-unknown-fields"):
            out.setdefault("additionalProperties", False)
        if node.get("x-kubernetes-int-or-string"):
            out.pop("type", None)
            out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
        return out
    if isinstance(node, list):
        return [strict_structural(v) for v in node]
    return node


def held_jobsets(data: dict) -> list[dict]:
    """JobSets written as text into Argo resource manifests and ConfigMap values."""
    import re

    import yaml

    texts = []
    if data.get("kind") == "ConfigMap":
        texts = [v for v in (data.get("data") or {}).values() if isinstance(v, str)]
    spec = data.get("spec") if isinstance(data.get("spec"), dict) else {}
    for tpl in (spec.get("workflowSpec") or spec).get("templates") or []:
        texts.append((tpl.get("resource") or {}).get("manifest") or "")
    # parameters as Argo fills them: the workflow's argument values and the templates' input defaults (a
    # replica count is a number), else a word
    workflow = spec.get("workflowSpec") or spec
    declared = [p for tpl in workflow.get("templates") or [] for p in ((tpl.get("inputs") or {}).get("parameters") or [])]
    declared += (workflow.get("arguments") or {}).get("parameters") or []
    args = {str(p.get("name")): str(p.get("value")) for p in declared if isinstance(p, dict) and p.get("value") is not None}

    def filled(m) -> str:
        name = re.fullmatch(r"\{\{\s*(?:inputs|workflow)\.parameters\.([\w-]+)\s*\}\}", m.group(0))
        return args.get(name.group(1), "filled") if name else "filled"

    out = []
    for text in texts:
        # Katib's trial parameters as Katib fills them in: text, before the YAML is read (a count is a number)
        text = re.sub(r"\$\{trialParameters\.[^}]+\}", "2", text)
        obj = yaml.safe_load(re.sub(r"\{\{[^}]*\}\}", filled, text)) if "JobSet" in text else None
        if isinstance(obj, dict) and obj.get("kind") == "JobSet":
            obj["metadata"].pop("generateName", None)
            out.append(obj)
    return out


@pytest.fixture(scope="session")
def kustomize() -> str:
    """The real kustomize binary (tests/ground_truth_tools.py)."""
    from .ground_truth_tools import kustomize_binary

    return kustomize_binary()
