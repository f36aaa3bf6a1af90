"""Faults: what `python -m tools.sim fault` injects on a node or on the link between two topology domains, how it
is cleared, and the names a fault leaves on a node (shared with the health agent). Every entry point validates
before it changes anything.

A node fault is recorded in the cluster's state (`ClusterState.faults`) and left on the node as a label,
condition, cordon or annotation the agent and the log writers read; the kinds that fail pods (`stages.FAULT_EXIT`)
also get a kwok Stage that matches the faulty nodes' pods. A DCGM fault (a failing test on one GPU,
`ClusterState.dcgm_faults`, several per node) is read by the DCGM log writer (`logs/dcgm_logs`) from the state
alone. A link fault (`ClusterState.links`) is an annotation on every node of either domain.
"""
from __future__ import annotations

import json
import time

from kubernetes import client

from . import config_faults, gpu_faults, profiles, stages
from .cluster import SimError, api
from .logs import dcgm_tests, training_logs, workload_logs
from .state import ClusterState, cluster_dir

HARDWARE_LABEL = "nvidia.com/gpu.health"
HARDWARE_VALUE = "unhealthy"
HARDWARE_CONDITION = "GpuHealthy"
# On a pod running on a node when a fault was injected there: kwok matches it against the fault's stage then.
FAULT_SEEN = "sim.cre.certification/fault-injected"
FAULT_KINDS = ("hardware", "workload", "cordon", "slow", "link", "nvlink", "fabric", "stall", "crash", "dcgm",
               *gpu_faults.KINDS, "config", "none")
DEFAULT_SLOW_FACTOR = 0.5
# A bandwidth fault's factor unless --factor says otherwise: NVLink's is lower, so that a GB200/GB300 group
# over a faulty NVLink (840 x 0.25 = 210 GB/s) is below the same group with MNNVL off (400).
DEFAULT_FACTORS = {"slow": DEFAULT_SLOW_FACTOR, "link": 0.5, "nvlink": 0.25}


def fault(name: str, node: str, kind: str, factor: float | None = None, peer: str = "", gpu: int | None = None,
          test: str | None = None, reason: str | None = None, after_minutes: float | None = None,
          config: str | None = None) -> None:
    """Inject a fault on one node (see README: hardware, workload, cordon, slow, nvlink, stall, crash), a failing
    DCGM test on one of its GPUs (dcgm: `gpu`, `test`), a link fault between two topology domains (`node` is then
    a domain, `peer` the other), a GEMM burn-in fault on one GPU (gpu-slow, gpu-throttle, gpu-degrade, gpu-wrong,
    power-limit: `gpu`, and `factor`, `reason`, `after_minutes` as the kind wants), a node-drift configuration
    fault (config: the field `config`, on GPU `gpu` where it is a GPU's), or clear (none) every fault of a node, or
    the link faults of a domain."""
    burn_in = gpu_faults.checked(kind, gpu, factor, reason, after_minutes)
    config_faults.checked(kind, config, gpu)
    if kind == "config" and factor is not None:
        raise SimError("--factor is not for --kind config")
    factor = _checked(name, kind, 1.0 if kind in (*gpu_faults.KINDS, "config") else factor, peer, gpu, test)
    st = ClusterState.load(name)
    apic = api(st.kubeconfig)
    core = client.CoreV1Api(apic)
    if kind == "link":
        _link(core, st, node, peer, factor)
        return
    try:
        target = core.read_node(node)
    except client.ApiException as exc:
        if exc.status != 404:
            raise
        _not_a_node(core, st, node, kind)
        return
    if kind == "none":
        _clear(apic, st, node)
        return
    if kind == "dcgm":
        _dcgm(st, apic.sanitize_for_serialization(target), node, gpu, test)
        return
    if kind == "config" and config is not None:
        config_faults.add(st, apic.sanitize_for_serialization(target), node, config, gpu)
        return
    if kind in gpu_faults.KINDS and gpu is not None:
        gpu_faults.add(st, apic.sanitize_for_serialization(target), node, kind, gpu, burn_in)
        return
    _mark(core, target, node, kind, factor)
    st.faults[node] = kind
    st.save()
    if kind in stages.FAULT_EXIT:
        _apply_fault_stage(apic, kind, [n for n, k in st.faults.items() if k == kind])
        _touch_running(core, node, kind)


def _checked(name: str, kind: str, factor: float | None, peer: str, gpu: int | None = None,
             test: str | None = None) -> float:
    """The fault's bandwidth factor (its kind's default unless given), once the arguments are found good."""
    if kind not in FAULT_KINDS:
        raise SimError(f"unknown fault kind {kind!r}: must be one of {', '.join(FAULT_KINDS)}")
    if gpu is not None and kind not in ("dcgm", "config", *gpu_faults.KINDS):
        raise SimError(f"--gpu is for --kind dcgm, config and {', '.join(gpu_faults.KINDS)} only, not {kind!r}")
    if test is not None and kind != "dcgm":
        raise SimError(f"--test is for --kind dcgm only, not {kind!r}")
    if kind == "dcgm":
        _dcgm_checked(gpu, test)
    if not cluster_dir(name).exists():
        raise SimError(f"no cluster named {name!r}")
    factor = DEFAULT_FACTORS.get(kind, 1.0) if factor is None else factor
    if not 0 < factor <= 1:
        raise SimError(f"--factor must be in (0, 1], got {factor}")
    if peer and kind != "link":
        raise SimError(f"--peer is for --kind link only, not {kind!r}")
    return factor


