"""envsubst templates (kf2jobset/sources/envsubst.py): v1 jobs kept with `${VAR}` / `$VAR` placeholders.

The fixtures are fixtures/envsubst/<case>/ (goldens checked by test_golden / test_report_golden);
each case's `env` file holds the values substituted here. Tests marked `needs_envsubst` run the real
GNU envsubst (apt package gettext-base) and skip, with that reason, when it is not installed.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
import yaml
from click.testing import CliRunner

from kf2jobset.sources import envsubst
from kf2jobset import exitcodes
from kf2jobset.cli.main import main
from kf2jobset.errors import InvalidJobError
from kf2jobset.k8s.podrules import check_configmap
from kf2jobset.k8s.validate import check_jobset
from kf2jobset.text.yamlio import parse_documents, to_plain

from .conftest import FIXTURES
from .templates import case_values

CASES = FIXTURES / "envsubst"
CONVERTED = sorted(c for c in CASES.iterdir() if (c / "expected.yaml").exists())
ENVSUBST = shutil.which("envsubst")
needs_envsubst = pytest.mark.skipif(ENVSUBST is None, reason="GNU envsubst not found (apt-get install gettext-base)")


def values(case) -> dict[str, str]:
    return case_values(case)


def shell_format(vals: dict) -> str:
    return " ".join("${" + k + "}" for k in vals)


def run_envsubst(text: str, vals: dict, named: bool = True) -> str:
    """The real binary, in the user's environment plus the values; `named`: only the case's variables."""
    args = [ENVSUBST, shell_format(vals)] if named else [ENVSUBST]
    done = subprocess.run(args, input=text, capture_output=True, text=True, env={**os.environ, **vals}, check=True)
    return done.stdout


def case_args(case) -> list[str]:
    if not (case / "args").exists():
        return []
    return [a for a in (case / "args").read_text().splitlines() if a.strip() and not a.startswith("#")]


def convert(text: str, args=()):
    return CliRunner().invoke(main, ["convert", "-", *args], input=text, catch_exceptions=False)


def jobset_problems(stream: str) -> list:
    problems = []
    for doc in parse_documents(stream):
        data = to_plain(doc.data)
        if isinstance(data, dict) and data.get("kind") == "JobSet":
            problems += check_jobset(data)
        elif isinstance(data, dict) and data.get("kind") == "ConfigMap":
            problems += check_configmap(data)
    return problems


# ---- what a placeholder is ---------------------------------------------------------------------------

def test_placeholder_forms():
    def spellings(text):
        return [m.group(0) for m in envsubst.PLACEHOLDER_RE.finditer(text)]

    assert spellings("${REGISTRY}/train:${TAG}") == ["${REGISTRY}", "${TAG}"]
    assert spellings("$NAMESPACE") == ["$NAMESPACE"]
    assert spellings("${N:-2}") == ["${N:-2}"] and not envsubst.gnu_substitutes("${N:-2}")
    # Kubernetes' expansion (kf2jobset writes it), Katib's trial parameters, positional parameters
    assert spellings("$(MASTER_ADDR):$(MASTER_PORT) ${trialParameters.lr} $1 $$") == []


@needs_envsubst
def test_placeholder_rules_match_gnu_envsubst():
    line = "a ${A} $A ${A:-x} $(A) $$A ${A.b} ${A $1 ${B}b $B_C ${_u9} $9 end"
    vals = {"A": "va", "B": "vb", "B_C": "vbc", "_u9": "vu"}
    expected = envsubst.PLACEHOLDER_RE.sub(
        lambda m: vals.get(envsubst.variable(m.group(0)), "") if envsubst.gnu_substitutes(m.group(0)) else m.group(0), line)
    assert run_envsubst(line, vals, named=False) == expected


# ---- templates that convert ------------------------------------------------------------------------

@needs_envsubst
@pytest.mark.parametrize("case", CONVERTED, ids=lambda c: c.name)
def test_substituted_output_equals_converting_the_substituted_input(case):
    vals = values(case)
    result = convert((case / "input.yaml").read_text(), case_args(case))
    assert result.exit_code == 0, result.stderr
    assert "TPL001" in result.stderr and all(k in result.stderr for k in vals)
    assert result.stdout == (case / "expected.yaml").read_text()
    filled = run_envsubst(result.stdout, vals)
    assert not [k for k in vals if "${" + k + "}" in filled or re.search(rf"\${k}\b", filled)]
    assert jobset_problems(filled) == []  # kf2jobset's own validator, on the JobSet as it will be applied
    direct = convert(run_envsubst((case / "input.yaml").read_text(), vals), case_args(case))
    assert direct.exit_code == 0, direct.stderr
    assert "TPL001" not in direct.stderr
    assert filled == direct.stdout


def test_output_keeps_placeholders_and_commands_as_written():
    case = CASES / "string-fields"
    source = (case / "input.yaml").read_text()
    out = convert(source).stdout
    for spelling in ("team: ${TEAM}", "image: ${REGISTRY}/llama-sft:${TAG}", "path: ${DATA_ROOT}", "run: ${RUN_ID}",
                     'command: ["sh", "-c", "cd $HOME && torchrun sft.py --out ${DATA_ROOT}/runs"]',
                     "value: tcp://$(MASTER_ADDR):$(MASTER_PORT)"):
        assert out.count(spelling) == source.count(spelling), spelling
    assert "$(KF2JOBSET_JOBSET_NAME)-master-0-0.$(KF2JOBSET_JOBSET_NAME)" in out


@needs_envsubst
def test_kubernetes_expansions_survive_plain_envsubst():
    """`$(VAR)` (kf2jobset's addresses, the user's own references) is not an envsubst placeholder:
    even plain envsubst, which replaces every `$VAR` it sees, leaves it."""
    case = CASES / "string-fields"
    out = convert((case / "input.yaml").read_text()).stdout
    refs = re.findall(r"\$\([A-Za-z0-9_]+\)", out)
    assert "$(KF2JOBSET_JOBSET_NAME)" in refs and "$(MASTER_ADDR)" in refs
    filled = run_envsubst(out, values(case), named=False)
    assert re.findall(r"\$\([A-Za-z0-9_]+\)", filled) == refs


@needs_envsubst
def test_plain_envsubst_would_blank_kf2jobset_scripts_and_the_note_says_so():
    case = CASES / "mpi-generated-hostfile"
    result = convert((case / "input.yaml").read_text(), case_args(case))
    note = next(line for line in result.stderr.splitlines() if "TPL001" in line)
    assert "$KF2JOBSET_POD_COUNT" in note and "envsubst '${REGISTRY} ${TAG}'" in note
    vals = values(case)
    plain = run_envsubst(result.stdout, vals, named=False)
    named = run_envsubst(result.stdout, vals)
    assert '"$KF2JOBSET_POD_COUNT"' in named and '"$host"' in named
    assert '"$KF2JOBSET_POD_COUNT"' not in plain  # blanked: what the note warns about


def test_shell_variables_in_commands_alone_do_not_make_a_template():
    job = (FIXTURES / "pytorchjob" / "master-workers" / "input.yaml").read_text().replace(
        'command: ["torchrun", "train.py"]', 'command: ["sh", "-c", "cd $HOME && torchrun train.py --rank ${RANK}"]')
    result = convert(job)
    assert result.exit_code == 0 and "TPL00" not in result.stderr
    assert result.stdout.count("cd $HOME && torchrun train.py --rank ${RANK}") == 2


# ---- name and namespace -----------------------------------------------------------------------------

def test_name_limit_in_the_note_is_the_real_limit():
    case = CASES / "name-namespace"
    source = (case / "input.yaml").read_text()
    result = convert(source)
    limit = int(re.search(r"of at most (\d+) characters", result.stderr).group(1))
    fixed = len("-ddp")

    def with_name(n):
        return source.replace("${EXPERIMENT}", "e" * (n - fixed)).replace("${NAMESPACE}", "vision")

    fits = convert(with_name(limit))
    assert fits.exit_code == 0, fits.stderr
    too_long = convert(with_name(limit + 1))
    assert too_long.exit_code == exitcodes.UNSUPPORTED and "metadata.name" in too_long.stderr


@pytest.mark.parametrize("name, code, needle", [
    ("Vit-${EXPERIMENT}", exitcodes.INPUT, "is not a DNS-1035 label whatever the values"),
    ("${EXPERIMENT}-", exitcodes.INPUT, "is not a DNS-1035 label whatever the values"),
    ("${EXPERIMENT}-" + "d" * 50, exitcodes.INPUT, "its text without the envsubst placeholders is already 51"),
    ("${EXPERIMENT}-" + "d" * 40, 0, "so EXPERIMENT may add at most 5"),  # checked at the limit, not at a stand-in's length
])
def test_templated_names_checked_as_far_as_they_can_be(name, code, needle):
    source = (CASES / "name-namespace" / "input.yaml").read_text().replace("${EXPERIMENT}-ddp", name)
    result = convert(source)
    assert result.exit_code == code, result.stderr
    assert needle in result.stderr


# ---- placeholders where kf2jobset needs the value ----------------------------------------------------

def test_placeholders_that_need_values_are_one_clear_error():
    case = CASES / "replicas-placeholder"
    result = convert((case / "input.yaml").read_text())
    assert result.exit_code == exitcodes.INPUT and result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1  # the GPU quantity is only copied: not asked for
    assert lines[0].startswith(
        "kf2jobset: <stdin>:17:7: document 1: spec.tfReplicaSpecs.Worker.replicas: envsubst placeholder ${WORKER_REPLICAS}")
    assert "TF_CONFIG" in lines[0] and "${GPUS}" not in result.stderr
    assert all("envsubst | kf2jobset convert -" in line and "[envsubst]" in line for line in lines)
    assert "expected integer" not in result.stderr


def test_the_error_names_the_file_in_the_pipe(tmp_path):
    job = tmp_path / "train.yaml-template"
    job.write_text((CASES / "replicas-placeholder" / "input.yaml").read_text())
    result = CliRunner().invoke(main, ["convert", str(job)], catch_exceptions=False)
    assert result.exit_code == exitcodes.INPUT
    assert f"WORKER_REPLICAS=... envsubst < {job} | kf2jobset convert -" in result.stderr


@needs_envsubst
def test_substituting_first_converts():
    case = CASES / "replicas-placeholder"
    result = convert(run_envsubst((case / "input.yaml").read_text(), values(case)))
    assert result.exit_code == 0, result.stderr
    assert jobset_problems(result.stdout) == []


@pytest.mark.parametrize("field, value, why", [
    ("- name: pytorch\n", "- name: ${CONTAINER}\n", "container name"),
    ("  namespace: research\n", "  generateName: ${PREFIX}-\n  namespace: research\n", "name prefix"),
    ('value: "90"', "value: '90'\n                - name: ${KEY}\n                  value: x", "env names"),
])
def test_fields_kf2jobset_reads(field, value, why):
    job = (FIXTURES / "pytorchjob" / "master-workers" / "input.yaml").read_text()
    job = job.replace("    Worker:\n      replicas: 3", "    Worker:\n      replicas: 2")
    assert field in job
    result = convert(job.replace(field, value, 1))
    assert result.exit_code == exitcodes.INPUT, result.stdout
    assert "envsubst placeholder" in result.stderr and why in result.stderr


def test_defaults_form_is_named_as_not_gnu():
    job = (FIXTURES / "pytorchjob" / "master-workers" / "input.yaml").read_text().replace("- name: pytorch", "- name: ${C:-pytorch}")
    result = convert(job)
    assert result.exit_code == exitcodes.INPUT
    assert "GNU envsubst leaves ${C:-pytorch} as is" in result.stderr
    # a count converts (the JobSet carries it), and the warning says GNU envsubst would not fill it
    job = (FIXTURES / "pytorchjob" / "master-workers" / "input.yaml").read_text().replace("replicas: 3", "replicas: ${WORKERS:-3}")
    result = convert(job)
    assert result.exit_code == 0, result.stderr
    assert "replicas: ${WORKERS:-3}" in result.stdout and "GNU envsubst leaves these as is" in result.stderr


def test_a_conversion_that_reads_a_value_is_refused():
    """The safety net: two stand-in token sets must give the same template (fake conversion that
    reads the image's text into another field)."""
    class Fake:
        def __init__(self, doc):
            image = doc["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["image"]
            self.jobset = {"metadata": {}, "spec": {"image": image, "size": str(sum(map(ord, image)))}}
            self.companions, self.job, self.plan, self.notes = [], None, None, []

        @property
        def objects(self):
            return [self.jobset, *self.companions]

    container = {"name": "tensorflow", "image": "${IMAGE}"}
    doc = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "x"},
           "spec": {"tfReplicaSpecs": {"Worker": {"template": {"spec": {"containers": [container]}}}}}}
    # an image is a string kf2jobset carries: only the comparison can tell that this conversion reads it
    found = envsubst.find(doc)
    assert [p.path[-1] for p in found] == ["image"] and envsubst.needs_value(found[0]) is None
    with pytest.raises(InvalidJobError, match="depends on the value of envsubst placeholder"):
        envsubst.convert_template(doc, found, Fake, check_name=lambda js, n: True)


