"""The Certification build's NIC, GKE network and TCPXO plugin detection (data/certification/detection.yaml),
and that what it finds reaches the built Workflow."""
from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.plan import category_detect, mocknodes
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import certification_tier as tier

NOW = datetime(2026, 1, 1, tzinfo=UTC)

CASES = yaml.safe_load((Path(__file__).parents[1] / "data" / "certification" / "detection.yaml").read_text())


def nodes(platform: str, arch: str, allocatable: list[dict]) -> list[dict]:
    out = mocknodes.mock_nodes(platform, arch, len(allocatable))
    for node, extra in zip(out, allocatable):
        node["status"]["allocatable"].update(extra)
    return out


def event(found):
    return None if found is None else [found["type"], found["reason"], found["message"]]


@pytest.mark.parametrize("case", CASES["nic"], ids=lambda c: c["name"])
def test_nic_resource(case):
    value, found = category_detect.detect_nic_resource(nodes("onprem", "gb200", case["allocatable"]), case["mlnx"])
    assert {"value": value, "event": event(found)} == case["expect"]


@pytest.mark.parametrize("case", CASES["gke"], ids=lambda c: c["name"])
def test_gke_networks(case):
    value, found = category_detect.detect_gke_networks(nodes("gcp", "h100", case["allocatable"]))
    assert {"value": value, "event": event(found)} == case["expect"]


@pytest.mark.parametrize("case", CASES["tcpxo"], ids=lambda c: c["name"])
def test_tcpxo_plugin(case):
    pods = [{"metadata": {"name": f"nccl-tcpxo-installer-{i}"},
             "spec": {"initContainers": [{"name": "nccl-tcpxo-installer", "image": images[0]}],
                      "containers": [{"name": "pause", "image": image} for image in images[1:]]}}
            for i, images in enumerate(case["images"])]
    value, found = category_detect.detect_tcpxo_plugin(pods)
    assert {"value": value, "event": event(found)} == case["expect"]


def test_only_the_platforms_that_use_them_detect():
    rdma = nodes("onprem", "gb200", [{"rdma/ib": "8"}])
    assert category_detect.detect_for_build(rdma, platform="onprem", gpu_architecture="gb200", options={},
                                            tcpxo_pods=[])[0] == {"nicResourceName": "rdma/ib"}
    # A named resource wins: nothing is detected and nothing is said.
    assert category_detect.detect_for_build(rdma, platform="onprem", gpu_architecture="gb200",
                                            options={"nicResourceName": "rdma/x"}, tcpxo_pods=[]) == ({}, [])
    aws = nodes("aws", "h100", [{"rdma/ib": "8"}])
    assert category_detect.detect_for_build(aws, platform="aws", gpu_architecture="h100", options={},
                                            tcpxo_pods=[]) == ({}, [])
    detected, events = category_detect.detect_for_build(nodes("gcp", "h100", [{}]), platform="gcp",
                                                        gpu_architecture="h100", options={}, tcpxo_pods=[])
    assert detected == {} and [e["reason"] for e in events] == ["GKENetworkDetection", "TCPXOPluginDetection"]


def test_gpu_defaults_size_the_nic_request_when_unset():
    # gb200 asks 8 NICs per node by default: 4 allocatable is too few.
    few = nodes("onprem", "gb200", [{"rdma/ib": "4"}])
    assert category_detect.detect_for_build(few, platform="onprem", gpu_architecture="gb200", options={},
                                            tcpxo_pods=[])[0] == {}
    assert category_detect.detect_for_build(few, platform="onprem", gpu_architecture="gb200",
                                            options={"mlnxPerNode": 4}, tcpxo_pods=[])[0] == {
        "nicResourceName": "rdma/ib"}


def test_detected_values_reach_the_workflow():
    cert = tier.desired_certification({"name": "c", "namespace": "ns", "target": {}, "gang_scheduler": None,
                                       "options": {}, "labels": {},
                                       "categories": ["communication/nccl-all-reduce"]})
    cert["metadata"]["uid"] = "u"
    onprem = tier.CertificationWorld(cert, {}, nodes("onprem", "gb200", [{"rdma/ib": "8"}] * 2), now=NOW)
    built, events = tier.build(cert, cert["spec"]["categories"][0], onprem)
    assert '"rdma/ib": "8"' in json.dumps(built["spec"]) and [e["reason"] for e in events] == ["NICResourceDetection"]
    networks = {f"networking.gke.io.networks/net-{i}": "1k" for i in range(8)}
    installer = {"metadata": {"name": "nccl-tcpxo-installer-x"}, "spec": {"initContainers": [
        {"name": "nccl-tcpxo-installer",
         "image": "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.17"}]}}
    gcp = tier.CertificationWorld(cert, {}, nodes("gcp", "h100", [networks] * 2), tcpxo_pods=[installer], now=NOW)
    built, events = tier.build(cert, cert["spec"]["categories"][0], gcp)
    text = json.dumps(built["spec"])
    assert events == []
    assert all(f'\\"network\\":\\"net-{i}\\"' in text for i in range(8))
    assert "nvcr.io/nvidia/pytorch:26.01-py3" in text and "tcpgpudmarxd-dev:v1.0.23" in text
