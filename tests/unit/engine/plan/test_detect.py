"""Discovery and detection (workflow.md §4), table-driven from data/detect/*.yaml.

Nodes in the data are compact: ``{name, labels, product, gpu (default true), providerID, unschedulable, taints,
gpus, allocatable}``; ``node()`` expands them into Kubernetes-JSON Node dicts.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import WorkflowFailure
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import detect

DATA = Path(__file__).parents[1] / "data" / "detect"


def load(name: str) -> list[dict]:
    return yaml.safe_load((DATA / name).read_text())


def node(spec: dict, provider_id: str = "") -> dict:
    labels = dict(spec.get("labels") or {})
    if spec.get("gpu", True):
        labels.setdefault("nvidia.com/gpu.present", "true")
    if spec.get("product"):
        labels["nvidia.com/gpu.product"] = spec["product"]
    allocatable = dict(spec.get("allocatable") or {})
    if "gpus" in spec:
        allocatable["nvidia.com/gpu"] = spec["gpus"]
    node_spec = {"providerID": spec.get("providerID", provider_id)}
    if spec.get("unschedulable"):
        node_spec["unschedulable"] = True
    if spec.get("taints"):
        node_spec["taints"] = spec["taints"]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": spec["name"], "labels": labels},
        "spec": node_spec,
        "status": {"allocatable": allocatable},
    }


def nodes_of(case: dict) -> list[dict]:
    return [node(n, case.get("providerID", "")) for n in case["nodes"]]


def check(expect: dict, result: detect.Detection) -> None:
    actual = {
        "platform": result.platform,
        "gpuArchitecture": result.gpu_architecture,
        "gpuProducts": result.gpu_products,
        "nodes": result.node_names,
        "excludedNodes": result.excluded_nodes,
        "exclusionReason": result.exclusion_reason,
        "events": result.events,
        "requiredGpus": result.required_gpus,
    }
    assert {k: actual[k] for k in expect} == expect


@pytest.mark.parametrize("case", load("platform.yaml"), ids=lambda c: c["id"])
def test_node_platform(case):
    assert detect.node_platform(node(case["node"])) == case["platform"]
    assert case["platform"] in detect.PLATFORMS


@pytest.mark.parametrize("case", load("parse_product.yaml"), ids=lambda c: c["label"] or "empty")
def test_parse_product(case):
    assert detect.parse_product(case["label"]) == case["arch"]


@pytest.mark.parametrize("case", load("majority.yaml"), ids=lambda c: c["id"])
def test_majority_architecture(case):
    nodes = [node({"name": f"n{i:02d}", "product": p}) for i, p in enumerate(case["products"])]
    assert detect.majority_architecture(nodes) == case["arch"]


DETECT = load("detect.yaml")


@pytest.mark.parametrize("case", [c for c in DETECT if "failure" not in c], ids=lambda c: c["id"])
def test_detect(case):
    nodes = nodes_of(case)
    before = [dict(n["metadata"]["labels"]) for n in nodes]
    check(case["expect"], detect.detect(nodes, case.get("target"), case.get("resourceSlices")))
    assert [n["metadata"]["labels"] for n in nodes] == before  # DRA fallback works on copies


@pytest.mark.parametrize("case", [c for c in DETECT if "failure" in c], ids=lambda c: c["id"])
def test_detect_fails(case):
    nodes = nodes_of(case)
    before = [dict(n["metadata"]["labels"]) for n in nodes]
    with pytest.raises(WorkflowFailure) as err:
        detect.detect(nodes, case.get("target"), case.get("resourceSlices"))
    assert (err.value.reason, err.value.message) == (case["failure"]["reason"], case["failure"]["message"])
    assert [n["metadata"]["labels"] for n in nodes] == before  # DRA fallback works on copies


CAPACITY = load("capacity.yaml")


@pytest.mark.parametrize("case", [c for c in CAPACITY if "failure" not in c], ids=lambda c: c["id"])
def test_gpu_capacity(case):
    check(case["expect"], detect.filter_gpu_capacity(detect.detect(nodes_of(case), None), case["spec"]))


@pytest.mark.parametrize("case", [c for c in CAPACITY if "failure" in c], ids=lambda c: c["id"])
def test_gpu_capacity_fails(case):
    detection = detect.detect(nodes_of(case), None)
    with pytest.raises(detect.DetectionFailure) as err:
        detect.filter_gpu_capacity(detection, case["spec"])
    failure = case["failure"]
    assert (err.value.reason, err.value.message) == (failure["reason"], failure["message"])
    assert err.value.detection.excluded_nodes == failure["excludedNodes"]


@pytest.mark.parametrize("case", load("shortfall.yaml"), ids=lambda c: c["id"])
def test_not_enough_nodes_message(case):
    detection = detect.filter_gpu_capacity(detect.detect(nodes_of(case), None), case.get("spec") or {})
    assert detect.not_enough_nodes_message(case["need"], detection, case.get("unpinned", False)) == case["message"]


def test_status_fields_omit_empty_exclusions():
    result = detect.detect([node({"name": "a", "product": "NVIDIA-GB200", "providerID": "aws:///x"})], None)
    assert result.status_fields() == {
        "detectedPlatform": "aws", "detectedGPUArchitecture": "gb200", "gpuProducts": ["NVIDIA-GB200"],
    }


def test_ten_thousand_nodes():
    """Scale correctness; the time is measured by bench/plan.py, not asserted here."""
    products = ["NVIDIA-H100-80GB-HBM3", "NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB"]
    nodes = [node({"name": f"node{i:05d}", "product": products[i % 3], "gpus": "8" if i % 7 else "4",
                   "unschedulable": i % 101 == 0, "labels": {"pool": "gpu"}}, "aws:///x")
             for i in range(10_000)]
    spec = {"jobTemplate": {"spec": {"c": {"limits": {"nvidia.com/gpu": 8}}}}}
    result = detect.filter_gpu_capacity(detect.detect(nodes, {"nodeSelector": {"pool": "gpu"}}), spec)
    assert result.gpu_architecture == "h100"
    assert len(result.nodes) + len(result.excluded_nodes) == 10_000
