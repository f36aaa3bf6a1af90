"""What the simulated workloads print, served through the pod log API as a real kubelet serves it.

kwok serves a pod's log from a file in the CRI log format (`<RFC3339Nano> stdout F <line>`) named by a kwok
`Logs` object of the pod's name; the API server proxies `pods/<name>/log` to it, so sinceTime, timestamps and
limitBytes behave as on a real node. The health agent calls `emit` on every pass: each new Running workload
pod that runs an nccl-tests binary gets its table (the launcher of an MPI run, or the pod of a loopback run).

The figures are our own: a group's peak bus bandwidth is its profile's nominal figure (`profiles.Gpu`) times
the lowest bandwidth factor among the group's nodes (`sim fault NODE --kind slow [--factor F]`), reached at
the largest message size; smaller sizes follow a saturation curve. Loopback runs print per-node figures.
What the log looks like (prefixes, table generation, NCCL INFO lines, a second test) is the pod's namespace's
log style (`log_style`, `nccl_output`); in the `socket` style a group across nodes that does not run over
NVLink prints `SOCKET_BUS_GBPS` instead of its network's figure.
Two faults only show in some groups, so that only diagnose's regrouping can localise them: a link fault
between two topology domains (`--kind link --peer`) lowers the groups that have nodes in both, and an NVLink
fault (`--kind nvlink`) lowers the multi-node groups of a GB200/GB300 node while they run over MNNVL, that is
while their pods do not set `NCCL_MNNVL_ENABLE=0` (NCCL's default is on) and their nodes share one NVLink
clique; otherwise such groups print the GPU's network-only figure (`no_nvl_bus_gbps`) and the NVLink fault does
not show.
"""
from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from kubernetes import client

from .. import containers, profiles, stages
from ..cache import Cache
from . import nccl_output
from .log_style import DEFAULT, Source, Style
from .nccl_info import FABRIC_COMPLETED, Process

JOBSET_NAME = stages.JOBSET_NAME
FACTOR_ANNOTATION = "sim.cre.certification/bandwidth-factor"
# JSON {"<domain label>=<peer domain>": factor}, on every node of a domain with a link fault to that peer.
LINK_ANNOTATION = "sim.cre.certification/link-faults"
NVLINK_ANNOTATION = "sim.cre.certification/nvlink-factor"
FABRIC_ANNOTATION = "sim.cre.certification/fabric-state"   # NVML's GPU fabric state, when not completed
FABRIC_NOT_STARTED = 1
MNNVL_VARIABLE = "NCCL_MNNVL_ENABLE"
MNNVL_ARGUMENT = re.compile(rf"\b{MNNVL_VARIABLE}=(\S*)")
BINARY = re.compile(r"\b(all_reduce|all_gather|alltoall|reduce_scatter)_perf(_mpi)?\b")
TRANSPORT = {"aws": "AWS Libfabric", "gcp": "FasTrak"}  # every other platform: InfiniBand
NICS_PER_GPU = {"aws": 4}   # p5's 32 EFA devices for 8 GPUs; elsewhere an HCA per GPU
SOCKET_BUS_GBPS = 12.0      # NCCL's TCP sockets over one 100 Gb/s front-end NIC
_UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
BACKDATE = timedelta(milliseconds=500)  # a row's stamp at most this before the agent writes it: half a reader's overlap

Obj = dict[str, Any]


def size_bytes(text: str) -> int:
    """An nccl-tests size argument (`8`, `16G`, `512M`) in bytes."""
    match = re.fullmatch(r"(\d+)([KMGT]?)B?", text.strip().upper())
    return int(match.group(1)) * _UNITS[match.group(2)] if match else 0


def _argument(words: list[str], flag: str, default: str) -> str:
    return words[words.index(flag) + 1] if flag in words[:-1] else default


def nccl_command(pod: Obj) -> list[str] | None:
    """The words (command, then args) of the pod's container that runs an nccl-tests binary, if one does."""
    for container in (pod.get("spec") or {}).get("containers") or []:
        words = [*(container.get("command") or []), *(container.get("args") or [])]
        if any(BINARY.search(w) for w in words):
            return words
    return None


def nccl_run(pod: Obj) -> tuple[str, int, int] | None:
    """(collective, smallest, largest message size) when one of the pod's containers runs an nccl-tests binary."""
    words = nccl_command(pod)
    if words is None:
        return None
    collective = next(m.group(1) for w in words if (m := BINARY.search(w)))
    return collective, size_bytes(_argument(words, "-b", "8")), size_bytes(_argument(words, "-e", "16G"))


