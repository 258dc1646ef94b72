"""Lifecycle scenarios about pods: who decides success, what a container exit does under each restartPolicy
and exit code, start order (tests/e2e/test_lifecycle.py runs them, lifecycle_harness.py is their machinery).

Observations wait for events (a pod started, exited, was replaced), never for a fixed moment
after creation: the machine is shared, and a pod may take seconds to start. Once the event is
seen, SETTLE seconds give the controllers time to react. Processes that must not end on their
own wait on a gate ("{gate:NAME}" in a program), which observe opens (Side.open_gate).
"""
from __future__ import annotations

import time

from kf2jobset.options import ConvertOptions

from .lifecycle_harness import (EVENT_TIMEOUT, SETTLE, Scenario, Side, fixture_job, lead_and_workers, replica, role_starts,
                                start_order, v1job)


# -- who decides success; cleanPodPolicy None; PyTorch start order


MASTER_READY_AFTER = 5  # wide enough that "at once" (the no-dependsOn mutation) never looks like "after Ready"


def _pt_master_program(role, index, attempt):
    return "{gate:finish}; exit 0" if role == "master" else None


def _obs_pt_master(s: Side) -> dict:
    s.wait_started(2)
    out = {"start:worker": start_order(s, "worker", "master", MASTER_READY_AFTER)}
    s.open_gate("finish")
    s.wait_exited(0, "master")
    st, t = s.wait_done(SETTLE)
    workers = s.pod_states("worker")
    s.note(f"{st} at {t:.1f}s; workers then: {workers}")
    out["success"] = f"{st} when the master exits 0 (the workers never exit)"
    time.sleep(SETTLE / 2)
    out["cleanPodPolicy"] = f"after the job: master {s.pod_states('master')}; worker {s.pod_states('worker')}"
    return out


PT_MASTER = Scenario(
    "pytorch-master-decides",
    v1job("PyTorchJob", "pt-master", {"Master": replica("PyTorchJob", 1, "OnFailure", ready_after=MASTER_READY_AFTER),
                                      "Worker": replica("PyTorchJob", 2, "OnFailure")}),
    ("success", "cleanPodPolicy", "start:worker"), _obs_pt_master, _pt_master_program,
    {"success": "Succeeded when the master exits 0 (the workers never exit)",
     "cleanPodPolicy": "after the job: master 1 Succeeded; worker 2 unfinished",
     "start:worker": "after master is Ready"},
    why="§3.6: the master alone decides; cleanPodPolicy None (default) leaves workers running; §3.3 init-pytorch",
)


# -- XGBoost: the master decides

def _obs_xgb_master(s: Side) -> dict:
    s.wait_for(lambda: {x.role for x in s.starts()} >= {"master", "worker"}, "every replica type started")
    s.open_gate("finish")
    s.wait_exited(0, "master")
    st, t = s.wait_done(SETTLE)
    out = {"success": f"{st} when the master exits 0 (the workers never exit)"}
    time.sleep(SETTLE / 2)
    out["cleanPodPolicy"] = f"after the job: worker {s.pod_states('worker')}"
    return out


PADDLE_MASTER = Scenario(
    "paddle-master-decides",
    lead_and_workers("PaddleJob", "pd-master", 2),
    ("success", "cleanPodPolicy"), _obs_xgb_master, _pt_master_program,
    {"success": "Succeeded when the master exits 0 (the workers never exit)",
     "cleanPodPolicy": "after the job: worker 2 unfinished"},
    why="§7/§9.2: a PaddleJob with a Master succeeds when the master has",
)

XGB_MASTER = Scenario(
    "xgboost-master-decides",
    lead_and_workers("XGBoostJob", "xgb-master", 2),
    ("success", "cleanPodPolicy"), _obs_xgb_master, _pt_master_program,
    {"success": "Succeeded when the master exits 0 (the workers never exit)",
     "cleanPodPolicy": "after the job: worker 2 unfinished"},
    why="§4.4: the master decides; cleanPodPolicy None leaves the workers running",
)


# -- restartPolicy Always: an exit 0 is restarted too

def _always_program(role, index, attempt):
    return "sleep 1; exit 0" if index == 0 and attempt == 0 else None


