"""Workflow-tier reconcile, driven to the end by a small simulator (data/reconcile_workflow/scenarios.yaml).

The simulator is an object store keyed by Ref (resourceVersion bumps, UID preconditions, AlreadyExists
answered by ownership.on_exists) plus a fake Job tier that gives each Job the outcome its scenario lists
for that attempt; a succeeded Job's thresholds are judged by the real Job tier. The kill test stops the
driver after every possible action and checks that resuming from the store alone ends exactly where the
uninterrupted run does.
"""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import jsonpointer
import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Create, Ref, UpdateStatus, event_message
from ansible_collections.cre.certification.plugins.module_utils.engine.plan.dependencies import DependencyPlan
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import ownership, workflow_tier
from tests.unit.engine.reconcile.workflow_sim import Sim, condition

DATA = Path(__file__).parents[1] / "data" / "reconcile_workflow"
SCENARIOS = yaml.safe_load((DATA / "scenarios.yaml").read_text())
ABSENT = object()


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
