"""The differential's cases: every converting fixture (with its args), the refused MXJob fixtures, every job of the
upstream corpus (tests/upstream.py), the fixtures `--target trainjob` puts on a shared runtime, and fixtures
resized by hand after the conversion (tests/e2e/test_differential.py runs them)."""
from __future__ import annotations

import copy
import dataclasses
import re
from dataclasses import dataclass, field

import yaml

from kf2jobset.core.convert import is_job
from kf2jobset.options import ConvertOptions, parse_version
from kf2jobset.runtime.selectors import SELECTING
from kf2jobset.text.yamlio import to_plain

from .. import upstream
from ..conftest import FIXTURES
from ..fixture_cases import fixture_args
from ..templates import case_values, fill
from .stack import MXJOB_FLAVOUR


KF_PLURAL = {"TFJob": "tfjobs", "PyTorchJob": "pytorchjobs", "MPIJob": "mpijobs", "XGBoostJob": "xgboostjobs",
             "PaddleJob": "paddlejobs", "JAXJob": "jaxjobs", "MXJob": "mxjobs"}
KF = "training.kubeflow.org/"  # label prefix of the v1 operators' pods
JS = "jobset.sigs.k8s.io/"  # and of JobSet's


@dataclass
class Case:
    id: str
    job: dict  # the v1 job (named)
    options: ConvertOptions
    note: str = ""  # why it is not run (e.g. v2beta1)
    refused: bool = False  # kf2jobset refuses it (fixtures/<kind>/<case>/expected-error.txt): v1 must have refused it too
    resize: tuple | None = None  # (replica type, count): the v1 job and the JobSet of the ORIGINAL job edited alike
    # objects of the same file that select pods (Service, PDB, NetworkPolicy, PodMonitor): converted with
    # the job, and their selectors compared in both worlds
    peers: list = field(default_factory=list)
    # the file's ConfigMaps: converted with the job (v1 pod names in them get JS066's Services); the MPI
    # frameworks test creates them in both worlds, so a hostfile of the user's own is really read
    configmaps: list = field(default_factory=list)


def options_from_args(args: list[str]) -> ConvertOptions:
    kw: dict = {}
    for a in args:
        k, _, v = a.partition("=")
        if k == "--katib":
            kw["katib"] = True
        elif k == "--accept-mpi-ssh":
            kw["accept_mpi_ssh"] = True
        elif k == "--keep-kubeflow-labels":
            kw["keep_kubeflow_labels"] = True
        elif k == "--jobset-version":
            kw["jobset_version"] = parse_version(v)
        else:
            kw[k[2:].replace("-", "_")] = v
    return ConvertOptions(**kw)


def _jobs_in(doc) -> list[dict]:
    """v1 jobs of a document: the job itself, or Katib trial templates (named like a trial). A job in an
    older apiVersion is the v1 job kf2jobset reads it as (upgrade.py): that is what the v1 operator runs."""
    if is_job(doc):
        return [_as_v1(doc)]
    out = []
    if isinstance(doc, dict) and doc.get("kind") == "Experiment":
        trial = (((doc.get("spec") or {}).get("trialTemplate") or {}).get("trialSpec"))
        if is_job(trial):
            out.append(trial)
    return out


def _as_v1(doc: dict) -> dict:
    from kf2jobset.mappings import convertible_mapping
    from kf2jobset.upgrade import upgrade

    mapping = convertible_mapping(doc.get("apiVersion"), doc.get("kind"))
    return upgrade(doc, mapping).doc if doc.get("apiVersion") in mapping.upgrade_from else doc


