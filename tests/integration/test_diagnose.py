"""Diagnose mode on the local cluster (workflow spec §9): a 16-node aws-h100 cluster screened in chunks of 4,
faults injected with `tools.sim fault`, the catalog's nccl-all-reduce with a bus-bandwidth threshold, driven by
workflow_run to NVCRE's verdict; and the same verdict after a run killed twice across its rounds."""
from __future__ import annotations

import copy
import itertools
import json
import math
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from ansible_collections.cre.certification.plugins.module_utils.engine.plan import category_build
from tests.ansible_run import ROOT, ansible_module, run_until
from tools.sim.faults import fault

from .conftest import Sim
from .seed import NVCRE, items, node_result_configmaps

pytestmark = pytest.mark.clusters(("aws-h100", 16))

NODES = 16
CHUNK = 4  # max(ceil(sqrt(16)), 2): screening without a topology key
ALL = [f"gpu-node-{i:03d}" for i in range(NODES)]
NAME = "diag"
WRITE_VERBS = ("create ", "replace ", "status ", "patch ", "delete ")
_ns = itertools.count()


@pytest.fixture(scope="module")
def h100(pooled: Callable[..., Sim]) -> Sim:
    return pooled("aws-h100", NODES)


@pytest.fixture
def faults(h100: Sim) -> Iterator[dict[str, str]]:
    """Faults to inject (node -> kind) before the test runs; every node is healthy again afterwards."""
    chosen: dict[str, str] = {}
    yield chosen
    for node in chosen:
        fault(h100.name, node, "none")


def inject(sim: Sim, faults: dict[str, str], **by_node: str) -> None:
    for node, kind in by_node.items():
        faults[node.replace("_", "-")] = kind
        fault(sim.name, node.replace("_", "-"), kind)


# The catalog's Workflow for `testScale: diagnose` with a bus-bandwidth threshold (aws-h100 nodes measure 360,
# a slow node halves it), screened in √N chunks: aws-h100 nodes have no NVLink clique label to screen by.
CATALOG = category_build.build_workflow(
    {"metadata": {"name": "diag", "uid": "-"}, "spec": {"testScale": "diagnose",
                                                        "thresholds": {"busBandwidthGBps": "value >= 300.0"}}},
    {"domain": "communication", "variant": "nccl-all-reduce"}, platform="aws", gpu_architecture="h100",
    available_nodes=NODES)


def start(sim: Sim) -> str:
    ns = f"diag-{next(_ns)}"
    client.CoreV1Api(sim.api).create_namespace({"metadata": {"name": ns}})
    wf = copy.deepcopy(CATALOG)
    wf["metadata"] = {"name": NAME, "namespace": ns}
    del wf["spec"]["orchestration"]["diagnose"]["topologyKey"]
    client.CustomObjectsApi(sim.api).create_namespaced_custom_object(*NVCRE, ns, "workflows", wf)
    return ns


def args(sim: Sim, ns: str) -> dict:
    return {"name": NAME, "namespace": ns, "kubeconfig": str(sim.kubeconfig), "poll_interval": 0.3, "timeout": 300}


def diagnose(sim: Sim, ns: str) -> dict:
    rc, result = ansible_module("workflow_run", args(sim, ns), timeout=360)
    assert rc == 0, result
    print(f"diagnose rounds: {result['diagnose']['round']}")
    return result


def test_one_slow_node_is_confirmed_and_the_rest_shown_healthy(h100: Sim, faults: dict) -> None:
    inject(h100, faults, gpu_node_005="slow")
    result = diagnose(h100, start(h100))
    assert result["condition"] == {"type": "Failed", "reason": "IterationsFailed",
                                   "message": "Diagnosis complete: 1 faulty nodes confirmed"}
    assert [(f["name"], f["reason"]) for f in result["failed_nodes"]] == [("gpu-node-005", "ThresholdViolation")]
    healthy = [n for n in ALL if n != "gpu-node-005"]
    assert result["succeeded_nodes"] == healthy == result["diagnose"]["healthyNodes"]
    assert result["diagnose"]["stage"] == "complete"
    assert result["diagnose"]["round"] <= 2 + math.ceil(math.log2(CHUNK)) + 1
    progress = "\n".join(result["_progress"])
    for stage in ("intra-screening round 1", "inter-screening round 2", "bisection round 3", "confirmation round 4"):
        assert f"diagnose: {stage}," in progress, stage


def test_two_faults_in_different_screening_groups_are_both_confirmed(h100: Sim, faults: dict) -> None:
    inject(h100, faults, gpu_node_002="slow", gpu_node_013="workload")
    result = diagnose(h100, start(h100))
    assert result["condition"]["message"] == "Diagnosis complete: 2 faulty nodes confirmed"
    confirmed = [("gpu-node-002", "ThresholdViolation"), ("gpu-node-013", "WorkloadFailed")]
    assert [(f["name"], f["reason"]) for f in result["failed_nodes"]] == confirmed
    assert result["succeeded_nodes"] == [n for n in ALL if n not in ("gpu-node-002", "gpu-node-013")]


def test_no_fault_succeeds_with_every_node_healthy(h100: Sim) -> None:
    result = diagnose(h100, start(h100))
    assert result["condition"] == {"type": "Succeeded", "reason": "JobCompleted",
                                   "message": "All screening passed, no faults detected"}
    assert result["succeeded_nodes"] == ALL == result["diagnose"]["healthyNodes"]
    assert result["failed_nodes"] == []


