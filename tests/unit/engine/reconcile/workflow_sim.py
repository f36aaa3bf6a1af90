"""The Workflow tier's simulator, shared by the tests that drive Workflows to the end (test_workflow_tier,
test_workflow_volumes, test_diagnose_run).

An object store keyed by Ref (resourceVersion bumps, UID preconditions, AlreadyExists answered by
ownership.on_exists) plus a fake Job tier that gives each Job the outcome its scenario lists for that attempt; a
succeeded Job's thresholds are judged by the real Job tier. `run(kill=(n, k))` stops the driver after the first k
actions of its n-th step, so a test can resume from the store alone.
"""
from __future__ import annotations

import copy
import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

import jsonpatch
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import (
    AddOwner,
    Create,
    Delete,
    Event,
    Ref,
    Replace,
    UpdateStatus,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import mocknodes
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import (
    attribution,
    job_tier,
    node_results,
    ownership,
    status,
    workflow_tier,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile.world import JobWorld, WorkflowWorld

BASE = yaml.safe_load((Path(__file__).parents[1] / "data" / "render" / "_workflow.yaml").read_text())
START = datetime(2025, 1, 1, tzinfo=UTC)
WF_UID = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
TIME_KEYS = {"startTime", "completionTime", "lastTransitionTime", "workloadStartTime"}


class Stop(Exception):
    """The driver stops executing a step (kill, retry or collision)."""


def untouched(reconcile, world):
    """The tier's Step, checking that it changed nothing it was handed: the driver's watch caches hand the same
    objects to every pass (driver/observe.py), so a tier that wrote into one would corrupt what it sees next."""
    before = copy.deepcopy(world)
    step = reconcile(world)
    assert world == before, "the tier changed an object of its world"
    return step


class Sim:
    def __init__(self, scenario: dict) -> None:
        workflow = jsonpatch.apply_patch(BASE, scenario.get("patch") or [])
        workflow["metadata"].update(uid=WF_UID, generation=1, resourceVersion="1")
        spec = scenario["nodes"]
        self.nodes = mocknodes.mock_nodes(spec["platform"], spec["gpu_architecture"], spec["count"])
        self.outcomes = scenario.get("outcomes") or {}
        self.store: dict[Ref, dict] = {}
        self.rv = itertools.count(2)
        self.uids = itertools.count(1)
        self.attempts: dict[str, int] = {}
        self.pods: dict[str, list] = {}
        self.events: list[Event] = []
        self.creates: list[dict] = []
        self.patches: list[AddOwner] = []
        self.timeout_logs: dict[str, dict] = {}
        self.now = START
        self.max_running = 0
        self.wf_ref = Ref.of(workflow)
        self.store[self.wf_ref] = workflow

    @property
    def workflow(self) -> dict:
        return self.store[self.wf_ref]

    def of_kind(self, kind: str) -> dict[str, dict]:
        return {r.name: o for r, o in self.store.items() if r.kind == kind}

    def world(self) -> WorkflowWorld:
        refs = (self.workflow.get("status") or {}).get("dependencyRefs") or []
        deps = {}
        for r in refs:
            key = Ref(r["apiVersion"], r["kind"], r.get("namespace", ""), r["name"])
            if key in self.store:
                deps[key] = copy.deepcopy(self.store[key])
        return WorkflowWorld(workflow=copy.deepcopy(self.workflow), jobs=copy.deepcopy(self.of_kind("Job")),
                             nodes=self.nodes, pods=copy.deepcopy(self.pods),
                             configmaps={n: copy.deepcopy(o) for n, o in self.of_kind("ConfigMap").items()
                                         if n.startswith(("succeeded-nodes-", "failed-nodes-"))},
                             dependencies=deps, now=self.now, timeout_logs=copy.deepcopy(self.timeout_logs))

    # -- the driver's side of each action

    def execute(self, step, limit: int | None = None) -> None:
        for i, action in enumerate(step.actions):
            if limit is not None and i >= limit:
                raise Stop("killed")
            self.apply(action)

    def apply(self, action) -> None:
        if isinstance(action, Create):
            ref = Ref.of(action.obj)
            if ref in self.store:
                decision = ownership.on_exists(action, self.store[ref], self.workflow["metadata"]["name"])
                if isinstance(decision, ownership.Adopt):
                    return
                if isinstance(decision, ownership.Collision):
                    self.execute(status.fail(self.world(), decision.reason, decision.message))
                raise Stop(decision)
            obj = copy.deepcopy(action.obj)
            obj["metadata"].update(uid=f"uid-{next(self.uids)}", resourceVersion=str(next(self.rv)))
            self.store[ref] = obj
            self.creates.append(obj)
            if ref.kind == "Job":
                self.attempts[ref.name] = self.attempts.get(ref.name, 0) + 1
        elif isinstance(action, (Replace, UpdateStatus)):
            ref = Ref.of(action.obj)
            live = self.store[ref]
            assert live["metadata"]["resourceVersion"] == action.obj["metadata"]["resourceVersion"], "409"
            obj = copy.deepcopy(live)
            if isinstance(action, UpdateStatus):
                obj["status"] = copy.deepcopy(action.obj["status"])
            else:
                obj = copy.deepcopy(action.obj)
            obj["metadata"]["resourceVersion"] = str(next(self.rv))
            self.store[ref] = obj
        elif isinstance(action, Delete):
            live = self.store.get(action.ref)
            if live is not None:
                assert not action.uid or live["metadata"]["uid"] == action.uid, "UID precondition"
                del self.store[action.ref]
                if action.ref.kind == "Job":
                    self.pods.pop(action.ref.name, None)
        elif isinstance(action, AddOwner):
            live = self.store[action.ref]
            assert tuple(live["metadata"].get("ownerReferences") or ()) == action.current, "422: owners changed"
            live["metadata"]["ownerReferences"] = [*action.current, action.owner]
            live["metadata"]["resourceVersion"] = str(next(self.rv))
            self.patches.append(action)
        elif isinstance(action, Event):
            self.events.append(action)
        else:
            raise AssertionError(f"unexpected action {action!r}")

    # -- the fake Job tier

    def job_tier(self) -> None:
        for name, job in self.of_kind("Job").items():
            if name not in self.attempts:
                continue  # someone else's Job
            status = job.setdefault("status", {})
            if any(c["status"] == "True" and c["type"] in ("Succeeded", "Failed", "HardwareFailed")
                   for c in status.get("conditions") or []):
                continue
            outcome = (self.outcomes.get(name) or [])[self.attempts[name] - 1:][:1] or [{"result": "Succeeded"}]
            self.settle(job, outcome[0])

    def settle(self, job: dict, outcome: dict) -> None:
        name, status = job["metadata"]["name"], job["status"]
        nodes = [n for n in (job["metadata"].get("annotations") or {}).get(
            "nvcre.nvidia.com/group-nodes", "").split(",") if n] or outcome.get("pod_nodes") or []
        result = outcome["result"]
        stamp = self.now.strftime("%Y-%m-%dT%H:%M:%SZ")
        conds = []
        if result == "Running":
            status.update(workloadStartTime=status.get("workloadStartTime", stamp))
            conds = [("InProgress", "WorkloadRunning", "Workload 1/1 is running")]
        elif result == "Succeeded":
            conds = [("Succeeded", "WorkloadCompleted", "Workload 1/1 completed successfully")]
        else:
            conds = [("Failed", "WorkloadFailed", "Workload 1/1 failed: exit 1")]
            if result == "HardwareFailed":
                conds.append(("HardwareFailed", "HardwareFailureDetected", "Hardware failure detected on node(s)"))
            status["failedNodes"] = outcome.get("failed_nodes") or [
                {"name": n, "reason": "WorkloadFailed", "message": "exit 1"} for n in nodes]
        status["workloadRef"] = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                                 "name": f"{name}-workload", "namespace": job["metadata"]["namespace"]}
        status["conditions"] = [{"type": c[0], "status": c[3] if len(c) > 3 else "True", "reason": c[1],
                                 "message": c[2], "lastTransitionTime": stamp} for c in conds]
        phase = {"Running": "Running", "Succeeded": "Succeeded"}.get(result, "Failed")
        self.pods[name] = [{"metadata": {"name": f"{name}-{i}"}, "spec": {"nodeName": n}, "status": {"phase": phase}}
                           for i, n in enumerate(nodes)]
        if result == "Succeeded" and job["spec"].get("thresholds"):
            self.validate(job, outcome.get("bus_bw", "847.12"))

    @staticmethod
    def bandwidth_measurement(job: dict, bus_bw: str) -> dict:
        """The Job's final BandwidthMeasurement with one result row."""
        return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "BandwidthMeasurement",
                "metadata": {"name": f"{job['metadata']['name']}-bandwidth",
                             "annotations": {"nvcre.nvidia.com/job-uid": job["metadata"]["uid"]}},
                "spec": {"jobRef": {"name": job["metadata"]["name"]}},
                "status": {"results": [{"sizeBytes": 8589934592, "algBW": "451.80", "busBW": bus_bw, "samples": 1}],
                           "conditions": [{"type": "Complete", "status": "True", "reason": "JobSucceeded"}]}}

    def validate(self, job: dict, bus_bw: str) -> None:
        """The real Job tier judges the thresholds, from the Job's final BandwidthMeasurement."""
        measurement = self.bandwidth_measurement(job, bus_bw)
        step = job_tier.reconcile(JobWorld(copy.deepcopy(job), pods=self.pods[job["metadata"]["name"]],
                                           measurements=[measurement], now=self.now))
        for action in step.actions:
            if isinstance(action, UpdateStatus):
                job["status"] = action.obj["status"]

    # -- the loop

    def reconcile(self):
        """One Workflow-tier pass; as the driver does, the log tails a timed-out Job needs are read, then it passes
        again at once."""
        step = untouched(workflow_tier.reconcile, self.world())
        if step.wants_logs:
            for name in step.wants_logs:
                target = attribution.timeout_target(self.pods.get(name, []))
                self.timeout_logs[name] = attribution.timeout_failure_log(target, "step 41 of 100\n")
            step = untouched(workflow_tier.reconcile, self.world())
        return step

    def run(self, kill: tuple[int, int] | None = None, max_steps: int = 200):
        for n in range(max_steps):
            step = self.reconcile()
            if step.terminal and not step.actions:
                return n
            try:
                self.execute(step, kill[1] if kill and kill[0] == n else None)
            except Stop:
                pass
            groups = ((self.workflow.get("status") or {}).get("orchestration") or {}).get("groups") or []
            self.max_running = max(self.max_running, sum(g.get("phase") == "Running" for g in groups))
            self.job_tier()
            self.now += timedelta(minutes=1)
        raise AssertionError("the Workflow did not finish")

    def steps(self):
        """Action counts of each step of an uninterrupted run (for the kill points)."""
        counts = []
        for _step in range(200):
            step = self.reconcile()
            if step.terminal and not step.actions:
                return counts
            counts.append(len(step.actions))
            try:
                self.execute(step)
            except Stop:
                pass
            self.job_tier()
            self.now += timedelta(minutes=1)
        raise AssertionError("the Workflow did not finish")

    def outcome(self) -> dict:
        """Final state without times and UIDs: Jobs, dependencies, ConfigMap contents, Workflow status."""
        def strip(obj):
            if isinstance(obj, dict):
                return {k: strip(v) for k, v in obj.items()
                        if k not in TIME_KEYS and k not in ("uid", "resourceVersion")}
            if isinstance(obj, list):
                return [strip(v) for v in obj]
            return obj
        cms = self.of_kind("ConfigMap")
        return {
            "status": strip(self.workflow.get("status")),
            "objects": sorted((r.kind, r.name, yaml.safe_dump(strip(o.get("spec") or o.get("data")), sort_keys=True))
                              for r, o in self.store.items() if r != self.wf_ref and r.kind != "ConfigMap"
                              or r.name == "topology-hints"),
            "succeeded": node_results.read_succeeded(next((o for n, o in cms.items()
                                                           if n.startswith("succeeded-nodes-")), None)),
            "failed": node_results.read_failed(next((o for n, o in cms.items()
                                                     if n.startswith("failed-nodes-")), None)),
        }


def condition(obj: dict) -> dict:
    found = next(c for c in obj["status"]["conditions"] if c["status"] == "True"
                 and c["type"] in ("InProgress", "Succeeded", "Failed"))
    return {k: found[k] for k in ("type", "reason", "message")}
