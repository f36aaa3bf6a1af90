"""What a simulated `dcgmi diag` pod prints, and how it ends: the catalog's `diagnostics/dcgm-level1..4`.

A pod whose container runs `dcgmi diag --run LEVEL --json` (`commands.DCGMI_DIAG`) prints, once it runs, the
document DCGM prints for that level (`dcgm_output`: the tests of `dcgm_tests`), for every GPU of its node (the
node's allocatable `nvidia.com/gpu`, else its capacity, else its `nvidia.com/gpu.count` label), in the cluster's
layout (`up --dcgm-layout 3|4`), with the node's GPU faults (`fault NODE --kind dcgm --gpu N --test TEST`). The
agent then marks the pod with dcgmi's exit code (`stages.DCGM_PRINTED`): 0 lets kwok's pod-complete end it,
anything else ends it at once through `stages.EXIT` with that code, so the log is always there before the pod
ends, and the phase and exit code say what the JSON says. Without `--json` it prints nothing (the table is not
simulated) and ends the same way; a run whose level it cannot read ends at once with exit 1.

A node-level fault that ends or hangs the node's GPU pods (`stages.FAULT_EXIT`: workload, hardware, stall) wins:
the pod prints nothing and ends as that fault says, as before DCGM pods printed.
"""
from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kubernetes import client

from .. import commands, containers, stages
from ..cache import Cache
from . import dcgm_output, dcgm_tests, workload_logs

Obj = dict[str, Any]
RUN_FLAGS = ("--run", "-r")
JSON_FLAGS = ("--json", "-j")
BAD_RUN_EXIT = 1
BAD_RUN = "dcgmi diag: no run level it knows (--run 1-4, short, medium, long, xlong): nothing ran"


def runs_diag(pod: Obj) -> bool:
    return any(commands.runs_dcgmi_diag(c) for c in (pod.get("spec") or {}).get("containers") or [])


def diag_run(pod: Obj) -> tuple[int, bool] | None:
    """(level, whether it prints JSON) when one of the pod's containers runs `dcgmi diag` at a level it knows (the
    words of argv, or of a shell script in it)."""
    for container in (pod.get("spec") or {}).get("containers") or []:
        if not commands.runs_dcgmi_diag(container):
            continue
        words = re.split(rf"[{commands.SEP}\s;&|]+", commands.argv(container))
        for i, word in enumerate(words):
            flag, sep, value = word.partition("=")
            given = value if sep else (words[i + 1] if i + 1 < len(words) else "")
            level = dcgm_tests.level_of(given) if flag in RUN_FLAGS else None
            if level is not None:
                return level, any(w in JSON_FLAGS for w in words)
    return None


def node_gpus(node: Obj) -> int:
    """How many GPUs DCGM finds on the node."""
    status = node.get("status") or {}
    labels = (node.get("metadata") or {}).get("labels") or {}
    for text in ((status.get("allocatable") or {}).get(stages.GPU_RESOURCE),
                 (status.get("capacity") or {}).get(stages.GPU_RESOURCE), labels.get("nvidia.com/gpu.count")):
        if text is not None and str(text).isdigit():
            return int(text)
    return 0


def device_id(node: Obj) -> str:
    product = ((node.get("metadata") or {}).get("labels") or {}).get("nvidia.com/gpu.product", "")
    return dcgm_tests.DEVICE_IDS.get(product, dcgm_tests.DEFAULT_DEVICE_ID)


def gpu_faults(saved: Obj, node: str) -> dcgm_output.Faults:
    """The node's GPU faults as the cluster's state file holds them (GPU indices are its JSON keys)."""
    return {int(gpu): list(tests) for gpu, tests in ((saved.get("dcgm_faults") or {}).get(node) or {}).items()}


def printed(pod: Obj) -> bool:
    return stages.DCGM_PRINTED in ((pod.get("metadata") or {}).get("annotations") or {})


def exit_message(code: int, failed: list[tuple[int, dcgm_tests.Test]]) -> str:
    """The container's termination message: what failed where."""
    return f"dcgmi diag exited {code}: " + ", ".join(f"GPU {gpu} failed {test.name}" for gpu, test in failed)


class Diagnostics:
    """Called on every agent pass: prints each new running `dcgmi diag` pod's output, then marks its end."""

    def __init__(self, logs_dir: Path, state: Path) -> None:
        self.logs_dir, self.state = logs_dir, state
        self.done: set[str] = set()

    def tick(self, core: client.CoreV1Api, custom: client.CustomObjectsApi, pods_cache: Cache) -> list[str]:
        fresh = [p for p in pods_cache.items() if (p.get("status") or {}).get("phase") == "Running"
                 and p["metadata"]["uid"] not in self.done and not printed(p) and runs_diag(p)]
        if not fresh:
            return []
        # Read now, not cached: a fault set just before the run must show in it (one small file per pass).
        saved = json.loads(self.state.read_text()) if self.state.exists() else {}
        served = []
        for pod in fresh:
            name = pod["spec"].get("nodeName") or ""
            if (saved.get("faults") or {}).get(name) in stages.FAULT_EXIT:
                self.done.add(pod["metadata"]["uid"])   # killed or hung by the node's fault: it prints nothing
                continue
            try:
                node = json.loads(core.read_node(name, _preload_content=False).data)
            except client.ApiException as exc:
                if exc.status != 404:
                    raise
                continue   # the node is gone: its pod goes with it
            self.serve(core, custom, pod, node, saved)
            self.done.add(pod["metadata"]["uid"])
            served.append(pod["metadata"]["name"])
        return served

    def serve(self, core: client.CoreV1Api, custom: client.CustomObjectsApi, pod: Obj, node: Obj,
              saved: Obj) -> None:
        """Write the pod's output, then mark it with dcgmi's exit code (a run it cannot read ends at once)."""
        meta = pod["metadata"]
        run = diag_run(pod)
        if run is None:
            marks = {stages.DCGM_PRINTED: str(BAD_RUN_EXIT),
                     **stages.exit_annotations(containers.restarts(pod), BAD_RUN_EXIT, BAD_RUN)}
            core.patch_namespaced_pod(meta["name"], meta["namespace"], {"metadata": {"annotations": marks}})
            return
        level, as_json = run
        faults = gpu_faults(saved, node["metadata"]["name"])
        layout = int(saved.get("dcgm_layout") or dcgm_tests.DEFAULT_LAYOUT)
        gpus = node_gpus(node)
        text, code = dcgm_output.render(layout, level, node["metadata"]["name"], gpus, device_id(node), faults)
        path = workload_logs.serve(custom, pod, self.logs_dir)
        now = datetime.now(UTC)
        path.write_text("".join(workload_logs.cri_line(line, now) for line in text.splitlines()) if as_json else "")
        marks = {stages.DCGM_PRINTED: str(code)}
        if code:
            failed = dcgm_output.failures(level, layout, gpus, faults)
            marks |= stages.exit_annotations(containers.restarts(pod), code, exit_message(code, failed))
        core.patch_namespaced_pod(meta["name"], meta["namespace"], {"metadata": {"annotations": marks}})
