"""Stall detection and checkpoint restart in the Job tier (spec/measurements.md §5), on the world of
data/reconcile_job/_base.yaml: a running Job with a GoodputMeasurement."""
from __future__ import annotations

import copy
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import (
    Create,
    Delete,
    Event,
    Ref,
    UpdateStatus,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import job_tier
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile.world import JobWorld

BASE = yaml.safe_load((Path(__file__).parents[1] / "data" / "reconcile_job" / "_base.yaml").read_text())
NOW = datetime.fromisoformat("2025-03-01T12:00:00+00:00")
STARTED = "2025-03-01T11:51:00Z"  # the running template's workloadStartTime


def ago(seconds: float) -> str:
    return (NOW - timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def goodput(**status: Any) -> dict[str, Any]:
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "GoodputMeasurement",
            "metadata": {"name": "wf-job-goodput", "namespace": "certs", "resourceVersion": "7"},
            "spec": {"jobRef": {"apiGroup": "nvcre.nvidia.com", "kind": "Job", "name": "wf-job"},
                     "logProfileRef": "megatron-training", "sampleInterval": "30s"},
            "status": status}


def world(gm: dict[str, Any] | None, spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None,
          phase: str = "Running") -> JobWorld:
    doc = copy.deepcopy(BASE)
    job = doc["job"]
    job["spec"].update({"stallMultiplier": 3, "goodputMeasurement": {"logProfileRef": "megatron-training",
                                                                     "sampleInterval": "30s"}, **(spec or {})})
    job["status"] = {**copy.deepcopy(doc["templates"]["status_running"]), **(status or {})}
    workload = copy.deepcopy(doc["templates"]["trainjob"])
    if phase == "Failed":
        workload["status"]["conditions"] = [{"type": "Failed", "status": "True", "message": "jobset failed"}]
    return JobWorld(job=job, workload=workload, now=NOW, measurements=[gm] if gm else [])


def outcome(w: JobWorld) -> tuple[str, str, str]:
    """(True exclusive condition, reason, message) the pass writes (the Job's status as read if none)."""
    writes = [a.obj for a in job_tier.reconcile(w).actions if isinstance(a, UpdateStatus) and a.obj["kind"] == "Job"]
    status = (writes[-1] if writes else w.job)["status"]
    true = next(c for c in status["conditions"] if c["status"] == "True")
    return true["type"], true["reason"], true["message"]


RUNNING = ("InProgress", "WorkloadRunning", "Workload 1/1 is running")
STARTUP = ("Failed", "WorkloadStalled", "Workload stalled: no training step observed within startup timeout")
TRAINING = ("Failed", "WorkloadStalled", "Workload stalled: no training step within the configured threshold")

# (id, GoodputMeasurement status or None, Job spec changes, Job status changes, expected outcome)
CASES = [
    # Startup: budget 1200 s + 2 x 30 s from the application start (moved up to the workload's start).
    ("startup-within-budget", {"applicationStartTime": ago(1260)}, {}, {"workloadStartTime": ago(1300)}, RUNNING),
    ("startup-past-budget", {"applicationStartTime": ago(1261)}, {}, {"workloadStartTime": ago(1300)}, STARTUP),
    ("startup-anchor-moves-to-workload-start", {"applicationStartTime": ago(5000)}, {},
     {"workloadStartTime": ago(1000)}, RUNNING),
    ("startup-from-measurement-start", {"startTime": ago(1261)}, {}, {"workloadStartTime": ago(2000)}, STARTUP),
    ("startup-no-anchor-no-check", {}, {}, {"workloadStartTime": ago(99999)}, RUNNING),
    ("startup-own-timeout", {"startTime": ago(161)}, {"startupStallTimeoutSeconds": 100},
     {"workloadStartTime": ago(2000)}, STARTUP),
    ("startup-scheduling-resumed-not-charged", {"startTime": ago(5000)}, {},
     {"workloadStartTime": ago(5000), "schedulingResumedTime": ago(600)}, RUNNING),
    ("startup-average-without-a-step-is-startup", {"startTime": ago(1261), "avgStepTimeSec": "4.000000"}, {},
     {"workloadStartTime": ago(2000)}, STARTUP),
    # Training: 3 x 4 s x logInterval 10 + 60 s = 180 s since the last step.
    ("training-within-threshold", {"lastStepTimestamp": ago(180), "avgStepTimeSec": "4.000000", "logInterval": 10},
     {}, {}, RUNNING),
    ("training-past-threshold", {"lastStepTimestamp": ago(181), "avgStepTimeSec": "4.000000", "logInterval": 10},
     {}, {}, TRAINING),
    ("training-log-interval-at-least-one", {"lastStepTimestamp": ago(73), "avgStepTimeSec": "4.000000"}, {}, {},
     TRAINING),
    ("training-zero-average-no-check", {"lastStepTimestamp": ago(9999), "avgStepTimeSec": "0.000000"}, {}, {}, RUNNING),
    ("training-scheduling-resumed-not-charged",
     {"lastStepTimestamp": ago(9999), "avgStepTimeSec": "4.000000", "logInterval": 10}, {},
     {"schedulingResumedTime": ago(100)}, RUNNING),
    # Off without a multiplier or without a measurement.
    ("no-multiplier", {"startTime": ago(99999)}, {"stallMultiplier": None}, {}, RUNNING),
    ("no-measurement", None, {}, {}, RUNNING),
]


@pytest.mark.parametrize("gm, spec, status, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_stall_detection(gm, spec, status, expected):
    assert outcome(world(goodput(**gm) if gm is not None else None, spec, status)) == expected


def test_a_job_stalled_on_first_sight_does_not_keep_the_start():
    """(Only the training clock can run out then: the startup one counts from the workload's start.)"""
    w = world(goodput(lastStepTimestamp=ago(181), avgStepTimeSec="4.000000", logInterval=10))
    del w.job["status"]["workloadStartTime"]
    step = job_tier.reconcile(w)
    status = next(a.obj for a in step.actions if isinstance(a, UpdateStatus))["status"]
    assert "workloadStartTime" not in status and step.terminal
    assert [(a.type, a.reason) for a in step.actions if isinstance(a, Event)] == [("Warning", "WorkloadStalled")]


CHECKPOINT = {"checkpoint": {"pvcName": "ckpt", "maxRestarts": 2}}
STALLED = {"lastStepTimestamp": ago(181), "avgStepTimeSec": "4.000000", "logInterval": 10, "lastCheckpointStep": 100,
           "applicationStartTime": ago(3000), "startTime": ago(3000), "resumeTimeSec": "52.880120"}


def test_a_stall_with_a_checkpoint_restarts_the_workload():
    w = world(goodput(**STALLED), CHECKPOINT)
    step = job_tier.reconcile(w)
    delete, reset, write, event = step.actions
    assert delete == Delete(Ref("trainer.kubeflow.org/v1alpha1", "TrainJob", "certs", "wf-job-workload"), "wl-uid-1")
    assert isinstance(reset, UpdateStatus) and reset.obj["metadata"]["resourceVersion"] == "7"
    assert reset.obj["status"] == {"logInterval": 10, "lastCheckpointStep": 100, "startTime": "2025-03-01T12:00:00Z",
                                   "resumeTimeSec": "52.880120"}
    status = write.obj["status"]
    assert "workloadRef" not in status and "workloadStartTime" not in status and status["restartCount"] == 1
    assert next(c for c in status["conditions"] if c["status"] == "True") == {
        "type": "InProgress", "status": "True", "observedGeneration": 1, "lastTransitionTime": "2025-03-01T11:50:00Z",
        "reason": "WorkloadRestarting", "message": "Restarting workload from checkpoint (restart 1/2)"}
    assert (event.type, event.reason, event.message) == (
        "Normal", "WorkloadRestarting", "Restarting workload from checkpoint (restart 1/2)")
    assert step.requeue_after == 60.0 and not step.terminal
    assert "failedNodes" not in status and "failureLog" not in status


def test_the_next_pass_creates_a_fresh_workload():
    w = world(goodput(**STALLED), CHECKPOINT)
    write = [a for a in job_tier.reconcile(w).actions if isinstance(a, UpdateStatus)][-1]
    w.job, w.workload = write.obj, None
    step = job_tier.reconcile(w)
    assert isinstance(step.actions[0], Create) and step.actions[0].obj["metadata"]["name"] == "wf-job-workload"
    assert outcome(w) == ("InProgress", "WorkloadCreated", "Created TrainJob wf-job-workload")
    # The old one still terminating is not adopted: the Create meets it and waits (ownership.Retry).
    terminating = copy.deepcopy(BASE["templates"]["trainjob"])
    terminating["metadata"]["deletionTimestamp"] = ago(1)
    w.workload = terminating
    assert isinstance(job_tier.reconcile(w).actions[0], Create)


@pytest.mark.parametrize("phase, gone, reason, message", [
    ("Failed", False, "WorkloadFailed", "Workload 2/3 failed: jobset failed"),
    ("Running", True, "WorkloadFailed", "Workload 2/3 was deleted"),
])
def test_a_failed_or_deleted_workload_restarts_while_restarts_are_left(phase, gone, reason, message):
    w = world(goodput(lastCheckpointStep=100), CHECKPOINT, {"restartCount": 1}, phase)
    if gone:
        w.workload = None
    assert outcome(w) == ("InProgress", "WorkloadRestarting", "Restarting workload from checkpoint (restart 2/2)")
    assert [type(a) for a in job_tier.reconcile(w).actions][:1] == ([UpdateStatus] if gone else [Delete])
    w.job["status"]["restartCount"] = 2  # none left
    assert outcome(w) == ("Failed", reason, message.replace("2/3", "3/3"))


@pytest.mark.parametrize("spec, gm", [
    ({}, {"lastCheckpointStep": 100}),                                          # no spec.checkpoint
    ({"checkpoint": {"pvcName": "ckpt"}}, {"lastCheckpointStep": 100}),         # maxRestarts 0: never
    (CHECKPOINT, {"lastCheckpointStep": 0}),                                     # nothing saved yet
])
def test_no_restart_without_a_checkpoint_to_restart_from(spec, gm):
    assert outcome(world(goodput(**gm), spec, phase="Failed"))[:2] == ("Failed", "WorkloadFailed")


def test_the_restart_delay_defaults_to_thirty_seconds():
    w = world(goodput(**STALLED), CHECKPOINT)
    del w.job["spec"]["goodputMeasurement"]["sampleInterval"]
    assert job_tier.reconcile(w).requeue_after == 30.0
