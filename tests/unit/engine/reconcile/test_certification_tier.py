"""The Certification tier (surroundings.md §3.2) without a cluster: adoption, category order, BuildFailed
continuation, conditions, name collisions, and a run killed after every write that still ends the same."""
from __future__ import annotations

import copy
import itertools
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Create, Event, UpdateStatus
from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError, WorkflowFailure
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import mocknodes
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import certification_tier as tier

DATA = Path(__file__).parents[1] / "data" / "certification"
CATEGORIES = [{"domain": "communication", "variant": "nccl-all-reduce"},
              {"domain": "training", "variant": "nemotron5-8b"}]
NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
# nemotron5-56b needs more GPUs than one H100 node has: its build fails, the other two go on.
RUN = ("communication/nccl-all-reduce", "training/nemotron5-56b", "communication/nccl-all-gather")
NAMES = ["c-communication-nccl-all-reduce", "c-training-nemotron5-56b", "c-communication-nccl-all-gather"]


def load(name: str) -> list[dict]:
    return yaml.safe_load((DATA / name).read_text())


@pytest.mark.parametrize("case", load("progress.yaml"), ids=lambda c: c["name"])
def test_certification_progress(case):
    cert = {"spec": {"categories": CATEGORIES}}
    workflows = []
    for i, phase in enumerate(case["phases"]):
        if phase is None:
            workflows.append(None)
            continue
        conditions = [] if phase == "InProgress" else [{"type": phase, "status": "True"}]
        workflows.append({"metadata": {"name": f"w{i}", "namespace": "ns"},
                          "status": {"conditions": conditions,
                                     "failedNodesRef": {"kind": "ConfigMap", "name": f"failed-nodes-{i}"}}})
    progress = tier.certification_progress(cert, workflows)
    assert progress["next"] == case["next"]
    assert progress["condition"] == case["condition"]
    assert [s["status"] for s in progress["categoryStatuses"]] == case["statuses"]
    for status, workflow in zip(progress["categoryStatuses"], workflows):
        if workflow is None:
            assert "workflowRef" not in status
        else:
            assert status["workflowRef"] == {"name": workflow["metadata"]["name"], "namespace": "ns"}
            assert status["failedNodesRef"] == workflow["status"]["failedNodesRef"]


def desired(categories=RUN, **extra) -> dict:
    args = {"name": "c", "namespace": "ns", "categories": list(categories), "target": {}, "gang_scheduler": None,
            "options": {}, "labels": {}, **extra}
    return tier.desired_certification(args)


class Store:
    """The cluster as the tier sees it: the Certification and its Workflows, with uids and resourceVersions."""

    def __init__(self, cert: dict) -> None:
        self.cert = {**copy.deepcopy(cert), "metadata": {**cert["metadata"], "uid": "cert-uid", "generation": 1}}
        self.workflows: dict[str, dict] = {}
        self.uids = itertools.count(1)
        self.writes = 0
        self.events: list[Event] = []

    def world(self, build_failures: dict[int, str] | None = None, expired: bool = False) -> tier.CertificationWorld:
        return tier.CertificationWorld(copy.deepcopy(self.cert), copy.deepcopy(self.workflows),
                                       mocknodes.mock_nodes("aws", "h100", 1), dict(build_failures or {}), expired, now=NOW)

    def apply(self, action) -> None:
        self.writes += 1
        if isinstance(action, Create):
            obj = copy.deepcopy(action.obj)
            obj["metadata"]["uid"] = f"wf-{next(self.uids)}"
            self.workflows.setdefault(obj["metadata"]["name"], obj)
        elif isinstance(action, Event):
            assert action.involved["metadata"]["uid"] == "cert-uid"
            self.events.append(action)
        else:
            assert isinstance(action, UpdateStatus) and action.obj["kind"] == "Certification"
            self.cert["status"] = copy.deepcopy(action.obj["status"])

    def finish(self, name: str, phase: str) -> None:
        """What the Workflow tier does when the shell drives `name`."""
        self.workflows[name]["status"] = {"conditions": [{"type": phase, "status": "True", "reason": "R", "message": "m"}]}


def run(store: Store, phases: dict[str, str], stop_after: int | None = None) -> tier.CertificationStep:
    """Pass after pass until done (or until `stop_after` writes: a kill), driving each Workflow to `phases`."""
    build_failures: dict[int, str] = {}
    for _pass in range(50):
        step = tier.reconcile(store.world(build_failures))
        build_failures.update(step.build_failures)
        for action in step.step.actions:
            if stop_after is not None and store.writes >= stop_after:
                return step
            store.apply(action)
        if step.done or step.failure:
            return step
        if step.drive and not step.step.actions:
            store.finish(step.drive, phases[step.drive])
    raise AssertionError("the tier never finished")