def fixture_cases() -> list[Case]:
    out = []
    for inp in sorted(FIXTURES.glob("*/*/input.yaml")):
        case = inp.parent
        if not (case / "expected.yaml").exists():
            continue
        args = fixture_args(case)
        # an envsubst template (fixtures/envsubst) runs as applied: filled with the case's values in both
        # worlds (tests/test_envsubst.py holds that filling the output equals converting the filled input)
        if (case / "render").exists():
            # a Go text/template or Jinja file renders to a job like the other fixtures' (its conversion,
            # rendered, equals the rendered job's: tests/test_brace_templates.py), so it proves nothing new here
            continue
        text = fill(inp.read_text(), case_values(case))
        docs = list(yaml.safe_load_all(text))
        jobs = [j for d in docs for j in _jobs_in(d)]
        peers = [d for d in docs if isinstance(d, dict) and d.get("kind") in SELECTING]
        configmaps = [d for d in docs if isinstance(d, dict) and d.get("kind") == "ConfigMap"]
        options = options_from_args(args)
        if options.scheduler == "scheduler-plugins":
            # v1's side of these is the operator run with --gang-scheduler-name, which this stack's operator is
            # not: tests/e2e/test_scheduler_plugins.py holds them against that operator (the v2beta1 one,
            # mpi-operator's own gang rules, is unit-tested only: tests/test_gang.py)
            continue
        for n, job in enumerate(jobs):
            out.append(Case(f"{case.parent.name}/{case.name}" + (f"#{n}" if len(jobs) > 1 else ""), job, options,
                            peers=peers, configmaps=configmaps))
    return out


def corpus_cases() -> list[Case]:
    if upstream.corpus_absent():  # test_corpus_present says so
        return []
    from ..fixture_cases import CORPUS_OPTIONS, all_jobs

    out, seen = [], {}
    for where, doc in all_jobs():
        for job in _jobs_in(doc):
            base = str(where)
            seen[base] = seen.get(base, 0) + 1
            out.append(Case(f"corpus/{base}" + (f"#{seen[base]}" if seen[base] > 1 else ""), to_plain(job), CORPUS_OPTIONS))
    return out


REFUSED_KINDS = ("MXJob",)  # kinds whose refusal fixtures run against the real operator (see the module docstring)


def refusal_cases() -> list[Case]:
    """Fixtures kf2jobset refuses (expected-error.txt, no expected.yaml) of :data:`REFUSED_KINDS`."""
    out = []
    for inp in sorted(FIXTURES.glob("*/*/input.yaml")):
        case = inp.parent
        if (case / "expected.yaml").exists() or not (case / "expected-error.txt").exists():
            continue
        try:
            docs = list(yaml.safe_load_all(inp.read_text()))
        except yaml.YAMLError:
            continue  # not even YAML: nothing to submit
        jobs = [d for d in docs if isinstance(d, dict) and d.get("kind") in REFUSED_KINDS
                and str(d.get("apiVersion", "")).startswith("kubeflow.org/")]
        args = fixture_args(case)
        for n, job in enumerate(jobs):
            out.append(Case(f"{case.parent.name}/{case.name}" + (f"#{n}" if len(jobs) > 1 else ""), job, options_from_args(args),
                            refused=True))
    return out


AGENT_SCHEDULERS = {"default-scheduler", "volcano", "yunikorn"}


