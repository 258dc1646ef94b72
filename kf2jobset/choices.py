"""The choices of the conversion's command-line options, one spelling each (options.py validates
against them, clioptions.py and cli.py offer them). No imports: `--version` and `--help` read it."""
from __future__ import annotations

LATEST_JOBSET_VERSION = (0, 12)  # the default --jobset-version
# The first of each list is the option's default.
# The gang schedulers, the registry of kf2jobset/schedulers: each is kf2jobset/schedulers/<name>.py; the value is
# the flavour of the TrainJob runtime bundle its pods need (`runtimes --gang`), None for none.
SCHEDULER_FLAVOURS = {"none": None, "kueue": None, "volcano": "volcano", "scheduler-plugins": "coscheduling",
                      "yunikorn": "yunikorn"}
SCHEDULERS = tuple(SCHEDULER_FLAVOURS)
GANG_FLAVOURS = tuple(f for f in SCHEDULER_FLAVOURS.values() if f)
DEFAULT_GANG_SCHEDULER_NAME = "scheduler-plugins"  # the operator flag's documented value
TARGETS = ("jobset", "trainjob")  # kf2jobset/targets: one module each
# Kubeflow Trainer releases whose TrainJob/TrainingRuntime API the trainjob target writes and was checked
# against (the real controller in tests/e2e); the API changed in every minor release so far.
TRAINER_VERSIONS = ((2, 3),)
MPI_HOSTFILE_MODES = ("auto", "configmap", "generated")
# --target trainjob: a built-in ClusterTrainingRuntime where the job fits it, else one of kf2jobset's
# bundle, else the job is refused, saying why (auto: no namespaced runtime by default); or always a per-job
# TrainingRuntime holding kf2jobset's JobSet (per-job, formerly `generated`, still accepted: the v1 contract exactly)
TRAINER_RUNTIMES = ("auto", "per-job", "generated")
# `report --fail-on LEVEL`: the mildest finding category that makes the run fail (report/model.py)
FAIL_ON = {
    "breaking": "breaking",
    "approximated": "approximated",
    "any": "rewritten",
    "never": None,
}
COLOR_MODES = ("auto", "always", "never")  # `report --color`
