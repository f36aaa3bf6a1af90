"""The DRA fallback of discovery (workflow spec §4 step 1) in the live Workflow tier: a GPU node without the
`nvidia.com/gpu.product` label gets its product from its gpu.nvidia.com ResourceSlice, in memory only, and the
Jobs then carry no product affinity term (the label they would require does not exist on the node)."""
from __future__ import annotations

import copy
from datetime import UTC, datetime
from pathlib import Path

import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Create, UpdateStatus
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import mocknodes
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import workflow_tier
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile.world import WorkflowWorld

BASE = yaml.safe_load((Path(__file__).parents[1] / "data" / "render" / "_workflow.yaml").read_text())
NOW = datetime(2026, 12, 1, tzinfo=UTC)
PRODUCT = "nvidia.com/gpu.product"


def unlabelled_nodes() -> list[dict]:
    nodes = mocknodes.mock_nodes("aws", "h100", 4)
    for node in nodes:
        node["metadata"]["labels"].pop(PRODUCT)
    return nodes


def slices(nodes: list[dict]) -> list[dict]:
    return [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
             "spec": {"driver": "gpu.nvidia.com", "nodeName": n["metadata"]["name"],
                      "devices": [{"name": "gpu-0", "attributes": {"productName": {"string": "NVIDIA H100 80GB HBM3"}}}]}}
            for n in nodes]


def workflow() -> dict:
    wf = copy.deepcopy(BASE)
    wf["metadata"].update(uid="wf-uid", generation=1, resourceVersion="1")
    return wf


def status_of(step) -> dict:
    return next(a.obj for a in step.actions if isinstance(a, UpdateStatus))["status"]


def test_without_slices_the_unlabelled_nodes_have_no_architecture():
    step = workflow_tier.reconcile(WorkflowWorld(workflow(), nodes=unlabelled_nodes(), now=NOW))
    orch = status_of(step)["orchestration"]
    assert orch.get("detectedGPUArchitecture", "") in ("", "unknown")


def test_slices_give_the_product_and_the_jobs_no_product_term():
    nodes = unlabelled_nodes()
    wf = workflow()
    step = workflow_tier.reconcile(WorkflowWorld(wf, nodes=nodes, now=NOW, resource_slices=slices(nodes)))
    orch = status_of(step)["orchestration"]
    assert orch["detectedGPUArchitecture"] == "h100"
    assert orch["gpuProducts"] == ["NVIDIA-H100-80GB-HBM3"]
    assert orch["totalGroups"] >= 1
    wf["status"] = status_of(step)
    launch = workflow_tier.reconcile(WorkflowWorld(wf, nodes=nodes, now=NOW))
    jobs = [a.obj for a in launch.actions if isinstance(a, Create) and a.obj["kind"] == "Job"]
    assert jobs
    text = yaml.safe_dump(jobs)
    assert PRODUCT not in text  # nodes lack the label, so no affinity term may require it
    assert "kubernetes.io/hostname" in text  # pinned placement is still there


def test_labelled_nodes_keep_the_product_term():
    nodes = mocknodes.mock_nodes("aws", "h100", 4)
    wf = workflow()
    step = workflow_tier.reconcile(WorkflowWorld(wf, nodes=nodes, now=NOW))
    wf["status"] = status_of(step)
    launch = workflow_tier.reconcile(WorkflowWorld(wf, nodes=nodes, now=NOW))
    jobs = [a.obj for a in launch.actions if isinstance(a, Create) and a.obj["kind"] == "Job"]
    assert jobs and PRODUCT in yaml.safe_dump(jobs)