def cri(lines: list[str], start: datetime, written: datetime) -> str:
    """The CRI log file kwok serves, written whole at `written`: a line every 100 ms from `start` as nccl-tests
    prints a row per size as it finishes, but none stamped after `written` nor more than `BACKDATE` before it.
    A runtime stamps a line when it reads it from the container's pipe, so no line is ever stamped later than it
    can be read (the rows not yet due come out at the write, as a block-buffered stdout flushes them), and a line
    that appears is never stamped so early that a reader's next window (1 s back from its last read) passes it."""
    low = written - BACKDATE
    return "".join(cri_line(line, min(max(start + timedelta(milliseconds=100 * i), low), written))
                   for i, line in enumerate(lines))


def cri_line(line: str, when: datetime) -> str:
    return f"{when.astimezone(UTC).strftime('%Y-%m-%dT%H:%M:%S.%f')}000Z stdout F {line}\n"


def _annotation(node: Obj, key: str) -> str:
    return ((node.get("metadata") or {}).get("annotations") or {}).get(key) or ""


def _factor(node: Obj) -> float:
    return float(_annotation(node, FACTOR_ANNOTATION) or 1.0)


def link_factor(nodes: list[Obj]) -> float:
    """The lowest factor of the link faults whose two domains both have a node among `nodes` (1.0: none)."""
    factors = [1.0]
    for node in nodes:
        for pair, factor in json.loads(_annotation(node, LINK_ANNOTATION) or "{}").items():
            key, _sep, peer = pair.partition("=")
            if any(((other.get("metadata") or {}).get("labels") or {}).get(key) == peer for other in nodes):
                factors.append(float(factor))
    return min(factors)


def mnnvl_setting(group: list[Obj]) -> str | None:
    """NCCL_MNNVL_ENABLE as the group's pods set it, None when unset: an `NCCL_MNNVL_ENABLE=x` argument (mpirun's
    `-x`, which exports it to every rank) before a container's env, the launcher's containers first."""
    containers = [c for p in sorted(group, key=lambda p: nccl_run(p) is None)
                  for c in (p.get("spec") or {}).get("containers") or []]
    for container in containers:
        for word in [*(container.get("command") or []), *(container.get("args") or [])]:
            if match := MNNVL_ARGUMENT.search(str(word)):
                return match.group(1)
    return next((str(e.get("value", "")) for c in containers for e in c.get("env") or []
                 if e.get("name") == MNNVL_VARIABLE), None)


def fabric_state(node: Obj) -> int:
    """The node's GPU fabric state as NVML reports it (3: completed, unless a `fabric` fault says otherwise)."""
    return int(_annotation(node, FABRIC_ANNOTATION) or FABRIC_COMPLETED)


def over_mnnvl(gpu: profiles.Gpu, own: list[Obj], mnnvl: str | None) -> bool:
    """NCCL's choice (mnnvl.cc): a group of several nodes of one clique runs over multi-node NVLink unless its
    pods set NCCL_MNNVL_ENABLE=0 or one node's GPU fabric is not completed (then it is silently off)."""
    cliques = {((n.get("metadata") or {}).get("labels") or {}).get(profiles.CLIQUE_LABEL) for n in own}
    return (bool(gpu.no_nvl_bus_gbps) and len(own) > 1 and mnnvl != "0" and len(cliques) == 1
            and all(fabric_state(n) == FABRIC_COMPLETED for n in own))


def peak_bus(gpu: profiles.Gpu, own: list[Obj], loopback: bool, mnnvl: str | None, socket: bool = False) -> float:
    """A group's peak bus bandwidth: the nominal figure of how it communicates times its lowest fault factor.
    `socket`: its network is NCCL's TCP sockets (NVLink, within a node or MNNVL, is not a network)."""
    factors = [_factor(n) for n in own]
    if loopback:
        return gpu.loopback_bus_gbps * min(factors)
    if over_mnnvl(gpu, own, mnnvl) or (len(own) == 1 and gpu.no_nvl_bus_gbps and mnnvl != "0"):
        nominal = gpu.nominal_bus_gbps  # over NVLink: a node's NVLink fault shows
        factors += [float(_annotation(n, NVLINK_ANNOTATION) or 1.0) for n in own]
    else:  # the network alone: GPUs without MNNVL, MNNVL off (or silently off), a group across NVLink domains
        nominal = SOCKET_BUS_GBPS if socket else gpu.no_nvl_bus_gbps or gpu.nominal_bus_gbps
    return nominal * min([*factors, link_factor(own)])


