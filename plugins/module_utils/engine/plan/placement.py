"""Placement: job size, node groups, node affinity and tolerations (workflow spec §4 step 11-13, §6, §9 init).

Groups are plain dicts `{name, nodes, domains, overflow}`; every step is linear or n·log n in nodes.
"""
from __future__ import annotations

import heapq
import math
from typing import Any

from ..api.errors import WorkflowFailure
from .detect import Detection, not_enough_nodes_message

PARTITION_ERROR = "PartitionError"
PINNED = "Pinned"
UNPINNED = "Unpinned"
HOSTNAME_LABEL = "kubernetes.io/hostname"
GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
UNKNOWN_DOMAIN = "unknown"

UNPINNED_DIAGNOSE = (
    "orchestration.placement: Unpinned is incompatible with orchestration.diagnose: diagnose isolates faults by "
    "partitioning nodes into groups and bisecting the failures, which requires the node pinning Unpinned removes; "
    "drop one of the two")
UNPINNED_STRICT_DOMAIN = (
    "orchestration.placement: Unpinned is incompatible with orchestration.topology.strictDomain: strictDomain runs "
    "one job per topology domain, Unpinned runs exactly one job; to confine a single unpinned job to one domain, "
    "name the domain label in target.matchExpressions instead")
UNPINNED_NO_SIZE = (
    "orchestration.placement: Unpinned requires an explicit job size, but the workload declares none; set "
    "nodesPerJob (Certification) or numNodes (WorkloadRun). Unpinned will not fall back to running one job "
    "across all discovered nodes")


class PartitionFailure(Exception):
    """An error of PartitionNodes itself; callers wrap it as `Failed to partition nodes: <err>`."""


def _fail(message: str) -> WorkflowFailure:
    return WorkflowFailure(PARTITION_ERROR, message)


def is_unpinned(orchestration: dict[str, Any]) -> bool:
    return orchestration.get("placement") == UNPINNED


def validate_placement(orchestration: dict[str, Any]) -> None:
    """ValidatePlacement: Unpinned rejects diagnose and strictDomain; a bare topologyKey is ignored."""
    if not is_unpinned(orchestration):
        return
    if orchestration.get("diagnose") is not None:
        raise _fail(UNPINNED_DIAGNOSE)
    if (orchestration.get("topology") or {}).get("strictDomain"):
        raise _fail(UNPINNED_STRICT_DOMAIN)


def declared_nodes_per_job(job_spec: dict[str, Any]) -> int:
    """The TrainJob adapter's job size: `trainer.numNodes` (may be < 1; the caller decides)."""
    train_job = (job_spec.get("workload") or {}).get("trainJob")
    if train_job is None:
        # NVCRE relays the adapter lookup error; the text is ours (its Go error was not published).
        raise _fail("Failed to determine workload adapter: spec.workload has no supported workload (trainJob)")
    num_nodes = (train_job.get("trainer") or {}).get("numNodes")
    if num_nodes is None:
        raise _fail("Failed to detect nodesPerJob: TrainJob.Trainer.NumNodes not set")
    return int(num_nodes)


def nodes_per_job(job_spec: dict[str, Any], orchestration: dict[str, Any], detection: Detection) -> int:
    """nodesPerJob of §4 step 11 over the surviving nodes: numNodes, or all nodes for a sizeless Pinned job.

    Never clamped: more than the surviving nodes is a PartitionError worded with the exclusions.
    """
    unpinned = is_unpinned(orchestration)
    npj = declared_nodes_per_job(job_spec)
    if npj < 1:
        if unpinned:
            raise _fail(UNPINNED_NO_SIZE)
        npj = len(detection.nodes)
    if npj > len(detection.nodes):
        raise _fail(not_enough_nodes_message(npj, detection, unpinned))
    return npj


def _group(name: str, nodes: list[str], domains: list[str] | None = None, overflow: bool = False) -> dict[str, Any]:
    return {"name": name, "nodes": nodes, "domains": domains or [], "overflow": overflow}


def partition_nodes(names: list[str], npj: int, topology_key: str = "", strict_domain: bool = False,
                    labels: dict[str, dict[str, str]] | None = None) -> list[dict[str, Any]]:
    """PartitionNodes: simple chunking by name, or topology-aware groups when a key is set."""
    if npj < 1:
        raise PartitionFailure(f"nodesPerJob must be >= 1, got {npj}")
    if not names:
        raise PartitionFailure("no nodes provided")
    names = sorted(names)
    if not topology_key:
        return _partition_simple(names, npj)
    labels = labels or {}
    domain_of = {}
    for name in names:
        value = (labels.get(name) or {}).get(topology_key)
        if value is None:
            raise PartitionFailure(f'node "{name}" missing topology label "{topology_key}"')
        domain_of[name] = value
    return _partition_topology(names, npj, domain_of, strict_domain)


