"""Numbers a chart's values hold, read by the conversion: carried as template expressions or refused, never
converted into another contract (kf2jobset/sources/chart/numeric.py, chart/sizes.py).

A string stand-in is never numeric text, and a number stand-in is a prime no count is multiplied by, so a
conversion that reads a value as a number (PyTorchJob's `nprocPerNode: "2"` makes WORLD_SIZE pods x 2;
`--scheduler volcano` sums GPUs per pod over the pods) would take one branch for every values set. Each such
chart must be refused at the source with the action, its field and the post-renderer named; the
post-renderer (real Helm, then `kf2jobset convert -`) shows the contract the values change.
"""
from __future__ import annotations

import subprocess

import pytest
import yaml
from click.testing import CliRunner

from kf2jobset.cli.main import main

from .ground_truth_tools import helm_binary, helm_env


def _chart(root, template: str, values: str):
    """A chart of one template file (templates/job.yaml)."""
    files = {"Chart.yaml": "apiVersion: v2\nname: numbers\nversion: 0.1.0\n", "values.yaml": values,
             "templates/job.yaml": template}
    for name, text in files.items():
        (root / "chart" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "chart" / name).write_text(text)
    return root / "chart"


def _snapshot(chart) -> dict:
    return {str(p.relative_to(chart)): p.read_bytes() for p in sorted(chart.rglob("*")) if p.is_file()}


def _pytorchjob(nproc: str, gpus: str = "1", args: str = '["--lr", "0.1"]') -> str:
    def replica(name: str, replicas: str) -> str:
        return (f"    {name}:\n      replicas: {replicas}\n      restartPolicy: OnFailure\n      template:\n        spec:\n"
                f"          containers:\n            - name: pytorch\n              image: example.io/ddp:2.3\n"
                f"              args: {args}\n              resources:\n                limits:\n"
                f"                  nvidia.com/gpu: {gpus}\n")

    return ("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata:\n  name: {{ .Release.Name }}-ddp\nspec:\n"
            f"  nprocPerNode: {nproc}\n  pytorchReplicaSpecs:\n" + replica("Master", "1")
            + replica("Worker", "{{ .Values.workers }}"))


VALUES = "workers: 3\nnprocPerNode: 2\ngpus: 1\nlr: '0.01'\n"
IN_A_RANGE = ("{{- range .Values.runs }}\n---\n"
              + _pytorchjob("{{ $.Values.nprocPerNode | quote }}").replace("{{ .Release.Name }}-ddp",
                                                                          "{{ $.Release.Name }}-{{ .name }}")
              .replace("{{ .Values.workers }}", "{{ $.Values.workers }}") + "{{- end }}\n")


def _convert(chart, *args):
    return CliRunner().invoke(main, ["convert", str(chart), "--in-place", *args], catch_exceptions=False)


@pytest.mark.parametrize("template, line, action, args", [
    (_pytorchjob("{{ .Values.nprocPerNode | quote }}"), 6, "{{ .Values.nprocPerNode | quote }}", ()),
    (_pytorchjob('"{{ .Values.nprocPerNode }}"'), 6, "{{ .Values.nprocPerNode }}", ()),
    (_pytorchjob("{{ .Values.nprocPerNode | quote }}"), 6, "{{ .Values.nprocPerNode | quote }}",
     ("--target", "trainjob")),
    (IN_A_RANGE, 8, "{{ $.Values.nprocPerNode | quote }}", ()),
], ids=["quote", "quoted-in-the-template", "trainjob", "inside-a-range"])
def test_a_string_the_conversion_reads_as_a_number_is_refused_with_its_field(tmp_path, template, line, action, args):
    chart = _chart(tmp_path, template, VALUES + "runs:\n  - name: a\n")
    before = _snapshot(chart)
    result = _convert(chart, *args)
    assert result.exit_code == 4, result.output
    (message,) = [ln for ln in result.stderr.splitlines() if "cannot be converted at the source" in ln]
    assert f"templates/job.yaml:{line}: " in message, message
    assert f"{action} writes spec.nprocPerNode, a string kf2jobset reads as a number when it is one" in message
    assert "nprocPerNode" in message.split("writes other lines:")[1] and "--post-renderer kf2jobset" in message
    assert _snapshot(chart) == before


def test_a_quoted_string_the_conversion_only_carries_converts(tmp_path):
    """The digits probe finds no difference where the value is only carried (args, a literal nprocPerNode)."""
    chart = _chart(tmp_path, _pytorchjob('"2"', args='["--lr", {{ .Values.lr | quote }}]'), VALUES)
    result = _convert(chart)
    assert result.exit_code == 0, result.output
    written = (chart / "templates" / "job.yaml").read_text()
    assert "kind: JobSet" in written and '{{ .Values.lr | quote }}' in written


def test_gpus_the_scheduler_sums_over_the_pods_are_refused_and_convert_without_it(tmp_path):
    template = _pytorchjob('"1"', gpus="{{ .Values.gpus }}")
    chart = _chart(tmp_path / "a", template, VALUES)
    result = _convert(chart, "--scheduler", "volcano")
    assert result.exit_code == 4, result.output
    (message,) = [ln for ln in result.stderr.splitlines() if "cannot be converted at the source" in ln]
    assert "templates/job.yaml:19: " in message and "{{ .Values.gpus }} is multiplied by a replica count" in message
    plain = _chart(tmp_path / "b", template, VALUES)
    assert _convert(plain).exit_code == 0


def _post(chart, env, *sets, args=()) -> list:
    helm = helm_binary("helm3")
    cmd = [helm, "template", "r", str(chart)] + [a for s in sets for a in ("--set-string" if "nproc" in s else "--set", s)]
    rendered = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert rendered.returncode == 0, rendered.stderr
    post = CliRunner().invoke(main, ["convert", *args, "-"], input=rendered.stdout, catch_exceptions=False)
    assert post.exit_code == 0, post.output
    return [d for d in yaml.safe_load_all(post.stdout) if d]


def _env(doc: dict, name: str) -> dict:
    pod = doc["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]
    return next(e for e in pod["containers"][0]["env"] if e["name"] == name)


def test_the_post_renderer_shows_the_contracts_the_values_choose(tmp_path):
    """Why the refusals above: with real Helm, the values change the shape of what kf2jobset writes, not
    just a value it carries (training-operator v1.9 pytorch/envvar.go: WORLD_SIZE = pods x nprocPerNode)."""
    env = helm_env(tmp_path)
    chart = _chart(tmp_path / "n", _pytorchjob("{{ .Values.nprocPerNode | quote }}"), VALUES)
    (auto,) = _post(chart, env, "nprocPerNode=auto")
    (two,) = _post(chart, env, "nprocPerNode=2", "workers=5")
    assert "valueFrom" in _env(auto, "WORLD_SIZE") and _env(two, "WORLD_SIZE")["value"] == str(6 * 2)
    gpus = _chart(tmp_path / "g", _pytorchjob('"1"', gpus="{{ .Values.gpus }}"), VALUES)
    for workers, per_pod in ((3, 1), (5, 4)):
        docs = _post(gpus, env, f"workers={workers}", f"gpus={per_pod}", args=("--scheduler", "volcano"))
        (group,) = [d for d in docs if d["kind"] == "PodGroup"]
        assert str(group["spec"]["minResources"]["nvidia.com/gpu"]) == str((1 + workers) * per_pod)
