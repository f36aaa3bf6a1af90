"""Job tier, one reconcile pass (surroundings.md §2.3), table-driven from data/reconcile_job/cases.yaml.

Each case patches the world in data/reconcile_job/_base.yaml and lists the whole Step it expects: every
created object, every status written (in full) and every event, with exact texts.
"""
import copy
from datetime import datetime
from pathlib import Path

import jsonpatch
import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine import attribution, health, reconcile_job
from ansible_collections.cre.certification.plugins.module_utils.engine.actions import Create, Event, UpdateStatus
from ansible_collections.cre.certification.plugins.module_utils.engine.world import JobWorld

DATA = Path(__file__).parent / "data" / "reconcile_job"
BASE = yaml.safe_load((DATA / "_base.yaml").read_text())
CASES = yaml.safe_load((DATA / "cases.yaml").read_text())


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


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_reconcile(case):
    world = make_world(case.get("patch", []))
    stored = copy.deepcopy(world)
    assert describe(reconcile_job.reconcile(world), world.job) == case["expect"]
    assert world == stored  # the observed world is never modified


def test_replaying_the_written_status_converges():
    """Resumability: applying a pass's status write and reconciling again writes nothing more."""
    for case in CASES:
        world = make_world(case.get("patch", []))
        step = reconcile_job.reconcile(world)
        writes = [a for a in step.actions if isinstance(a, UpdateStatus)]
        if not writes or any(isinstance(a, Create) for a in step.actions):
            continue
        world.job = writes[-1].obj
        again = reconcile_job.reconcile(world)
        assert not [a for a in again.actions if not isinstance(a, Event)], case["id"]
        assert not again.actions, case["id"]