def _partition_simple(names: list[str], npj: int) -> list[dict[str, Any]]:
    full, rest = divmod(len(names), npj)
    if full == 0:
        return [_group("group-0", names)]
    groups = [_group(f"group-{i}", names[i * npj:(i + 1) * npj]) for i in range(full)]
    if rest:
        borrowed = groups[-1]["nodes"][rest:]  # the last npj-rest nodes of the last full group
        groups.append(_group(f"group-{full}-overflow", sorted(names[full * npj:] + borrowed), overflow=True))
    return groups


def _partition_topology(names: list[str], npj: int, domain_of: dict[str, str],
                        strict_domain: bool) -> list[dict[str, Any]]:
    members: dict[str, list[str]] = {}
    for name in names:  # names are sorted, so each member list is too
        members.setdefault(domain_of[name], []).append(name)
    ordered = sorted(members, key=lambda d: (-len(members[d]), d))
    if strict_domain:
        return [_group(f"group-{i}", members[d], [d]) for i, d in enumerate(ordered)]

    max_domains = math.ceil(npj / len(members[ordered[0]]))
    taken = dict.fromkeys(members, 0)  # members[d][:taken[d]] are assigned
    heap = [(-len(members[d]), d) for d in ordered]  # (-unassigned, domain); heap order = the ranking
    heapq.heapify(heap)
    unassigned = len(names)
    groups: list[dict[str, Any]] = []
    while unassigned >= npj:
        top = [heapq.heappop(heap) for _pop in range(min(max_domains, len(heap)))]
        if -sum(count for count, _domain in top) < npj:
            for entry in top:
                heapq.heappush(heap, entry)
            break
        need, nodes, domains = npj, [], []
        for count, domain in top:
            if need:
                take = min(need, -count)
                nodes.extend(members[domain][taken[domain]:taken[domain] + take])
                domains.append(domain)
                taken[domain] += take
                need -= take
                count += take
            if count:
                heapq.heappush(heap, (count, domain))
        unassigned -= npj
        groups.append(_group(f"group-{len(groups)}", sorted(nodes), sorted(domains)))

    untested = {d: members[d][taken[d]:] for d in ordered if taken[d] < len(members[d])}
    if not groups:
        leftover = sorted(n for nodes in untested.values() for n in nodes)
        return [_group("group-0", leftover, sorted(untested))]
    return groups + _overflow_groups(npj, members, taken, untested, len(groups))


def _overflow_groups(npj: int, members: dict[str, list[str]], taken: dict[str, int],
                     untested: dict[str, list[str]], first: int) -> list[dict[str, Any]]:
    """Cover the untested nodes with `group-<k>-overflow` groups that borrow assigned nodes rack by rack."""
    assigned = {d: members[d][:taken[d]] for d in members}
    groups: list[dict[str, Any]] = []
    while untested:
        racks = sorted(members, key=lambda d: (-len(untested.get(d, ())), -len(members[d]), d))
        nodes: list[str] = []
        domains: list[str] = []
        for domain in racks:
            if len(nodes) == npj:
                break
            fresh = untested.get(domain, [])
            pool = fresh + assigned[domain]
            take = pool[:npj - len(nodes)]
            nodes.extend(take)
            domains.append(domain)
            used = min(len(take), len(fresh))
            if used:
                assigned[domain] = sorted(assigned[domain] + fresh[:used])
                if used == len(fresh):
                    del untested[domain]
                else:
                    untested[domain] = fresh[used:]
        groups.append(_group(f"group-{first + len(groups)}-overflow", sorted(nodes), sorted(domains), True))
    return groups


def screening_groups(names: list[str], topology_key: str = "",
                     labels: dict[str, dict[str, str]] | None = None) -> list[dict[str, Any]]:
    """Diagnose stage `intra-screening` (§9 init): one group per domain, else chunks of max(ceil(sqrt N), 2)."""
    names = sorted(names)
    if topology_key:
        labels = labels or {}
        members: dict[str, list[str]] = {}
        for name in names:
            members.setdefault((labels.get(name) or {}).get(topology_key) or UNKNOWN_DOMAIN, []).append(name)
        return [_group(f"screen-{i}", members[d], [d]) for i, d in enumerate(sorted(members))]
    size = max(math.ceil(math.sqrt(len(names))), 2)
    return [_group(f"screen-{i}", names[start:start + size]) for i, start in enumerate(range(0, len(names), size))]


