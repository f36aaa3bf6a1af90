"""roles/crds and roles/results through ansible-playbook on the session cluster: a hand-made failed Workflow
with its node-result ConfigMaps and its passing group's final BandwidthMeasurement gives the expected
report.json, junit.xml and report.md, and a second run changes nothing."""
from __future__ import annotations

import json
import os
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from kubernetes import client

from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import node_results

from .conftest import SIM

pytestmark = pytest.mark.clusters(SIM)

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOKS = Path(__file__).parent / "playbooks"
GROUP, VERSION = "nvcre.nvidia.com", "v1alpha1"
NODES = ["node-0", "node-1", "node-2", "node-3"]
FAILED = [{"name": "node-1", "reason": "HardwareFailureDetected", "message": "XID 79 on GPU 3"}]
BANDWIDTH = [{"sizeBytes": 8, "algBW": "0.00", "busBW": "0.00", "samples": 1},
             {"sizeBytes": 8589934592, "algBW": "451.80", "busBW": "847.12", "samples": 1}]


def playbook(name: str, **extra: str) -> str:
    """Run a playbook from tests/integration/playbooks; returns its output (asserting success)."""
    proc = subprocess.run(
        [str(ROOT / ".venv/bin/ansible-playbook"), str(PLAYBOOKS / name), "-e", json.dumps(extra)],
        cwd=ROOT, env={**os.environ, "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg")},
        capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def make_workflow(api: client.ApiClient, namespace: str) -> str:
    """A finished Workflow (group-0 failed on node-1, group-1 passed) and its two ConfigMaps, as NVCRE leaves them."""
    custom = client.CustomObjectsApi(api)
    body = {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Workflow",
            "metadata": {"name": "wf-report", "labels": {"nvcre.nvidia.com/category-domain": "communication",
                                                         "nvcre.nvidia.com/category-variant": "nccl-all-reduce"}},
            "spec": {"jobTemplate": {"spec": {"workload": {"trainJob": {"runtimeRef": {"name": "rt"}}}}},
                     "orchestration": {}}}
    wf = custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "workflows", body)
    uid8 = wf["metadata"]["uid"][:8]
    owner = [{"apiVersion": f"{GROUP}/{VERSION}", "kind": "Workflow", "name": "wf-report",
              "uid": wf["metadata"]["uid"], "controller": True}]
    core = client.CoreV1Api(api)
    for name, key, value in ((f"succeeded-nodes-{uid8}", node_results.SUCCEEDED_KEY,
                              node_results.encode_succeeded(NODES[2:])),
                             (f"failed-nodes-{uid8}", node_results.FAILED_KEY, node_results.encode_failed(FAILED))):
        core.create_namespaced_config_map(namespace, {"metadata": {"name": name, "ownerReferences": owner},
                                                      "binaryData": {key: value}})
    wf["status"] = {
        "conditions": [{"type": "Failed", "status": "True", "reason": "JobHardwareFailed",
                        "message": "1 groups failed across 1 iterations; hardware failures occurred on one or more nodes",
                        "lastTransitionTime": wf["metadata"]["creationTimestamp"]}],
        "succeededNodesRef": {"kind": "ConfigMap", "name": f"succeeded-nodes-{uid8}"},
        "failedNodesRef": {"kind": "ConfigMap", "name": f"failed-nodes-{uid8}"},
        "orchestration": {"totalNodes": 4, "nodesPerJob": 2, "totalGroups": 2, "currentIteration": 1,
                          "completedIterations": 1, "detectedPlatform": "aws", "detectedGPUArchitecture": "gb200",
                          "groups": [{"name": "group-0", "nodes": NODES[:2], "phase": "Failed"},
                                     {"name": "group-1", "nodes": NODES[2:], "phase": "Succeeded",
                                      "jobRef": {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Job",
                                                 "name": "wf-report-group-1"}}]}}
    custom.replace_namespaced_custom_object_status(GROUP, VERSION, namespace, "workflows", "wf-report", wf)
    bm = custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "bandwidthmeasurements", {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "BandwidthMeasurement",
        "metadata": {"name": "wf-report-group-1-bandwidth", "labels": {"nvcre.nvidia.com/workflow": "wf-report"},
                     "ownerReferences": owner},
        "spec": {"jobRef": {"apiGroup": GROUP, "kind": "Job", "name": "wf-report-group-1"},
                 "logProfileRef": "nccl-bandwidth"}})
    bm["status"] = {"results": BANDWIDTH, "transport": ["IB"], "conditions": [
        {"type": kind, "status": value, "reason": "JobSucceeded", "message": message,
         "lastTransitionTime": wf["metadata"]["creationTimestamp"]}
        for kind, value, message in (("Measuring", "False", "Measurement completed"),
                                     ("Complete", "True", "Job succeeded"))]}
    custom.replace_namespaced_custom_object_status(GROUP, VERSION, namespace, "bandwidthmeasurements",
                                                   "wf-report-group-1-bandwidth", bm)
    return "wf-report"


