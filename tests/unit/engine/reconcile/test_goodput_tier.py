"""The GoodputMeasurement tier (spec/measurements.md §3) without a cluster, table-driven from
data/goodput_tier/scenarios.yaml: a measurement driven pass by pass over the spec's megatron example, with a
checkpoint restart, a failed Job and the throttle; a run killed and restarted reaches the same figures."""
from __future__ import annotations

import copy
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Event, UpdateStatus
from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.logprofiles import builtin_profile
from ansible_collections.cre.certification.plugins.module_utils.engine.logs.log_lines import split_timestamp
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import goodput_tier as tier
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile.measurement import LogRead, Read

DATA = yaml.safe_load((Path(__file__).parents[1] / "data" / "goodput_tier" / "scenarios.yaml").read_text())
SCENARIOS = DATA["scenarios"]
WINDOW_AVERAGES = ("avgTFLOPSPerGPU", "avgStepTimeSec")
STEP_LINE = ("{0} [{1}] iteration {2:>8}/    5000 | consumed samples:        10240 | elapsed time per iteration (ms): "
             "{3} | throughput per GPU (TFLOP/s/GPU): {4} | lm loss: 6.482913E+00 |")


def log_lines(name: str) -> list[str]:
    return [entry if isinstance(entry, str) else STEP_LINE.format(*entry) for entry in DATA["logs"][name]]


def read(log: str, since: datetime | None, now: datetime) -> str:
    """The log API: lines from `since` (to the second) up to now."""
    floor = since.replace(microsecond=0) if since else None
    out = []
    for line in log_lines(log):
        stamp = split_timestamp(line)[0]
        if stamp is not None and (floor is None or stamp >= floor) and stamp <= now:
            out.append(line + "\n")
    return "".join(out)


def job(spec: dict[str, Any] | None) -> dict[str, Any] | None:
    if spec is None:
        return None
    status: dict[str, Any] = {"restartCount": spec.get("restartCount", 0)}
    if spec.get("workload"):
        status["workloadRef"] = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "name": spec["workload"]}
    if spec["condition"]:
        status["conditions"] = [{"type": spec["condition"], "status": "True",
                                 "lastTransitionTime": spec.get("at", "2026-03-02T10:03:40Z")}]
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "ns"},
            "status": status}


def pods(key: str, phase: str) -> list[dict[str, Any]]:
    return [{"metadata": {"name": p["name"], "labels": {"jobset.sigs.k8s.io/jobset-name": "j-workload",
                                                        "batch.kubernetes.io/job-completion-index": str(p["index"]),
                                                        "nvcre.nvidia.com/job": "j"}},
             "status": {"phase": phase, "startTime": p["start"],
                        "containerStatuses": [{"name": "node", "state": {"running": {}}}]}}
            for p in DATA["pods"][key]]


def measurement() -> dict[str, Any]:
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "GoodputMeasurement",
            "metadata": {"name": "j-goodput", "namespace": "ns", "generation": 1, "resourceVersion": "1"},
            "spec": {"jobRef": {"apiGroup": "nvcre.nvidia.com", "kind": "Job", "name": "j"},
                     "logProfileRef": "megatron-training"},
            "status": {}}


class Driver:
    """What driver/measurements.GoodputPass does for one measurement, against the scenario's logs."""

    def __init__(self, profile: dict[str, Any] | None = None) -> None:
        self.m = measurement()
        self.memory = tier.GoodputMemory()
        self.profile = profile or builtin_profile("megatron-training")
        self.reads: list[Read] = []

    def run(self, p: dict[str, Any]) -> tier.GoodputStep:
        now = datetime.fromisoformat(p["now"].replace("Z", "+00:00"))
        if p.get("forget"):
            self.memory = tier.GoodputMemory()
        if p.get("reset"):
            status = self.m["status"]
            for key in ("lastStepTimestamp", "avgStepTimeSec", "applicationStartTime"):
                status.pop(key, None)
            status["startTime"] = p["reset"]
        key = p["pods"]
        world = tier.GoodputWorld(copy.deepcopy(self.m), job(p["job"]), pods(key, p.get("phase", "Running")),
                                  self.profile, "", self.memory, now=now)
        step = tier.reconcile(world)
        self.reads = step.reads
        if step.reads:
            logs = {pod["name"]: pod["log"] for pod in DATA["pods"][key]}
            world.logs = {r.pod: LogRead(read(logs[r.pod], r.since, now)) for r in step.reads}
            step = tier.reconcile(world)
            assert not step.reads
        if step.memory is not None:
            self.memory = step.memory
        for action in step.step.actions:
            if isinstance(action, UpdateStatus):
                assert action.obj["metadata"] == self.m["metadata"] and action.obj["spec"] == self.m["spec"]
                self.m = action.obj
        return step


