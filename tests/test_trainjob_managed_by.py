"""A v1 job that MultiKueue dispatched (runPolicy.managedBy) becomes a TrainJob MultiKueue dispatches: on every
TrainJob route (Trainer's built-in runtime, kf2jobset's bundle, a runtime of the job's own) the report reads who
runs the job from the TrainJob's spec.managedBy -- the JobSet Trainer builds carries none -- so nothing is left
unexplained and the lifecycle says the same manager on both sides."""
from __future__ import annotations

import pytest
import yaml

from kf2jobset.options import ConvertOptions
from kf2jobset.files.pipeline import convert_text
from kf2jobset.runtime.lifecycle import MULTIKUEUE

from .conftest import FIXTURES
from .report_helpers import report_for


def _managed(case: str, keep: tuple | None = None) -> str:
    doc = yaml.safe_load((FIXTURES / case / "input.yaml").read_text())
    spec = doc["spec"]
    spec.setdefault("runPolicy", {})["managedBy"] = MULTIKUEUE
    if keep:
        specs = next(v for k, v in spec.items() if k.endswith("ReplicaSpecs"))
        for rtype in [t for t in specs if t not in keep]:
            del specs[rtype]
    return yaml.safe_dump(doc)


@pytest.mark.parametrize("case, keep, runtime, route", [
    ("pytorchjob/master-workers", None, "auto", "torch-distributed"),
    ("tfjob/chief-ps-workers", ("Worker",), "auto", "kf2jobset-tensorflow"),
    ("pytorchjob/master-workers", None, "per-job", "TrainingRuntime"),
])
def test_a_multikueue_job_stays_one_on_every_trainjob_route(case, keep, runtime, route):
    text = _managed(case, keep)
    options = ConvertOptions(target="trainjob", trainer_runtime=runtime)
    (conv,) = convert_text(text, "job.yaml", options).results[0].conversions
    (trainjob,) = [o for o in conv.output if o["kind"] == "TrainJob"]
    assert trainjob["spec"]["managedBy"] == MULTIKUEUE and route in (trainjob["spec"]["runtimeRef"]["name"],
                                                                     trainjob["spec"]["runtimeRef"]["kind"])
    (job,) = report_for(text, target="trainjob", trainer_runtime=runtime).jobs
    assert not [f for f in job.findings if f.category == "unexplained"], [(f.code, f.message) for f in job.findings]
    managed = [e for f in job.findings for e in f.evidence if e.subject == "managedBy"]
    assert not managed, managed  # v1 and the TrainJob: MultiKueue both
