"""Workflow-tier reconcile, driven to the end by a small simulator (data/reconcile_workflow/scenarios.yaml).

The simulator is an object store keyed by Ref (resourceVersion bumps, UID preconditions, AlreadyExists
answered by ownership.on_exists) plus a fake Job tier that gives each Job the outcome its scenario lists
for that attempt; a succeeded Job's thresholds are judged by the real Job tier. The kill test stops the
driver after every possible action and checks that resuming from the store alone ends exactly where the
uninterrupted run does.
"""
from __future__ import annotations

import copy
import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

import jsonpatch
import jsonpointer
import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import (
    AddOwner,
    Create,
    Delete,
    Event,
    Ref,
    Replace,
    UpdateStatus,
    event_message,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import mocknodes
from ansible_collections.cre.certification.plugins.module_utils.engine.plan.dependencies import DependencyPlan
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import (
    attribution,
    job_tier,
    node_results,
    ownership,
    status,
    workflow_tier,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile.world import JobWorld, WorkflowWorld

DATA = Path(__file__).parents[1] / "data" / "reconcile_workflow"
BASE = yaml.safe_load((Path(__file__).parents[1] / "data" / "render" / "_workflow.yaml").read_text())
SCENARIOS = yaml.safe_load((DATA / "scenarios.yaml").read_text())
START = datetime(2025, 1, 1, tzinfo=UTC)
WF_UID = "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
TIME_KEYS = {"startTime", "completionTime", "lastTransitionTime", "workloadStartTime"}
ABSENT = object()


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


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s["id"] for s in SCENARIOS])
def test_scenario(scenario):
    sim = Sim(scenario)
    sim.run()
    expect = scenario["expect"]
    assert condition(sim.workflow) == expect["condition"]
    if "created_jobs" in expect:
        assert [o["metadata"]["name"] for o in sim.creates if o["kind"] == "Job"] == expect["created_jobs"]
    if "jobs" in expect:
        assert sorted(sim.of_kind("Job")) == sorted(expect["jobs"])
    if "max_running" in expect:
        assert sim.max_running == expect["max_running"]
    if "creates" in expect:
        assert len(sim.creates) == expect["creates"]
    doc = {"status": sim.workflow["status"], "jobs": sim.of_kind("Job"), "configmaps": sim.of_kind("ConfigMap")}
    for pointer, value in (expect.get("paths") or {}).items():
        found = jsonpointer.resolve_pointer(doc, pointer, ABSENT)
        assert (None if found is ABSENT else found) == value, pointer
    out = sim.outcome()
    for key in ("succeeded", "failed"):
        if key in expect:
            assert out[key] == expect[key], key
    events = [(e.type, e.reason) for e in sim.events]
    for event in expect.get("events") or []:
        assert tuple(event) in events


KILLED = [s for s in SCENARIOS if s.get("kill")]


@pytest.mark.parametrize("scenario", KILLED, ids=[s["id"] for s in KILLED])
def test_kill_anywhere_resumes_to_the_same_end(scenario):
    reference = Sim(scenario)
    counts = reference.steps()
    expected = reference.outcome()
    points = [(n, k) for n, count in enumerate(counts) for k in range(count)]
    assert points, "the run has actions"
    for point in points:
        sim = Sim(scenario)
        sim.run(kill=point)
        assert sim.outcome() == expected, f"killed at step {point[0]} before action {point[1]}"


OWNERSHIP = yaml.safe_load((DATA / "ownership.yaml").read_text())


@pytest.mark.parametrize("case", OWNERSHIP, ids=[c["id"] for c in OWNERSHIP])
def test_on_exists(case):
    if case["kind"] == "Job":
        obj = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job",
               "metadata": {"name": "nccl-test-job", "namespace": "certify"}}
    elif case["kind"] == "TrainJob":  # a Job's workload: the owner is the Job, named nccl-test here too
        obj = {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
               "metadata": {"name": "nccl-test-job-workload", "namespace": "certify"}}
    else:
        obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "hints", "namespace": "certify"}}
    decision = ownership.on_exists(Create(obj, owner_uid="wf-uid"), {"metadata": case["live"]}, "nccl-test")
    expect = case["expect"]
    assert type(decision).__name__ == expect["decision"]
    assert {k: getattr(decision, k) for k in ("reason", "message") if hasattr(decision, k)} == {
        k: v for k, v in expect.items() if k != "decision"}


