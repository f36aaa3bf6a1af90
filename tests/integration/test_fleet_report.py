"""playbooks/certify.yml over a fleet: two small simulated clusters (one with a GPU fault) and one host whose API
server does not answer. Both live clusters certified, the dead one reported, the fleet files naming all three;
the report kept in the cluster writes the same files again; job slices merge into one fleet report."""
from __future__ import annotations

import base64
import gzip
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from tests.ansible_run import ROOT, ansible_module
from tests.browser import check_fleet, check_page
from tools.sim import faults

from .conftest import Sim, closed_port

pytestmark = pytest.mark.clusters(("onprem-b300", 4), ("onprem-b300", 4, 1))

CATEGORY = {"domain": "communication", "variant": "nccl-all-reduce", "options": {"testScale": "intra-node"}}
NODES = [f"gpu-node-{i:03d}" for i in range(4)]
FAULTY = "gpu-node-002"
FILES = ("report.json", "junit.xml", "report.md", "report.html")


def dead_kubeconfig(path: Path) -> Path:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "dead",
        "clusters": [{"name": "dead", "cluster": {"server": f"https://127.0.0.1:{closed_port()}",
                                                  "insecure-skip-tls-verify": True}}],
        "users": [{"name": "dead", "user": {"token": "none"}}],
        "contexts": [{"name": "dead", "context": {"cluster": "dead", "user": "dead"}}]}))
    return path


def host(kubeconfig: Path) -> dict:
    return {"k8s_kubeconfig": str(kubeconfig), "certify_certification_name": "acceptance",
            "certify_namespace": "nvcre", "certify_categories": [CATEGORY], "certify_poll_interval": 0.5,
            "certify_timeout": 600, "certify_heartbeat": 1}


def playbook(cwd: Path, name: str, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(ROOT / ".venv/bin/ansible-playbook"), "-i", "inventory.yml", "--forks", "3", *extra,
         str(ROOT / "playbooks" / name)], cwd=cwd,
        env={**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg")},
        capture_output=True, text=True, timeout=900, check=False)


def snapshot_of(sim: Sim) -> dict:
    return client.CoreV1Api(sim.api).read_namespaced_config_map("acceptance-report", "nvcre").to_dict()


def certification_uid(sim: Sim) -> str:
    return client.CustomObjectsApi(sim.api).get_namespaced_custom_object(
        "nvcre.nvidia.com", "v1alpha1", "nvcre", "certifications", "acceptance")["metadata"]["uid"]


def rows_by_host(fleet_json: Path) -> dict[str, dict]:
    return {row["host"]: row for row in json.loads(fleet_json.read_text())["rows"]}


def check_rows(rows: dict[str, dict]) -> None:
    assert sorted(rows) == ["dead", "east", "west"]
    assert rows["east"]["verdict"] == "PASSED" and rows["east"]["failedNodes"] == [] and rows["east"]["duration"]
    assert rows["west"]["verdict"] == "FAILED"
    assert [(n["name"], n["reason"]) for n in rows["west"]["failedNodes"]] == [(FAULTY, "HardwareFailureDetected")]
    assert rows["dead"]["verdict"] == "ERROR" and rows["dead"]["error"]["kind"] == "unreachable", rows["dead"]
    assert "Connection refused" in rows["dead"]["error"]["message"]


