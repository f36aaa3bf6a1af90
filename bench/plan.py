"""Render-and-plan time against node count: 1,000, 10,000 and 50,000 mock nodes over several profiles.

Run from the repo root: `.venv/bin/python -m bench.plan` (or `bench/plan.py`). Prints the wall time of a full
offline render (validation, overrides, detection, placement, first-iteration Jobs and dependencies) per size,
and the growth ratio between sizes next to the node ratio: near-linear means time ratio ≈ node ratio.
Target: 10,000 nodes well under one second.
"""
from __future__ import annotations

import copy
import functools
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / ".collections")]

import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.plan import mocknodes, render
from ansible_collections.cre.certification.plugins.plugin_utils.memory import cyclic_gc_paused

WORKFLOW = yaml.safe_load((ROOT / "tests" / "unit" / "engine" / "data" / "render" / "_workflow.yaml").read_text())
SIZES = (1_000, 10_000, 50_000)
# (profile, platform, gpu architecture, nodesPerJob, GPUs per node, orchestration additions)
PROFILES = (
    ("aws-h100 pinned 2/job", "aws", "h100", 2, 8, {}),
    ("gcp-h100 pinned 8/job, topology", "gcp", "h100", 8, 8,
     {"topology": {"topologyKey": "cloud.google.com/gce-topology-block"}}),
    ("oci-gb300 strictDomain", "oci", "gb300", 18, 4,
     {"topology": {"topologyKey": "nvidia.com/gpu.clique", "strictDomain": True}}),
    ("aws-gb200 unpinned 16", "aws", "gb200", 16, 4, {"placement": "Unpinned"}),
)


def workflow_for(npj: int, gpus: int, orchestration: dict) -> dict:
    wf = copy.deepcopy(WORKFLOW)
    spec = wf["spec"]
    spec["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]["numNodes"] = npj
    node = spec["dependencies"][0]["spec"]["template"]["spec"]["replicatedJobs"][1]
    node["template"]["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": str(gpus)}}
    spec["orchestration"].update(orchestration)
    return wf


def best_of(runs: int, fn) -> float:
    best = float("inf")
    for _run in range(runs):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    with cyclic_gc_paused():  # as the workflow_render face renders
        return measure()


def measure() -> int:
    print(f"{'profile':34} {'nodes':>7} {'jobs':>6} {'seconds':>8} {'x time':>7} {'x nodes':>8}")
    slow = False
    for name, platform, arch, npj, gpus, orchestration in PROFILES:
        wf = workflow_for(npj, gpus, orchestration)
        previous = None
        for size in SIZES:
            nodes = mocknodes.mock_nodes(platform, arch, size)
            out = render.render(wf, nodes)
            if out.failure is not None:
                print(f"{name}: {out.failure.reason}: {out.failure.message}")
                return 1
            seconds = best_of(3 if size <= 10_000 else 1, functools.partial(render.render, wf, nodes))
            growth = f"{seconds / previous[1]:7.1f} {size / previous[0]:8.1f}" if previous else f"{'':7} {'':8}"
            print(f"{name:34} {size:7d} {len(out.plan['jobs']):6d} {seconds:8.3f} {growth}")
            slow |= size == 10_000 and seconds >= 1.0
            previous = (size, seconds)
    print("10,000 nodes: " + ("SLOWER than one second" if slow else "under one second for every profile"))
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
