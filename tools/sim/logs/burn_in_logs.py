"""What a simulated GEMM burn-in pod prints, and how it ends: the catalog's `compute/gemm-burn-in`.

A pod whose container runs the harness (`python3 /opt/cre/gemm_burn_in.py ...`, `commands.GEMM_BURN_IN`) prints,
once it runs, the whole run's `gemm-burn-in/1` lines (`burn_in_output`) for every GPU of its node (as DCGM counts
them: `dcgm_logs.node_gpus`), with the window times of the run it simulates and the node's GPU faults
(`ClusterState.gpu_faults`: `fault NODE --kind gpu-slow|gpu-throttle|gpu-degrade|gpu-wrong|power-limit --gpu N`)
and `slow` factor. The agent then marks the pod with the harness's exit code (`stages.BURN_IN_PRINTED`): 0 lets
kwok's pod-complete end it at its pod time, 1 (a wrong result) or 2 (arguments the harness refuses) end it at once
through `stages.EXIT`. A node-level fault that ends or hangs the node's GPU pods wins: the pod prints nothing.
"""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kubernetes import client

from .. import commands, containers, stages
from . import burn_in_output, dcgm_logs, printed_pods, workload_logs

Obj = dict[str, Any]
BAD_ARGS_EXIT = 2
# The harness's flag -> (Run field, type).
FLAGS = {"--dtype": ("dtype", str), "--size": ("size", int), "--duration-s": ("duration_s", float),
         "--warmup-s": ("warmup_s", float), "--window-s": ("window_s", float)}


def words_of(pod: Obj) -> list[str] | None:
    """The argv of the pod's container that runs the harness, else None."""
    for container in (pod.get("spec") or {}).get("containers") or []:
        if commands.runs_gemm_burn_in(container):
            return [str(w) for w in [*(container.get("command") or []), *(container.get("args") or [])]]
    return None


def run_of(words: list[str]) -> burn_in_output.Run | str:
    """The run the words ask for, or why the harness would refuse them (its argparse exits 2)."""
    given: dict[str, Any] = {}
    for flag, (name, kind) in FLAGS.items():
        if flag in words[:-1]:
            text = words[words.index(flag) + 1]
            try:
                given[name] = kind(text)
            except ValueError:
                return f"gemm_burn_in.py: error: argument {flag}: invalid value {text!r}"
    run = burn_in_output.Run(**given)
    if run.dtype not in burn_in_output.DTYPES:
        return f"gemm_burn_in.py: error: argument --dtype: invalid choice: {run.dtype!r}"
    if min(run.window_s, run.duration_s, run.size) <= 0 or run.warmup_s < 0:
        return "gemm_burn_in.py: error: a duration, window or size is not above 0"
    return run


def gpu_faults(saved: Obj, node: str) -> burn_in_output.Faults:
    """The node's burn-in GPU faults as the cluster's state file holds them (GPU index -> kind -> parameters)."""
    stored = (saved.get("gpu_faults") or {}).get(node) or {}
    return {int(gpu): [burn_in_output.Fault(kind, **params) for kind, params in sorted(kinds.items())]
            for gpu, kinds in stored.items()}


class BurnIns(printed_pods.PrintedPods):
    """Called on every agent pass: prints each new running burn-in pod's run, then marks its end."""

    MARK = stages.BURN_IN_PRINTED

    def runs(self, pod: Obj) -> bool:
        return words_of(pod) is not None

    def serve(self, core: client.CoreV1Api, custom: client.CustomObjectsApi, pod: Obj, node: Obj,
              saved: Obj) -> None:
        """Write the pod's run, then mark it with the harness's exit code."""
        meta = pod["metadata"]
        run = run_of(words_of(pod) or [])
        path = workload_logs.serve(custom, pod, self.logs_dir)
        now = datetime.now(UTC)
        if isinstance(run, str):
            path.write_text(workload_logs.cri_line(run, now).replace(" stdout ", " stderr "))
            code, message = BAD_ARGS_EXIT, run
        else:
            labels = (node.get("metadata") or {}).get("labels") or {}
            annotations = (node.get("metadata") or {}).get("annotations") or {}
            factor = float(annotations.get(workload_logs.FACTOR_ANNOTATION) or 1.0)
            lines, code = burn_in_output.render(node["metadata"]["name"], labels.get("nvidia.com/gpu.product", ""),
                                                dcgm_logs.node_gpus(node), run,
                                                gpu_faults(saved, node["metadata"]["name"]), now, factor)
            path.write_text("".join(workload_logs.cri_line(line, now) for line in lines))
            message = "gemm-burn-in: a result was wrong (check=wrong)"
        marks = {stages.BURN_IN_PRINTED: str(code)}
        if code:
            marks |= stages.exit_annotations(containers.restarts(pod), code, message)
        core.patch_namespaced_pod(meta["name"], meta["namespace"], {"metadata": {"annotations": marks}})
