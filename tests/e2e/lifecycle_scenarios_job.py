"""Lifecycle scenarios about the job as a whole: dynamic workers, a pod that ends Failed, backoffLimit,
activeDeadlineSeconds, MPI's launcher, suspend, TTL, cleanPodPolicy (tests/e2e/test_lifecycle.py runs them).
"""
from __future__ import annotations

import copy
import time

from kf2jobset.options import ConvertOptions

from .lifecycle_harness import (EVENT_TIMEOUT, SETTLE, Scenario, Side, fixture_job, lead_and_workers, replica,
                                role_starts, run_forever, start_order, v1job)


# -- TFJob enableDynamicWorker: a failed worker is ignored


def _tf_dynamic_program(role, index, attempt):
    return "sleep 1; exit 1" if role == "worker" and index == 1 else None


def _obs_tf_dynamic(s: Side) -> dict:
    s.wait_for(lambda: s.status() != "active" or any(p[1] == 1 and p[3] == "Failed" for p in s.pods("worker")),
               "worker 1 failed")
    st, t = s.wait_done(SETTLE)
    return {"failure:worker": f"{st} after worker 1 exits 1"}


TF_DYNAMIC = Scenario(
    "tfjob-dynamic-worker-fails",
    v1job("TFJob", "tf-dynamic", {"Chief": replica("TFJob", 1, "Never"), "Worker": replica("TFJob", 2, "Never")},
          enableDynamicWorker=True),
    ("failure:worker",), _obs_tf_dynamic, _tf_dynamic_program,
    {"failure:worker": "active after worker 1 exits 1"},
    why="§2.5: with enableDynamicWorker a Worker failure is ignored",
)


# -- a pod that ends Failed under OnFailure (pod deadline, as an eviction does)

def _obs_pod_failed(s: Side) -> dict:
    # the Job controller re-creates a failed pod after its back-off (10 s), the operator at once
    s.wait_for(lambda: s.status() != "active" or sum(1 for x in s.starts("worker") if x.restart == 0) >= 2,
               "the job ended or the failed worker pod was replaced")
    st, t = s.wait_done(SETTLE / 2)
    s.note(f"{st} at {t:.1f}s; {role_starts(s, 'worker')}")
    replaced = sum(1 for x in s.starts("worker") if x.restart == 0) >= 2
    return {"failure:worker": st if st != "active" else f"active, the failed worker pod {'' if replaced else 'not '}replaced"}


def _failed_pod_replicas(kind):
    return {"Master": replica(kind, 1, "OnFailure"),
            "Worker": replica(kind, 1, "OnFailure", activeDeadlineSeconds=3)}


XGB_POD_FAILED = Scenario(
    "xgboost-onfailure-pod-failed",
    v1job("XGBoostJob", "xgb-podfail", _failed_pod_replicas("XGBoostJob")),
    ("failure:worker",), _obs_pod_failed, run_forever,
    {"failure:worker": "Failed"},
    why="§4.4: any Failed pod fails an XGBoostJob unless its type is ExitCode (pod deadline makes it Failed)",
)

MPI_POD_FAILED = Scenario(
    "mpijob-v1-onfailure-pod-failed",
    v1job("MPIJob", "mpi-podfail", {"Launcher": replica("MPIJob", 1, "OnFailure"),
                                    "Worker": replica("MPIJob", 1, "OnFailure", activeDeadlineSeconds=3)}),
    ("failure:worker",), _obs_pod_failed, run_forever,
    {"failure:worker": "Failed"},
    options=ConvertOptions(accept_mpi_ssh=True),
    why="§5.3: any Failed launcher or worker pod fails an MPIJob v1 (unless ExitCode)",
)

PT_POD_FAILED = Scenario(
    "pytorch-onfailure-pod-failed",
    v1job("PyTorchJob", "pt-podfail", _failed_pod_replicas("PyTorchJob")),
    ("failure:worker",), _obs_pod_failed, run_forever,
    {"failure:worker": "active, the failed worker pod replaced"},
    why="§1.6/§3.6: a Failed pod under OnFailure is deleted and re-created (Restarting)",
)


# -- backoffLimit: v1 sums container restarts over the whole job

def _backoff_program(role, index, attempt):
    return "sleep 1; exit 1" if role == "worker" and attempt == 0 else None


def _obs_backoff(s: Side) -> dict:
    s.wait_for(lambda: s.status() != "active" or {x.index for x in s.starts("worker") if x.restart > 0} == {0, 1},
               "both workers restarted once")
    st, t = s.wait_done(SETTLE)
    s.note(f"{st} at {t:.1f}s; {role_starts(s, 'worker')}")
    return {"backoffLimit:worker": f"{st} after each of 2 workers restarted once (backoffLimit 2)"}


