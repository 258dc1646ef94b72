"""The Python API (kf2jobset/api/__init__.py) is public: it gives what the CLI gives, and docs/api.md runs."""
from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import kf2jobset
from kf2jobset.cli.main import main as cli_main  # imported first on purpose: it loads kf2jobset.core.convert (a module)

from .python_blocks import python_blocks, run_block

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "pytorchjob" / "master-workers"


def _job() -> dict:
    return yaml.safe_load((FIXTURE / "input.yaml").read_text())


def _cli_objects(args: list[str]) -> list[dict]:
    out = subprocess.run([sys.executable, "-m", "kf2jobset", "convert", *args, str(FIXTURE / "input.yaml")],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def test_the_api_names_survive_importing_the_cli():
    # kf2jobset.core.convert is a module: the API's names must not be shadowed once it is imported
    assert cli_main is not None
    assert callable(kf2jobset.convert_job) and callable(kf2jobset.convert_yaml)
    assert set(kf2jobset.__all__) >= {"convert_job", "convert_yaml", "Converted", "ConvertOptions", "InvalidJobError"}
    modules = {p.stem for p in (ROOT / "kf2jobset").iterdir()}
    assert not modules & set(kf2jobset.__all__), "an exported name is also a module of the package"


@pytest.mark.parametrize("args,kw", [([], {}), (["--target", "trainjob"], {"target": "trainjob"}),
                                     (["--jobset-version", "v0.8"], {"jobset_version": "v0.8"})])
def test_convert_job_gives_the_objects_the_cli_writes(args, kw):
    job = _job()
    before = copy.deepcopy(job)
    result = kf2jobset.convert_job(job, **kw)
    assert job == before, "the caller's dict was modified"
    assert result.objects == _cli_objects(args)
    assert result.notes and all(re.fullmatch(r"[A-Z]+\d{3}", n.code) for n in result.notes)


def test_printed_notes_are_the_ones_the_cli_prints():
    job = _job()
    container = job["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]
    container.setdefault("env", []).append({"name": "MASTER_PORT", "value": "29500"})  # replaced by v1: JS061
    printed = [n.code for n in kf2jobset.convert_job(job).printed]
    assert "JS061" in printed


def test_convert_yaml_is_the_file_the_cli_writes():
    text = (FIXTURE / "input.yaml").read_text()
    out = subprocess.run([sys.executable, "-m", "kf2jobset", "convert", str(FIXTURE / "input.yaml")],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert kf2jobset.convert_yaml(text) == out
    other = "# kept\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
    assert kf2jobset.convert_yaml(other) == other


def test_errors_are_raised_with_their_path():
    job = _job()
    del job["spec"]["pytorchReplicaSpecs"]
    with pytest.raises(kf2jobset.InvalidJobError) as err:
        kf2jobset.convert_job(job)
    assert "spec" in str(err.value.problems[0])
    with pytest.raises(kf2jobset.InvalidJobError, match="not a Kubeflow v1 job"):
        kf2jobset.convert_job({"apiVersion": "v1", "kind": "Pod"})
    with pytest.raises(kf2jobset.InputError):
        kf2jobset.convert_yaml("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nspec: [\n", path="job.yaml")


def test_options_are_checked():
    with pytest.raises(TypeError, match="tagret"):
        kf2jobset.convert_job(_job(), tagret="trainjob")
    with pytest.raises(kf2jobset.UsageError):
        kf2jobset.convert_job(_job(), scheduler="slurm")
    two = (FIXTURE / "input.yaml").read_text() + "---\n" + (FIXTURE / "input.yaml").read_text().replace("name: ", "name: b", 1)
    for how in ({"name": "one"}, {"opts": kf2jobset.ConvertOptions(name="one")}):
        with pytest.raises(kf2jobset.UsageError, match="single job"):
            kf2jobset.convert_yaml(two, **how)
    opts = kf2jobset.ConvertOptions(target="trainjob")
    assert kf2jobset.convert_job(_job(), opts).objects[0]["kind"] == "TrainJob"


def test_the_documented_examples_run(capsys):
    page = ROOT / "docs" / "api.md"
    blocks = python_blocks(page)
    here = [(line, code) for line, marker, code in blocks if marker is None]
    assert len(here) >= 5 and len(blocks) - len(here) >= 3  # the cluster recipes run in tests/live
    for line, code in here:
        run_block(page, line, code, {})
    out = capsys.readouterr().out
    for said in ("['master', 'worker']", "spec.tfReplicaSpecs", "2:4\n", "trainer_runtime='per-job'",
                 "['TrainingRuntime', 'TrainJob']", "snake-case-keys - pass the model itself", "accept_mpi_ssh=True",
                 "{{workflow.name}}-mnist\n", "['TPL002']"):
        assert said in out, said


def test_the_readme_example_runs():
    readme = (ROOT / "README.md").read_text()
    (block,) = re.findall(r"```python\n(.*?)```", readme, re.S)
    scope = {"job_dict": _job()}
    exec(compile(block, str(ROOT / "README.md"), "exec"), scope)
    assert scope["jobset"]["kind"] == "JobSet" and isinstance(scope["printed"], list)