def _dcgm_checked(gpu: int | None, test: str | None) -> None:
    """`--gpu` and `--test` of a DCGM fault, as far as they can be judged without the cluster."""
    choices = ", ".join([*dcgm_tests.names(), dcgm_tests.ALL_SKIP])
    if gpu is None:
        raise SimError("--kind dcgm needs --gpu N: the index of the GPU on the node (0 to its GPU count - 1)")
    if test is None:
        raise SimError(f"--kind dcgm needs --test TEST: one of {choices}")
    if test != dcgm_tests.ALL_SKIP and test not in dcgm_tests.BY_NAME:
        raise SimError(f"unknown DCGM test {test!r}: must be one of {choices} (DCGM's names in its JSON)")


def _dcgm(st: ClusterState, target: dict, node: str, gpu: int | None, test: str | None) -> None:
    """Add a failing (or all-skipped) DCGM test on one GPU of the node; the next `dcgmi diag` run there shows it."""
    if gpu is None or test is None:   # _dcgm_checked refused these already
        raise SimError("--kind dcgm needs --gpu and --test")
    layout = st.dcgm_layout
    if test != dcgm_tests.ALL_SKIP and test not in dcgm_tests.names(layout):
        raise SimError(f"DCGM {dcgm_tests.DCGM_VERSION[layout]} (cluster {st.name!r}, --dcgm-layout {layout}) has no "
                       f"test {test!r}: it runs {', '.join(dcgm_tests.names(layout))}")
    gpu_faults.in_range(target, node, gpu)
    tests = st.dcgm_faults.setdefault(node, {}).setdefault(str(gpu), [])
    if test not in tests:
        tests.append(test)
    st.save()


def _not_a_node(core: client.CoreV1Api, st: ClusterState, node: str, kind: str) -> None:
    """`node` names no node: as `--kind none`, the topology domain whose link faults are cleared."""
    if kind == "none" and any(node in (a, b) for _key, a, b, _f in st.links):
        st.links = [link for link in st.links if node not in link[1:3]]
        st.save()
        _apply_links(core, st)
        return
    if kind == "none":
        raise SimError(f"no node and no domain with a link fault named {node!r} in cluster {st.name!r}") from None
    raise SimError(f"node {node!r} does not exist in cluster {st.name!r}") from None


def _mark(core: client.CoreV1Api, target: client.V1Node, node: str, kind: str, factor: float) -> None:
    """What the fault leaves on the node, for the agent, the log writers and the certification to find."""
    if kind == "slow":
        core.patch_node(node, {"metadata": {"annotations": {workload_logs.FACTOR_ANNOTATION: str(factor)}}})
    if kind in ("nvlink", "fabric"):
        if profiles.CLIQUE_LABEL not in ((target.metadata.labels if target.metadata else None) or {}):
            raise SimError(f"node {node!r} has no NVLink domain ({profiles.CLIQUE_LABEL} label): {kind} faults are "
                           "for GB200/GB300 nodes")
        key, value = ((workload_logs.NVLINK_ANNOTATION, str(factor)) if kind == "nvlink"
                      else (workload_logs.FABRIC_ANNOTATION, str(workload_logs.FABRIC_NOT_STARTED)))
        core.patch_node(node, {"metadata": {"annotations": {key: value}}})
    if kind in ("stall", "crash"):
        core.patch_node(node, {"metadata": {"annotations": {training_logs.FAULT_ANNOTATION: kind}}})
    if kind == "cordon":
        core.patch_node(node, {"spec": {"unschedulable": True}})
    if kind == "hardware":
        core.patch_node(node, {"metadata": {"labels": {HARDWARE_LABEL: HARDWARE_VALUE}}})
        core.patch_node_status(node, {"status": {"conditions": [{
            "type": HARDWARE_CONDITION, "status": "False", "reason": "XidError",
            "message": "GPU has fallen off the bus (Xid 79)",
            "lastHeartbeatTime": _now(), "lastTransitionTime": _now()}]}})


def _touch_running(core: client.CoreV1Api, node: str, kind: str) -> None:
    """kwok matches a pod against its stages only when the pod changes: mark the pods already running on the node
    so that a fault injected mid-run reaches them too, as a broken GPU reaches the processes using it."""
    for pod in core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node},status.phase=Running").items:
        core.patch_namespaced_pod(pod.metadata.name, pod.metadata.namespace,
                                  {"metadata": {"annotations": {FAULT_SEEN: kind}}})