def condition(cert: dict, kind: str) -> dict:
    return next(c for c in cert["status"]["conditions"] if c["type"] == kind)


def test_categories_run_in_order_and_a_failed_build_does_not_stop_the_rest():
    store = Store(desired())
    step = run(store, {NAMES[0]: "Succeeded", NAMES[2]: "Succeeded"})
    assert step.done
    assert sorted(store.workflows) == sorted([NAMES[0], NAMES[2]])  # nothing was created for the failed build
    statuses = store.cert["status"]["categoryStatuses"]
    assert [s["status"] for s in statuses] == ["Succeeded", "Failed", "Succeeded"]
    assert "workflowRef" not in statuses[1] and statuses[2]["workflowRef"] == {"name": NAMES[2], "namespace": "ns"}
    assert condition(store.cert, "Failed") | {"lastTransitionTime": ""} == {
        "type": "Failed", "status": "True", "reason": "WorkflowFailed",
        "message": "One or more certification categories failed", "lastTransitionTime": "", "observedGeneration": 1}
    assert condition(store.cert, "InProgress")["reason"] == "NotApplicable"
    workflows = tier.category_workflows(store.world())
    assert tier.true_condition(workflows[1]) == {"type": "Failed", "reason": "BuildFailed",
                                                 "message": "build failed in an earlier run"}


def test_one_category_at_a_time():
    store = Store(desired())
    first = tier.reconcile(store.world())
    assert [type(a).__name__ for a in first.step.actions] == ["UpdateStatus", "Event", "Create"]
    assert first.step.actions[2].obj["metadata"]["name"] == NAMES[0]
    assert first.notes == [f"communication/nccl-all-reduce: created Workflow {NAMES[0]} (1 of 3)"]
    for action in first.step.actions:
        store.apply(action)
    second = tier.reconcile(store.world())
    assert second.drive == NAMES[0] and second.step.actions == [
        UpdateStatus(second.step.actions[0].obj),
        Event(store.cert, "Normal", "WorkflowRunning", f"Created Workflow for category {RUN[0]} (1 of 3)")]
    assert condition(second.step.actions[0].obj, "InProgress")["message"] == \
        "Created Workflow for category communication/nccl-all-reduce (1 of 3)"
    store.apply(second.step.actions[0])
    third = tier.reconcile(store.world())
    assert third.drive == NAMES[0] and third.step.actions == []  # status already says so: nothing to write


def test_build_failure_is_recorded_and_the_next_category_advances():
    store = Store(desired())
    for action in tier.reconcile(store.world()).step.actions:
        store.apply(action)
    store.finish(NAMES[0], "Succeeded")
    step = tier.reconcile(store.world())
    assert step.build_failures and step.build_failures[1].startswith("training/nemotron5-56b: ")
    assert step.notes[0].startswith("training/nemotron5-56b: build failed: ")
    status = step.step.actions[0].obj["status"]
    assert [s["status"] for s in status["categoryStatuses"]] == ["Succeeded", "Failed", "Pending"]
    assert condition(step.step.actions[0].obj, "InProgress") | {"lastTransitionTime": ""} == {
        "type": "InProgress", "status": "True", "reason": "WorkflowFailed", "lastTransitionTime": "",
        "message": "Workflow for category training/nemotron5-56b failed, advancing to next category",
        "observedGeneration": 1}
    assert step.step.actions[-1].obj["metadata"]["name"] == NAMES[2]
    # Within the run the build error is kept; a later run does not build again.
    assert tier.true_condition(tier.category_workflows(store.world(step.build_failures))[1])["message"] == \
        step.build_failures[1]
    for action in step.step.actions:
        store.apply(action)
    assert not tier.needs_nodes(store.world())  # the failed build is recorded; the last Workflow exists


def test_killed_after_every_write_ends_where_an_uninterrupted_run_does():
    phases = {NAMES[0]: "Failed", NAMES[2]: "Succeeded"}
    whole = Store(desired())
    run(whole, phases)
    for kill in range(1, whole.writes):
        store = Store(desired())
        run(store, phases, stop_after=kill)
        run(store, phases)
        assert store.cert["status"]["categoryStatuses"] == whole.cert["status"]["categoryStatuses"], kill
        assert [c["type"] for c in store.cert["status"]["conditions"] if c["status"] == "True"] == ["Failed"], kill
        assert sorted(store.workflows) == sorted(whole.workflows), kill


