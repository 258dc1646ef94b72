"""A message about a whole document (a refusal, a document the conversion cannot name) points at the
file, line and column where the document's content starts: its first key, after leading comments and
`---`, not the first line of its text (a comment block). The same job's line is the same in every mode
(`--check` with either target, stream convert, `report`).
"""
from __future__ import annotations

from click.testing import CliRunner

from kf2jobset.cli.main import main
from kf2jobset.text.yamlio import Document, parse_documents

HEADER = """# Training jobs of the ads team.
# Reviewed by the platform team before each release.

"""


def role(name: str, replicas: int, container: str, image: str) -> str:
    return f"""    {name}:
      replicas: {replicas}
      template:
        spec:
          containers:
          - name: {container}
            image: registry.example.com/ads/{image}
"""


DDP = """apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: ctr-ddp
spec:
  pytorchReplicaSpecs:
""" + role("Master", 1, "pytorch", "ctr:1.2") + role("Worker", 2, "pytorch", "ctr:1.2")

# Two parameter servers: no shared Trainer runtime takes it (trainjob-no-shared-runtime).
PS = """# The embedding tables need two parameter servers.
  # an indented comment, still before the content
apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: wide-deep
spec:
  tfReplicaSpecs:
""" + role("PS", 2, "tensorflow", "wide-deep:3.0") + role("Worker", 2, "tensorflow", "wide-deep:3.0")

TEXT = HEADER + DDP + "---\n" + PS
FIRST = TEXT.splitlines().index("apiVersion: kubeflow.org/v1") + 1  # after the comment block: line 4
SECOND = TEXT.splitlines().index("apiVersion: kubeflow.org/v1", FIRST) + 1


def run(tmp_path, monkeypatch, *args: str):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "jobs.yaml").write_text(TEXT)
    return CliRunner().invoke(main, [args[0], "jobs.yaml", *args[1:]], catch_exceptions=False)


def test_each_document_starts_with_comments():
    lines = TEXT.splitlines()
    assert FIRST == 4 and lines[0].startswith("#")
    assert lines[SECOND - 4] == "---" and all(line.lstrip().startswith("#") for line in lines[SECOND - 3:SECOND - 1])


def test_a_refusal_names_the_line_and_column_of_its_own_document(tmp_path, monkeypatch):
    res = run(tmp_path, monkeypatch, "convert", "--target", "trainjob")
    assert res.exit_code == 4, res.stderr
    refusals = [line for line in res.stderr.splitlines() if "trainjob-no-shared-runtime" in line]
    assert len(refusals) == 1, res.stderr
    assert refusals[0].startswith(f"kf2jobset: jobs.yaml:{SECOND}:1: document 2: TFJob 'wide-deep' fits no shared"), refusals


def test_check_names_the_same_line_with_either_target(tmp_path, monkeypatch):
    trainjob = run(tmp_path, monkeypatch, "convert", "--check", "--target", "trainjob").stdout.splitlines()
    jobset = run(tmp_path, monkeypatch, "convert", "--check").stdout.splitlines()
    assert [line.split(": ")[0] for line in trainjob] == ["jobs.yaml:4", f"jobs.yaml:{SECOND}:1"], trainjob
    assert [line.split(": ")[0] for line in jobset] == ["jobs.yaml:4", f"jobs.yaml:{SECOND}"], jobset
    assert "TFJob wide-deep" in trainjob[1] and "needs a decision" in trainjob[1]
    assert "TFJob wide-deep" in jobset[1] and "to convert" in jobset[1]


def test_the_report_names_the_same_place(tmp_path, monkeypatch):
    res = run(tmp_path, monkeypatch, "report", "--target", "trainjob")
    assert f"jobs.yaml:{SECOND}:1: document 2: error: TFJob 'wide-deep' fits no shared" in res.stdout, res.stdout
    assert "jobs.yaml:4: PyTorchJob ctr-ddp" in res.stdout, res.stdout


def test_a_document_on_its_separator_line_starts_at_its_mapping():
    text = "# header\n---\n--- {apiVersion: v1, kind: ConfigMap}\n---\n  # indented\n  a: 1\n"
    docs = [d for d in parse_documents(text) if d.data is not None]
    assert [d.start() for d in docs] == [(3, 5), (6, 3)]


def test_an_unparsed_document_starts_at_its_first_content_line():
    # no tree to ask (a YAML error, or data built in code): the text says where the content starts
    assert Document(1, "---\n# about the job\n\n  kind: TFJob\n", start_line=9).start() == (13, 3)
    assert Document(0, "--- {kind: TFJob\n", start_line=0).start() == (1, 5)