def test_a_fleet_of_two_clusters_and_a_dead_one(shared, tmp_path: Path) -> None:
    sims = {"east": shared("onprem-b300", 4, pod_ms={"nvcre": 500}), "west": shared("onprem-b300", 4, 1)}
    faults.fault(sims["west"].name, FAULTY, "hardware")
    hosts = {name: host(sim.kubeconfig) for name, sim in sims.items()}
    hosts["dead"] = host(dead_kubeconfig(tmp_path / "dead.kubeconfig"))
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump({"clusters": {
        "vars": {"ansible_connection": "local", "ansible_python_interpreter": str(ROOT / ".venv/bin/python")},
        "hosts": hosts}}))
    proc = playbook(tmp_path, "certify.yml")
    out = proc.stdout
    assert proc.returncode != 0, out[-4000:]  # west failed and dead stopped: the play says so in the end
    reports = tmp_path / "cre-reports"
    check_rows(rows_by_host(reports / "fleet.json"))
    for name in ("east", "west"):
        assert all((reports / name / f).is_file() for f in FILES)
        assert json.loads((reports / name / "status.json").read_text())["state"] == "reported"
        assert f"\u256d\u2500 Summary: acceptance ({name}) " in out  # nvcrectl's Summary box, per cluster
        assert f"[{name}] nvcre/acceptance-" in out  # progress lines carry the host
    assert "still running after" in out  # certify_heartbeat: 1 beats while a quiet pass waits
    assert json.loads((reports / "dead" / "status.json").read_text())["state"] == "error"
    flat = " ".join(out.split())
    assert "east: PASSED (1/1 categories passed, failed nodes: none" in flat
    assert f"west: FAILED (0/1 categories passed, failed nodes: {FAULTY} (HardwareFailureDetected)" in flat
    # The GPUs DCGM named failing: none; the hardware fault killed the faulty node's diagnostic before it printed,
    # so west's count rests on partial evidence, and the fleet's says so.
    assert "failing GPUs: 0 (evidence partial)" in flat
    assert "dead: ERROR unreachable: " in flat and "Fleet: FAILED (3 clusters, 0 failing GPUs (evidence partial))" in flat
    assert re.search(r"Cluster dead: [^:]+ failed: .*Connection refused.* Recorded in \S+/dead/status\.json", flat)
    assert "Certification acceptance: FAILED (0/1 categories passed; failed nodes: gpu-node-002)" in flat
    check_fleet(reports / "fleet.html", tmp_path / "fleet.png", {"east": "PASSED", "west": "FAILED", "dead": "ERROR"},
                {"east": set(NODES), "west": set(NODES)})
    dom = check_page(reports / "west" / "report.html", tmp_path / "west.png")
    assert {c["data-node"]: c["data-status"] for c in dom.having("rect", class_="cell")}[FAULTY] == "Failed"

    # The report kept in the cluster: owned by the Certification, report.json gzipped.
    east = {f: (reports / "east" / f).read_text() for f in FILES}
    kept = snapshot_of(sims["east"])
    assert [r["uid"] for r in kept["metadata"]["owner_references"]] == [certification_uid(sims["east"])]
    assert gzip.decompress(base64.b64decode(kept["binary_data"]["report.json.gz"])).decode() == east["report.json"]
    shutil.rmtree(reports / "east")
    rc, result = ansible_module("certification_results", {
        "kubeconfig": str(sims["east"].kubeconfig), "certification": "acceptance", "namespace": "nvcre",
        "from_snapshot": True, "dest": str(reports / "east")})
    assert rc == 0 and result["source"] == "snapshot" and result["changed"], result
    assert {f: (reports / "east" / f).read_text() for f in FILES} == east

    # Job slices: two --limit runs into separate dirs, then one fleet_report step merges them.
    slices = [tmp_path / "slice-1", tmp_path / "slice-2"]
    assert playbook(tmp_path, "certify.yml", "--limit", "east", "-e", f"cre_report_dir={slices[0]}").returncode == 0
    assert playbook(tmp_path, "certify.yml", "--limit", "west,dead", "-e", f"cre_report_dir={slices[1]}").returncode
    assert sorted(rows_by_host(slices[1] / "fleet.json")) == ["dead", "west"]
    merged = playbook(tmp_path, "fleet_report.yml", "-e", json.dumps({"cre_report_dir": [str(s) for s in slices]}))
    assert merged.returncode != 0 and "Fleet: FAILED (dead, west)" in " ".join(merged.stdout.split()), merged.stdout
    check_rows(rows_by_host(slices[0] / "fleet.json"))

    # Every Workflow gone (deleted after the run): the report comes from the snapshot, unchanged.
    west = (reports / "west" / "report.json").read_text()
    custom = client.CustomObjectsApi(sims["west"].api)
    for wf in custom.list_namespaced_custom_object("nvcre.nvidia.com", "v1alpha1", "nvcre", "workflows")["items"]:
        custom.delete_namespaced_custom_object("nvcre.nvidia.com", "v1alpha1", "nvcre", "workflows",
                                               wf["metadata"]["name"])
    deadline = time.monotonic() + 60
    while custom.list_namespaced_custom_object("nvcre.nvidia.com", "v1alpha1", "nvcre", "workflows")["items"]:
        assert time.monotonic() < deadline, "the Workflows were not deleted"
        time.sleep(0.5)
    rc, result = ansible_module("certification_results", {
        "kubeconfig": str(sims["west"].kubeconfig), "certification": "acceptance", "namespace": "nvcre",
        "dest": str(reports / "west")})
    assert rc == 0 and result["source"] == "snapshot" and result["changed"] is False, result
    assert (reports / "west" / "report.json").read_text() == west