def _gpu(node: Obj) -> tuple[str, profiles.Gpu]:
    labels = (node.get("metadata") or {}).get("labels") or {}
    provider = (node.get("spec") or {}).get("providerID") or ""
    platform = next((p for p, pre in (("aws", "aws:"), ("gcp", "gce:"), ("azure", "azure:"), ("oci", "ocid1."))
                     if provider.startswith(pre)), "onprem")
    gpu = next(g for g in profiles.GPUS.values() if g.product == labels.get("nvidia.com/gpu.product"))
    return platform, gpu


def table(pod: Obj, pods: list[Obj], nodes: dict[str, Obj], start: datetime,
          style: Style = DEFAULT) -> list[str] | None:
    """The lines one workload pod started at `start` prints in `style` (stamped by `cri` as they are written), or
    None when it prints nothing we simulate (or its group is not placed)."""
    run = nccl_run(pod)
    if run is None:
        return None
    key = jobset(pod)
    group = [p for p in pods if jobset(p) == key]
    placed = sorted({(p.get("spec") or {}).get("nodeName") or "" for p in group})
    if "" in placed or any(n not in nodes for n in placed):
        return None
    # An MPI run's nodes are its workers' (the launcher only starts them); a loopback run is its own pod's node.
    workers = sorted({p["spec"]["nodeName"] for p in group if nccl_run(p) is None})
    loopback = not workers
    own = workers or [pod["spec"]["nodeName"]]
    platform, gpu = _gpu(nodes[own[0]])
    socket = style.transport == "socket"
    own_nodes, mnnvl = [nodes[n] for n in own], mnnvl_setting(group)
    peak = peak_bus(gpu, own_nodes, loopback, mnnvl, socket)
    out = nccl_output.Run(*run, peak, "Socket" if socket else TRANSPORT.get(platform, "IB"),
                          gpu.count * NICS_PER_GPU.get(platform, 1), processes(pod, group, own_nodes, gpu),
                          nccl_command(pod) or [], over_mnnvl(gpu, own_nodes, mnnvl))
    return nccl_output.lines(out, style, start)


def processes(pod: Obj, group: list[Obj], own: list[Obj], gpu: profiles.Gpu) -> list[Process]:
    """The processes of a run on the nodes `own`: an MPI rank per GPU of each node's worker (mpirun `-N <GPUs>`),
    or, for a pod running the test itself (loopback), one process driving all its node's GPUs (`-g <GPUs>`)."""
    def host(p: Obj, index: int) -> tuple[str, str]:
        return (p["spec"].get("hostname") or p["metadata"]["name"],
                (p.get("status") or {}).get("podIP") or f"10.244.{index}.2")
    workers: dict[str, Obj] = {}
    for worker in sorted((p for p in group if nccl_run(p) is None), key=lambda p: p["metadata"]["name"]):
        workers.setdefault(worker["spec"]["nodeName"], worker)  # a node's first, where a replaced one lingers
    if not workers:
        return [Process(*host(pod, 0), rank=0, device=0, gpus=gpu.count, fabric=_fabric(own[0], gpu))]
    return [Process(*host(workers[node["metadata"]["name"]], i), rank=i * gpu.count + g, device=g, gpus=1,
                    fabric=_fabric(node, gpu)) for i, node in enumerate(own) for g in range(gpu.count)]


def _fabric(node: Obj, gpu: profiles.Gpu) -> tuple[int, int] | None:
    """(cliqueId, fabric state) of a node whose GPUs have a fabric; the id counts from 0x7f00 by the label's number."""
    if not gpu.no_nvl_bus_gbps:
        return None
    clique = ((node.get("metadata") or {}).get("labels") or {}).get(profiles.CLIQUE_LABEL, "")
    number = clique.rsplit(".", 1)[-1]
    return 0x7f00 + (int(number) if number.isdigit() else 0), fabric_state(node)


