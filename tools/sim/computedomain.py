"""The NVIDIA DRA driver's ComputeDomain side (k8s-dra-driver-gpu, driver `compute-domain.nvidia.com`), as far as a
workload sees it: the ComputeDomain CRD, the channel DeviceClass, one ResourceSlice of channels per NVLink node
(what its kubelet plugin publishes), and the controller pass that gives every ComputeDomain its channel
ResourceClaimTemplate and a Ready status. The scheduler allocates the claims (DRA is GA) and the KCM's
resourceclaim controller creates and releases them per pod, as on a real cluster.
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml
from kubernetes import client

from . import cache

DATA = Path(__file__).parent / "data"
DRIVER = "compute-domain.nvidia.com"
DEVICE_CLASS = "compute-domain-default-channel.nvidia.com"
CD = ("resource.nvidia.com", "v1beta1")
DRA = ("resource.k8s.io", "v1")
CD_LABEL = "resource.nvidia.com/computeDomain"  # the driver labels what it makes for a CD with the CD's uid
CLIQUE_LABEL = "nvidia.com/gpu.clique"
# Channels per node: enough that a node never runs out while the claims of its finished pods are released.
CHANNELS_PER_NODE = 8


def _load(name: str) -> dict:
    return yaml.safe_load((DATA / name).read_text())


def crd() -> dict:
    return _load("computedomain-crd.yaml")


def device_class() -> dict:
    return _load("compute-domain-deviceclass.yaml")


def resource_slice(node: str) -> dict:
    """The channels the driver's kubelet plugin publishes for `node`: one pool per node."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{DRIVER}"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"channel-{i}", "attributes": {"type": {"string": "channel"}, "id": {"int": i}}}
                        for i in range(CHANNELS_PER_NODE)],
        },
    }


def imex_nodes(nodes: list[dict]) -> list[str]:
    """The nodes in an NVLink clique (GB200/GB300): where the driver runs and ComputeDomains exist."""
    return [n["metadata"]["name"] for n in nodes if CLIQUE_LABEL in n["metadata"]["labels"]]


def install(apic: client.ApiClient, nodes: list[str], threads: int) -> None:
    """The driver's CRD, DeviceClass and per-node ResourceSlices (`threads` creates at a time: thousands of
    nodes, each a round trip); the caller waits for the CRD."""
    client.ApiextensionsV1Api(apic).create_custom_resource_definition(crd())
    custom = client.CustomObjectsApi(apic)
    custom.create_cluster_custom_object(*DRA, "deviceclasses", device_class())
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda node: custom.create_cluster_custom_object(*DRA, "resourceslices", resource_slice(node)),
                      nodes))


def claim_template(cd: dict) -> dict:
    """The channel ResourceClaimTemplate the driver's controller makes for `cd`, in its namespace."""
    meta, channel = cd["metadata"], cd["spec"]["channel"]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {
            "name": channel["resourceClaimTemplate"]["name"],
            "namespace": meta["namespace"],
            "labels": {CD_LABEL: meta["uid"]},
            "ownerReferences": [{"apiVersion": "/".join(CD), "kind": "ComputeDomain", "name": meta["name"],
                                 "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}],
        },
        "spec": {"spec": {"devices": {
            "requests": [{"name": "channel", "exactly": {"deviceClassName": DEVICE_CLASS}}],
            "config": [{"requests": ["channel"], "opaque": {"driver": DRIVER, "parameters": {
                "apiVersion": "/".join(CD), "kind": "ComputeDomainChannelConfig",
                "domainID": meta["uid"], "allocationMode": channel.get("allocationMode", "Single")}}}],
        }}},
    }


def reconcile(custom: client.CustomObjectsApi, domains: cache.Cache, templates: cache.Cache) -> list[str]:
    """One controller pass over the watched ComputeDomains (`domains`) and claim templates (`templates`): create
    each ComputeDomain's missing template, then mark it Ready (the real driver waits for its IMEX daemons on the
    workload's nodes; the sim has none to wait for). Returns the CDs changed."""
    cds = domains.items()
    if not cds:
        return []
    have = {(t["metadata"]["namespace"], t["metadata"]["name"]) for t in templates.items()}
    changed = []
    for cd in cds:
        meta = cd["metadata"]
        if meta.get("deletionTimestamp") or "channel" not in cd.get("spec", {}):
            continue
        template = claim_template(cd)
        if (meta["namespace"], template["metadata"]["name"]) not in have:
            try:
                custom.create_namespaced_custom_object(*DRA, meta["namespace"], "resourceclaimtemplates", template)
            except client.ApiException as exc:
                if exc.status != 409:  # made by an earlier pass that the watch has not shown yet
                    raise
        if cd.get("status", {}).get("status") != "Ready":
            custom.patch_namespaced_custom_object_status(*CD, meta["namespace"], "computedomains", meta["name"],
                                                         {"status": {"status": "Ready"}})
            changed.append(f"{meta['namespace']}/{meta['name']}")
    return changed
