"""The cases the converter's tests run over: the golden fixtures (fixtures/<kind>/<case>/ with their
``args`` file) and the jobs of the upstream corpus (tests/upstream.py), with the options each is converted under."""
from __future__ import annotations

from pathlib import Path

from kf2jobset.cli.shared_options import options_from_args
from kf2jobset.core.convert import is_job
from kf2jobset.options import ConvertOptions
from kf2jobset.text.yamlio import parse_documents

from . import upstream
from .conftest import FIXTURES

# fixtures that convert (a refusal fixture has expected-error.txt instead of the goldens)
CONVERTED_CASES = sorted(p.parent for p in FIXTURES.glob("*/*/input.yaml")
                         if not (p.parent / "expected-error.txt").exists())


def fixture_args(case: Path) -> list[str]:
    """The case's ``args`` file: one CLI argument a line, ``#`` lines and blank lines skipped."""
    if not (case / "args").exists():
        return []
    return [a for a in (case / "args").read_text().splitlines() if a.strip() and not a.startswith("#")]


def fixture_options(case: Path) -> ConvertOptions:
    """The fixture's ``args`` file read by the CLI's own option parser."""
    return options_from_args(fixture_args(case))


def corpus_texts() -> list[tuple[str, str]]:
    """(where, text) for every corpus file, and for every job template Katib keeps as a YAML string inside
    one (ConfigMap data, UI fixtures; as tests/test_corpus.py finds them); a skip names missing modules."""
    out = []
    for name, path in upstream.require_corpus():
        text = path.read_text()
        out.append((name, text))
        for doc in parse_documents(text):
            for s in _strings(doc.data):
                if "kubeflow.org/" in s and "ReplicaSpecs" in s:
                    out.append((f"{name} (embedded)", s))
    return out


def _strings(node):
    if isinstance(node, dict):
        for v in node.values():
            yield from _strings(v)
    elif isinstance(node, list):
        for v in node:
            yield from _strings(v)
    elif isinstance(node, str):
        yield node


# MPIJob v1 needs the explicit SSH decision; Katib trials have no name, so MPI needs a named Secret.
CORPUS_OPTIONS = ConvertOptions(accept_mpi_ssh=True, katib=True, ssh_secret="mpi-ssh")


def corpus_files() -> list[upstream.CorpusFile]:
    """(name, path) of the corpus files whose modules are in the Go module cache."""
    return upstream.corpus()


def embedded_string_jobs(doc):
    """Katib keeps some trial templates as YAML strings (ConfigMap data, UI fixtures)."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
        elif isinstance(node, str) and "kubeflow.org/" in node and "ReplicaSpecs" in node:
            for d in parse_documents(node):
                if is_job(d.data):
                    found.append(d.data)

    walk(doc)
    return found


def all_jobs():
    """(corpus name, document) for every job and Experiment of the corpus, and every job Katib keeps as a string."""
    out = []
    for name, path in corpus_files():
        for doc in parse_documents(path.read_text()):
            assert doc.error is None, f"{name}: {doc.error}"
            if is_job(doc.data) or (isinstance(doc.data, dict) and doc.data.get("kind") == "Experiment"):
                out.append((name, doc.data))
            for job in embedded_string_jobs(doc.data):
                out.append((name, job))
    return out


# Corpus jobs no v1 release ran, refused as inherited (rule id): training-operator v1.5.0's XGBoost
# examples kept the old operator's container name `xgboostjob` under kubeflow.org/v1, where every pod's
# MASTER_PORT is read from a container named `xgboost` (docs/ground-truth.md, "No container of the
# default name").
NEVER_RAN = {f"training-operator-v1.5.0/examples/xgboost/xgboost-dist/xgboostjob_v1alpha1_iris_{case}.yaml": "default-container"
             for case in ("predict", "predict_local", "train", "train_local")}