def test_a_finished_certification_writes_nothing():
    store = Store(desired())
    run(store, {NAMES[0]: "Succeeded", NAMES[2]: "Succeeded"})
    again = tier.reconcile(store.world())
    assert again.done and again.step.actions == []


def test_validation_failed_is_recorded_beside_the_terminal_condition():
    store = Store(desired(RUN[:1]))
    run(store, {NAMES[0]: "Failed"})
    store.workflows[NAMES[0]]["status"]["conditions"].append({"type": "ValidationFailed", "status": "True"})
    step = tier.reconcile(store.world())
    validation = condition(step.step.actions[0].obj, "ValidationFailed")
    assert (validation["reason"], validation["message"]) == (
        "ThresholdViolation", "One or more certification categories failed performance threshold validation")


def test_transition_times_move_only_when_a_status_flips():
    old = [{"type": "InProgress", "status": "True", "lastTransitionTime": "then", "reason": "a", "message": "b"}]
    chosen = {"type": "InProgress", "reason": "WorkflowRunning", "message": "m"}
    out = tier.conditions(old, chosen, False, 3, "now")
    assert [(c["type"], c["status"], c["lastTransitionTime"]) for c in out] == [
        ("InProgress", "True", "then"), ("Succeeded", "False", "now"), ("Failed", "False", "now")]
    assert all(c["observedGeneration"] == 3 for c in out)


def test_a_foreign_workflow_of_the_same_name_is_a_collision():
    store = Store(desired())
    store.workflows[NAMES[0]] = {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow",
                                 "metadata": {"name": NAMES[0], "namespace": "ns", "uid": "other"}}
    step = tier.reconcile(store.world())
    message = (f'Workflow "{NAMES[0]}" already exists in namespace "ns" and is not controlled by Certification "c"; '
               "refusing to adopt it")
    assert step.failure == ("WorkflowNameCollision", message)
    assert condition(step.step.actions[0].obj, "Failed")["reason"] == "WorkflowNameCollision"
    assert not any(isinstance(a, Create) for a in step.step.actions)
    with pytest.raises(WorkflowFailure, match="refusing to adopt it"):
        tier.plan(store.world())


def test_a_foreign_workflow_being_deleted_is_waited_for_until_the_deadline():
    store = Store(desired())
    store.workflows[NAMES[0]] = {"metadata": {"name": NAMES[0], "namespace": "ns", "uid": "other",
                                              "deletionTimestamp": (NOW - timedelta(seconds=5)).isoformat()}}
    waiting = tier.reconcile(store.world())
    assert waiting.wait and waiting.failure is None and not waiting.drive
    assert tier.reconcile(store.world(expired=True)).failure[0] == "WorkflowNameCollision"


def test_adoption_only_of_our_own_certification_with_the_same_spec():
    want = {**desired(), "metadata": {**desired()["metadata"], "uid": "u"}}
    assert tier.admit(want, copy.deepcopy(want)) == want
    foreign = copy.deepcopy(want)
    foreign["metadata"]["labels"]["app.kubernetes.io/managed-by"] = "helm"
    with pytest.raises(WorkflowFailure) as err:
        tier.admit(want, foreign)
    assert (err.value.reason, err.value.message) == (
        "CertificationNameCollision",
        'Certification "c" already exists in namespace "ns" and is not managed by cre.certification; '
        "refusing to adopt it")
    resident = copy.deepcopy(want)
    resident["metadata"]["finalizers"] = ["nvcre.nvidia.com/certification-finalizer"]
    with pytest.raises(WorkflowFailure, match="CertificationNameCollision|not managed by"):
        tier.admit(want, resident)
    changed = copy.deepcopy(want)
    changed["spec"]["categories"] = changed["spec"]["categories"][:1]
    with pytest.raises(InputError, match="^spec: spec is immutable after creation$"):
        tier.admit(want, changed)


def test_bad_input_is_refused_before_anything_is_built():
    with pytest.raises(InputError, match=r'^categories\[0\]: must be "domain/variant" or a dict, got "nccl"$'):
        desired(["nccl"])
    with pytest.raises(InputError, match=r"^options\.target: is not a CategoryOptions field"):
        desired(options={"target": {}})


def test_check_mode_plans_every_category_still_to_build():
    cert = desired()
    planned = tier.plan(tier.CertificationWorld(cert, {}, mocknodes.mock_nodes("aws", "h100", 1), now=NOW))
    assert planned.changed
    assert [p["category"] for p in planned.plans] == [RUN[0], RUN[2]]
    assert all(p["plan"]["jobs"] for p in planned.plans)
    assert list(planned.build_failures) == [1] and planned.notes[0].startswith(f"{RUN[1]}: build failed: ")


