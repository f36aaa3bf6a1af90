"""Killed with SIGKILL at three points of a 3-iteration run and restarted each time, workflow_run ends with exactly
the Jobs and node-result ConfigMaps of an uninterrupted run. A real process killed mid-request against a real
apiserver is what only this test reaches; the kill after every single action is proven without a cluster
(tests/unit/engine/reconcile: the engine killed and resumed at each step)."""
from __future__ import annotations

import pytest
from kubernetes import client

from tests.ansible_run import run_until

from .conftest import SIM, Sim
from .seed import NVCRE, items, node_result_configmaps, nodes, start, workflow

pytestmark = pytest.mark.clusters(SIM)

# How many API writes each successive run may begin before it is killed: at its first write, deep into an
# iteration, and between the two.
KILL_AFTER = [1, 5, 3]
WRITE_VERBS = ("create ", "replace ", "status ", "patch ", "delete ")


def drive(sim: Sim, ns: str, kill_after: int | None) -> int:
    """Run workflow_run with -vvv; SIGKILL it once `kill_after` writes have begun; returns the writes begun."""
    args = {"name": "nccl-test", "namespace": ns, "kubeconfig": str(sim.kubeconfig), "poll_interval": 0.3,
            "timeout": 240}
    writes = [0]

    def counted(line: str) -> bool:
        if line.lstrip().startswith(WRITE_VERBS):
            writes[0] += 1
        return kill_after is not None and writes[0] >= kill_after

    run_until("workflow_run", args, counted)
    return writes[0]


def outcome(sim: Sim, ns: str) -> dict:
    """What a run leaves behind: every Job (name, spec) and the decoded node-result ConfigMaps."""
    wf = client.CustomObjectsApi(sim.api).get_namespaced_custom_object(*NVCRE, ns, "workflows", "nccl-test")
    orch = wf["status"]["orchestration"]
    return {
        "jobs": {j["metadata"]["name"]: j["spec"] for j in items(sim, ns, NVCRE, "jobs")},
        "configmaps": node_result_configmaps(sim, ns, wf["metadata"]["uid"]),
        "conditions": {c["type"]: (c["status"], c["reason"]) for c in wf["status"]["conditions"]},
        "iterations": (orch["completedIterations"], [h["iteration"] for h in orch["iterationHistory"]]),
        "groups": [(g["name"], g["phase"], g["nodes"]) for g in orch["groups"]],
    }


def test_three_kills_then_the_same_result(e2e: Sim) -> None:
    wf = workflow(nodes(8, 9, 10, 11), iterations=3)
    reference = start(e2e, wf)
    assert drive(e2e, reference, None) > 0
    expected = outcome(e2e, reference)
    assert expected["conditions"]["Succeeded"] == ("True", "JobCompleted")

    killed = start(e2e, wf)
    begun = [drive(e2e, killed, k) for k in KILL_AFTER]
    assert all(n >= 1 for n in begun), begun  # every run was cut short after it had started writing
    drive(e2e, killed, None)
    assert outcome(e2e, killed) == expected