def drive(sim: Sim, ns: str, kill_after: int | None) -> int:
    """workflow_run with -vvv, SIGKILLed once `kill_after` writes have begun; returns the writes begun."""
    writes = [0]

    def counted(line: str) -> bool:
        if line.lstrip().startswith(WRITE_VERBS):
            writes[0] += 1
        return kill_after is not None and writes[0] >= kill_after

    run_until("workflow_run", args(sim, ns), counted)
    return writes[0]


def outcome(sim: Sim, ns: str) -> dict:
    """What a run leaves: every Job (name, spec), the decoded node-result ConfigMaps, conditions, the diagnosis."""
    wf = client.CustomObjectsApi(sim.api).get_namespaced_custom_object(*NVCRE, ns, "workflows", NAME)
    orch = wf["status"]["orchestration"]
    return {
        "jobs": {j["metadata"]["name"]: j["spec"] for j in items(sim, ns, NVCRE, "jobs")},
        "configmaps": node_result_configmaps(sim, ns, wf["metadata"]["uid"]),
        "conditions": {c["type"]: (c["status"], c["reason"], c["message"]) for c in wf["status"]["conditions"]},
        "diagnose": orch["diagnose"],
        "groups": [(g["name"], g["phase"], g["nodes"]) for g in orch["groups"]],
    }


def test_two_kills_across_the_rounds_then_the_same_verdict(h100: Sim, faults: dict) -> None:
    inject(h100, faults, gpu_node_009="slow")
    reference = start(h100)
    total = drive(h100, reference, None)
    expected = outcome(h100, reference)
    assert expected["conditions"]["Failed"] == ("True", "IterationsFailed", "Diagnosis complete: 1 faulty nodes confirmed")
    assert expected["configmaps"]["failed-nodes"][1][0]["name"] == "gpu-node-009"

    killed = start(h100)
    step = max(total // 3, 1)  # two kills spread over the writes of a whole run (every step: the unit tests)
    begun = [drive(h100, killed, step) for _kill in range(2)]
    assert all(n >= step for n in begun), begun
    rounds = outcome(h100, killed)["diagnose"]["round"]
    assert 0 < rounds < expected["diagnose"]["round"], "the kills fell across the rounds, not all before or after"
    drive(h100, killed, None)
    assert outcome(h100, killed) == expected


def test_certification_run_diagnoses_each_category_and_goes_on(h100: Sim, faults: dict) -> None:
    """The catalog as is: aws-h100 nodes carry no NVLink clique label, so all 16 are screened as one domain."""
    inject(h100, faults, gpu_node_006="slow")
    rc, result = ansible_module("certification_run", {
        "kubeconfig": str(h100.kubeconfig), "name": "diag-cert", "namespace": "default",
        "categories": [{"domain": "communication", "variant": "nccl-all-reduce"},
                       {"domain": "communication", "variant": "nccl-all-gather"}],
        "options": {"testScale": "diagnose", "thresholds": {"busBandwidthGBps": "value >= 300.0"}},
        "poll_interval": 0.5, "timeout": 400}, timeout=460)
    assert rc == 0, result
    assert [c["status"] for c in result["categories"]] == ["Failed", "Failed"]
    for cat in result["categories"]:
        assert [(f["name"], f["reason"]) for f in cat["failed_nodes"]] == [("gpu-node-006", "ThresholdViolation")]
        assert cat["succeeded_nodes"] == [n for n in ALL if n != "gpu-node-006"]
    assert any("diagnose: confirmation round" in line for line in result["_progress"])


def test_the_playbook_confirms_a_slow_and_a_failing_node_on_the_catalog_as_shipped(
        h100: Sim, faults: dict, tmp_path: Path) -> None:
    """roles/certify through playbooks/certify.yml, the catalog's own topologyKey (no clique label on aws-h100:
    one screening domain) and retry policy: the failing node restarts in place until its Job gives up, so its
    group fails and diagnose confirms it beside the slow one."""
    inject(h100, faults, gpu_node_002="slow", gpu_node_013="workload")
    inventory = {"clusters": {"vars": {"ansible_connection": "local",
                                       "ansible_python_interpreter": str(ROOT / ".venv/bin/python")},
                              "hosts": {"h100": {
                                  "k8s_kubeconfig": str(h100.kubeconfig), "certify_certification_name": "diagnosis",
                                  "certify_namespace": f"diag-play-{next(_ns)}", "certify_poll_interval": 0.5,
                                  "certify_categories": [{"domain": "communication", "variant": "nccl-all-reduce"}],
                                  "certify_options": {"testScale": "diagnose",
                                                      "thresholds": {"busBandwidthGBps": "value >= 300.0"}},
                                  "certify_timeout": 600}}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    proc = subprocess.run(
        [str(ROOT / ".venv/bin/ansible-playbook"), "-i", "inventory.yml", str(ROOT / "playbooks/certify.yml")],
        cwd=tmp_path, env={**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg")},
        capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 2, proc.stdout[-4000:] + proc.stderr[-2000:]  # the play fails on a FAILED report
    report = json.loads((tmp_path / "cre-reports" / "h100" / "report.json").read_text())
    (category,) = report["categories"]
    assert category["failureReason"] == "Diagnosis complete: 2 faulty nodes confirmed"
    confirmed = [("gpu-node-002", "ThresholdViolation"), ("gpu-node-013", "WorkloadFailed")]
    assert [(f["name"], f["reason"]) for f in report["failedNodes"]] == confirmed
    healthy = [n for n in ALL if n not in ("gpu-node-002", "gpu-node-013")]
    assert category["diagnose"]["healthyNodes"] == healthy
    assert sorted(n["name"] for n in report["nodeResults"] if n["status"] == "Passed") == healthy