def domain_label(nodes: list[dict], domain: str, peer: str) -> str | None:
    """The first topology label (profiles.DOMAIN_LABELS) under which some node is in `domain` and another in `peer`."""
    values = {key: {((n.get("metadata") or {}).get("labels") or {}).get(key) for n in nodes}
              for key in profiles.DOMAIN_LABELS}
    return next((key for key in profiles.DOMAIN_LABELS if {domain, peer} <= values[key]), None)


def link_annotations(nodes: list[dict], links: list[list]) -> dict[str, str | None]:
    """node -> its link-fault annotation (None: no link fault) for the links [label, domain, peer, factor]: each
    node of either domain names the other one."""
    out: dict[str, str | None] = {}
    for node in nodes:
        labels = (node.get("metadata") or {}).get("labels") or {}
        entries: dict[str, float] = {}
        for key, a, b, factor in links:
            for mine, other in ((a, b), (b, a)):
                if labels.get(key) == mine:
                    pair = f"{key}={other}"
                    entries[pair] = min(entries.get(pair, 1.0), float(factor))
        out[node["metadata"]["name"]] = json.dumps(entries, sort_keys=True) if entries else None
    return out


def _nodes(core: client.CoreV1Api) -> list[dict]:
    """Every node as plain JSON (the client's models would cost seconds at 10,000 nodes)."""
    return json.loads(core.list_node(_preload_content=False).data).get("items") or []


def _link(core: client.CoreV1Api, st: ClusterState, domain: str, peer: str, factor: float) -> None:
    """A link fault between two domains of one topology label: groups with nodes in both print less."""
    if not peer:
        raise SimError("--kind link needs --peer DOMAIN: the other side of the faulty link")
    if peer == domain:
        raise SimError(f"--peer must name another domain than {domain!r}")
    key = domain_label(_nodes(core), domain, peer)
    if key is None:
        raise SimError(f"no topology label of cluster {st.name!r} has both domains {domain!r} and {peer!r} "
                       f"(labels looked at: {', '.join(profiles.DOMAIN_LABELS)})")
    st.links = [link for link in st.links if {link[1], link[2]} != {domain, peer}] + [[key, domain, peer, factor]]
    st.save()
    _apply_links(core, st)


def _apply_links(core: client.CoreV1Api, st: ClusterState) -> None:
    """Every node's link-fault annotation as the cluster's links say (changed ones only)."""
    nodes = _nodes(core)
    wanted = link_annotations(nodes, st.links)
    for node in nodes:
        want = wanted[node["metadata"]["name"]]
        if (node["metadata"].get("annotations") or {}).get(workload_logs.LINK_ANNOTATION) != want:
            core.patch_node(node["metadata"]["name"], {"metadata": {"annotations": {
                workload_logs.LINK_ANNOTATION: want}}})


def _clear(apic: client.ApiClient, st: ClusterState, node: str) -> None:
    """Every fault off the node: labels, condition, cordon, bandwidth factors, and its place in the fault stages
    (a link fault belongs to its domains: `fault DOMAIN --kind none` clears it)."""
    core = client.CoreV1Api(apic)
    core.patch_node(node, {"metadata": {"labels": {HARDWARE_LABEL: None},
                                        "annotations": {workload_logs.FACTOR_ANNOTATION: None,
                                                        workload_logs.NVLINK_ANNOTATION: None,
                                                        workload_logs.FABRIC_ANNOTATION: None,
                                                        training_logs.FAULT_ANNOTATION: None,
                                                        training_logs.CRASHED_ANNOTATION: None}},
                           "spec": {"unschedulable": None}})
    core.patch_node_status(node, {"status": {"conditions": [{
        "type": HARDWARE_CONDITION, "status": "True", "reason": "GpuHealthy", "message": "",
        "lastHeartbeatTime": _now(), "lastTransitionTime": _now()}]}})
    st.faults.pop(node, None)
    st.dcgm_faults.pop(node, None)
    st.gpu_faults.pop(node, None)
    st.config_faults.pop(node, None)
    st.save()
    for kind in stages.FAULT_EXIT:
        _apply_fault_stage(apic, kind, [n for n, k in st.faults.items() if k == kind])


def _apply_fault_stage(apic: client.ApiClient, kind: str, nodes: list[str]) -> None:
    custom = client.CustomObjectsApi(apic)
    body = stages.fault_stage(kind, nodes)
    try:
        current = custom.get_cluster_custom_object("kwok.x-k8s.io", "v1alpha1", "stages", body["metadata"]["name"])
        body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
        custom.replace_cluster_custom_object("kwok.x-k8s.io", "v1alpha1", "stages", body["metadata"]["name"], body)
    except client.ApiException as exc:
        if exc.status != 404:
            raise
        custom.create_cluster_custom_object("kwok.x-k8s.io", "v1alpha1", "stages", body)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