def trainjob_cases() -> list[Case]:
    """Fixture jobs that `--target trainjob` puts on a shared ClusterTrainingRuntime (Trainer's built-in
    torch-distributed, jax-distributed, xgboost-distributed, or one of kf2jobset's bundle; fixtures/targets/
    trainjob too): the JobSet created for them is the one Trainer builds from the TrainJob (kf2jobset's
    prediction, which tests/e2e/test_trainjob_target.py holds equal to Trainer's own), compared with the v1
    pods like any other. Jobs no shared runtime takes are refused by default and left out (with
    `--trainer-runtime per-job` their JobSet is kf2jobset's own, held by the JobSet cases)."""
    import dataclasses

    from kf2jobset.files.pipeline import convert_text

    targets = []
    for inp in sorted((FIXTURES / "targets" / "trainjob").glob("*/input.yaml")):
        if {"--katib", "--trainer-runtime"} & set((inp.parent / "args").read_text().split()):
            continue
        jobs = [j for d in yaml.safe_load_all(inp.read_text()) for j in _jobs_in(d)]
        # pods the node agent never starts: it stands in for the default scheduler, Volcano and YuniKorn only
        # (differential_runner.py); gang-coscheduling-named's pods name scheduler-plugins' scheduler, held by
        # tests/test_trainjob_bundle_gang.py and the report's model (tests/test_target_torch_distributed.py)
        jobs = [j for j in jobs if not set(re.findall(r"schedulerName: (\S+)", yaml.safe_dump(j))) - AGENT_SCHEDULERS]
        targets += [Case(f"targets/{inp.parent.name}", job, ConvertOptions()) for job in jobs]
    out = []
    for case in fixture_cases() + targets:
        other_stack = case.job.get("apiVersion") == "kubeflow.org/v2beta1" or case.job.get("kind") in REFUSED_KINDS
        if other_stack or case.options.katib:
            continue
        options = dataclasses.replace(case.options, target="trainjob")
        job = copy.deepcopy(case.job)
        meta = job.setdefault("metadata", {})
        if meta.get("generateName") and not meta.get("name"):
            # Trainer writes the name into node 0's address; a name given at creation is held by
            # tests/e2e/test_trainjob_target.py, here the job is named
            meta["name"] = meta.pop("generateName") + "x7k2q"
        result = convert_text(yaml.safe_dump(job, sort_keys=False), "job.yaml", options)
        convs = [c for r in result.results for c in r.conversions]
        if not result.errors and convs and convs[0].layout is not None:
            out.append(Case(f"trainjob:{case.id}", job, options))
    return out


RESIZED_PER_KIND = 3  # fixtures per kind whose size-derived values all follow the count (SZ001, no SZ002)
RESIZED_ALSO = ("pytorchjob/torchrun-one-per-node",)  # beyond those: torchrun with nprocPerNode set (PET_NNODES follows)


def resized_cases() -> list[Case]:
    """Size as a parameter (kf2jobset/checks/sizes.py): a converted JobSet edited by hand, smaller and larger, next
    to the v1 job edited the same way. Fixtures whose conversion writes no size literal (SZ001 without
    SZ002; the others are guarded by --check, tests/test_sizes_check.py), a few per kind, on the v1.9.4 stack."""
    from kf2jobset.core.convert import convert_job

    out, per_kind = [], {}
    for case in fixture_cases():
        kind = case.job.get("kind")
        group = case.id.split("/")[0]  # the fixture directory: pytorchjob, jaxjob, envsubst, ...
        other_stack = case.job.get("apiVersion") == "kubeflow.org/v2beta1" or kind in REFUSED_KINDS  # mpi-operator, v1.8.1
        if other_stack or case.options.katib or "rejected" in case.id or (
                per_kind.get(group, 0) >= RESIZED_PER_KIND and case.id not in RESIZED_ALSO):
            continue
        try:
            conv = convert_job(copy.deepcopy(case.job), case.options)
        except Exception:  # noqa: BLE001 - a case the plain differential already covers
            continue
        codes = {n.code for n in conv.notes}
        if "SZ001" not in codes or "SZ002" in codes or conv.job.run_policy.suspend:
            continue
        rtype = "Worker" if "Worker" in conv.job.replicas else list(conv.job.replicas)[-1]
        was = conv.job.replicas[rtype].replicas
        first = conv.plan.segments[rtype][-1][1]
        per_kind[group] = per_kind.get(group, 0) + 1
        for new in sorted({max(first + 1, was - 1), was + 2} - {was}):
            out.append(resized(case, rtype, new))
    return out


def resized(case: Case, rtype: str, new: int) -> Case:
    """The case with its replica type set to `new` pods in both worlds (Runner._resize_v1 / _resize_jobset)."""
    return dataclasses.replace(case, id=f"resized:{case.id}:{rtype.lower()}={new}", resize=(rtype, new))


V2BETA1 = "kubeflow.org/v2beta1"


def flavour_of(job: dict) -> str:
    """The stack flavour (tests/e2e/stack.py) whose operator runs this v1 job."""
    if job.get("apiVersion") == V2BETA1:
        return "mpi-operator"
    if job.get("kind") == "MXJob":
        return MXJOB_FLAVOUR
    return "training-operator"
