"""Said, not silent: what changes a job, or shows the file is not the job that ran,
gets one stderr line per code per job from `convert`.

(a) a field pruned as unknown (JS070: `resources.request` leaves the job without requests); (b) your env
entry replaced by the operator's value (JS061: `MASTER_PORT: "29500"` ran as 23456); (c) placeholders of a
file that a program fills in (kf2jobset/sources/progtemplate.py: the error or TPL003 names each one and says the file
looks like a template for a program); (d) an image that cannot be an image reference (JS064).
"""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from kf2jobset.cli.main import main
from kf2jobset.k8s.images import is_reference

from .conftest import FIXTURES

TEMPLATE_WORDS = "this file looks like a template for a program"


def convert(text: str, *args: str):
    return CliRunner().invoke(main, ["convert", "-", *args], input=text, catch_exceptions=False)


def lines_with(stderr: str, code: str) -> list[str]:
    return [line for line in stderr.splitlines() if f" {code} " in line]


def job(containers: str, name: str = "said", master: bool = True, extra_meta: str = "") -> str:
    head = f"""apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: {name}
{extra_meta}spec:
  pytorchReplicaSpecs:
"""
    spec = """    {rtype}:
      replicas: 1
      template:
        spec:
          containers:
{containers}"""
    return head + (spec.format(rtype="Master", containers=containers) if master else "") + \
        spec.format(rtype="Worker", containers=containers)


TYPO = """          - name: pytorch
            image: registry.example.com/train:1
            resources:
              request:
                cpu: "4"
              limits:
                memory: 8Gi
"""


def test_a_field_pruned_as_unknown_gets_one_line_per_job():
    result = convert(job(TYPO))
    assert result.exit_code == 0, result.stderr
    said = lines_with(result.stderr, "JS070")
    assert len(said) == 1, result.stderr  # two pruned fields (Master, Worker), one line
    assert "resources.request" in said[0] and "(and 1 more JS070" in said[0]


def test_a_null_kubectl_wrote_is_pruned_without_a_warning():
    """`kubectl create --dry-run=client -o yaml` writes `creationTimestamp: null` into pod templates: the API
    server prunes it and nothing is lost, so the report notes it as unchanged and stderr stays quiet."""
    from .report_helpers import report_for

    text = job(TYPO.replace("              request:\n                cpu: \"4\"\n", "")).replace(
        "      template:\n        spec:", "      template:\n        metadata:\n          creationTimestamp: null\n        spec:")
    assert text.count("creationTimestamp: null") == 2
    result = convert(text)
    assert result.exit_code == 0 and "JS070" not in result.stderr, result.stderr
    (said,) = report_for(text).jobs
    found = [(f.category, f.message) for f in said.findings if f.code == "JS070"]
    assert len(found) == 2 and all(c == "unchanged" and "is null" in m and "nothing is lost" in m for c, m in found), found


ENV = """          - name: pytorch
            image: registry.example.com/train:1
            env:
            # you can override MASTER_PORT
            - name: MASTER_PORT
              value: "29500"
            - name: PYTHONUNBUFFERED
              value: "1"
"""


def test_your_env_entry_replaced_by_the_operators_value_is_said():
    result = convert(job(ENV))
    assert result.exit_code == 0, result.stderr
    said = lines_with(result.stderr, "JS061")
    assert len(said) == 1, result.stderr
    assert "MASTER_PORT" in said[0] and "'29500'" in said[0] and "23456" in said[0]
    assert "PYTHONUNBUFFERED" not in result.stderr  # the same value: nothing changed, nothing printed


def test_ten_jobs_with_the_same_code_print_one_line():
    text = "---\n".join(job(ENV, name=f"said-{i}") for i in range(3))
    result = convert(text)
    said = lines_with(result.stderr, "JS061")
    assert len(said) == 1 and "JS061 in 3 jobs" in said[0], result.stderr


@pytest.mark.parametrize("text,placeholder", [
    (job(TYPO.replace("registry.example.com/train:1", "x:1")).replace("replicas: 1", "replicas: template-num-nodes", 1),
     "'template-num-nodes'"),
    (job(TYPO, extra_meta="  namespace: <namespace>\n"), "'<namespace>'"),
    (job(TYPO).replace("name: said", "name: ..."), "'...' at metadata.name"),
    (job(TYPO.replace("image: registry.example.com/train:1", "image: #<image>")), "#<image>"),
])
def test_a_placeholder_where_kf2jobset_needs_the_value_is_named_in_the_error(text, placeholder):
    result = convert(text)
    assert result.exit_code == 3, result.stderr
    errors = [line for line in result.stderr.splitlines() if placeholder in line]
    assert errors and TEMPLATE_WORDS in errors[0], result.stderr
    assert "inherited" not in errors[0]  # the program's value reached the API server, not the placeholder


