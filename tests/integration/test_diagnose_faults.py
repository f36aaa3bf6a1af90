"""Diagnose localises the faults only it can (issue 8, shown on the local cluster): a link fault between two
NVLink cliques is an infrastructure fault naming both, an NVLink fault is told from a network one by the no-NVL
re-test, and roles/certify goes on with the next category after a diagnose that confirmed a faulty node, its
report showing what diagnose found."""
from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from tests.ansible_run import ROOT, ansible_module
from tools.sim import faults, profiles

from .conftest import Sim

pytestmark = pytest.mark.clusters(("aws-gb200", 20))

NVCRE = ("nvcre.nvidia.com", "v1alpha1")
# 20 aws-gb200 nodes: clique .0 holds gpu-node-000..017 (an NVL72 rack of 18), clique .1 gpu-node-018..019.
NODES = 20
CLIQUE0, CLIQUE1 = (f"{profiles.build_nodes('aws-gb200', NODES)[i]['metadata']['labels'][profiles.CLIQUE_LABEL]}"
                    for i in (0, 18))
# Passes a healthy group over MNNVL (840 GB/s) and without it (400); fails an NVLink fault over MNNVL
# (840 x 0.25) and a faulty link between the cliques (400 x 0.5).
THRESHOLD = "value >= 300.0"
DIAGNOSE = {"domain": "communication", "variant": "nccl-all-reduce",
            "options": {"testScale": "diagnose", "thresholds": {"busBandwidthGBps": THRESHOLD}}}


@pytest.fixture(scope="module")
def gb200(pooled: Callable[..., Sim]) -> Sim:
    return pooled("aws-gb200", NODES, pod_ms={"default": 2000, "nvcre": 2000})


def certify(sim: Sim, name: str, categories: list[dict], timeout: float = 900) -> dict:
    rc, result = ansible_module("certification_run", {
        "kubeconfig": str(sim.kubeconfig), "name": name, "namespace": "default", "categories": categories,
        "poll_interval": 0.5, "timeout": timeout}, timeout=timeout + 60)
    assert rc == 0, result
    return result


def workflow(sim: Sim, name: str) -> dict:
    return client.CustomObjectsApi(sim.api).get_namespaced_custom_object(*NVCRE, "default", "workflows", name)


def failed_condition(wf: dict) -> dict:
    return next(c for c in wf["status"]["conditions"] if c["type"] == "Failed" and c["status"] == "True")


def test_link_fault_between_two_cliques_is_an_infrastructure_fault_naming_both(gb200: Sim) -> None:
    faults.fault(gb200.name, CLIQUE0, "link", peer=CLIQUE1)
    try:
        result = certify(gb200, "link", [DIAGNOSE])
    finally:
        faults.fault(gb200.name, CLIQUE0, "none")
    (category,) = result["categories"]
    wf = workflow(gb200, category["workflow"])
    failed = failed_condition(wf)
    assert (failed["reason"], failed["message"]) == ("IterationsFailed",
                                                     "Diagnosis complete: 1 infrastructure faults detected")
    diagnose = wf["status"]["orchestration"]["diagnose"]
    (fault,) = diagnose["infrastructureFaults"]
    assert fault["domain"] == f"{CLIQUE0},{CLIQUE1}"  # the two screening domains of its sides
    assert (fault["groupA"], fault["groupB"]) == (["gpu-node-000"], ["gpu-node-018"])
    # Each clique alone passed, with and without NVL: no node is to blame.
    assert {d: r["passed"] for d, r in diagnose["screeningResults"].items()} == {CLIQUE0: True, CLIQUE1: True}
    assert {d: r["passed"] for d, r in diagnose["noNVLScreeningResults"].items()} == {CLIQUE0: True, CLIQUE1: True}
    assert category["failed_nodes"] == [] and not diagnose.get("suspectNodes")
    assert diagnose["stage"] == "complete"