def plan_groups(names: list[str], orchestration: dict[str, Any], npj: int,
                labels: dict[str, dict[str, str]] | None = None) -> tuple[int, list[dict[str, Any]]]:
    """Grouping of §4 step 12 → (nodesPerJob, groups). Diagnose sizes jobs by its first screening group."""
    if is_unpinned(orchestration):
        return npj, [_group("group-0", [])]
    diagnose = orchestration.get("diagnose")
    if diagnose is not None:
        groups = screening_groups(names, diagnose.get("topologyKey") or "", labels)
        return len(groups[0]["nodes"]), groups
    topology = orchestration.get("topology") or {}
    try:
        groups = partition_nodes(names, npj, topology.get("topologyKey") or "", bool(topology.get("strictDomain")),
                                 labels)
    except PartitionFailure as err:
        raise _fail(f"Failed to partition nodes: {err}") from None
    return npj, groups


def group_statuses(groups: list[dict[str, Any]], topology_key: str = "",
                   labels: dict[str, dict[str, str]] | None = None) -> list[dict[str, Any]]:
    """buildGroupStatuses: Pending groups; `domainNodeCounts` only for multi-domain groups under a topology key."""
    statuses = []
    for group in groups:
        status: dict[str, Any] = {"name": group["name"], "nodes": list(group["nodes"]), "phase": "Pending"}
        if group["domains"]:
            status["domains"] = list(group["domains"])
        if group["overflow"]:
            status["overflow"] = True
        if topology_key and len(group["domains"]) > 1:
            counts: dict[str, int] = {}
            for node in group["nodes"]:
                domain = ((labels or {}).get(node) or {}).get(topology_key, "")
                counts[domain] = counts.get(domain, 0) + 1
            status["domainNodeCounts"] = counts
        statuses.append(status)
    return statuses


def node_affinity(hosts: list[str] | None, target: dict[str, Any] | None,
                  gpu_products: list[str] | None) -> dict[str, Any] | None:
    """The single required NodeSelectorTerm of §6.3, or None when there is nothing to require."""
    target = target or {}
    expressions: list[dict[str, Any]] = []
    if hosts:
        expressions.append({"key": HOSTNAME_LABEL, "operator": "In", "values": list(hosts)})
    selector = target.get("nodeSelector") or {}
    expressions.extend({"key": k, "operator": "In", "values": [selector[k]]} for k in sorted(selector))
    expressions.extend(dict(expr) for expr in target.get("matchExpressions") or [])
    if products := sorted(set(p for p in gpu_products or [] if p)):
        expressions.append({"key": GPU_PRODUCT_LABEL, "operator": "In", "values": products})
    unique, seen = [], set()
    for expr in expressions:
        identity = (expr.get("key"), expr.get("operator"), tuple(expr.get("values") or ()))
        if identity not in seen:
            seen.add(identity)
            unique.append(expr)
    if not unique:
        return None
    return {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": unique}]}}


def affinity_hosts(orchestration: dict[str, Any], group: dict[str, Any]) -> list[str]:
    """Hostname term values: the group's nodes when Pinned, `target.nodeNames` when Unpinned."""
    if is_unpinned(orchestration):
        return list((orchestration.get("target") or {}).get("nodeNames") or [])
    return list(group["nodes"])


def job_tolerations(target: dict[str, Any] | None, has_launcher: bool, unpinned: bool) -> list[dict[str, Any]]:
    """JobTolerations (§6.4): taintSelectors, else none without a launcher, else the Unpinned pair or Exists."""
    selectors = (target or {}).get("taintSelectors") or []
    if selectors:
        tolerations = []
        for sel in selectors:
            toleration: dict[str, Any] = {"key": sel["key"]}
            if sel.get("value"):
                toleration.update(operator="Equal", value=sel["value"])
            else:
                toleration["operator"] = "Exists"
            if sel.get("effect"):
                toleration["effect"] = sel["effect"]
            tolerations.append(toleration)
        return tolerations
    if not has_launcher:
        return []
    if unpinned:
        return [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"},
                {"key": "kubernetes.io/arch", "operator": "Equal", "value": "arm64", "effect": "NoSchedule"}]
    return [{"operator": "Exists"}]