def check(p: dict[str, Any], step: tier.GoodputStep, driver: Driver, where: str) -> None:
    status = driver.m["status"]
    for key, value in (p.get("status") or {}).items():
        assert status.get(key) == value, f"{where}: status.{key}"
    for kind, (value, reason, message) in (p.get("conditions") or {}).items():
        found = next(c for c in status["conditions"] if c["type"] == kind)
        assert (found["status"], found["reason"], found["message"]) == (value, reason, message), where
    if "requeue" in p:
        assert step.step.requeue_after == p["requeue"], where
    if "reads" in p:
        assert driver.reads == p["reads"], where
    assert step.step.terminal == p.get("terminal", False), where


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["id"] for s in SCENARIOS])
def test_scenario(scenario):
    driver = Driver()
    for index, p in enumerate(scenario["passes"]):
        check(p, driver.run(p), driver, f"pass {index + 1}")


# A restarted run has no throttle to wait out: it samples at once, so the throttle scenario is not replayed.
RESTARTABLE = [s for s in SCENARIOS if s["id"] != "throttle"]


@pytest.mark.parametrize("scenario", RESTARTABLE, ids=[s["id"] for s in RESTARTABLE])
def test_a_run_killed_and_restarted_reaches_the_same_figures(scenario):
    """Dropping the driver's memory before any pass (the throttle, log anchor and open save are all it has)
    changes no figure the measurement ends with: everything else is read back from status. The averages
    are of the last window read (§3.4 item 5), and a restarted run's first window reaches back to worker-0's
    start, so they are the same only once a later window replaces them, as the final sample does here."""
    passes = scenario["passes"]
    whole = Driver()
    for p in passes:
        whole.run(p)
    rederived = scenario["id"] == "megatron-multi-succeeds"
    for forget_at in range(1, len(passes)):
        restarted = Driver()
        for index, p in enumerate(passes):
            restarted.run({**p, "forget": True} if index == forget_at else p)
        mine, theirs = restarted.m["status"], whole.m["status"]
        if not rederived:
            mine, theirs = ({k: v for k, v in s.items() if k not in WINDOW_AVERAGES} for s in (mine, theirs))
        assert mine == theirs, f"forgotten before pass {forget_at + 1}"


def test_a_single_worker_profile_reads_worker_zero_only():
    profile = builtin_profile("megatron-training")
    profile["spec"]["workerStrategy"]["type"] = "Single"
    driver = Driver(profile)
    driver.run(DATA["passes"][0])
    assert [r.pod for r in driver.reads] == ["j-workload-node-0-0"]
    multi = Driver()
    multi.run(DATA["passes"][0])
    assert [r.pod for r in multi.reads] == ["j-workload-node-0-0", "j-workload-node-0-1"]
    assert multi.reads[0].since == datetime.fromisoformat("2026-03-02T10:03:50+00:00")  # worker-0's start