BACKOFF = Scenario(
    "pytorch-backofflimit-summed",
    lead_and_workers("PyTorchJob", "pt-backoff", 2, run_policy={"backoffLimit": 2}),
    ("backoffLimit:worker",), _obs_backoff, _backoff_program,
    {"backoffLimit:worker": "Failed after each of 2 workers restarted once (backoffLimit 2)"},
    why="§1.6 step 4(b): the sum of restartCount over running pods reaching backoffLimit fails the job",
)


# -- backoffLimit under ExitCode: v1 re-creates pods without counting them

def _always_137(role, index, attempt):
    return "sleep 1; exit 137" if role == "worker" else None


def _obs_backoff_exitcode(s: Side) -> dict:
    s.wait_for(lambda: s.status() != "active" or len(s.starts("worker")) >= 3, "the job ended or 3 worker pods ran")
    st, t = s.wait_done(SETTLE / 2)
    s.note(f"{st} at {t:.1f}s; {role_starts(s, 'worker')}")
    return {"backoffLimit:worker": f"{st} while the worker keeps exiting 137 (backoffLimit 1)"
            + (", its pod re-created each time" if st == "active" else "")}


BACKOFF_EXITCODE = Scenario(
    "pytorch-backofflimit-exitcode-137",
    lead_and_workers("PyTorchJob", "pt-backoff-ec", policy="ExitCode", run_policy={"backoffLimit": 1}),
    ("backoffLimit:worker",), _obs_backoff_exitcode, _always_137,
    {"backoffLimit:worker": "active while the worker keeps exiting 137 (backoffLimit 1), its pod re-created each time"},
    why="§1.6 step 4: re-created pods start at restartCount 0, so ExitCode retries are not bounded by backoffLimit >= 1",
)


# -- activeDeadlineSeconds

DEADLINE_S = 12  # fixtures/pytorchjob/active-deadline's job, with this deadline


def _obs_deadline(s: Side) -> dict:
    s.wait_for(lambda: {x.index for x in s.starts("worker")} >= {0, 1} or s.status() != "active",
               "every pod started")
    settled = max((x.t for x in s.starts()), default=s.t0) - s.t0
    s.note(f"pods settled at {settled:.1f}s")
    assert settled < DEADLINE_S - 3, (f"{s.world}: the pods took {settled:.0f} s to start, too close to the "
                                      f"{DEADLINE_S} s deadline for a clean observation (machine overloaded?)")
    s.sleep_until(DEADLINE_S + SETTLE)
    at_deadline = s.status()
    # any change to the job makes the operator reconcile it (its watch on the job has no update filter)
    s.touch()
    st, t = s.wait_done(SETTLE)
    s.note(f"{at_deadline} at {DEADLINE_S + SETTLE}s; {st} after a touch, at {t:.1f}s")
    out = {"activeDeadlineSeconds": f"{DEADLINE_S + SETTLE:.0f} s after creation: {at_deadline}; after an update "
                                    f"of the job object: {st}"}
    time.sleep(SETTLE / 2)
    out["cleanPodPolicy"] = f"after the job: worker {s.pod_states('worker')}"
    return out


def _with_deadline(job: dict, seconds: int) -> dict:
    job = copy.deepcopy(job)
    job["spec"]["runPolicy"]["activeDeadlineSeconds"] = seconds
    return job


DEADLINE = Scenario(
    "pytorch-active-deadline",
    _with_deadline(fixture_job("pytorchjob/active-deadline"), DEADLINE_S),
    ("activeDeadlineSeconds", "cleanPodPolicy"), _obs_deadline, run_forever,
    {"activeDeadlineSeconds": f"{DEADLINE_S + SETTLE:.0f} s after creation: active; after an update of the job "
                              f"object: Failed",
     "cleanPodPolicy": "after the job: worker 2 unfinished"},
    why="the operator's code, not §1.6: the deadline is checked only when the job is reconciled (its "
        "WorkQueue.AddAfter is a no-op FakeWorkQueue); then v1.9.4 applies cleanPodPolicy (None: pods keep running)",
)


# -- MPIJob v1: the launcher starts once the workers are Ready; the launcher decides

def _mpi_program(role, index, attempt):
    return "{gate:finish}; exit 0" if role == "launcher" else None


def _obs_mpi(s: Side) -> dict:
    s.wait_for(lambda: s.first_start("launcher") is not None, "the launcher started")
    out = {"start:launcher": start_order(s, "launcher", "worker", 3)}
    s.open_gate("finish")
    st, t = s.wait_done(EVENT_TIMEOUT)
    s.note(f"{st} at {t:.1f}s")
    out["success"] = f"{st} when the launcher exits 0"
    time.sleep(SETTLE / 2)
    out["cleanPodPolicy"] = f"after the job: worker {s.pod_states('worker')}"
    return out


