"""The Python API is typed for the code that calls it: py.typed ships, the names are visible to type checkers
(not only through the package's lazy loader), the options are keywords a checker knows, and a user's script
passes `mypy --strict` while a typo or a wrong choice fails it."""
from __future__ import annotations

import ast
import os
import pydoc
import subprocess
import sys
import typing
from dataclasses import fields

import kf2jobset
from kf2jobset import api, choices
from kf2jobset.options import FLAGS

from .conftest import REPO

USER_SCRIPT = '''
from __future__ import annotations

from typing import Any

import kf2jobset
from kf2jobset import ConvertOptions, Converted, live

job: dict[str, Any] = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "t"}, "spec": {}}
result: Converted = kf2jobset.convert_job(job, target="trainjob", jobset_version="v0.8", accept_mpi_ssh=True)
primary: dict[str, Any] = result.primary
for resource, obj in result.resources():
    where: str = f"{resource.group}/{resource.version}/{resource.plural}"
text: str = result.to_yaml()
for note in result.notes:
    said: str = f"{note.code} {note.category} {note.source_path} {note.action}"
try:
    kf2jobset.convert_job(job, placeholders="argo", scheduler="kueue")
except kf2jobset.Kf2JobSetError as err:
    for problem in err.problems:
        rule: str | None = problem.rule
        print(problem.path, problem.hint)
out: str = kf2jobset.convert_yaml("x: 1\\n", ConvertOptions(target="trainjob"), path="x.yaml", scheduler="kueue")


def deploy(api_client: object) -> list[str]:
    found = live.convert("pytorchjob", "mnist", "ml", cluster=api_client, target="trainjob")
    v1_job: dict[str, Any] | None = found.source.obj if found.source else None
    applied: live.Applied = live.apply(found, cluster=api_client, dry_run=True)
    with live.connect(kubeconfig="/tmp/kubeconfig", context="admin") as cluster:
        live.apply(kf2jobset.convert_job(job), cluster=cluster)
    return applied.warnings
'''

MISTAKES = '''
import kf2jobset
kf2jobset.convert_job({}, tagret="trainjob")
kf2jobset.convert_job({}, target="TrainJob")
count: int = kf2jobset.convert_job({}).primary
'''


def _mypy(tmp_path, name: str, text: str) -> subprocess.CompletedProcess:
    script = tmp_path / name
    script.write_text(text)
    # the package as an installed one is checked: its own modules are followed for their types, silently
    env = dict(os.environ, MYPYPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-incremental",
                           "--cache-dir", str(tmp_path / ".mypy"), str(script)],
                          capture_output=True, text=True, env=env, cwd=tmp_path)


def test_a_users_script_passes_mypy_strict(tmp_path):
    run = _mypy(tmp_path, "user.py", USER_SCRIPT)
    assert run.returncode == 0, run.stdout + run.stderr


def test_mypy_sees_the_options_so_mistakes_fail(tmp_path):
    run = _mypy(tmp_path, "mistakes.py", MISTAKES)
    assert run.returncode == 1, run.stdout
    assert 'Unexpected keyword argument "tagret"' in run.stdout
    assert '"target" to "convert_job" has incompatible type "Literal[\'TrainJob\']"' in run.stdout
    assert 'has type "dict[str, Any]", variable has type "int"' in run.stdout


def test_the_keywords_are_the_options_with_the_clis_choices():
    hints = typing.get_type_hints(api.ConvertKeywords, include_extras=False)
    user_fields = {f.name for f in fields(kf2jobset.ConvertOptions)} - {
        "katib_trial_templates", "sibling_configmaps", "selector_peers"}
    assert set(hints) == user_fields == set(FLAGS)
    for field, offered in (("scheduler", choices.SCHEDULERS), ("target", choices.TARGETS),
                           ("mpi_hostfile", choices.MPI_HOSTFILE_MODES), ("trainer_runtime", choices.TRAINER_RUNTIMES)):
        assert typing.get_args(hints[field]) == offered, field
    assert typing.get_args(api.Placeholders) == api.PLACEHOLDERS


def test_help_documents_every_option():
    text = pydoc.render_doc(kf2jobset.convert_job, renderer=pydoc.plaintext)
    for field in FLAGS:
        assert f"\n    {field}: " in text, field
    assert "placeholders:" in text and "Raises" in text


def test_type_checkers_see_every_public_name():
    """The lazy names of kf2jobset/__init__.py are declared for type checkers too: the same set."""
    tree = ast.parse((REPO / "kf2jobset" / "__init__.py").read_text())
    declared = {alias.asname for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
                for stmt in node.body if isinstance(stmt, ast.ImportFrom) for alias in stmt.names}
    assert declared == set(kf2jobset.__all__) - {"__version__", "live"}
    assert all(getattr(kf2jobset, name) is not None for name in kf2jobset.__all__)


def test_py_typed_ships_in_the_package():
    assert (REPO / "kf2jobset" / "py.typed").is_file()
    tracked = subprocess.run(["git", "ls-files", "kf2jobset/py.typed"], capture_output=True, text=True, cwd=REPO).stdout
    assert tracked.strip() == "kf2jobset/py.typed"
