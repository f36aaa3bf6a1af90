"""Platform detection and DRA dependencies on small live clusters: GKE TCPXO networks and plugin version on GCP
H100, and the ComputeDomain that holds its Job until a later pass on AWS GB200."""
from __future__ import annotations

import json

from kubernetes import client

from tests.ansible_run import ansible_module

from .seed import NVCRE

CATEGORY = {"domain": "communication", "variant": "nccl-all-reduce", "options": {"testScale": "intra-node"}}
PLUGIN = "us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.17"


def certify(sim, ns: str, *flags: str) -> tuple[int, dict]:
    client.CoreV1Api(sim.api).create_namespace({"metadata": {"name": ns}})
    return ansible_module("certification_run", {
        "kubeconfig": str(sim.kubeconfig), "name": "pc", "namespace": ns, "categories": [CATEGORY],
        "poll_interval": 0.5, "timeout": 400}, *flags, timeout=500)


def built(sim, ns: str, result: dict) -> str:
    return json.dumps(client.CustomObjectsApi(sim.api).get_namespaced_custom_object(
        *NVCRE, ns, "workflows", result["categories"][0]["workflow"])["spec"])


def warnings(sim, ns: str) -> list[str]:
    return sorted(e.reason for e in client.CoreV1Api(sim.api).list_namespaced_event(
        ns, field_selector="involvedObject.name=pc").items if e.type == "Warning")


def test_gke_tcpxo_networks_and_plugin_version_are_detected(make_sim) -> None:
    sim = make_sim("gcpx", "gcp-h100", 2)
    rc, result = certify(sim, "plain")
    assert rc == 0 and result["phase"] == "Succeeded", result
    assert warnings(sim, "plain") == ["GKENetworkDetection", "TCPXOPluginDetection"]
    plain = built(sim, "plain", result)
    assert '\\"network\\":\\"gpu-nic7\\"' in plain and "tcpgpudmarxd-dev:v1.0.21" in plain  # the defaults
    core = client.CoreV1Api(sim.api)
    nets = {f"networking.gke.io.networks/vpc{i}": "1k" for i in range(1, 9)}
    for name in ("gpu-node-000", "gpu-node-001"):
        core.patch_node_status(name, {"status": {"capacity": nets, "allocatable": nets}})
    core.create_namespaced_pod("kube-system", {
        "metadata": {"name": "nccl-tcpxo-installer-abcde", "labels": {"name": "nccl-tcpxo-installer"}},
        "spec": {"nodeName": "gpu-node-000", "initContainers": [{"name": "nccl-tcpxo-installer", "image": PLUGIN}],
                 "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10"}]}})
    rc, result = certify(sim, "detected")
    assert rc == 0 and result["phase"] == "Succeeded", result
    assert warnings(sim, "detected") == []
    detected = built(sim, "detected", result)
    assert all(f'\\"network\\":\\"vpc{i}\\"' in detected for i in range(1, 9))
    assert "gpu-nic" not in detected
    assert "nvcr.io/nvidia/pytorch:26.01-py3" in detected and "tcpgpudmarxd-dev:v1.0.23" in detected


def test_a_new_compute_domain_holds_its_job_a_pass(make_sim) -> None:
    sim = make_sim("gbcd", "aws-gb200", 2)
    rc, result = certify(sim, "cd", "-v")
    assert rc == 0 and result["phase"] == "Succeeded", result
    lines = [line.strip() for line in result["_progress"]]
    first_domain = next(i for i, line in enumerate(lines) if line.startswith("create ComputeDomain "))
    first_job = next(i for i, line in enumerate(lines) if line.startswith("create Job "))
    # The ComputeDomain went out, the pass ended with its status write, and the Job came on a later pass.
    assert first_domain < first_job
    assert any(line.startswith("status Workflow ") for line in lines[first_domain:first_job]), lines
    domains = client.CustomObjectsApi(sim.api).list_namespaced_custom_object(
        "resource.nvidia.com", "v1beta1", "cd", "computedomains")["items"]
    assert domains == []  # recorded with the wait, so each group's cleanup found and deleted its copy