def test_collision_on_launch_fails_the_workflow_with_refs_kept():
    scenario = {"nodes": {"platform": "aws", "gpu_architecture": "h100", "count": 2}}
    sim = Sim(scenario)
    squatter = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job",
                "metadata": {"name": "nccl-test-job", "namespace": "certify", "uid": "foreign", "resourceVersion": "1"}}
    sim.store[Ref.of(squatter)] = squatter
    sim.run()
    assert condition(sim.workflow) == {
        "type": "Failed", "reason": "JobNameCollision",
        "message": 'Job "nccl-test-job" already exists in namespace "certify" and is not controlled by Workflow '
                   '"nccl-test"; refusing to adopt it'}
    assert sim.store[Ref.of(squatter)]["metadata"]["uid"] == "foreign"
    assert [r["name"] for r in sim.workflow["status"]["dependencyRefs"]] == ["topology-hints"]


def test_terminal_guard_and_override_error():
    sim = Sim({"nodes": {"platform": "aws", "gpu_architecture": "h100", "count": 2},
               "patch": [{"op": "add", "path": "/spec/overrides", "value": [
                   {"when": {}, "jobTemplatePatch": [{"op": "remove", "path": "/spec/nope"}]}]}]})
    step = workflow_tier.reconcile(sim.world())
    assert step.terminal and step.requeue_after is None
    sim.execute(step)
    found = condition(sim.workflow)
    assert (found["type"], found["reason"]) == ("Failed", "OverrideError")
    assert found["message"].startswith("Failed to apply overrides: override[0]: ")
    again = workflow_tier.reconcile(sim.world())
    assert again.terminal and again.actions == []


def test_requeue_intervals():
    sim = Sim({"nodes": {"platform": "aws", "gpu_architecture": "h100", "count": 4}})
    first = workflow_tier.reconcile(sim.world())
    assert first.requeue_after == workflow_tier.IMMEDIATE == 0.05
    sim.execute(first)
    launch = workflow_tier.reconcile(sim.world())
    assert launch.requeue_after == workflow_tier.REQUEUE == 15.0
    sim.execute(launch)
    assert condition(sim.workflow) == {"type": "InProgress", "reason": "JobCreated",
                                       "message": "Iteration 1/1: 2 groups running"}
    poll = workflow_tier.reconcile(sim.world())
    sim.execute(poll)
    assert condition(sim.workflow)["reason"] == "JobRunning" and poll.requeue_after == 15.0
    idle = workflow_tier.reconcile(sim.world())  # Jobs still running, status as written: nothing to do
    assert idle.actions == [] and idle.requeue_after == 15.0


def created_per_pass(scenario_id: str, passes: int = 6) -> tuple[Sim, list[list[str]], int]:
    """The scenario's first passes: the kinds each created, and the index of the first to create a ComputeDomain."""
    sim = Sim(next(s for s in SCENARIOS if s["id"] == scenario_id))
    created = []
    for _step in range(passes):
        step = workflow_tier.reconcile(sim.world())
        created.append([Ref.of(a.obj).kind for a in step.actions if isinstance(a, Create)])
        sim.execute(step)
    return sim, created, next(i for i, kinds in enumerate(created) if "ComputeDomain" in kinds)


def test_a_new_compute_domain_holds_its_job_until_a_later_pass():
    sim, created, first = created_per_pass("compute-domain-created-a-pass-before-its-job")
    assert "Job" not in created[first]
    # The copies made a pass earlier are seen and ours: only the Job goes out (no AlreadyExists, no read to adopt).
    assert created[first + 1] == ["Job"]
    # The refs were written with the wait, so the next pass saw the ComputeDomain.
    assert sorted(r["kind"] for r in sim.workflow["status"]["dependencyRefs"] if r["scope"] == "job") == [
        "ComputeDomain", "TrainingRuntime"]


