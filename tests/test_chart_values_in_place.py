"""Charts as their authors write them, converted at the source (kf2jobset/chart/): what no job renders stays
as it was, values that decide nothing the conversion reads are carried, and what they do decide is refused
with the action, its field and the post-renderer, never as "inherited" from a v1 API server that never saw
kf2jobset's stand-ins. The charts under fixtures/helm/source/ hold the same patterns to real Helm
(tests/test_helm_source.py); these say what each refusal and pass-through says.
"""
from __future__ import annotations

from click.testing import CliRunner

from kf2jobset.cli.main import main


def _chart(root, files: dict):
    chart = root / "chart"
    files = {"Chart.yaml": "apiVersion: v2\nname: values-in-place\nversion: 0.1.0\n", "values.yaml": "", **files}
    for name, text in files.items():
        (chart / name).parent.mkdir(parents=True, exist_ok=True)
        (chart / name).write_text(text)
    return chart


def _snapshot(chart) -> dict:
    return {str(p.relative_to(chart)): p.read_bytes() for p in sorted(chart.rglob("*")) if p.is_file()}


def _convert(chart, *args):
    return CliRunner().invoke(main, ["convert", str(chart), "--in-place", *args], catch_exceptions=False)


def _refusal(result) -> str:
    assert result.exit_code == 4, result.output
    (message,) = [ln for ln in result.stderr.splitlines() if "cannot be converted at the source" in ln]
    assert "--post-renderer kf2jobset" in message and "inherited" not in message, message
    return message


JOB = """apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: {{ .Release.Name }}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: {{ .Values.workers }}
      restartPolicy: OnFailure
      template:
        spec:
          containers:
            - name: pytorch
              image: {{ .Values.image }}
              resources:
RESOURCES"""


def _job(resources: str) -> str:
    return JOB.replace("RESOURCES", "\n".join("                " + ln for ln in resources.strip("\n").split("\n")) + "\n")


def _mpijob_v1alpha1(replicas: str, limit: str) -> str:
    """mpi-operator's first MPIJob: one template for the launcher and the workers, a worker count."""
    return ("apiVersion: kubeflow.org/v1alpha1\nkind: MPIJob\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n"
            f"  replicas: {replicas}\n  template:\n    spec:\n      containers:\n        - name: mpi\n          image: img\n"
            f"          resources:\n            limits:\n              {limit}\n")


SERVICE = """{{- if .Values.tensorboard }}
apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-tensorboard
  labels:
    createdBy: "PyTorchJob"
    group-name: kubeflow.org
    role: {{ .Values.role | default "tensorboard" }}
spec:
  ports:
    - port: 6006
  selector:
    release: {{ .Release.Name }}
{{- end }}
"""


def test_objects_whose_labels_name_a_job_kind_pass_through_and_the_job_beside_them_converts(tmp_path):
    chart = _chart(tmp_path, {"templates/service.yaml": SERVICE,
                              "templates/job.yaml": _job("limits:\n  cpu: 1")})
    before = _snapshot(chart)
    result = _convert(chart)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [f"Rewriting {chart}/templates/job.yaml"]
    after = _snapshot(chart)
    assert after["templates/service.yaml"] == before["templates/service.yaml"]
    assert b"kind: JobSet" in after["templates/job.yaml"]


def test_a_kind_written_by_the_values_still_says_so(tmp_path):
    template = SERVICE.replace("kind: Service", 'kind: {{ .Values.kind | default "Service" }}')
    message = _refusal(_convert(_chart(tmp_path, {"templates/service.yaml": template})))
    assert "its apiVersion or kind comes from the values" in message


def test_a_replica_type_padded_by_indent_is_named_as_a_key_from_the_values(tmp_path):
    template = ("apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n"
                "  tfReplicaSpecs:\n{{- if .Values.chief }}\n{{ .Values.chiefName | indent 4 }}:\n      replicas: 1\n"
                "      template:\n        spec:\n          containers:\n            - name: tensorflow\n"
                "              image: img\n{{- end }}\n")
    message = _refusal(_convert(_chart(tmp_path, {"templates/tfjob.yaml": template})))
    assert "templates/tfjob.yaml:8: " in message, message
    assert "{{ .Values.chiefName }} writes a key at spec.tfReplicaSpecs" in message


def test_resource_names_from_the_values_are_carried(tmp_path):
    resources = """requests:
  {{ .Values.gpuResource }}: {{ .Values.gpus }}
limits:
  {{ .Values.gpuResource }}: {{ .Values.gpus }}
  {{- range $name, $amount := .Values.devices }}
  {{ $name }}: {{ $amount }}
  {{- end }}"""
    chart = _chart(tmp_path, {"templates/job.yaml": _job(resources)})
    result = _convert(chart)
    assert result.exit_code == 0, result.output
    written = (chart / "templates" / "job.yaml").read_text()
    assert written.count("{{ .Values.gpuResource }}: {{ .Values.gpus }}") == 2 and "{{ $name }}: {{ $amount }}" in written
    assert "kfq" not in written


def test_a_resource_name_the_conversion_reads_is_refused_with_the_name_that_changes_it(tmp_path):
    """MPIJob v1alpha1's workers get slots from their nvidia.com/gpu limit: a key from the values could be it."""
    template = _mpijob_v1alpha1("2", "{{ .Values.accelerator }}: 4")
    message = _refusal(_convert(_chart(tmp_path, {"templates/mpijob.yaml": template}), "--accept-mpi-ssh"))
    assert "templates/mpijob.yaml:14: " in message
    assert "{{ .Values.accelerator }} writes a resource name at spec.template.spec.containers[0].resources.limits" \
           in message
    assert "with nvidia.com/gpu there it writes another job" in message


def test_a_request_below_its_limit_converts_whichever_values_they_come_from(tmp_path):
    resources = """limits:
  cpu: {{ .Values.cpuLimit }}
  memory: {{ .Values.memoryLimit }}
requests:
  cpu: {{ .Values.cpuRequest }}
  memory: {{ .Values.memoryRequest }}"""
    chart = _chart(tmp_path, {"templates/job.yaml": _job(resources)})
    result = _convert(chart)
    assert result.exit_code == 0, result.output
    assert "cpu: {{ .Values.cpuRequest }}" in (chart / "templates" / "job.yaml").read_text()


def test_a_rule_tying_two_values_is_refused_as_needing_them_never_as_inherited(tmp_path):
    """An extended resource's request must equal its limit: two values kf2jobset cannot both stand in for."""
    resources = "limits:\n  nvidia.com/gpu: {{ .Values.gpuLimit }}\nrequests:\n  nvidia.com/gpu: {{ .Values.gpuRequest }}"
    message = _refusal(_convert(_chart(tmp_path, {"templates/job.yaml": _job(resources)})))
    assert "kf2jobset needs the value where the template writes it" in message and "request must equal the limit" in message


def test_an_older_mpijob_takes_its_worker_count_from_the_values(tmp_path):
    chart = _chart(tmp_path, {"templates/mpijob.yaml": _mpijob_v1alpha1("{{ .Values.workers }}", "nvidia.com/gpu: 2")})
    result = _convert(chart, "--accept-mpi-ssh")
    assert result.exit_code == 0, result.output
    written = (chart / "templates" / "mpijob.yaml").read_text()
    assert "replicas: {{ .Values.workers }}" in written
    assert "{{- range $kfi, $_ := until (int (.Values.workers)) }}" in written
