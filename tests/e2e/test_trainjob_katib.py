"""Katib TrainJob trials for the kinds that land on a shared runtime, on the real Trainer v2.3.0
(stack flavour `trainer`, kf2jobset's bundle installed as `kf2jobset runtimes` prints it; the node agent runs the
pods). For each trial fixture (`kf2jobset convert --katib --target trainjob`): the Experiment's trialSpec is a
TrainJob naming a shared ClusterTrainingRuntime with every `${trialParameters.*}` inside the TrainJob (no runtime is
written beside it); filled in as Katib fills a trial (its name `<experiment>-<8 characters>`, the parameters'
values), the TrainJob makes Trainer build exactly the JobSet kf2jobset planned for it, runs to Complete with the
values in the pods' command, and the trial template's primaryPodLabels select one pod: the one the v1 trial's
primaryPodLabels (Katib's default `training.kubeflow.org/job-role: master` when it has none) select among the v1
operator's pods for that trial (kf2jobset/runtime/operator_view.py), paired by role and index.

(The PyTorch trial on torch-distributed is run in tests/e2e/test_trainjob_target.py.)

Knob: ``KF2JOBSET_KATIB_ONLY=REGEX`` (fixture names, e.g. ``xgboost``).
"""
from __future__ import annotations

import json
import os
import re
import time

import pytest
import yaml

from ..fixture_cases import fixture_options
from .trainer_harness import PY, jobset_of, wait_complete
from .trainer_harness import agent_for, core, custom, tapi, tns, trainer_stack  # noqa: F401 (the fixtures)
from .trainjob_harness import (MPI_PROBE, REPO_FIXTURES, create_object, create_trainjob_after_its_runtime, differences,
                               named_in)
from .trainjob_harness import bundle  # noqa: F401 (the fixture)

KATIB_DEFAULT_PRIMARY = {"training.kubeflow.org/job-role": "master"}  # Katib's default primaryPodLabels
TRIAL_SUFFIX = "k2x9q7wd"  # Katib names a trial <experiment>-<8 random characters>

# Every pod reports its environment and command, then stays a while: a finished pod's name stops resolving
# for the others, and the pod that decides success must not end the trial before the others have started.
PROBE = r"""
import json, os, socket, sys, time
print("KF2JS-TRIAL " + json.dumps({"host": socket.gethostname(), "argv": sys.argv[1:]}), flush=True)
time.sleep(float(os.environ.get("KF2JS_STAY", "15")))
"""

# fixture -> {parameter name: the value this trial gets}
TRIALS = {
    "katib-tf-trials": {"batchSize": "64"},
    "katib-xgboost-trials": {"maxDepth": "5", "learningRate": "0.1"},
    "katib-mpi-trials": {"learningRate": "0.01"},
    "katib-mpi-v1-trials": {"learningRate": "0.002", "numberSteps": "60"},
}
ONLY = os.environ.get("KF2JOBSET_KATIB_ONLY")
CASES = [c for c in TRIALS if not ONLY or re.search(ONLY, c)]


def matches(selector: dict, labels: dict) -> bool:
    return all(labels.get(k) == str(v) for k, v in selector.items())


def program(launch):
    """The probe; for an MPI trial the container's own command (the runtime's `sh`), the launcher's mpirun
    replaced by a probe of its hostfile and the workers' sshd by a sleep."""
    argv = list(launch.command)
    if argv[:4] == ["/bin/sh", "-c", 'exec "$@"', "--"]:
        return argv[:4] + [PY, "-c", MPI_PROBE] + argv[5:]
    if argv[:2] == ["/bin/sh", "-c"] and "sshd" in argv[2]:
        return ["/bin/sh", "-c", "exec sleep 600"]
    return [PY, "-c", PROBE, *argv]


def check_hostfile(agent, tns, launcher, conv, trial_name, built):
    """The launcher's hostfile names this trial's workers as v1's hostfile named the trial's (the operator's
    model, addresses compared as the pods they reach), and every host in it reaches that worker."""
    from kf2jobset.frameworks.base import OperatorSide
    from kf2jobset.frameworks.mpi import PROFILE
    from kf2jobset.runtime.jobset_view import jobset_world
    from kf2jobset.runtime.operator_view import operator_world

    from .differential_compare import jobset_pod_key

    with open(os.path.join(launcher.mounts["/etc/mpi"], "hostfile")) as f:
        hostfile = f.read()
    v1 = PROFILE.hostfile(conv.job, OperatorSide(conv.job, trial_name, tns, "Launcher", 0, None))
    ours = jobset_world(built, name=trial_name, namespace=tns, roles=conv.pods.pod_roles).resolver
    theirs = operator_world(conv.job, name=trial_name, namespace=tns).resolver
    assert ours.normalise(hostfile) == theirs.normalise(v1), (hostfile, v1)
    (line,) = [ln for ln in agent.log(tns, launcher.pod, "node").splitlines() if ln.startswith("KF2JS-MPI ")]
    hosts = json.loads(line.split(" ", 1)[1])["hosts"]
    key_of = jobset_pod_key(conv.pods.pod_roles)
    ips = {key_of(x.labels): x.pod_ip for x in agent.launches(tns) if not x.init}
    assert hosts and {h: ips[ours.addresses_in(h)[0]] for h in hosts} == hosts
    return len(hosts)