def _obs_always(s: Side) -> dict:
    def w0():
        return [x for x in s.starts("worker") if x.index == 0]
    s.wait_for(lambda: len(w0()) >= 2 or any(p[1] == 0 and p[3] == "Succeeded" for p in s.pods("worker")),
               "worker 0 exited 0 and was restarted or is done")
    time.sleep(SETTLE / 2)
    return {"restartPolicy:worker": f"worker 0 exits 0: {'restarted in place' if len(w0()) >= 2 else 'done (Succeeded)'}; "
                                    f"the job {s.status()}"}


ALWAYS = Scenario(
    "pytorch-always-exit-0",
    v1job("PyTorchJob", "pt-always", {"Worker": replica("PyTorchJob", 2, "Always")}),
    ("restartPolicy:worker",), _obs_always, _always_program,
    {"restartPolicy:worker": "worker 0 exits 0: restarted in place; the job active"},
    why="§1.4.3/§1.6: the pod keeps restartPolicy Always, so the kubelet restarts even a clean exit",
)


# -- TFJob without chief: worker 0 exiting 0 ends the job

def _tf_worker0_program(role, index, attempt):
    return "{gate:finish}; exit 0" if index == 0 else None


def _obs_tf_worker0(s: Side) -> dict:
    s.wait_started(2)
    s.open_gate("finish")
    s.wait_exited(0)
    st, t = s.wait_done(SETTLE)
    s.note(f"{st} at {t:.1f}s")
    return {"success": f"{st} after worker 0 exits 0 while worker 1 runs" if st != "active"
            else "still running after worker 0 exits 0 (worker 1 runs)"}


TF_WORKER0 = Scenario(
    "tfjob-worker0-decides",
    v1job("TFJob", "tf-w0", {"Worker": replica("TFJob", 2, "OnFailure")}),
    ("success",), _obs_tf_worker0, _tf_worker0_program,
    {"success": "Succeeded after worker 0 exits 0 while worker 1 runs"},
    why="§2.5: no chief: worker 0 exiting 0 succeeds the job (successPolicy default)",
)


# -- TFJob with a chief and PS: the chief decides, PS keep running

def _tf_chief_program(role, index, attempt):
    return "{gate:finish}; exit 0" if role == "chief" else None


def _obs_tf_chief(s: Side) -> dict:
    s.wait_for(lambda: {x.role for x in s.starts()} >= {"chief", "ps", "worker"}, "every replica type started")
    s.open_gate("finish")
    st, t = s.wait_done(EVENT_TIMEOUT)
    s.note(f"{st} at {t:.1f}s")
    out = {"success": f"{st} when the chief exits 0 (PS and workers never exit)"}
    time.sleep(SETTLE / 2)
    out["cleanPodPolicy"] = f"after the job: ps {s.pod_states('ps')}; worker {s.pod_states('worker')}"
    return out


TF_CHIEF = Scenario(
    "tfjob-chief-decides",
    v1job("TFJob", "tf-chief", {"Chief": replica("TFJob", 1, "OnFailure"), "PS": replica("TFJob", 1, "OnFailure"),
                                "Worker": replica("TFJob", 1, "OnFailure")}),
    ("success", "cleanPodPolicy"), _obs_tf_chief, _tf_chief_program,
    {"success": "Succeeded when the chief exits 0 (PS and workers never exit)",
     "cleanPodPolicy": "after the job: ps 1 unfinished; worker 1 unfinished"},
    why="§2.5: Chief decides; PS servers keep running under cleanPodPolicy None",
)


# -- PyTorch worker-only, elastic: any worker

def _elastic_program(role, index, attempt):
    return "{gate:finish}; exit 0" if index == 1 else None


def _obs_elastic(s: Side) -> dict:
    s.wait_started(3)
    s.open_gate("finish")
    s.wait_exited(1)
    st, t = s.wait_done(SETTLE)
    return {"success": f"{st} after worker 1 exits 0" if st != "active" else "still running after worker 1 exits 0"}


ELASTIC = Scenario(
    "pytorch-elastic-any-worker",
    v1job("PyTorchJob", "pt-elastic", {"Worker": replica("PyTorchJob", 3, "OnFailure")},
          elasticPolicy={"minReplicas": 1, "maxReplicas": 3, "rdzvBackend": "c10d"}),
    ("success",), _obs_elastic, _elastic_program,
    {"success": "Succeeded after worker 1 exits 0"},
    why="§3.6: elastic worker-only PyTorchJob succeeds when any worker has succeeded",
)


# -- PyTorch worker-only, not elastic: every worker

def _all_workers_program(role, index, attempt):
    return "{gate:first}; exit 0" if index == 0 else "{gate:second}; exit 0"