@pytest.mark.parametrize("change", ["foreign", "terminating"])
def test_a_seen_copy_that_is_not_ours_or_is_going_away_is_created_again_for_the_server_to_refuse(change: str) -> None:
    first = created_per_pass("compute-domain-created-a-pass-before-its-job")[2]
    sim = created_per_pass("compute-domain-created-a-pass-before-its-job", passes=first + 1)[0]
    domain = next(iter(sim.of_kind("ComputeDomain").values()))
    if change == "foreign":
        domain["metadata"]["annotations"] = {}
        domain["metadata"]["ownerReferences"] = []
    else:
        domain["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    step = workflow_tier.reconcile(sim.world())
    assert "ComputeDomain" in [Ref.of(a.obj).kind for a in step.actions if isinstance(a, Create)]


def test_every_group_s_compute_domain_goes_out_in_one_pass_and_every_job_in_the_next():
    _sim, created, first = created_per_pass("compute-domains-of-every-group-in-one-pass")
    assert created[first].count("ComputeDomain") == 4 and "Job" not in created[first]
    assert created[first + 1].count("Job") == 4


def test_workflow_dependencies_exist_before_grouping_fails():
    """§4 step 10 comes before nodesPerJob (step 11): a PartitionError still leaves the ConfigMap, recorded."""
    sim = Sim({"nodes": {"platform": "aws", "gpu_architecture": "h100", "count": 1}})
    step = workflow_tier.reconcile(sim.world())
    sim.execute(step)
    found = condition(sim.workflow)
    assert (found["type"], found["reason"]) == ("Failed", "PartitionError")
    assert found["message"] == "Not enough schedulable nodes: need 2, found 1"
    assert [Ref.of(o).name for o in sim.creates] == ["topology-hints"]
    assert sim.workflow["status"]["dependencyRefs"] == [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": "topology-hints", "namespace": "certify", "scope": "workflow"}]


def test_dependency_scope_comes_from_discovery_when_known():
    wf = {"metadata": {"name": "w", "namespace": "ns", "uid": "u"}}
    driver = {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "d"}, "spec": {}}
    static = DependencyPlan([driver], {}).workflow_manifests(wf)[0]
    assert static["metadata"]["namespace"] == "ns" and static["metadata"]["ownerReferences"]
    discovered = DependencyPlan([driver], {}, None, {("storage.k8s.io/v1", "CSIDriver"): False}).workflow_manifests(wf)[0]
    assert "namespace" not in discovered["metadata"] and "ownerReferences" not in discovered["metadata"]
    assert discovered["metadata"]["annotations"] == {"nvcre.nvidia.com/workflow-uid": "u"}
    # Discovery also wins the other way: a namespaced kind named like a cluster one.
    odd = {"apiVersion": "example.com/v1", "kind": "ClusterThing", "metadata": {"name": "x"}}
    assert DependencyPlan([odd], {}, None, {("example.com/v1", "ClusterThing"): True}).workflow_manifests(
        wf)[0]["metadata"]["namespace"] == "ns"


def test_a_retried_group_shows_nvcre_pending_and_its_next_job_carries_the_retry():
    scenario = next(s for s in SCENARIOS if s["id"] == "retry-failed-group-once")
    sim = Sim(scenario)
    for _step in range(40):
        sim.execute(workflow_tier.reconcile(sim.world()))
        group = sim.workflow.get("status", {}).get("orchestration", {}).get("groups", [{}, {}])[1]
        if group.get("retries") == 1 and group.get("phase") == "Pending":
            break
        sim.job_tier()
        sim.now += timedelta(minutes=1)
    assert group == {k: v for k, v in group.items() if k not in ("jobRef", "startTime", "completionTime")}
    assert group["phase"] == "Pending" and group["retries"] == 1
    sim.run()
    relaunched = sim.of_kind("Job")["nccl-test-group-1-iter-1"]
    assert relaunched["metadata"]["labels"]["cre.certification/retry"] == "1"
    assert "cre.certification/retry" not in sim.of_kind("Job")["nccl-test-group-0-iter-1"]["metadata"]["labels"]


@pytest.mark.parametrize(("status", "expect"), [
    ({"workloadStartTime": "2025-01-01T12:00:00Z"}, "Job exceeded timeoutPerJob"),
    # a closed blocked episode (23 minutes) is left out: 7 minutes of 10 used
    ({"workloadStartTime": "2025-01-01T12:00:00Z", "schedulingBlockedSince": "2025-01-01T12:05:00Z",
      "schedulingResumedTime": "2025-01-01T12:28:00Z"}, None),
    ({"workloadStartTime": "2025-01-01T12:00:00Z", "schedulingBlockedSince": "2025-01-01T12:05:00Z",
      "schedulingResumedTime": "2025-01-01T12:10:00Z"}, "Job exceeded timeoutPerJob"),
    # an open episode longer than the timeout
    ({"workloadStartTime": "2025-01-01T12:00:00Z", "schedulingBlockedSince": "2025-01-01T12:05:00Z"},
     "Job exceeded timeoutPerJob while its pods were unschedulable"),
    # an open episode that began after the timeout had already passed
    ({"workloadStartTime": "2025-01-01T12:00:00Z", "schedulingBlockedSince": "2025-01-01T12:25:00Z"},
     "Job exceeded timeoutPerJob"),
    ({"workloadStartTime": "2025-01-01T12:25:00Z", "schedulingBlockedSince": "2025-01-01T12:28:00Z"}, None),
])
def test_timeout_leaves_blocked_time_out_without_moving_the_start(status, expect):
    sim = Sim({"nodes": {"platform": "aws", "gpu_architecture": "h100", "count": 2}})
    sim.now = datetime(2025, 1, 1, 12, 30, tzinfo=UTC)
    tier_pass = workflow_tier._Pass(sim.world())
    tier_pass.execution = {"timeoutPerJob": "10m"}
    assert tier_pass.timeout({}, {"status": {"workloadRef": {"name": "w"}, **status}}) == expect


def test_override_error_write_names_its_status_update_failed_event():
    sim = Sim({"nodes": {"platform": "aws", "gpu_architecture": "h100", "count": 2},
               "patch": [{"op": "add", "path": "/spec/overrides", "value": [
                   {"when": {}, "jobTemplatePatch": [{"op": "remove", "path": "/spec/nope"}]}]}]})
    step = workflow_tier.reconcile(sim.world())
    writes = [a for a in step.actions if isinstance(a, UpdateStatus)]
    assert [w.failure_event for w in writes] == ["OverrideErrorStatusUpdateFailed"]
    mixed = Sim({"nodes": {"platform": "aws", "gpu_architecture": "h100", "count": 2}})
    mixed.nodes[1]["spec"]["providerID"] = "gce://p/z/n"
    step = workflow_tier.reconcile(mixed.world())
    assert [a.failure_event for a in step.actions if isinstance(a, UpdateStatus)] == [
        "HeterogeneousPlatformStatusUpdateFailed"]
    ok = workflow_tier.reconcile(Sim({"nodes": {"platform": "aws", "gpu_architecture": "h100", "count": 2}}).world())
    assert [a.failure_event for a in ok.actions if isinstance(a, UpdateStatus)] == [""]


@pytest.mark.parametrize(("message", "expect"), [
    ("short", "short"),
    ("x" * 1024, "x" * 1024),
    ("x" * 1025, "x" * 1009 + "... [truncated]"),
    ("é" * 600, "é" * 504 + "... [truncated]"),  # 2 bytes each: cut on a character boundary
])
def test_event_messages_are_capped_at_1024_bytes(message, expect):
    capped = event_message(message)
    assert capped == expect and len(capped.encode()) <= 1024


def test_job_scoped_copies_get_their_job_as_owner():
    """§7.2: after its Job is created, each namespaced copy of a group gets a non-controller owner reference to the
    Job (deleting the Workflow mid-run then leaves nothing behind); the Workflow-scoped ConfigMap keeps its own."""
    sim = Sim(SCENARIOS[0])
    sim.run()
    jobs = {name: job["metadata"]["uid"] for name, job in sim.of_kind("Job").items()}
    owned = {p.ref.name: [*p.current, p.owner] for p in sim.patches}
    assert sorted(owned) == [f"nccl-runtime-f8135-group-{i}-iter-1" for i in range(6)]
    for name, owners in owned.items():
        job = name.replace("nccl-runtime-f8135-", "nccl-test-")
        assert owners == [{"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job", "name": job, "uid": jobs[job]}]
