"""What a simulated node-drift pod prints, and how it ends: the catalog's `configuration/node-drift`.

A pod whose container runs the collector (`python3 /opt/cre/node_drift.py ...`, `commands.NODE_DRIFT`) prints, once
it runs, the collector's whole `node-drift/1` output (`node_drift_output`) for its node: the product from its
`nvidia.com/gpu.product` label, its GPUs as DCGM counts them (`dcgm_logs.node_gpus`), its platform from its
providerID, and the node's configuration faults (`ClusterState.config_faults`: `fault NODE --kind config --field F
[--gpu N]`). The agent then marks the pod with the collector's exit code (`stages.NODE_DRIFT_PRINTED`): 0 lets
kwok's pod-complete end it at its pod time, 2 (arguments the collector refuses) ends it at once through
`stages.EXIT`. A node-level fault that ends or hangs the node's GPU pods wins: the pod prints nothing.
"""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kubernetes import client

from .. import commands, containers, profiles, stages
from . import dcgm_logs, node_drift_output, printed_pods, workload_logs

Obj = dict[str, Any]
BAD_ARGS_EXIT = 2
# providerID prefix -> platform of tools/sim/profiles (a node without one is on-prem).
PROVIDERS = (("aws://", "aws"), ("gce://", "gcp"), ("azure://", "azure"), ("ocid1.", "oci"))


def words_of(pod: Obj) -> list[str] | None:
    """The argv of the pod's container that runs the collector, else None."""
    for container in (pod.get("spec") or {}).get("containers") or []:
        if commands.runs_node_drift(container):
            return [str(w) for w in [*(container.get("command") or []), *(container.get("args") or [])]]
    return None


def refused(words: list[str]) -> str | None:
    """Why the collector's argparse would refuse the words (it exits 2), else None."""
    if "--load-s" not in words[:-1]:
        return None
    text = words[words.index("--load-s") + 1]
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    return None if value > 0 else f"node_drift.py: error: argument --load-s: must be a number above 0, got {text!r}"


def node_of(node: Obj) -> node_drift_output.Node:
    """The simulated node as the output needs it: name, product, GPU count, platform and GPU kind."""
    meta = node.get("metadata") or {}
    product = (meta.get("labels") or {}).get("nvidia.com/gpu.product", "")
    provider = (node.get("spec") or {}).get("providerID") or ""
    platform = next((name for prefix, name in PROVIDERS if provider.startswith(prefix)), "onprem")
    kind = next((name for name, gpu in profiles.GPUS.items() if gpu.product == product), "")
    return node_drift_output.Node(meta.get("name", ""), product, dcgm_logs.node_gpus(node), platform, kind)


def config_faults(saved: Obj, node: str) -> list[node_drift_output.Fault]:
    """The node's configuration faults as the cluster's state file holds them."""
    return [node_drift_output.Fault(f["field"], f.get("gpu")) for f in (saved.get("config_faults") or {}).get(node)
            or []]


class Snapshots(printed_pods.PrintedPods):
    """Called on every agent pass: prints each new running node-drift pod's output, then marks its end."""

    MARK = stages.NODE_DRIFT_PRINTED

    def runs(self, pod: Obj) -> bool:
        return words_of(pod) is not None

    def serve(self, core: client.CoreV1Api, custom: client.CustomObjectsApi, pod: Obj, node: Obj,
              saved: Obj) -> None:
        """Write the pod's output, then mark it with the collector's exit code."""
        meta = pod["metadata"]
        why = refused(words_of(pod) or [])
        path = workload_logs.serve(custom, pod, self.logs_dir)
        now = datetime.now(UTC)
        if why is not None:
            path.write_text(workload_logs.cri_line(why, now).replace(" stdout ", " stderr "))
            marks = {stages.NODE_DRIFT_PRINTED: str(BAD_ARGS_EXIT),
                     **stages.exit_annotations(containers.restarts(pod), BAD_ARGS_EXIT, why)}
        else:
            target = node_of(node)
            lines = node_drift_output.render(target, config_faults(saved, target.name), now)
            path.write_text("".join(workload_logs.cri_line(line, now) for line in lines))
            marks = {stages.NODE_DRIFT_PRINTED: "0"}
        core.patch_namespaced_pod(meta["name"], meta["namespace"], {"metadata": {"annotations": marks}})
