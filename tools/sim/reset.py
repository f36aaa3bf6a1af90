"""`reset`: a used cluster made as good as new for the next user, without a restart (tests share clusters).

What a user of the cluster can leave behind and reset takes away: faults (node, link, NVLink, stalls, crashes, DCGM),
cordons, namespace pod durations, log styles, every namespace that `up` did not make, and in `default` (which cannot
be deleted) the workloads and NVCRE objects. Cluster-scoped objects a user made (ClusterRoles, LogProfiles, PVs)
stay: they do not change how a later run behaves unless it names them, and each test names its own.
"""
from __future__ import annotations

import time
from collections.abc import Callable

from kubernetes import client

from . import cluster, faults
from .state import NAME_RE, ClusterState, cluster_dir

SYSTEM_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
# Namespaced kinds whose objects in `default` a run or a test makes: (group, version, plural).
DEFAULT_KINDS = (("trainer.kubeflow.org", "v1alpha1", "trainjobs"), ("trainer.kubeflow.org", "v1alpha1", "trainingruntimes"),
                 ("jobset.x-k8s.io", "v1alpha2", "jobsets"))
NVCRE_GROUP = "nvcre.nvidia.com"
GONE_SECONDS = 120.0


def reset(name: str) -> None:
    """Clear every fault, namespace pod duration and log style, uncordon every node, delete every namespace but the
    system ones and empty `default`; returns once the deleted namespaces are gone (a next user may make them again)."""
    if not NAME_RE.match(name) or not cluster_dir(name).exists():
        raise cluster.SimError(f"no cluster named {name!r}")
    st = ClusterState.load(name)
    for node in sorted({*st.faults, *st.dcgm_faults, *st.gpu_faults, *st.config_faults}):
        faults.fault(name, node, "none")
    st = ClusterState.load(name)
    for domain in sorted({link[1] for link in st.links}):
        if any(domain in link[1:3] for link in ClusterState.load(name).links):  # an earlier clear took it already
            faults.fault(name, domain, "none")
    for namespace in sorted(st.namespace_pod_ms):
        cluster.pod_duration(name, namespace, None)
    for namespace in sorted(st.namespace_log_style):
        cluster.log_style(name, namespace)
    cluster.log_style(name)
    apic = cluster.api(st.kubeconfig)
    core = client.CoreV1Api(apic)
    for node in core.list_node().items:
        if node.spec.unschedulable:
            core.patch_node(node.metadata.name, {"spec": {"unschedulable": None}})
    doomed = [ns.metadata.name for ns in core.list_namespace().items if ns.metadata.name not in SYSTEM_NAMESPACES]
    for namespace in doomed:
        _delete(lambda ns=namespace: core.delete_namespace(ns))
    _empty_default(apic)
    deadline = time.monotonic() + GONE_SECONDS
    while left := [ns.metadata.name for ns in core.list_namespace().items if ns.metadata.name in doomed]:
        if time.monotonic() > deadline:
            raise cluster.SimError(f"reset of cluster {name!r}: namespaces {', '.join(left)} still terminating "
                                   f"after {GONE_SECONDS:.0f}s")
        time.sleep(0.2)


def _empty_default(apic: client.ApiClient) -> None:
    custom, core, batch = client.CustomObjectsApi(apic), client.CoreV1Api(apic), client.BatchV1Api(apic)
    nvcre = [(NVCRE_GROUP, crd.spec.versions[0].name, crd.spec.names.plural)
             for crd in client.ApiextensionsV1Api(apic).list_custom_resource_definition().items
             if crd.spec.group == NVCRE_GROUP and crd.spec.scope == "Namespaced"]
    for group, version, plural in (*nvcre, *DEFAULT_KINDS):
        _delete(lambda g=group, v=version, p=plural: custom.delete_collection_namespaced_custom_object(
            g, v, "default", p))
    _delete(lambda: batch.delete_collection_namespaced_job("default", propagation_policy="Background"))
    _delete(lambda: core.delete_collection_namespaced_pod("default", grace_period_seconds=0))
    _delete(lambda: core.delete_collection_namespaced_persistent_volume_claim("default"))
    for cm in core.list_namespaced_config_map("default").items:
        if cm.metadata.name != "kube-root-ca.crt":
            _delete(lambda n=cm.metadata.name: core.delete_namespaced_config_map(n, "default"))


def _delete(call: Callable[[], object]) -> None:
    """A delete whose object (or kind) may already be gone."""
    try:
        call()
    except client.ApiException as exc:
        if exc.status != 404:
            raise