MPI = Scenario(
    "mpijob-v1-launcher",
    v1job("MPIJob", "mpi-order", {"Launcher": replica("MPIJob", 1, "Never"),
                                  "Worker": replica("MPIJob", 2, "Never", ready_after=3)}),
    ("start:launcher", "success", "cleanPodPolicy"), _obs_mpi, _mpi_program,
    {"start:launcher": "after worker is Ready", "success": "Succeeded when the launcher exits 0",
     "cleanPodPolicy": "after the job: worker 2 unfinished"},
    options=ConvertOptions(accept_mpi_ssh=True),
    why="§5.2: kubectl-delivery blocks the launcher until every worker is Ready; §5.3 the launcher decides",
)


# -- suspend

def _obs_suspend(s: Side) -> dict:
    s.sleep_until(5)
    before = len(s.pods())
    s.suspend(False)
    s.wait_for(lambda: sum(1 for p in s.pods() if p[3] == "Running") >= 2, "both pods running after resume")
    after = sum(1 for p in s.pods() if p[3] == "Running")
    s.suspend(True)
    s.wait_for(lambda: not s.pods(), "every pod deleted after suspending again", timeout=30)
    left = len(s.pods())
    return {"suspend": f"{before} pods while suspended; {after} running after resume; "
                       f"{'every pod' if not left else f'{after - left} pod(s)'} deleted when suspended again"}


SUSPEND = Scenario(
    "pytorch-suspend-resume",
    lead_and_workers("PyTorchJob", "pt-suspend", run_policy={"suspend": True}),
    ("suspend",), _obs_suspend, run_forever,
    {"suspend": "0 pods while suspended; 2 running after resume; every pod deleted when suspended again"},
    why="§1.6 step 3: a suspended job has no pods (suspending deletes them); resuming creates them",
)


# -- ttlSecondsAfterFinished

TTL_S = 3


def _master_exits(role, index, attempt):
    return "{gate:finish}; exit 0" if role == "master" else None


def _obs_ttl(s: Side) -> dict:
    s.wait_for(lambda: {x.role for x in s.starts()} >= {"master", "worker"}, "every pod started")
    s.open_gate("finish")
    st, t = s.wait_done(EVENT_TIMEOUT)
    started = s.wait_for(s.deletion_started, "the job's deletion", timeout=TTL_S + 25)
    deleting = time.monotonic() - s.t0
    s.note(f"{st} at {t:.1f}s, deletion started at {deleting:.1f}s")
    # a JobSet is deleted in the foreground: it goes once its Jobs and pods have gone
    s.wait_for(lambda: s.status() == "deleted" and not s.pods(), "the job and its pods gone", timeout=40)
    s.note(f"object and pods gone at {time.monotonic() - s.t0:.1f}s")
    if not started:
        return {"ttl": f"{st}; the job not deleted {TTL_S + 25} s after it finished"}
    # the finish is seen by polling (late under load), the deletion too: "about ttl" spans that lag,
    # and still tells an immediate deletion (under 1 s) from a TTL one
    when = (f"about ttl ({TTL_S} s) after it finished" if TTL_S - 2 <= deleting - t <= TTL_S + 15
            else f"{deleting - t:.0f}s after it finished")
    return {"ttl": f"{st}; the job's deletion started {when}; then the job and {'all' if not s.pods() else 'not all'} "
                   f"of its pods gone"}


TTL = Scenario(
    "pytorch-ttl",
    lead_and_workers("PyTorchJob", "pt-ttl", run_policy={"ttlSecondsAfterFinished": TTL_S}),
    ("ttl",), _obs_ttl, _master_exits,
    {"ttl": f"Succeeded; the job's deletion started about ttl ({TTL_S} s) after it finished; then the job and all of "
            "its pods gone"},
    why="§1.6 step 2: the operator deletes the job ttl seconds after completionTime; its pods go with it",
)


# -- cleanPodPolicy Running / All

def _obs_clean(s: Side) -> dict:
    s.wait_for(lambda: len({(x.role, x.index) for x in s.starts()}) >= 3, "every pod started")
    s.open_gate("finish")
    st, t = s.wait_done(EVENT_TIMEOUT)
    time.sleep(SETTLE / 2)
    return {"cleanPodPolicy": f"{st}; then master {s.pod_states('master')}; worker {s.pod_states('worker')}"}


def _clean_scenario(policy: str, expect: str) -> Scenario:
    return Scenario(
        f"pytorch-cleanpodpolicy-{policy.lower()}",
        lead_and_workers("PyTorchJob", f"pt-clean-{policy.lower()}", 2, run_policy={"cleanPodPolicy": policy}),
        ("cleanPodPolicy",), _obs_clean, _master_exits,
        {"cleanPodPolicy": expect},
        why=f"§1.6 step 2: cleanPodPolicy {policy} once the job has finished",
    )


CLEAN_RUNNING = _clean_scenario("Running", "Succeeded; then master 1 Succeeded; worker none")
CLEAN_ALL = _clean_scenario("All", "Succeeded; then master none; worker none")
