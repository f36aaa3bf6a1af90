"""Certifying against history on simulated clusters, through playbooks/certify.yml and the collection's modules:
a fleet's reports make a baseline (an outlier trimmed, a run with another image refused comparison), and one
cluster certified three times finds a slowed node's group regressed against the previous run (the play fails only
when enforcement is on) and names the node a repeat offender once it failed twice."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import node_results
from tests.ansible_run import ROOT, ansible_module
from tools.sim import faults

from .conftest import Sim

pytestmark = pytest.mark.clusters(("onprem-b300", 4), ("onprem-b300", 4, 1))

NAMESPACE, OTHER = "history", "history-other-image"
CATEGORY = {"domain": "communication", "variant": "nccl-all-reduce", "options": {"testScale": "intra-node"}}
KEY = "communication/nccl-all-reduce"
SLOW = "gpu-node-002"     # slowed by 10% on east after the first certification
OUTLIER = "gpu-node-001"  # slowed by half on west: the fleet's outlier


def host(sim: Sim, name: str, **more: Any) -> dict:
    return {"k8s_kubeconfig": str(sim.kubeconfig), "certify_certification_name": name, "certify_namespace": NAMESPACE,
            "certify_categories": [CATEGORY], "certify_poll_interval": 0.5, "certify_timeout": 600, **more}


def certify(tmp_path: Path, hosts: dict[str, dict]) -> subprocess.CompletedProcess:
    inventory = {"clusters": {"vars": {"ansible_connection": "local",
                                       "ansible_python_interpreter": str(ROOT / ".venv/bin/python")},
                              "hosts": hosts}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    return subprocess.run([str(ROOT / ".venv/bin/ansible-playbook"), "-i", "inventory.yml", "--forks", "2",
                           str(ROOT / "playbooks/certify.yml")], cwd=tmp_path, capture_output=True, text=True,
                          timeout=900, check=False,
                          env={**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg")})


def report(tmp_path: Path, host_name: str) -> dict:
    return json.loads((tmp_path / "cre-reports" / host_name / "report.json").read_text())


@pytest.fixture(scope="module")
def fleet(pooled, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Sim]:
    """Both clusters certified once in one play (east clean, west with a node at half speed)."""
    east, west = pooled("onprem-b300", 4), pooled("onprem-b300", 4, 1)
    faults.fault(west.name, OUTLIER, "slow", 0.5)
    folder = tmp_path_factory.mktemp("fleet")
    proc = certify(folder, {"east": host(east, "h1"), "west": host(west, "w1")})
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    return folder, east


def test_a_fleet_baseline_trims_the_outlier_and_refuses_another_image(fleet: tuple[Path, Sim]) -> None:
    folder, east = fleet
    assert report(folder, "east")["comparison"]["against"] is None  # a first certification: nothing to compare yet
    rc, made = ansible_module("baseline_generate", {"reports": [str(folder / "cre-reports")], "name": "b300-fleet",
                                                    "dest": str(folder / "baseline.yaml")})
    assert rc == 0, made
    (entry,) = [e for e in made["baseline"]["entries"] if e["key"]["category"] == KEY]
    group = entry["figures"]["groupBusBW"]
    assert (group["samples"], group["trimmed"]) == (7, 1)  # 8 one-node groups; west's slow node dropped
    assert group["spread"]["min"] == group["spread"]["max"] == group["value"]  # the seven left agree
    assert sorted(s["report"] for s in group["sources"]) == sorted(
        str(folder / "cre-reports" / h / "report.json") for h in ("east", "west"))
    assert made["trimmed"] == {f"{KEY} groupBusBW": 1}
    # Another image on east (in a namespace of its own, so east's history stays one image): every figure of the
    # category refused with one line naming the key.
    client.CoreV1Api(east.api).create_namespace({"metadata": {"name": OTHER}})
    rc, run = ansible_module("certification_run", {
        "kubeconfig": str(east.kubeconfig), "name": "other-image", "namespace": OTHER, "poll_interval": 0.5,
        "timeout": 600, "categories": [{**CATEGORY, "options": {**CATEGORY["options"],
                                                                "image": "registry.example/nccl-tests:other"}}]},
        timeout=700)
    assert rc == 0 and run["phase"] == "Succeeded", run
    rc, out = ansible_module("certification_results", {
        "kubeconfig": str(east.kubeconfig), "certification": "other-image", "namespace": OTHER,
        "baseline": str(folder / "baseline.yaml"), "history": False})
    assert rc == 0, out
    comparison = out["comparison"]
    assert comparison["against"]["kind"] == "baseline" and comparison["figures"] == []
    assert comparison["refused"] and all("image differs" in r["message"] and "\n" not in r["message"]
                                         for r in comparison["refused"])
    assert "registry.example/nccl-tests:other" in comparison["refused"][0]["message"]


def test_a_slowed_node_regresses_fails_only_when_enforced_and_becomes_a_repeat_offender(
        fleet: tuple[Path, Sim], tmp_path: Path) -> None:
    folder, east = fleet
    faults.fault(east.name, SLOW, "slow", 0.9)
    # Second certification, enforcement off: the play passes (the threshold still holds) and reports the regression.
    proc = certify(tmp_path, {"east": host(east, "h2")})
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    second = report(tmp_path, "east")
    assert second["result"] == "PASSED"
    comparison = second["comparison"]
    assert comparison["against"]["kind"] == "certification" and comparison["against"]["name"] == "h1"
    (regressed,) = comparison["regressions"]
    assert regressed["nodes"] == [SLOW] and regressed["figure"] == "groupBusBW" and regressed["verdict"] == "regressed"
    assert regressed["variance"] == pytest.approx(-0.1, abs=0.01)
    assert regressed["value"] == pytest.approx(regressed["baseline"] * 0.9, rel=0.01)
    assert [n["name"] for n in comparison["regressedNodes"]] == [SLOW]
    assert "groupBusBW" in comparison["regressedNodes"][0]["message"]
    assert [e["name"] for e in second["failedNodes"]] == []  # reported, not enforced
    # The same report with enforcement on: the play fails and the node moves to the failed nodes.
    proc = subprocess.run([str(ROOT / ".venv/bin/ansible-playbook"),
                           str(Path(__file__).parent / "playbooks" / "results_certification.yml"),
                           "-e", json.dumps({"kubeconfig": str(east.kubeconfig), "name": "h2", "namespace": NAMESPACE,
                                             "dest": str(tmp_path / "enforced"), "results_enforce": True})],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
                          env={**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg")})
    assert proc.returncode != 0 and f"regressed node(s) against certification h1: {SLOW}" in proc.stdout, proc.stdout
    workflow = second["categories"][0]["workflow"]
    wf = client.CustomObjectsApi(east.api).get_namespaced_custom_object("nvcre.nvidia.com", "v1alpha1", NAMESPACE,
                                                                        "workflows", workflow)
    core = client.CoreV1Api(east.api)
    failed_cm = core.read_namespaced_config_map(wf["status"]["failedNodesRef"]["name"], NAMESPACE)
    succeeded_cm = core.read_namespaced_config_map(wf["status"]["succeededNodesRef"]["name"], NAMESPACE)
    (entry,) = node_results.read_failed({"binaryData": failed_cm.binary_data})
    assert (entry["name"], entry["reason"]) == (SLOW, "RegressionDetected") and "groupBusBW" in entry["message"]
    assert SLOW not in node_results.read_succeeded({"binaryData": succeeded_cm.binary_data})
    # NVCRE's own verdict is untouched.
    assert [c["reason"] for c in wf["status"]["conditions"] if c["type"] == "Succeeded" and c["status"] == "True"]
    # A third certification, enforced: the node fails again and is named a repeat offender (2 of the last 3); the
    # nodes are annotated with it.
    proc = certify(tmp_path, {"east": host(east, "h3", results_enforce=True, results_annotate_nodes=True)})
    assert proc.returncode != 0 and "regressed node(s)" in proc.stdout, proc.stdout[-4000:]
    third = report(tmp_path, "east")
    assert third["comparison"]["against"]["name"] == "h2"
    (offender,) = third["comparison"]["repeatOffenders"]
    assert offender["name"] == SLOW and (offender["failed"], offender["of"]) == (2, 3)
    assert sorted(offender["certifications"]) == ["h2", "h3"]
    trend = {t["figure"]: t for t in third["comparison"]["trend"] if t["category"] == KEY}
    assert [p["certification"] for p in trend["groupBusBW"]["points"]] == ["h1", "h2", "h3"]
    nodes = {n.metadata.name: n.metadata.annotations or {} for n in core.list_node().items}
    assert nodes[SLOW]["cre.certification/verdict"] == "Failed" and "cre.certification/certified-until" not in nodes[SLOW]
    passed = nodes["gpu-node-000"]
    assert passed["cre.certification/certification"] == f"{NAMESPACE}/h3" and passed["cre.certification/verdict"] == "Passed"
    assert passed["cre.certification/certified-until"] > passed["cre.certification/certified-at"]