# ---------------------------------------------------------------- CategoryNotFound, WaitingForNodes, architecture

def test_an_unknown_category_is_recorded_on_the_certification():
    store = Store(desired(["communication/nccl-all-reduce", "communication/no-such"]))
    step = tier.reconcile(store.world())
    message = "Unknown certification category: communication/no-such"
    assert step.failure == ("CategoryNotFound", message) and step.step.terminal
    assert not any(isinstance(a, Create) for a in step.step.actions)
    for action in step.step.actions:
        store.apply(action)
    assert condition(store.cert, "Failed") | {"lastTransitionTime": ""} == {
        "type": "Failed", "status": "True", "reason": "CategoryNotFound", "message": message,
        "lastTransitionTime": "", "observedGeneration": 1}
    assert [(e.type, e.reason, e.message) for e in store.events] == [("Warning", "CategoryNotFound", message)]
    assert [s["status"] for s in store.cert["status"]["categoryStatuses"]] == ["Pending", "Pending"]
    assert tier.reconcile(store.world()).step.actions == []  # recorded once
    with pytest.raises(WorkflowFailure, match=f"^{message}$"):
        tier.plan(store.world())


SELECTED = {"nodeSelector": {"pool": "gpu", "nvidia.com/gpu.present": "true"}}
WAITING = ("No schedulable nodes match nvidia.com/gpu.present=true,pool=gpu; retrying for up to {}s more. "
           "Nodes that are cordoned or unschedulable do not count.")


def waiting_world(store: Store, now: datetime, nodes: list[dict] | None = None) -> tier.CertificationWorld:
    world = store.world()
    world.nodes, world.now = nodes or [], now
    return world


def test_no_matching_node_waits_five_minutes_then_fails_the_category():
    store = Store(desired(RUN[:1], target=SELECTED))
    store.cert["metadata"]["creationTimestamp"] = "2026-12-01T09:00:00Z"
    first = tier.reconcile(waiting_world(store, NOW + timedelta(seconds=59.5)))
    assert first.wait and first.failure is None and not first.done
    assert [type(a).__name__ for a in first.step.actions] == ["UpdateStatus", "Event"]
    for action in first.step.actions:
        store.apply(action)
    assert condition(store.cert, "InProgress")["reason"] == "WaitingForNodes"
    assert condition(store.cert, "InProgress")["message"] == WAITING.format(241)
    assert store.cert["status"]["categoryStatuses"][0]["status"] == "Pending"
    # A rerun inside the window (the run was stopped) keeps waiting, and writes nothing new.
    again = tier.reconcile(waiting_world(store, NOW + timedelta(minutes=4)))
    assert again.wait and again.step.actions == [] and not again.build_failures
    # Nodes appear inside the window: the category is built.
    cordoned = mocknodes.mock_nodes("aws", "h100", 1)
    cordoned[0]["metadata"]["labels"]["pool"] = "gpu"
    built = tier.reconcile(waiting_world(store, NOW + timedelta(minutes=4), cordoned))
    assert isinstance(built.step.actions[-1], Create)
    cordoned[0]["spec"]["unschedulable"] = True  # cordoned nodes do not count
    assert tier.reconcile(waiting_world(store, NOW + timedelta(minutes=4), cordoned)).wait
    # Past five minutes: the category fails its build and the Certification goes on (here: to the end).
    late = tier.reconcile(waiting_world(store, NOW + timedelta(minutes=5)))
    assert late.build_failures == {0: "No schedulable nodes match nvidia.com/gpu.present=true,pool=gpu. "
                                      "Nodes that are cordoned or unschedulable do not count."}
    assert late.done and condition(late.step.actions[0].obj, "Failed")["reason"] == "WorkflowFailed"


def test_the_wait_of_a_later_category_starts_when_the_one_before_ended():
    store = Store(desired(RUN[:1] + RUN[2:], target=SELECTED))
    store.cert["metadata"]["creationTimestamp"] = "2026-12-01T08:00:00Z"
    store.workflows[NAMES[0]] = {"metadata": {"name": NAMES[0], "namespace": "ns", "uid": "w",
                                              "ownerReferences": [{"uid": "cert-uid", "controller": True}]},
                                 "status": {"conditions": [{"type": "Succeeded", "status": "True", "reason": "R",
                                                            "message": "m", "lastTransitionTime": "2026-12-01T08:58:00Z"}]}}
    step = tier.reconcile(waiting_world(store, NOW))
    assert step.wait and condition(step.step.actions[0].obj, "InProgress")["message"] == WAITING.format(180)


def unlabelled(count: int) -> list[dict]:
    nodes = mocknodes.mock_nodes("onprem", "b300", count)
    for node in nodes:
        del node["metadata"]["labels"]["nvidia.com/gpu.product"]
    return nodes