def _obs_all_workers(s: Side) -> dict:
    s.wait_started(2)
    s.open_gate("first")
    s.wait_exited(0)
    first, _ = s.wait_done(SETTLE / 2)
    s.open_gate("second")
    st, t = s.wait_done(EVENT_TIMEOUT)
    s.note(f"{first} after worker 0, {st} at {t:.1f}s")
    return {"success": f"{first} after worker 0 exits 0; {st} after worker 1 exits 0"}


ALL_WORKERS = Scenario(
    "pytorch-worker-only-all-workers",
    v1job("PyTorchJob", "pt-workers", {"Worker": replica("PyTorchJob", 2, "OnFailure")}),
    ("success",), _obs_all_workers, _all_workers_program,
    {"success": "active after worker 0 exits 0; Succeeded after worker 1 exits 0"},
    why="§3.6: a worker-only PyTorchJob succeeds when every worker has succeeded",
)


JAX_ALL_WORKERS = Scenario(
    "jax-all-workers",
    v1job("JAXJob", "jax-workers", {"Worker": replica("JAXJob", 2, "OnFailure")}),
    ("success",), _obs_all_workers, _all_workers_program,
    {"success": "active after worker 0 exits 0; Succeeded after worker 1 exits 0"},
    why="§8/§9.2: a JAXJob succeeds when every worker has",
)

PADDLE_ALL_WORKERS = Scenario(
    "paddle-worker-only-all-workers",
    v1job("PaddleJob", "pd-workers", {"Worker": replica("PaddleJob", 2, "OnFailure")}),
    ("success",), _obs_all_workers, _all_workers_program,
    {"success": "active after worker 0 exits 0; Succeeded after worker 1 exits 0"},
    why="§7/§9.2: a worker-only PaddleJob succeeds when every worker has (the JobSet splits worker 0 into a "
        "replicatedJob of its own; both are success targets)",
)


# -- restartPolicy Never: one failed pod fails the job

def _never_program(role, index, attempt):
    return "sleep 1; exit 1" if role == "worker" else None


def _obs_never(s: Side) -> dict:
    st, t = s.wait_done(EVENT_TIMEOUT)
    s.note(f"{st} at {t:.1f}s")
    out = {"failure:worker": f"{st}; {role_starts(s, 'worker')}"}
    time.sleep(SETTLE / 2)
    out["cleanPodPolicy"] = f"after the job: master {s.pod_states('master')}"
    return out


NEVER = Scenario(
    "pytorch-never-worker-fails",
    lead_and_workers("PyTorchJob", "pt-never", policy="Never", lead_policy="Never"),
    ("failure:worker", "cleanPodPolicy"), _obs_never, _never_program,
    {"failure:worker": "Failed; 1 worker start(s) in 1 pod(s)", "cleanPodPolicy": "after the job: master 1 unfinished"},
    why="§3.6: a failed pod under Never fails the job; cleanPodPolicy None keeps the master running",
)


# -- XGBoost, Never: a failed worker fails the job

NEVER_XGB = Scenario(
    "xgboost-never-worker-fails",
    lead_and_workers("XGBoostJob", "xgb-never", policy="Never", lead_policy="Never"),
    ("failure:worker", "cleanPodPolicy"), _obs_never, _never_program,
    {"failure:worker": "Failed; 1 worker start(s) in 1 pod(s)", "cleanPodPolicy": "after the job: master 1 unfinished"},
    why="§4.4: any Failed pod fails an XGBoostJob",
)


# -- restartPolicy OnFailure: the container is restarted in place

def _onfailure_program(role, index, attempt):
    return "sleep 1; exit 1" if role == "worker" and attempt == 0 else None


def _obs_onfailure(s: Side) -> dict:
    s.wait_for(lambda: len(s.starts("worker")) >= 2 or s.status() != "active", "the worker restarted")
    st, t = s.wait_done(SETTLE)
    return {"restartPolicy:worker": f"{st}; {role_starts(s, 'worker')}"}


ONFAILURE = Scenario(
    "pytorch-onfailure-restart",
    lead_and_workers("PyTorchJob", "pt-onfail"),
    ("restartPolicy:worker",), _obs_onfailure, _onfailure_program,
    {"restartPolicy:worker": "active; 2 worker start(s) in 1 pod(s)"},
    why="§1.6: under OnFailure the kubelet restarts the container; the pod never fails, no backoffLimit set",
)

