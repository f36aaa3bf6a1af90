"""The built-in `configuration/node-drift` entry: one short Job per node on all its GPUs, the collector shipped in a
ConfigMap mounted where the command runs it, the node's name from the downward API, the host's network namespace
(sysfs then shows the host's netdevs) and no privilege."""
from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog import entries, registry

ROOT = Path(__file__).resolve().parents[4]


def _pod(spec: dict) -> dict:
    runtime = spec["dependencies"][1]
    return runtime["spec"]["template"]["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]


def test_it_is_a_short_job_per_node() -> None:
    entry = registry.lookup("configuration", "node-drift")
    assert entry.per_node and entry.effective_timeout("", "full-scale") == "15m"


@pytest.mark.parametrize(("architecture", "gpus"), [("h100", "8"), ("gb200", "4"), ("b200", "8")])
def test_it_runs_the_collector_on_every_gpu_of_one_node(architecture: str, gpus: str) -> None:
    spec = entries.build_spec("configuration", "node-drift", {"gpuArchitecture": architecture})
    trainer = spec["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]
    assert trainer["command"] + trainer["args"] == ["python3", "/opt/cre/node_drift.py", "--load-s", "8"]
    assert trainer["image"] == (ROOT / "catalog/_lib/images/node-drift.yaml").read_text().splitlines()[-1]
    config_map = spec["dependencies"][0]
    assert config_map["data"]["node_drift.py"] == (ROOT / "catalog/_lib/harness/node_drift.py").read_text()
    pod = _pod(spec)
    (container,) = pod["containers"]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": gpus}
    assert container["volumeMounts"] == [{"name": "collector", "mountPath": "/opt/cre", "readOnly": True}]
    assert pod["volumes"] == [{"name": "collector", "configMap": {"name": config_map["metadata"]["name"]}}]
    assert {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}} in container["env"]


def test_it_reads_sysfs_without_privilege_or_host_paths() -> None:
    pod = _pod(entries.build_spec("configuration", "node-drift", {"gpuArchitecture": "h100"}))
    (container,) = pod["containers"]
    assert pod["hostNetwork"] is True and "securityContext" not in container
    assert all("hostPath" not in volume for volume in pod["volumes"])
