"""playbooks/certify.yml against an inventory of two simulated clusters: both certified, in parallel."""
from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from tests.ansible_run import ROOT, ansible_module
from tools.sim import faults

from .conftest import Sim

pytestmark = pytest.mark.clusters(("onprem-b300", 4), ("onprem-b300", 4, 1), ("aws-gb200", 4))

CATEGORY = {"domain": "communication", "variant": "nccl-all-reduce", "options": {"testScale": "intra-node"}}


def host(sim: Sim) -> dict:
    return {"k8s_kubeconfig": str(sim.kubeconfig), "certify_certification_name": "acceptance",
            "certify_namespace": "nvcre", "certify_categories": [CATEGORY], "certify_poll_interval": 0.5,
            "certify_timeout": 600}


def window(sim: Sim) -> tuple[datetime, datetime]:
    """When the cluster's Certification was created and when its status last changed."""
    cert = client.CustomObjectsApi(sim.api).get_namespaced_custom_object(
        "nvcre.nvidia.com", "v1alpha1", "nvcre", "certifications", "acceptance")
    stamps = [c["lastTransitionTime"] for c in cert["status"]["conditions"]]
    return _time(cert["metadata"]["creationTimestamp"]), max(map(_time, stamps))


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_two_clusters_certified_in_parallel(shared, tmp_path: Path) -> None:
    """Run from another directory with no cre_report_dir: each cluster's report lands in its own folder under
    cre-reports/ there (not next to the playbook)."""
    clusters = {"east": shared("onprem-b300", 4), "west": shared("onprem-b300", 4, 1)}
    inventory = {"clusters": {"vars": {"ansible_connection": "local",
                                       "ansible_python_interpreter": str(ROOT / ".venv/bin/python")},
                              "hosts": {name: host(sim) for name, sim in clusters.items()}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    proc = subprocess.run(
        [str(ROOT / ".venv/bin/ansible-playbook"), "-i", "inventory.yml", "--forks", "2",
         str(ROOT / "playbooks/certify.yml")], cwd=tmp_path,
        env={**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg")},
        capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert sorted(p.name for p in (tmp_path / "cre-reports").iterdir() if p.is_dir()) == ["east", "west"]
    assert (tmp_path / "cre-reports" / "fleet.json").is_file()  # the fleet report beside the cluster folders
    for name in clusters:
        reports = tmp_path / "cre-reports" / name
        report = json.loads((reports / "report.json").read_text())
        assert report["result"] == "PASSED", report
        assert {n["name"]: n["status"] for n in report["nodeResults"]} == \
            {f"gpu-node-{i:03d}": "Passed" for i in range(4)}
        assert (reports / "junit.xml").is_file() and (reports / "report.md").is_file()
    (east_start, east_end), (west_start, west_end) = window(clusters["east"]), window(clusters["west"])
    assert east_start < west_end and west_start < east_end  # the two certifications overlapped in time


def test_gb200_catalog_run_attributes_a_hardware_fault(shared) -> None:
    """The catalog's GB200 all-reduce (ComputeDomain, EFA, its own monitor) one node per Job, with a GPU fault."""
    sim = shared("aws-gb200", 4)
    faults.fault(sim.name, "gpu-node-002", "hardware")
    rc, result = ansible_module("certification_run", {
        "kubeconfig": str(sim.kubeconfig), "name": "gb", "namespace": "default", "categories": [CATEGORY],
        "poll_interval": 0.5, "timeout": 600}, timeout=700)
    assert rc == 0, result
    (category,) = result["categories"]
    assert category["failed_nodes"] == [{"name": "gpu-node-002", "reason": "HardwareFailureDetected",
                                         "message": "Hardware failure detected by node health check"}]
    assert category["succeeded_nodes"] == ["gpu-node-000", "gpu-node-001", "gpu-node-003"]
    assert result["condition"]["reason"] == "WorkflowFailed"


def test_timed_out_run_fails_the_play_unless_allowed(shared, tmp_path: Path) -> None:
    """certify_timeout reached: the report (RUNNING) is written and the play fails; with
    results_fail_on_incomplete false the same rerun only reports."""
    sim = shared("onprem-b300", 4)
    inventory = {"clusters": {"vars": {"ansible_connection": "local",
                                       "ansible_python_interpreter": str(ROOT / ".venv/bin/python")},
                              "hosts": {"slowpoke": {**host(sim), "certify_timeout": 1}}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))

    def play(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(ROOT / ".venv/bin/ansible-playbook"), "-i", "inventory.yml", *extra, str(ROOT / "playbooks/certify.yml")],
            cwd=tmp_path, env={**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg")},
            capture_output=True, text=True, timeout=300, check=False)

    proc = play()
    assert proc.returncode != 0, proc.stdout[-4000:]
    assert "Certification acceptance: RUNNING (the run hit its timeout" in " ".join(proc.stdout.split()), proc.stdout[-3000:]
    report = json.loads((tmp_path / "cre-reports" / "slowpoke" / "report.json").read_text())
    assert report["result"] == "RUNNING"
    allowed = play("-e", "results_fail_on_incomplete=false")
    assert allowed.returncode == 0, allowed.stdout[-4000:]