def test_one_worker_unread_uses_the_other():
    p2 = DATA["passes"][1]
    driver = Driver()
    driver.run(DATA["passes"][0])
    now = datetime.fromisoformat(p2["now"].replace("Z", "+00:00"))
    world = tier.GoodputWorld(driver.m, job(p2["job"]), pods("run1", "Running"), driver.profile, "", driver.memory, now=now)
    asked = tier.reconcile(world).reads
    world.logs = {asked[0].pod: LogRead(error="reading log of pod w0: boom"),
                  asked[1].pod: LogRead(read("run1-worker1", asked[1].since, now))}
    status = next(a.obj for a in tier.reconcile(world).step.actions if isinstance(a, UpdateStatus))["status"]
    assert (status["currentStep"], status["avgStepTimeSec"]) == (20, "4.211200")
    world.logs = {r.pod: LogRead(error="boom") for r in asked}
    both = tier.reconcile(world)
    assert both.step.actions == [] and both.step.requeue_after == 60.0 and both.memory == world.memory


def test_a_profile_that_cannot_be_resolved():
    driver = Driver()
    world = tier.GoodputWorld(driver.m, job({"condition": "InProgress", "workload": "j-workload"}), pods("run1", "Running"),
                              None, 'logprofiles.nvcre.nvidia.com "megatron-training" not found',
                              now=datetime.fromisoformat("2026-03-02T10:04:30+00:00"))
    step = tier.reconcile(world)
    message = ('LogProfile "megatron-training" could not be resolved: failed to get LogProfile megatron-training: '
               'logprofiles.nvcre.nvidia.com "megatron-training" not found')
    assert [(a.type, a.reason, a.message) for a in step.step.actions if isinstance(a, Event)] == [
        ("Warning", "LogProfileNotFound", message)]
    status = next(a.obj for a in step.step.actions if isinstance(a, UpdateStatus))["status"]
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in status["conditions"]] == [
        ("Measuring", "False", "LogProfileNotFound", message)]
    assert step.step.requeue_after == 60.0 and not step.reads
    broken = builtin_profile("megatron-training")
    broken["spec"]["patterns"]["trainingStep"]["regex"] = "("
    world.profile = broken
    assert next(a for a in tier.reconcile(world).step.actions if isinstance(a, Event)).message.startswith(
        'LogProfile "megatron-training" could not be resolved: pattern trainingStep: invalid regex: ')


def test_a_failed_job_without_a_sample_stops_at_the_containers_end():
    """No applicationStopTime: the interruption is at worker-0's container finish, capped to the anchor."""
    driver = Driver()
    driver.m["status"] = {"startTime": "2026-03-02T10:04:30Z", "currentStep": 20,
                          "lastCheckpointTime": "2026-03-02T10:05:00Z"}
    failed = pods("run1", "Failed")
    failed[0]["status"]["containerStatuses"][0] = {"name": "node",
                                                   "state": {"terminated": {"finishedAt": "2026-03-02T10:06:00Z"}}}
    world = tier.GoodputWorld(driver.m, job({"condition": "Failed", "at": "2026-03-02T10:07:00Z", "workload": "j-workload"}),
                              failed, driver.profile, "", now=datetime.fromisoformat("2026-03-02T10:08:00+00:00"))
    status = next(a.obj for a in tier.reconcile(world).step.actions if isinstance(a, UpdateStatus))["status"]
    assert status["pendingInterruption"]["tInterrupt"] == "2026-03-02T10:06:00Z"
    assert (status["lostWorkTimeSec"], status["trainingTimeSec"]) == ("60.000000", "90.000000")
    assert status["result"] == "0.333333"  # (90 - 60) / 90
    assert status["completionTime"] == "2026-03-02T10:07:00Z"


def test_complete_is_final_and_an_empty_job_ref_is_done():
    done = measurement()
    done["status"] = {"conditions": [{"type": "Complete", "status": "True"}]}
    assert tier.reconcile(tier.GoodputWorld(done, None, now=datetime.fromisoformat("2026-03-02T10:00:00+00:00"))).step.terminal
    empty = measurement()
    empty["spec"]["jobRef"]["name"] = ""
    assert tier.reconcile(tier.GoodputWorld(empty, None, now=datetime.fromisoformat("2026-03-02T10:00:00+00:00"))).step.terminal
