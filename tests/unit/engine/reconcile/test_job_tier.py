"""Job tier, one reconcile pass (surroundings.md §2.3), table-driven from data/reconcile_job/cases.yaml.

Each case patches the world in data/reconcile_job/_base.yaml; expected.yaml holds the whole Step it must
produce: every created object, every status written (in full) and every event, with exact texts.
"""
import copy
from datetime import datetime
from pathlib import Path

import jsonpatch
import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Create, Event, UpdateStatus
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import (
    attribution,
    health,
    job_tier,
    ownership,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile.world import JobWorld

DATA = Path(__file__).parents[1] / "data" / "reconcile_job"
BASE = yaml.safe_load((DATA / "_base.yaml").read_text())
CASES = yaml.safe_load((DATA / "cases.yaml").read_text())["cases"]
EXPECTED = yaml.safe_load((DATA / "expected.yaml").read_text())


def make_world(patch):
    doc = jsonpatch.apply_patch(BASE, patch)
    return JobWorld(job=doc["job"], workload=doc["workload"], pods=doc["pods"], nodes=doc["nodes"], logs=doc["logs"],
                    now=datetime.fromisoformat(doc["now"]))


def describe(step, job):
    actions = []
    for action in step.actions:
        if isinstance(action, Create):
            actions.append({"create": action.obj, "owner_uid": action.owner_uid})
        elif isinstance(action, UpdateStatus):
            assert action.obj["metadata"] == job["metadata"]  # the Job as read: resourceVersion kept
            assert action.obj["spec"] == job["spec"]
            actions.append({"status": action.obj["status"]})
        elif isinstance(action, Event):
            assert action.involved is job
            actions.append({"event": [action.type, action.reason, action.message]})
        else:
            raise AssertionError(f"unexpected action {action!r}")
    return {"actions": actions, "requeue_after": step.requeue_after, "terminal": step.terminal}


def test_every_case_has_an_expectation():
    assert sorted(EXPECTED) == sorted(c["id"] for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_reconcile(case):
    world = make_world(case.get("patch", []))
    stored = copy.deepcopy(world)
    assert describe(job_tier.reconcile(world), world.job) == EXPECTED[case["id"]]
    assert world == stored  # the observed world is never modified


def test_replaying_the_written_status_converges():
    """Applying each pass's status write and reconciling again reaches a fixed point within two more passes,
    and the fixed point writes nothing (status writes are idempotent, events only on transitions)."""
    for case in CASES:
        world = make_world(case.get("patch", []))
        if any(isinstance(a, Create) for a in job_tier.reconcile(world).actions):
            continue
        for _pass in range(3):
            writes = [a for a in job_tier.reconcile(world).actions if isinstance(a, UpdateStatus)]
            if not writes:
                break
            world.job = writes[-1].obj
        assert job_tier.reconcile(world).actions == [], case["id"]


def test_killed_between_create_and_status_write():
    """The Create is re-issued until the workload is seen; the driver adopts it on AlreadyExists (ownership)
    and the next pass records it as adopted. A foreign holder of the name is never adopted."""
    world = make_world([])
    create = job_tier.reconcile(world).actions[0]
    assert isinstance(create, Create)
    assert job_tier.reconcile(world).actions[0] == create  # same object, same owner UID: deterministic
    live = {**copy.deepcopy(create.obj), "metadata": {**create.obj["metadata"], "uid": "wl-uid-1"}}
    assert isinstance(ownership.on_exists(create, live, "wf-job"), ownership.Adopt)
    foreign = copy.deepcopy(live)
    foreign["metadata"]["ownerReferences"][0]["uid"] = "someone-else"
    assert not isinstance(ownership.on_exists(create, foreign, "wf-job"), ownership.Adopt)
    world.workload = live
    adopted = job_tier.reconcile(world)
    assert [type(a) for a in adopted.actions] == [UpdateStatus, Event]
    assert adopted.actions[0].obj["status"]["workloadRef"]["uid"] == "wl-uid-1"
    assert adopted.actions[1].reason == "WorkloadAdopted"


def test_fail_and_create_failed():
    world = make_world([*[{"op": "copy", "from": f"/templates/{t}", "path": p}
                          for t, p in (("status_running", "/job/status"), ("trainjob", "/workload"))]])
    step = job_tier.create_failed(world, 'trainjobs.trainer.kubeflow.org "wf-job-workload" is forbidden')
    assert step.requeue_after == 10.0 and not step.terminal
    assert [(a.type, a.reason, a.message) for a in step.actions] == [
        ("Warning", "WorkloadCreationError", 'trainjobs.trainer.kubeflow.org "wf-job-workload" is forbidden')]
    failed = job_tier.fail(world, "WorkloadCreationError", "boom")
    assert failed.terminal
    status = failed.actions[0].obj["status"]
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in status["conditions"]] == [
        ("InProgress", "False", "NotApplicable", ""), ("Succeeded", "False", "NotApplicable", ""),
        ("Failed", "True", "WorkloadCreationError", "boom")]
    assert (failed.actions[1].type, failed.actions[1].reason) == ("Warning", "WorkloadCreationError")


@pytest.mark.parametrize("text, expected", [
    ("", ""),
    ("one\ntwo", "one\ntwo"),
    ("".join(f"line {i}\n" for i in range(1000)), "".join(f"line {i}\n" for i in range(200, 1000))),
    ("x" * 40000 + "\n" + "y" * 100 + "\n", ("x" * 40000 + "\n" + "y" * 100 + "\n")[-32768:]),
    ("é" * 20000, "é" * 16384),  # 2 bytes each: cut on a character boundary, at most 32 KiB
])
def test_log_tail(text, expected):
    assert attribution.tail(text) == expected
    assert len(attribution.tail(text).encode()) <= 32768


def test_health_is_linear_and_robust():
    """Thousands of nodes, some gone, some erroring: one compile, only the true ones flagged, in order."""
    expr = 'node.metadata.labels["gpu.health"] == "bad"'
    nodes = {f"n{i:04d}": {"metadata": {"labels": {"gpu.health": "bad" if i % 1000 == 7 else "ok"}}}
             for i in range(3000)}
    nodes["n0500"] = {"metadata": {}}  # no labels: eval error, not a failure
    names = [*nodes, "gone-node"]
    assert health.failing_nodes(expr, names, nodes) == ["n0007", "n1007", "n2007"]
    assert health.failing_nodes("node.metadata.(", names, nodes) == []  # does not compile: flags nothing
    assert health.failing_nodes("", names, nodes) == []


def test_health_memo_evaluates_a_node_again_only_once_it_changed():
    """The run's memo keeps a verdict per node version: the same version is not evaluated again (the stale label
    below would otherwise flip it), a new version is, and a node without a version is never memorised."""
    expr = 'node.metadata.labels["gpu.health"] == "bad"'

    def node(health_label: str, version: str) -> dict:
        return {"metadata": {"labels": {"gpu.health": health_label}, **({"resourceVersion": version} if version else {})}}

    memo: dict = {}
    assert health.failing_nodes(expr, ["a"], {"a": node("bad", "1")}, memo) == ["a"]
    assert memo == {(expr, "a"): ("1", True)}
    assert health.failing_nodes(expr, ["a"], {"a": node("ok", "1")}, memo) == ["a"]  # same version: remembered
    assert health.failing_nodes(expr, ["a"], {"a": node("ok", "2")}, memo) == []  # changed: evaluated again
    assert memo == {(expr, "a"): ("2", False)}  # one entry per node, whatever its history
    assert health.failing_nodes(expr, ["b"], {"b": node("bad", "")}, memo) == ["b"]
    assert health.failing_nodes(expr, ["b"], {"b": node("ok", "")}, memo) == []  # no version: evaluated each time
    assert (expr, "b") not in memo
