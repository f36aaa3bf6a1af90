"""What a simulated GEMM goodput run prints: the worked example of a user catalog entry (docs/catalog-entries.md,
docs/examples/catalog/compute/gemm-goodput.yaml), run as a real node would run it.

A pod whose container runs `gemm-goodput` (`--gpus G --iterations N --size S --dtype D`) prints a start line,
then one line per iteration as it goes, one every `LINE_SECONDS` (a real run spends about a second per
iteration; the simulator keeps the pace short like its training logs):

    gemm-goodput 1.4.0: 8 GPUs, bf16 8192x8192x8192, 600 iterations
    iteration    1/600 | 1.49 ms | 739.62 TFLOP/s per GPU | min GPU 5 736.66

The figure is our own: the node's GPU's sustained dense GEMM rate (`TFLOPS`, about three quarters of the
datasheet's dense BF16 peak) times the node's bandwidth factor (`sim fault NODE --kind slow [--factor F]`: a
slow node computes slower too), with a deterministic wobble of a few tenths of a percent per iteration and
per GPU (the mean over an iteration's GPUs is the figure). The elapsed time is one S×S×S GEMM's at that rate.
On a `stall` node the lines stop after `STALL_AFTER_LINES`; the kubelet stages end the process as for any
workload. The agent calls `GemmRun.tick` on every pass.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from kubernetes import client

from ..cache import Cache
from . import workload_logs
from .training_logs import FAULT_ANNOTATION

BINARY = re.compile(r"(^|/)gemm-goodput$")
VERSION = "1.4.0"
LINE_SECONDS = 0.5
STALL_AFTER_LINES = 3
# Sustained dense BF16 GEMM TFLOP/s per GPU of a good node (our own figures), by `nvidia.com/gpu.product`.
TFLOPS = {"NVIDIA-H100-80GB-HBM3": 740.0, "NVIDIA-GB200": 1850.0, "NVIDIA-GB300-NVL72": 1900.0,
          "NVIDIA-B300-SXM6-AC": 1800.0}
DEFAULT_TFLOPS = 500.0
WOBBLE = 0.004   # the largest relative difference of an iteration (or a GPU) from the node's figure

Obj = dict[str, Any]


@dataclass(frozen=True)
class Args:
    gpus: int = 8
    iterations: int = 100
    size: int = 8192
    dtype: str = "bf16"


def gemm_run(pod: Obj) -> Args | None:
    """The run's arguments when one of the pod's containers runs the binary, else None."""
    for container in (pod.get("spec") or {}).get("containers") or []:
        words = [str(w) for w in [*(container.get("command") or []), *(container.get("args") or [])]]
        if any(BINARY.search(w) for w in words):
            return Args(int(_value(words, "--gpus", "8")), int(_value(words, "--iterations", "100")),
                        int(_value(words, "--size", "8192")), _value(words, "--dtype", "bf16"))
    return None


def _value(words: list[str], flag: str, default: str) -> str:
    return words[words.index(flag) + 1] if flag in words[:-1] else default


def node_tflops(node: Obj) -> float:
    """What a GPU of `node` sustains now: its product's figure times the node's (slow) factor."""
    meta = node.get("metadata") or {}
    product = (meta.get("labels") or {}).get("nvidia.com/gpu.product", "")
    factor = float((meta.get("annotations") or {}).get(workload_logs.FACTOR_ANNOTATION) or 1.0)
    return TFLOPS.get(product, DEFAULT_TFLOPS) * factor


def header(args: Args) -> str:
    return (f"gemm-goodput {VERSION}: {args.gpus} GPU{'s' if args.gpus != 1 else ''}, {args.dtype} "
            f"{args.size}x{args.size}x{args.size}, {args.iterations} iterations")


def line(args: Args, iteration: int, tflops: float) -> str:
    """One iteration's line: the mean TFLOP/s per GPU (the figure), and the slowest GPU."""
    per_gpu = [tflops * (1 + WOBBLE * math.sin(1.7 * iteration + 2.3 * gpu)) for gpu in range(args.gpus)]
    mean = sum(per_gpu) / len(per_gpu)
    slowest = min(range(args.gpus), key=per_gpu.__getitem__)
    elapsed_ms = 2 * args.size ** 3 / (mean * 1e12) * 1000
    return (f"iteration {iteration:>4}/{args.iterations} | {elapsed_ms:.2f} ms | {mean:.2f} TFLOP/s per GPU | "
            f"min GPU {slowest} {per_gpu[slowest]:.2f}")


def due_lines(args: Args, tflops: float, start: datetime, now: datetime, printed: int,
              stalled: bool = False) -> list[tuple[str, datetime]]:
    """The lines due by `now` after the `printed` ones (the header is line 0), each with its time."""
    due = min(int((now - start).total_seconds() / LINE_SECONDS), args.iterations) + 1
    if stalled:
        due = min(due, STALL_AFTER_LINES + 1)
    out = []
    for index in range(printed, due):
        text = header(args) if index == 0 else line(args, index, tflops)
        out.append((text, start + timedelta(seconds=index * LINE_SECONDS)))
    return out


@dataclass
class GemmRun:
    """Called on every agent pass: each Running GEMM goodput pod's new lines (how many each has printed)."""

    logs_dir: Path
    printed: dict[str, tuple[Path, datetime, int]] = field(default_factory=dict)

    def tick(self, custom: client.CustomObjectsApi, pods_cache: Cache, nodes_cache: Cache) -> None:
        pods = [p for p in pods_cache.items() if (p.get("status") or {}).get("phase") == "Running" and gemm_run(p)]
        if not pods:
            return
        nodes = nodes_cache.by_name()
        now = datetime.now(UTC)
        for pod in pods:
            node = nodes.get((pod.get("spec") or {}).get("nodeName") or "")
            args = gemm_run(pod)
            if node is None or args is None:
                continue
            uid = pod["metadata"]["uid"]
            if uid not in self.printed:
                self.printed[uid] = (workload_logs.serve(custom, pod, self.logs_dir), now, 0)
            path, start, printed = self.printed[uid]
            stalled = ((node.get("metadata") or {}).get("annotations") or {}).get(FAULT_ANNOTATION) == "stall"
            lines = due_lines(args, node_tflops(node), start, now, printed, stalled)
            if lines:
                with path.open("a", encoding="utf-8") as handle:
                    handle.write("".join(workload_logs.cri_line(text, when) for text, when in lines))
                self.printed[uid] = (path, start, printed + len(lines))
