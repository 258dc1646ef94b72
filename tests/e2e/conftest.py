"""End-to-end tests against the real v1 Training Operator and the real JobSet + Job controllers.

Run them with ``python -m pytest tests/e2e`` (see tools/README-ground-truth.md). The first run
builds the Go components into ~/.cache/kf2jobset (several minutes cold); later runs reuse them and
start the whole stack in about 10 s.

* They run when asked: a path under tests/e2e on the command line, ``-m e2e``, or
  ``KF2JOBSET_E2E=1``. A plain ``python -m pytest`` (what .ci/run does today) reports them as
  skipped with that hint.
* When asked, a missing Go toolchain, a failed build or a component that does not start is a
  test FAILURE with the reason, never a silent skip. ``KF2JOBSET_SKIP_E2E=1`` skips them with a
  clear reason instead.
* ``KF2JOBSET_KEEP_E2E_DIR=1`` keeps the temporary directory (component logs, kubeconfig).

Fixtures: ``stack`` (session) -> :class:`tests.e2e.stack.GroundTruthStack`; ``namespace`` -> a new
namespace per test; ``api`` -> a ``kubernetes.client.ApiClient`` for the admin.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from ..tool_errors import ToolUnavailable
from ..asked import not_asked, requested
from .stack import GroundTruthStack, start_stack

E2E_DIR = Path(__file__).resolve().parent


def _requested(config: pytest.Config) -> bool:
    return requested(config, E2E_DIR, "e2e")


def _skip_reason(config: pytest.Config) -> str | None:
    if os.environ.get("KF2JOBSET_SKIP_E2E") == "1":
        return "KF2JOBSET_SKIP_E2E=1: end-to-end tests (real operator/JobSet) skipped"
    if not _requested(config):
        return "e2e suite runs only when asked: python -m pytest tests/e2e (or KF2JOBSET_E2E=1)"
    return None


def pytest_pycollect_makemodule(module_path: Path, parent) -> pytest.Module | None:
    """Not asked for (or skipped): each test module is one skip with the reason, not imported."""
    reason = _skip_reason(parent.config)
    return not_asked(module_path, parent, reason) if reason else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if E2E_DIR in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.e2e)


@contextmanager
def running_stack(flavour: str = "training-operator") -> Iterator[GroundTruthStack]:
    """A started stack of ``flavour`` in a new temporary directory, stopped (and the directory removed)
    afterwards; a build or start failure fails the test with the reason."""
    label = "e2e" if flavour == "training-operator" else flavour
    workdir = Path(tempfile.mkdtemp(prefix="kf2jobset-e2e-" if label == "e2e" else f"kf2jobset-e2e-{label}-"))
    s: GroundTruthStack | None = None
    try:
        problem = ""
        try:
            s = start_stack(workdir, flavour=flavour)
        except ToolUnavailable as e:
            problem = f"{label} stack unavailable: {e} (set KF2JOBSET_SKIP_E2E=1 to skip these tests)"
        except Exception as e:  # noqa: BLE001 - a build or start failure is a test failure
            problem = f"{label} stack did not start: {e}\n(KF2JOBSET_KEEP_E2E_DIR=1 keeps the logs in {workdir})"
        if s is None:
            pytest.fail(problem, pytrace=False)
        print(f"\n[{label}] stack up in {s.startup_seconds:.1f} s: {s.timings}")
        yield s
    finally:
        if s is not None:
            s.stop()
        if os.environ.get("KF2JOBSET_KEEP_E2E_DIR"):
            print(f"\nkept {label} directory: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def stack() -> Iterator[GroundTruthStack]:
    with running_stack() as s:
        yield s


@pytest.fixture
def api(stack: GroundTruthStack):
    with stack.api_client() as client:
        yield client


@pytest.fixture
def namespace(api, request: pytest.FixtureRequest) -> Iterator[str]:
    """A new namespace named after the test; deleted afterwards (it stays Terminating: no namespace controller runs)."""
    from ..apiserver_harness import temporary_namespace

    with temporary_namespace(api, request.node.name) as name:
        yield name


@pytest.fixture(scope="session")
def netns_ok() -> None:
    """The node agent runs pods in network namespaces: root only; as root, missing tools fail loudly."""
    import os
    import shutil

    from .nodeagent import netns_available

    if os.geteuid() != 0:
        pytest.skip("not root: the node agent needs network namespaces and bind mounts (root)")
    missing = [t for t in ("ip", "unshare", "mount", "bash", "getent") if shutil.which(t) is None]
    if missing:
        pytest.fail(f"root, but {', '.join(missing)} missing: the node agent cannot run pods", pytrace=False)
    why = netns_available()
    if why:
        pytest.fail(f"running as root but network namespaces cannot be made ({why})", pytrace=False)
