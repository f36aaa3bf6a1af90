"""`ansible-playbook --check --diff` and `--diff` over certification_run and workflow_run: the Certification and the
Workflows the run would create (nothing written), then what the run created and how their status changed."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from kubernetes import client

from tests.ansible_run import ROOT

from .conftest import SIM
from .seed import NVCRE

pytestmark = pytest.mark.clusters(SIM)

CATEGORY = {"domain": "communication", "variant": "nccl-all-reduce",
            "options": {"testScale": "full-scale", "nodesPerJob": 8}}


def playbook(tmp_path: Path, task: dict, *flags: str) -> str:
    """Run one task on localhost through ansible-playbook; its output (the default callback prints the diffs)."""
    (tmp_path / "play.yml").write_text(yaml.safe_dump([{"hosts": "localhost", "gather_facts": False, "tasks": [task]}]))
    proc = subprocess.run([str(ROOT / ".venv/bin/ansible-playbook"), *flags, str(tmp_path / "play.yml")], cwd=ROOT,
                          env={**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_LOCALHOST_WARNING": "0",
                               "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0"},
                          capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    return proc.stdout


def test_check_diff_shows_what_would_be_created_and_diff_what_changed(
        sim, crds, namespace: str, tmp_path: Path) -> None:
    run = {"kubeconfig": str(sim.kubeconfig), "name": "diff", "namespace": namespace, "categories": [CATEGORY],
           "poll_interval": 0.5, "timeout": 240}
    planned = playbook(tmp_path, {"cre.certification.certification_run": run}, "--check", "--diff")
    assert f"--- before: Certification {namespace}/diff (absent)\n+++ after: Certification {namespace}/diff" in planned
    found = re.search(rf"\+\+\+ after: Workflow {namespace}/(diff-communication-nccl-a-\w+)\n", planned)
    assert found and '+    "kind": "Workflow",' in planned, planned
    workflow = found.group(1)
    assert crds.list_namespaced_custom_object(*NVCRE, namespace, "certifications")["items"] == []  # nothing written

    done = playbook(tmp_path, {"cre.certification.certification_run": run}, "--diff")
    assert f"--- before: Certification {namespace}/diff (absent)" in done
    assert f"--- before: Workflow {namespace}/{workflow} (absent)" in done
    assert '+                "reason": "AllWorkflowsSucceeded",' in done   # the status the run left, in the after

    # A finished Workflow run again changes nothing: no diff; in check mode neither.
    again = {"kubeconfig": str(sim.kubeconfig), "name": workflow, "namespace": namespace}
    for flags in (("--diff",), ("--check", "--diff")):
        out = playbook(tmp_path, {"cre.certification.workflow_run": again}, *flags)
        assert "--- before" not in out and "changed=0" in out, out
    client.CustomObjectsApi(sim.api).delete_namespaced_custom_object(*NVCRE, namespace, "certifications", "diff")


def test_check_diff_and_diff_over_a_workload_run(sim, crds, namespace: str, tmp_path: Path) -> None:
    spec = {"image": "nvcr.io/nvidia/pytorch:26.01-py3", "numNodes": 1, "orchestration": {"testScale": "intra-node"},
            "framework": {"exec": {"command": ["/bin/sh", "-c"], "args": ["nvidia-smi"]}},
            "target": {"nodeNames": ["gpu-node-000"]}}
    run = {"kubeconfig": str(sim.kubeconfig), "name": "wdiff", "namespace": namespace, "spec": spec,
           "poll_interval": 0.5, "timeout": 240}
    planned = playbook(tmp_path, {"cre.certification.workloadrun_run": run}, "--check", "--diff")
    assert f"--- before: WorkloadRun {namespace}/wdiff (absent)\n+++ after: WorkloadRun {namespace}/wdiff" in planned
    assert f"--- before: Workflow {namespace}/wdiff (absent)\n+++ after: Workflow {namespace}/wdiff" in planned
    assert "changed=1" in planned, planned
    assert crds.list_namespaced_custom_object(*NVCRE, namespace, "workloadruns")["items"] == []  # nothing written

    done = playbook(tmp_path, {"cre.certification.workloadrun_run": run}, "--diff")
    assert f"--- before: Workflow {namespace}/wdiff (absent)" in done
    assert '"reason": "WorkflowSucceeded",' in done, done   # the run's end, in the WorkloadRun's after

    for flags in (("--diff",), ("--check", "--diff")):   # a finished run: nothing changes, nothing would
        out = playbook(tmp_path, {"cre.certification.workloadrun_run": run}, *flags)
        assert "--- before" not in out and "changed=0" in out, out