def detected(nodes: list[tuple[str, int]]) -> tier.detect.Detection:
    """What detect finds on `count` nodes of each architecture ("none": no product label), named in order."""
    listed = []
    for arch, count in nodes:
        made = unlabelled(count) if arch == "none" else mocknodes.mock_nodes("aws", arch, count)
        for node in made:
            node["metadata"]["name"] = f"n{len(listed)}"
            listed.append(node)
    return tier.detect.detect(listed, {})


@pytest.mark.parametrize(("nodes", "selector", "expect"), [
    ([("h100", 2), ("gb200", 1)], {}, "h100"),                                     # majority vote
    ([("gb200", 1), ("h100", 1)], {}, "gb200"),                                    # a tie: the earliest node's
    ([("none", 2)], {"nvidia.com/gpu.product": "NVIDIA-B300-SXM6-AC"}, "b300"),   # nobody labelled: the selector's
])
def test_gpu_architecture(nodes, selector, expect):
    assert tier.gpu_architecture(detected(nodes), {"nodeSelector": selector}) == expect


def test_gpu_architecture_with_nothing_to_go_on_fails_the_build():
    with pytest.raises(WorkflowFailure) as err:
        tier.gpu_architecture(detected([("none", 2)]), {"nodeSelector": {}})
    assert (err.value.reason, err.value.message) == (
        "BuildFailed",
        "cannot determine GPU architecture from target nodeSelector (nvidia.com/gpu.product label is required)")


def test_unlabelled_nodes_fail_the_build_instead_of_building_for_unknown():
    store = Store(desired(RUN[:1]))
    world = store.world()
    world.nodes = unlabelled(1)
    step = tier.reconcile(world)
    assert step.build_failures == {0: "cannot determine GPU architecture from target nodeSelector "
                                      "(nvidia.com/gpu.product label is required)"}
    # The DRA fallback names the product: then it builds.
    world.resource_slices = [{"spec": {"driver": "gpu.nvidia.com", "nodeName": world.nodes[0]["metadata"]["name"],
                                       "devices": [{"attributes": {"productName": {"string": "NVIDIA B300 SXM6 AC"}}}]}}]
    assert isinstance(tier.reconcile(world).step.actions[-1], Create)


def test_lifecycle_events_follow_the_true_condition():
    store = Store(desired(RUN[:1]))
    run(store, {NAMES[0]: "Failed"})
    assert [(e.type, e.reason) for e in store.events] == [
        ("Normal", "WorkflowCreated"), ("Normal", "WorkflowRunning"), ("Warning", "WorkflowFailed")]
    assert store.events[-1].message == "One or more certification categories failed"


def h20_nodes(count: int) -> list[dict]:
    """H100-shaped nodes whose product the catalog's gpu-defaults.yaml has no row for (h20)."""
    nodes = mocknodes.mock_nodes("aws", "h100", count)
    for node in nodes:
        node["metadata"]["labels"]["nvidia.com/gpu.product"] = "NVIDIA-H20"
    return nodes


@pytest.mark.parametrize(("options", "sized"), [({}, "gpusPerNode=4 mlnxPerNode=0"),
                                                ({"gpusPerNode": 8, "mlnxPerNode": 2}, "gpusPerNode=8 mlnxPerNode=2")])
def test_an_unlisted_architecture_warns_on_the_certification_and_in_the_progress(options, sized):
    store = Store(desired(RUN[:1], options=options))
    world = store.world()
    world.nodes = h20_nodes(2)
    step = tier.reconcile(world)
    warned = [a for a in step.step.actions if isinstance(a, Event) and a.reason == "GPUArchitectureDefaults"]
    assert [(a.type, a.involved["metadata"]["uid"]) for a in warned] == [("Warning", "cert-uid")]
    assert warned[0].message.startswith('GPU architecture "h20" has no entry in the catalog\'s GPU defaults, which '
                                        f"fall back to gpusPerNode=4 mlnxPerNode=0 for it; this run is sized at {sized}.")
    assert f"communication/nccl-all-reduce: GPUArchitectureDefaults: {warned[0].message}" in step.notes
    assert any(isinstance(a, Create) for a in step.step.actions)  # a warning, not a refusal


def test_a_listed_architecture_emits_no_defaults_warning():
    step = tier.reconcile(Store(desired(RUN[:1])).world())
    assert not [a for a in step.step.actions if isinstance(a, Event) and a.reason == "GPUArchitectureDefaults"]
    assert not [n for n in step.notes if "GPUArchitectureDefaults" in n]