# ---- repo mode ----------------------------------------------------------------------------------------

def test_repo_mode_counts_templates_that_need_values(tmp_path, monkeypatch):
    k8s = tmp_path / "k8s"
    k8s.mkdir()
    (k8s / "sft.yaml").write_text((CASES / "string-fields" / "input.yaml").read_text())
    (k8s / "scaled.yaml").write_text((CASES / "replicas-placeholder" / "input.yaml").read_text())
    (k8s / "sft.yaml-template").write_text((CASES / "string-fields" / "input.yaml").read_text())  # walked: a template name
    monkeypatch.chdir(tmp_path)
    check = CliRunner().invoke(main, ["convert", ".", "--check"], catch_exceptions=False)
    assert check.exit_code == exitcodes.FINDINGS
    # one line per job, with why it is left
    assert "k8s/scaled.yaml:17:7: TFJob wide-deep (kubeflow.org/v1): template: envsubst placeholder ${WORKER_REPLICAS}" in check.stdout
    assert "k8s/sft.yaml:4: PyTorchJob llama-sft (kubeflow.org/v1): to convert" in check.stdout
    assert ("k8s/sft.yaml-template:4: PyTorchJob llama-sft (kubeflow.org/v1): to convert: a template, its placeholders are kept"
            in check.stdout)
    assert len(check.stdout.splitlines()) == 3
    assert "3 files scanned, 2 to convert, 1 skipped (1 envsubst template), 0 failed; 3 left: 2 to convert, 1 template" in check.stderr
    assert "hint: envsubst templates whose placeholders sit where kf2jobset needs the values" in check.stderr

    before = (k8s / "scaled.yaml").read_text()
    done = CliRunner().invoke(main, ["convert", ".", "--in-place"], catch_exceptions=False)
    assert done.exit_code == exitcodes.OK, done.stderr
    assert done.stdout == "Rewriting k8s/sft.yaml\nRewriting k8s/sft.yaml-template\n"
    assert (k8s / "scaled.yaml").read_text() == before
    assert "skipped (envsubst template): k8s/scaled.yaml:17:7" in done.stderr
    assert "TPL001" in done.stderr
    rewritten = (k8s / "sft.yaml").read_text()
    assert "team: ${TEAM}" in rewritten and "kind: JobSet" in rewritten
    # the template is converted in place like any file, its placeholders carried through
    assert (k8s / "sft.yaml-template").read_text() == rewritten
    again = CliRunner().invoke(main, ["convert", ".", "--check"], catch_exceptions=False)
    assert again.exit_code == exitcodes.FINDINGS  # the template that needs values is still there, and says so
    assert again.stdout.splitlines() == [line for line in check.stdout.splitlines() if "scaled.yaml" in line]
    assert again.stderr.endswith("; 1 left: 1 template\n")


def test_placeholders_in_quantities_and_a_dropped_gang_size_are_carried():
    # the GPU quantity is only copied (the API server checks it filled in); minAvailable is left out
    # with schedulingPolicy when no --scheduler is named (JS040)
    source = """apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: finetune
spec:
  runPolicy:
    schedulingPolicy:
      minAvailable: ${MIN_AVAILABLE}
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            image: registry.example.com/finetune:2.1
            resources:
              requests: {cpu: "${CPUS}", nvidia.com/gpu: "${GPUS}"}
              limits: {cpu: "${CPU_LIMIT}", nvidia.com/gpu: "${GPUS}"}
"""
    result = convert(source)
    assert result.exit_code == 0, result.stderr
    container = yaml.safe_load(result.stdout)["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"] == {"requests": {"cpu": "${CPUS}", "nvidia.com/gpu": "${GPUS}"},
                                      "limits": {"cpu": "${CPU_LIMIT}", "nvidia.com/gpu": "${GPUS}"}}
    assert "MIN_AVAILABLE" not in result.stdout and "JS040" in result.stderr
    assert "TPL001" in result.stderr and "${CPUS} ${GPUS} ${CPU_LIMIT}" in result.stderr
