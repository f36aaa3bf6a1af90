"""Deleting a Certification or a Workflow in the middle of a run leaves nothing behind once the cluster's garbage
collector has run: Workflows, Jobs, their TrainJobs, JobSets and pods, the job-scoped runtime copies (owned by
their Job, spec/workflow.md §7.2), the workflow-scoped dependencies, the measurements and the node-result
ConfigMaps."""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from kubernetes import client

from ansible_collections.cre.certification.plugins.module_utils.engine.report import snapshot
from tests.ansible_run import ansible_module, run_playbook

from .conftest import SIM, Sim

pytestmark = pytest.mark.clusters(SIM, ("aws-h100", 4))

NVCRE = ("nvcre.nvidia.com", "v1alpha1")
# (group, version, plural) of everything a run creates in its namespace.
KINDS = [(*NVCRE, "workflows"), (*NVCRE, "jobs"), (*NVCRE, "bandwidthmeasurements"),
         (*NVCRE, "goodputmeasurements"), ("trainer.kubeflow.org", "v1alpha1", "trainjobs"),
         ("trainer.kubeflow.org", "v1alpha1", "trainingruntimes"), ("jobset.x-k8s.io", "v1alpha2", "jobsets")]


@pytest.fixture(scope="module")
def cluster(pooled: Callable[..., Sim]) -> Sim:
    """Pods that run for two minutes, so every run is stopped (by its timeout) while its groups run."""
    return pooled("aws-h100", 4, pod_ms={f"cleanup-{deleted}": 120_000 for deleted in ("certifications", "workflows")})


def kept(names: list[str]) -> list[str]:
    return [n for n in names if n.startswith("configmaps/") and "-report-" in n]


def leftovers(sim: Sim, namespace: str) -> list[str]:
    objects = client.CustomObjectsApi(sim.api)
    found = [f"{plural}/{item['metadata']['name']}" for group, version, plural in KINDS
             for item in objects.list_namespaced_custom_object(group, version, namespace, plural)["items"]]
    core = client.CoreV1Api(sim.api)
    found += [f"pods/{p.metadata.name}" for p in core.list_namespaced_pod(namespace).items]
    found += [f"batch-jobs/{j.metadata.name}" for j in client.BatchV1Api(sim.api).list_namespaced_job(namespace).items]
    found += [f"configmaps/{c.metadata.name}" for c in core.list_namespaced_config_map(namespace).items
              if c.metadata.name != "kube-root-ca.crt"]
    return sorted(found)


@pytest.mark.parametrize("deleted", ["certifications", "workflows"])
def test_deleting_mid_run_leaves_nothing_behind(cluster: Sim, deleted: str) -> None:
    namespace = f"cleanup-{deleted}"
    client.CoreV1Api(cluster.api).create_namespace({"metadata": {"name": namespace}})
    code, result = ansible_module("certification_run", {
        "kubeconfig": str(cluster.kubeconfig), "name": "gone", "namespace": namespace, "timeout": 20,
        "poll_interval": 0.5, "categories": [{"domain": "communication", "variant": "nccl-all-reduce",
                                              "options": {"nodesPerJob": 2}}]}, timeout=300)
    assert code == 0 and result["timed_out"], result.get("msg")
    running = leftovers(cluster, namespace)
    assert any(name.startswith("pods/") for name in running) and any(
        name.startswith("trainingruntimes/") and "group-" in name for name in running), running  # mid-run indeed
    objects = client.CustomObjectsApi(cluster.api)
    name = "gone" if deleted == "certifications" else result["categories"][0]["workflow"]
    objects.delete_namespaced_custom_object(*NVCRE, namespace, deleted, name, propagation_policy="Background")
    deadline = time.monotonic() + 120
    while (left := leftovers(cluster, namespace)) and time.monotonic() < deadline:
        time.sleep(1)
    assert left == []


def test_certify_cleanup_deletes_the_finished_certification(sim: Sim, crds, namespace: str, tmp_path: Path) -> None:
    """After its report is stored."""
    host = {"k8s_kubeconfig": str(sim.kubeconfig), "certify_certification_name": "tidy", "certify_namespace": namespace,
            "certify_categories": [{"domain": "communication", "variant": "nccl-all-reduce",
                                    "options": {"nodesPerJob": 8}}],
            "certify_poll_interval": 0.5, "certify_timeout": 600, "certify_cleanup": True}
    proc = run_playbook("certify.yml", {"lab": host}, tmp_path, timeout=900)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert json.loads((tmp_path / "cre-reports" / "lab" / "report.json").read_text())["result"] == "PASSED"
    certifications = client.CustomObjectsApi(sim.api).list_namespaced_custom_object(*NVCRE, namespace, "certifications")
    assert certifications["items"] == []
    deadline = time.monotonic() + 120
    while (left := leftovers(sim, namespace)) != kept(left) and time.monotonic() < deadline:
        time.sleep(1)
    # Only the copy of the report snapshot stays: the cluster's history, owned by nothing, readable.
    assert len(left) == 1 and left[0].startswith("configmaps/tidy-report-"), left
    copy = client.CoreV1Api(sim.api).read_namespaced_config_map(left[0].split("/")[1], namespace)
    assert not copy.metadata.owner_references
    assert json.loads(snapshot.report_text(client.ApiClient().sanitize_for_serialization(copy)))["name"] == "tidy"