@pytest.mark.parametrize("case", CASES)
def test_a_katib_trial_runs_as_a_trainjob_on_its_shared_runtime_with_v1s_primary_pod(custom, core, tns, agent_for, bundle, case):
    from kf2jobset.files.pipeline import convert_text
    from kf2jobset.runtime.jobset_view import stand_in_name
    from kf2jobset.runtime.operator_view import operator_world
    from kf2jobset.text.yamlio import to_plain

    from .differential_compare import jobset_pod_key

    fixture = REPO_FIXTURES / "targets" / "trainjob" / case
    source = next(d for d in yaml.safe_load_all((fixture / "input.yaml").read_text()) if d)
    result = convert_text((fixture / "input.yaml").read_text(), "input.yaml", fixture_options(fixture))
    assert not result.errors, result.errors
    (conv,) = [c for r in result.results for c in r.conversions]
    written = [d for d in yaml.safe_load_all(result.new_text) if isinstance(d, dict)]
    (experiment,) = written  # the Experiment alone: no runtime beside it
    template = experiment["spec"]["trialTemplate"]
    trainjob = template["trialSpec"]
    runtime = trainjob["spec"]["runtimeRef"]
    assert trainjob["kind"] == "TrainJob" and runtime["kind"] == "ClusterTrainingRuntime", runtime
    values = TRIALS[case]
    text = json.dumps(trainjob)
    assert all("${trialParameters.%s}" % p in text for p in values), "a parameter left the TrainJob"
    assert "${trialParameters." in json.dumps(trainjob["spec"]["trainer"])  # in spec.trainer, where Katib fills it in

    trial_name = f"{experiment['metadata']['name']}-{TRIAL_SUFFIX}"
    for p in template["trialParameters"]:  # Katib fills a ${trialSpec.Name} parameter with the trial's name
        if p["reference"] == "${trialSpec.Name}":
            values = {**values, p["name"]: trial_name}

    def as_trial(obj):
        out = json.dumps(obj)
        for p, v in values.items():
            out = out.replace("${trialParameters.%s}" % p, v)
        return json.loads(out.replace(stand_in_name(obj["metadata"]), trial_name))

    trial = as_trial(trainjob)
    trial["metadata"]["name"] = trial_name
    planned = as_trial(to_plain(conv.jobset))
    planned["metadata"]["name"] = trial_name
    want = create_object(custom, core, named_in(planned, tns), tns, dry_run="All")
    from kubernetes import client

    for secret in set(re.findall(r'"secretName": "([^"]+)"', json.dumps(trial))):  # made once for every trial
        core.create_namespaced_secret(tns, client.V1Secret(metadata=client.V1ObjectMeta(name=secret), type="kubernetes.io/ssh-auth",
                                                           string_data={"ssh-privatekey": "-", "ssh-publickey": "-"}))
    agent = agent_for({trial["spec"]["trainer"]["image"]: program})
    t0 = time.monotonic()
    create_trainjob_after_its_runtime(custom, core, named_in(trial, tns), tns)
    built = jobset_of(custom, tns, trial_name, timeout=60)
    assert differences(want, built) == []  # the JobSet kf2jobset planned for the trial, as Trainer builds it
    wait_complete(custom, tns, trial_name, timeout=300, agent=agent)
    seconds = time.monotonic() - t0

    launches = [x for x in agent.launches(tns) if not x.init]
    assert launches and all(x.container == template["primaryContainerName"] for x in launches)
    selector = template["primaryPodLabels"]
    for x in launches:  # Katib's values reached the command of every pod that runs the trainer's (on MPI: the launcher's)
        if conv.job.kind != "MPIJob" or matches(selector, x.labels):
            assert all(v in " ".join(x.command) for k, v in values.items() if k in TRIALS[case]), x.command
    pods = core.list_namespaced_pod(tns, label_selector=",".join(f"{k}={v}" for k, v in selector.items())).items
    assert len(pods) == 1, [p.metadata.name for p in pods]
    primary = jobset_pod_key(conv.pods.pod_roles)(pods[0].metadata.labels)
    v1_selector = source["spec"]["trialTemplate"].get("primaryPodLabels") or KATIB_DEFAULT_PRIMARY
    v1_pods = operator_world(conv.job, name=trial_name, namespace=tns).pods
    v1_primary = [p.key for p in v1_pods if matches(v1_selector, p.labels)]
    assert v1_primary == [primary], f"{case}: v1's trial had {v1_primary} as its primary pod, this one {primary}"
    hosts = ""
    if conv.job.kind == "MPIJob":
        (launcher,) = [x for x in launches if matches(selector, x.labels)]
        hosts = f"; the launcher's hostfile names the trial's {check_hostfile(agent, tns, launcher, conv, trial_name, built)} workers"
    print(f"\n[{case}] trial {trial_name} on {runtime['name']}: planned JobSet built, Complete in {seconds:.1f} s, "
          f"{len(launches)} pods; primary pod {pods[0].metadata.name} = v1's {primary[0]}/{primary[1]} ({v1_selector}){hosts}")