ONFAILURE_XGB = Scenario(
    "xgboost-onfailure-restart",
    lead_and_workers("XGBoostJob", "xgb-onfail"),
    ("restartPolicy:worker",), _obs_onfailure, _onfailure_program,
    {"restartPolicy:worker": "active; 2 worker start(s) in 1 pod(s)"},
    why="§1.6: an exit under OnFailure is an in-place restart; the pod stays Running, so XGBoost's rule never fires",
)


# -- restartPolicy ExitCode: 137 is retried (new pod), 1 is permanent

def _exitcode_program(role, index, attempt):
    if role != "worker":
        return None
    return "sleep 1; exit 137" if attempt == 0 else "sleep 1; exit 1"


def _obs_exitcode(s: Side) -> dict:
    st, t = s.wait_done(EVENT_TIMEOUT)
    s.note(f"{st} at {t:.1f}s")
    return {"failure:worker": f"{st}; {role_starts(s, 'worker')}"}


EXITCODE = Scenario(
    "pytorch-exitcode-137-then-1",
    lead_and_workers("PyTorchJob", "pt-exitcode", policy="ExitCode"),
    ("failure:worker",), _obs_exitcode, _exitcode_program,
    {"failure:worker": "Failed; 2 worker start(s) in 2 pod(s)"},
    why="§1.6: ExitCode: 137 (retryable) re-creates the pod, exit 1 (permanent) fails the job",
)

EXITCODE_TF = Scenario(
    "tfjob-exitcode-137-then-1",
    lead_and_workers("TFJob", "tf-exitcode", policy="ExitCode", lead="Chief"),
    ("failure:worker",), _obs_exitcode, _exitcode_program,
    {"failure:worker": "Failed; 2 worker start(s) in 2 pod(s)"},
    why="§1.6/§2.5: ExitCode: 137 re-creates the pod (Restarting), exit 1 fails the job",
)


EXITCODE_XGB = Scenario(
    "xgboost-exitcode-137-then-1",
    lead_and_workers("XGBoostJob", "xgb-exitcode", policy="ExitCode"),
    ("failure:worker",), _obs_exitcode, _exitcode_program,
    {"failure:worker": "Failed; 2 worker start(s) in 2 pod(s)"},
    why="§4.4 + §1.6: an ExitCode type is Restarting on 137 (pod re-created), exit 1 is permanent",
)

EXITCODE_NO_RETRY = Scenario(
    "pytorch-exitcode-137-backofflimit-0",
    fixture_job("pytorchjob/exitcode-no-retry"),
    ("failure:worker",), _obs_exitcode, _exitcode_program,
    {"failure:worker": "Failed; 1 worker start(s) in 1 pod(s)"},
    why="§1.6 step 4(a): with backoffLimit 0 a new Failed pod fails the job, even a retryable exit code",
)


def _mpi_exit_program(code):
    def program(role, index, attempt):
        return f"sleep 1; exit {code}" if role == "worker" and index == 0 and attempt == 0 else None
    return program


def _obs_mpi_exitcode(s: Side) -> dict:
    s.wait_for(lambda: s.status() != "active" or len([x for x in s.starts("worker") if x.index == 0]) >= 2,
               "the job ended or worker 0 started again", timeout=25)
    st, t = s.wait_done(SETTLE / 2)
    s.note(f"{st} at {t:.1f}s")
    return {"failure:worker": f"{st}; {len([x for x in s.starts('worker') if x.index == 0])} start(s) of worker 0"}


MPI_EXITCODE_137 = Scenario(
    "mpijob-v1-exitcode-137",
    fixture_job("mpijob-v1/exitcode"),
    ("failure:worker",), _obs_mpi_exitcode, _mpi_exit_program(137),
    {"failure:worker": "active; 1 start(s) of worker 0"},
    options=ConvertOptions(accept_mpi_ssh=True),
    why="§5.3: under ExitCode a Failed pod marks the MPIJob Restarting, but nothing re-creates it",
)

MPI_EXITCODE_1 = Scenario(
    "mpijob-v1-exitcode-1",
    fixture_job("mpijob-v1/exitcode"),
    ("failure:worker",), _obs_mpi_exitcode, _mpi_exit_program(1),
    {"failure:worker": "active; 1 start(s) of worker 0"},
    options=ConvertOptions(accept_mpi_ssh=True),
    why="§5.3: under ExitCode the MPIJob is Restarting even for a permanent code (the common permanent-code "
        "rule is in ReconcilePods, which MPIJob v1 replaces)",
)
