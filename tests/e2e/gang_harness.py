"""scheduler-plugins' gang scheduling for the e2e tests (tests/e2e/test_scheduler_plugins.py, test_gang_run.py): the
PodGroup resource and a conversion for the operator run with --gang-scheduler-name."""
from __future__ import annotations

import yaml


PG = ("scheduling.x-k8s.io", "v1alpha1", "podgroups")
FLAG = "scheduler-plugins"  # the stack's --gang-scheduler-name


def convert_for_gang(job: dict):
    """The conversion with --scheduler scheduler-plugins and the stack's gang scheduler name."""
    from kf2jobset.options import ConvertOptions
    from kf2jobset.pipeline import convert_text

    result = convert_text(yaml.safe_dump(job, sort_keys=False), "job.yaml",
                          ConvertOptions(scheduler="scheduler-plugins", gang_scheduler_name=FLAG))
    assert not result.errors, result.errors
    (conv,) = [c for r in result.results for c in r.conversions]
    return conv