def test_results_role(sim, namespace: str, tmp_path: Path) -> None:
    playbook("crds.yml", kubeconfig=str(sim.kubeconfig))
    workflow = make_workflow(sim.api, namespace)
    args = {"kubeconfig": str(sim.kubeconfig), "workflow": workflow, "namespace": namespace, "dest": str(tmp_path)}
    first = playbook("results.yml", **args)
    assert "changed=1" in first

    report = json.loads((tmp_path / "report.json").read_text())
    assert report["result"] == "FAILED"
    assert (report["platform"], report["gpu"], report["totalNodes"]) == ("aws", "gb200", 4)
    # NVCRE's record, with our severity and recommended action beside it.
    assert [{k: e[k] for k in ("name", "reason", "message")} for e in report["failedNodes"]] == FAILED
    assert [(e["severity"], e["action"].split(" ")[0]) for e in report["failedNodes"]] == [("critical", "Drain")]
    category = report["categories"][0]
    assert (category["status"], category["nodesPerJob"], category["failedGroups"][0]["nodes"]) == \
        ("Failed", 2, ["node-0", "node-1"])
    assert {n["name"]: (n["group"], n["status"]) for n in report["nodeResults"]} == \
        {"node-0": ("group-0", "Failed"), "node-1": ("group-0", "Failed"), "node-2": ("group-1", "Passed"),
         "node-3": ("group-1", "Passed")}
    assert category["bandwidth"] == [{"size": 8, "algBW": 0.0, "busBW": 0.0, "samples": 1},
                                     {"size": 8589934592, "algBW": 451.8, "busBW": 847.12, "samples": 1}]
    assert category["groupBandwidth"] == [{"groupName": "group-1", "nodes": NODES[2:], "busBW": 847.12,
                                           "transport": "IB", "belowMin": False, "failed": False,
                                           "curve": [[8, 0.0], [8589934592, 847.12]]}]

    suite = ET.fromstring((tmp_path / "junit.xml").read_text()).find("testsuite")
    assert (suite.get("name"), suite.get("tests"), suite.get("failures")) == ("communication/nccl-all-reduce", "4", "2")
    failure = suite.find("testcase[@name='node-1']/failure")
    assert (failure.get("type"), failure.get("message")) == ("HardwareFailureDetected", "XID 79 on GPU 3")
    assert suite.find("testcase[@name='node-2']").get("classname") == "communication/nccl-all-reduce"
    assert suite.find("testcase[@name='node-2']/properties/property[@name='busBandwidthGBps']").get("value") == "847.12"

    markdown = (tmp_path / "report.md").read_text()
    assert "- Categories: 0/1 passed\n- Failed Nodes: 1 (node-1)\n- Result: FAILED" in markdown
    assert "| node-1 | group-0 | Failed | HardwareFailureDetected | XID 79 on GPU 3 |" in markdown
    assert "| 8 GB | 451.80 GB/s | 847.12 GB/s | 1 |" in markdown
    assert "| group-1 | node-2, node-3 | Passed |  | BusBW 847.12 GB/s |" in markdown

    assert "changed=0" in playbook("results.yml", **args)