def test_a_template_that_converts_says_so_once():
    result = CliRunner().invoke(main, ["convert", str(FIXTURES / "pytorchjob" / "program-template" / "input.yaml")],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    said = lines_with(result.stderr, "TPL003")
    assert len(said) == 1 and TEMPLATE_WORDS in said[0]
    for text in ("metadata.name: no value but the comment #<name>", "'<ACCOUNT>'", "'...'"):
        assert text in said[0], text


def test_a_plain_mistake_is_not_called_a_placeholder():
    result = convert(job(TYPO).replace("replicas: 1", "replicas: two", 1))
    assert result.exit_code == 3 and TEMPLATE_WORDS not in result.stderr


def test_an_image_that_cannot_be_a_reference_is_a_warning():
    result = convert(job(TYPO.replace("registry.example.com/train:1", "registry.example.com//train:1")))
    assert result.exit_code == 0, result.stderr
    said = lines_with(result.stderr, "JS064")
    assert len(said) == 1 and "registry.example.com//train:1" in said[0] and "InvalidImageName" in said[0]
    assert TEMPLATE_WORDS not in said[0]


@pytest.mark.parametrize("image", ["busybox", "python:3.11-slim", "docker.io/library/ubuntu:22.04",
                                   "localhost:5000/team/train:v1", "nvcr.io/nvidia/pytorch:24.01-py3",
                                   "My.Registry.io/team/x", "gcr.io/p/x@sha256:" + "0" * 64, "[::1]:5000/x:y"])
def test_valid_references(image):
    assert is_reference(image)


@pytest.mark.parametrize("image", ["registry//name", "<ACCOUNT>.dkr.ecr.us-west-2.amazonaws.com/x:1", "Team/X",
                                   "x:tag:tag", "x:", "x@sha256:abc", "a b"])
def test_invalid_references(image):
    assert not is_reference(image)


PLAIN = """          - name: pytorch
            image: registry.example.com/train:1
            command: ["torchrun", "train.py"]
"""


def jax_job(name: str) -> str:
    return f"""apiVersion: kubeflow.org/v1
kind: JAXJob
metadata:
  name: {name}
spec:
  jaxReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: jax
            image: registry.example.com/jax:0.4
            command: ["python", "train.py"]
"""


def test_jobs_on_two_runtimes_get_a_line_per_runtime_not_one_runtime_for_all():
    # Grouped warnings must not state one job's runtime for all: each runtime gets its own TJ012 line.
    text = "---\n".join([job(PLAIN, name=f"resnet-{i}") for i in range(3)] + [jax_job(f"spmd-{i}") for i in range(2)])
    result = convert(text, "--target", "trainjob")
    assert result.exit_code == 0, result.stderr
    said = lines_with(result.stderr, "TJ012")
    assert len(said) == 2, result.stderr
    torch, jax = said
    assert "TJ012 in 3 jobs (resnet-0, resnet-1, resnet-2;" in torch and "jax" not in torch
    assert torch.count("'torch-distributed'") == 1 and "kubectl get clustertrainingruntime torch-distributed" in torch
    assert "TJ012 in 2 jobs (spmd-0, spmd-1;" in jax and "torch" not in jax
    assert "kubectl get clustertrainingruntime jax-distributed" in jax


def test_one_job_with_a_text_of_its_own_gets_its_own_line():
    text = "---\n".join([job(PLAIN, name=f"resnet-{i}") for i in range(2)] + [jax_job("spmd")])
    said = lines_with(convert(text, "--target", "trainjob").stderr, "TJ012")
    assert len(said) == 2 and "TJ012 in 2 jobs (resnet-0, resnet-1;" in said[0], said
    assert "<stdin>: spmd: TJ012" in said[1] and "'jax-distributed'" in said[1], said


def test_a_code_with_more_texts_than_lines_names_the_rest_and_states_no_text_for_them():
    from kf2jobset.notes import TEXTS_PER_CODE, Note, warning_lines

    texts = TEXTS_PER_CODE + 3
    items = [("f.yaml", f"job-{i}-{copy}", Note("JS061", "rewritten", f"MASTER_PORT '{i}' ran as 23456", warn=True))
             for i in range(texts) for copy in range(2 if i == 0 else 1)]
    lines = warning_lines(items)
    assert len(lines) == TEXTS_PER_CODE + 1, lines
    assert lines[0].startswith("warning: JS061 in 2 jobs (job-0-0, job-0-1;") and "'0'" in lines[0]
    shown = [i for i in range(texts) if any(f"'{i}'" in line for line in lines)]
    assert shown == list(range(TEXTS_PER_CODE)), lines
    assert lines[-1] == ("warning: JS061 in 3 more jobs, each with a text of its own "
                         f"(job-{TEXTS_PER_CODE}-0, job-{TEXTS_PER_CODE + 1}-0, job-{TEXTS_PER_CODE + 2}-0): "
                         "each on its own: --verbose")
    assert len(warning_lines(items, verbose=True)) == texts + 1