def test_nvlink_fault_in_an_18_node_clique_is_told_from_a_network_fault_by_the_no_nvl_pass(gb200: Sim) -> None:
    faults.fault(gb200.name, "gpu-node-005", "nvlink")
    try:
        result = certify(gb200, "nvlink", [DIAGNOSE])
    finally:
        faults.fault(gb200.name, "gpu-node-005", "none")
    (category,) = result["categories"]
    wf = workflow(gb200, category["workflow"])
    failed = failed_condition(wf)
    assert (failed["reason"], failed["message"]) == ("IterationsFailed", "Diagnosis complete: 1 faulty nodes confirmed")
    diagnose = wf["status"]["orchestration"]["diagnose"]
    # Over MNNVL the clique of 18 failed; without NVL it passed, so the fault is the NVLink and no node is a
    # no-NVL suspect; bisection over MNNVL and confirmation against a healthy node name gpu-node-005.
    assert diagnose["screeningResults"][CLIQUE0] == {"nodes": [f"gpu-node-{i:03d}" for i in range(18)],
                                                     "passed": False}
    assert diagnose["noNVLScreeningResults"][CLIQUE0]["passed"] is True
    assert not diagnose.get("noNVLSuspectNodes")
    assert [e["name"] for e in category["failed_nodes"]] == ["gpu-node-005"]
    others = [f"gpu-node-{i:03d}" for i in range(NODES) if i != 5]
    assert category["succeeded_nodes"] == others and diagnose["healthyNodes"] == others
    assert "gpu-node-005" in diagnose["suspectNodes"]


def test_certify_role_goes_on_after_a_diagnose_and_reports_its_findings(gb200: Sim, tmp_path: Path) -> None:
    """playbooks/certify.yml: diagnose confirms a slow node (below the floor with NVL and without), the next
    category still runs, and the report has the diagnose section."""
    faults.fault(gb200.name, "gpu-node-007", "slow", 0.3)  # 840 x 0.3 and 400 x 0.3: below 300 both ways
    inventory = {"clusters": {"hosts": {"lab": {
        "ansible_connection": "local", "ansible_python_interpreter": str(ROOT / ".venv/bin/python"),
        "k8s_kubeconfig": str(gb200.kubeconfig), "certify_certification_name": "suspect",
        "certify_namespace": "nvcre", "certify_poll_interval": 0.5, "certify_timeout": 900,
        "certify_categories": [DIAGNOSE, {"domain": "communication", "variant": "nccl-all-reduce",
                                          "options": {"nodesPerJob": 10}}],
        "cre_report_dir": str(tmp_path), "results_fail_on_failure": False}}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    try:
        proc = subprocess.run([str(ROOT / ".venv/bin/ansible-playbook"), "-i", str(tmp_path / "inventory.yml"),
                               str(ROOT / "playbooks/certify.yml")], cwd=tmp_path,
                              env={**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg")},
                              capture_output=True, text=True, timeout=1200, check=False)
    finally:
        faults.fault(gb200.name, "gpu-node-007", "none")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    cert = client.CustomObjectsApi(gb200.api).get_namespaced_custom_object(*NVCRE, "nvcre", "certifications",
                                                                           "suspect")
    assert [s["status"] for s in cert["status"]["categoryStatuses"]] == ["Failed", "Succeeded"]  # both ran
    failed = next(c for c in cert["status"]["conditions"] if c["type"] == "Failed")
    assert (failed["reason"], failed["message"]) == ("WorkflowFailed", "One or more certification categories failed")
    assert "diagnose: " in proc.stdout  # the progress lines name the stage and round
    report = json.loads((tmp_path / "lab" / "report.json").read_text())
    diagnosed, after = report["categories"]
    assert diagnosed["testScale"] == "diagnose" and after["status"] == "Succeeded"
    assert diagnosed["failureReason"] == "Diagnosis complete: 1 faulty nodes confirmed"
    diagnose = diagnosed["diagnose"]
    assert diagnose["stage"] == "complete"
    assert "gpu-node-007" in diagnose["noNVLSuspectNodes"]  # it is slow without NVL too
    # The status holds the last round's groups: the confirmation of the one suspect left.
    (last,) = diagnosed["diagnoseRounds"]
    assert (last["round"], last["stage"], last["failed"]) == (diagnose["round"], "confirmation", 1)
    assert [e["name"] for e in report["failedNodes"]] == ["gpu-node-007"]
    assert {n["name"] for n in report["nodeResults"] if n["status"] == "Passed"} == \
        {f"gpu-node-{i:03d}" for i in range(NODES) if i != 7}
    markdown = (tmp_path / "lab" / "report.md").read_text()
    section = markdown.split("## communication/nccl-all-reduce")[1]
    assert "### Diagnose" in section
    assert "| Stage | complete |" in section and f"| Rounds | {diagnose['round']} |" in section
    assert "| Confirmed Faulty Nodes | 1 (gpu-node-007) |" in section
    assert f"| {CLIQUE0} (no NVL) |" in section
    junit = (tmp_path / "lab" / "junit.xml").read_text()
    assert '<property name="diagnose.confirmedNodes" value="gpu-node-007" />' in junit