def _mpirun_ran(pod: Obj) -> bool:
    """The pod prints now, unless it is an MPI launcher whose mpirun has not reached all its workers yet
    (`ranks` marks the one that did; one that cannot reach them prints only its failure, from `ranks`)."""
    return not containers.mpi_launcher(pod) or containers.reached_workers(pod)


def emit(core: client.CoreV1Api, custom: client.CustomObjectsApi, logs_dir: Path, done: set[str],
         pods_cache: Cache, styles: Source) -> list[str]:
    """Give every new Running workload pod its log, in its namespace's style; returns the pods served this pass."""
    # Every placed pod, finished ones too: a short pod may end before a busy agent sees it run.
    pods = [p for p in pods_cache.items() if (p.get("status") or {}).get("phase", "Pending") != "Pending"]
    groups = by_jobset(pods)  # table reads a pod's group: one pass over the pods, not one per pod
    # A launcher waiting on its workers stays fresh for later passes, costing no node reads meanwhile.
    fresh = [p for p in pods if p["metadata"]["uid"] not in done and _mpirun_ran(p)]
    if not fresh:
        return []
    # The nodes of the groups served now, read now: a fault set or cleared just before a run must show in it.
    nodes = _read_nodes(core, {(p.get("spec") or {}).get("nodeName") or "" for f in fresh
                               for p in groups[jobset(f)]} - {""})
    served = []
    now = datetime.now(UTC)
    for pod in fresh:
        style = styles.style(pod["metadata"]["namespace"])
        start = _started(pod, now)
        lines = table(pod, groups[jobset(pod)], nodes, start, style)
        if lines is None:
            if nccl_run(pod) is None:
                done.add(pod["metadata"]["uid"])  # nothing to print, ever
            continue
        path = serve(custom, pod, logs_dir)
        # Stamped as it is written, not as the pass began: a busy pass serves its pods one after another (a create
        # each), seconds apart at 1,024 nodes, and a row stamped that far back could fall before a reader's window.
        path.write_text(cri(lines, start, datetime.now(UTC)))
        done.add(pod["metadata"]["uid"])
        served.append(pod["metadata"]["name"])
    return served


def _read_nodes(core: client.CoreV1Api, names: set[str]) -> dict[str, Obj]:
    """The named nodes as plain JSON (one GET each: a full list is ~30 MB at 10,000 nodes); gone ones left out."""
    out = {}
    for name in sorted(names):
        try:
            out[name] = json.loads(core.read_node(name, _preload_content=False).data)
        except client.ApiException as exc:
            if exc.status != 404:
                raise
    return out


def jobset(pod: Obj) -> str:
    """The pod's JobSet as namespace/name: runs in two namespaces may have JobSets of one name."""
    meta = pod.get("metadata") or {}
    return f'{meta.get("namespace", "")}/{(meta.get("labels") or {}).get(JOBSET_NAME) or ""}'


def by_jobset(pods: list[Obj]) -> dict[str, list[Obj]]:
    """The pods by their JobSet (a workload group)."""
    out: dict[str, list[Obj]] = {}
    for pod in pods:
        out.setdefault(jobset(pod), []).append(pod)
    return out


def _started(pod: Obj, now: datetime) -> datetime:
    """When the pod's container started (its lines are stamped from then), else now."""
    text = (pod.get("status") or {}).get("startTime")
    return datetime.fromisoformat(text.replace("Z", "+00:00")) + timedelta(milliseconds=100) if text else now


def serve(custom: client.CustomObjectsApi, pod: Obj, logs_dir: Path) -> Path:
    """Point kwok at the pod's log file (a `Logs` object the pod owns, so it goes with the pod); the file's path."""
    meta = pod["metadata"]
    path = logs_dir / f"{meta['namespace']}_{meta['name']}.log"
    logs_dir.mkdir(parents=True, exist_ok=True)  # here: the trainer's thread may serve a pod before emit's does
    path.touch()
    try:
        custom.create_namespaced_custom_object("kwok.x-k8s.io", "v1alpha1", meta["namespace"], "logs", {
            "apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Logs",
            "metadata": {"name": meta["name"], "namespace": meta["namespace"], "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"]}]},
            "spec": {"logs": [{"containers": [c["name"] for c in pod["spec"]["containers"]],
                               "logsFile": str(path), "follow": False}]}})
    except client.ApiException as exc:
        if exc.status != 409:   # served before (a launcher's failed start, then its table): the same file
            raise
    return path
