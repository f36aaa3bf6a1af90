"""What the simulated Megatron training pods print (the catalog's nemotron entries), line by line as they run.

Worker-0 prints the application start and the checkpoint lines; the last worker (NeMo: worker-0) prints a step
line every 10 steps (Megatron's log interval), one every `LINE_SECONDS`, so the step time it prints is the pace
it keeps. The lines' shapes are the pod's namespace's log style (`training_styles`), chosen when the pod starts.
Faults, in every style: on a `stall` node the training lines stop after a few while the pods keep running; on a
`crash` node worker-0 crashes at its first checkpoint 15 s or more into the run; torchrun ends its peers
(`ranks`), the kubelet restarts them in place, and every restart of that workload fails at NCCL init until
its Job's backoffLimit is spent and the workload fails. The Job's next workload resumes from that checkpoint
(its style's resume lines, e.g. `Loading checkpoint from …`) and finishes.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from kubernetes import client

from .. import containers, stages
from ..cache import Cache
from . import workload_logs
from .log_style import Source
from .training_styles import FORMATS, Step

LINE_SECONDS = 0.5
LOG_INTERVAL = 10
SAVE_SECONDS = 0.2          # the synchronous pause of a checkpoint save
STALL_AFTER_LINES = 3
STEP_MS = LINE_SECONDS * 1000 / LOG_INTERVAL
# A crash comes at the first checkpoint after this long, once a goodput measurement (sampling every 10 s, the
# catalog's interval) has seen a checkpoint: NVCRE restarts only a workload that saved one.
CRASH_AFTER_SECONDS = 15.0
FAULT_ANNOTATION = "sim.cre.certification/fault"           # on a node: stall | crash
CRASH = (1, "simulated training crash after a checkpoint")
# Every restart of a crashed workload fails at once (its ranks' NCCL init), until its Job gives up on it.
CRASH_AGAIN = (1, "simulated training crash: NCCL error during communicator init after the crash")
JOBSET_UID = "jobset.sigs.k8s.io/jobset-uid"
CRASHED_ANNOTATION = "sim.cre.certification/crashed-jobs"  # on a crash node: the Jobs that crashed once
JOB_LABEL = "nvcre.nvidia.com/job"
INDEX = "batch.kubernetes.io/job-completion-index"

Obj = dict[str, Any]


def _env(pod: Obj, name: str, default: int) -> int:
    for container in pod["spec"].get("containers") or []:
        for var in container.get("env") or []:
            if var.get("name") == name and str(var.get("value", "")).isdigit():
                return int(var["value"])
    return default


def _annotations(obj: Obj) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def is_training(pod: Obj) -> bool:
    return any("train.sh" in word for c in pod["spec"].get("containers") or []
               for word in [*(c.get("command") or []), *(c.get("args") or [])])


@dataclass
class Run:
    """One pod's progress: what it has printed so far."""

    path: Path
    start: datetime
    first_step: int
    style: str                # its `training` log style
    printed: int = 0          # iteration lines printed (last worker) / checkpoint lines (worker-0)
    header: bool = False
    crashed: bool = False


@dataclass
class Trainer:
    """Called on every agent pass; keeps each training pod's progress."""

    logs_dir: Path
    styles: Source
    runs: dict[str, Run] = field(default_factory=dict)
    crashed: set[str] = field(default_factory=set)   # the workloads (JobSet uids) that crashed

    def tick(self, core: client.CoreV1Api, custom: client.CustomObjectsApi, pods_cache: Cache,
             nodes_cache: Cache) -> None:
        pods = [p for p in pods_cache.items()
                if (p.get("status") or {}).get("phase") == "Running" and is_training(p)]
        if not pods:
            return
        nodes = nodes_cache.by_name()
        groups = workload_logs.by_jobset(pods)
        now = datetime.now(UTC)
        for pod in pods:
            if pod["metadata"]["labels"].get(JOBSET_UID) in self.crashed:
                if containers.up(pod) and not containers.judged(pod):
                    _end(core, pod, CRASH_AGAIN)
                continue
            self._advance(core, custom, pod, groups[workload_logs.jobset(pod)], nodes, now)

    def _advance(self, core: client.CoreV1Api, custom: client.CustomObjectsApi, pod: Obj, group: list[Obj],
                 nodes: dict[str, Obj], now: datetime) -> None:
        """One pod's new lines; `group`: the Running pods of its JobSet."""
        meta = pod["metadata"]
        group = sorted(group, key=lambda p: int(p["metadata"]["labels"].get(INDEX, "0")))
        job = meta["labels"].get(JOB_LABEL, "")
        faults = {_annotations(nodes[p["spec"]["nodeName"]]).get(FAULT_ANNOTATION)
                  for p in group if p["spec"].get("nodeName") in nodes}
        crash_node = next((nodes[p["spec"]["nodeName"]] for p in group if p["spec"].get("nodeName") in nodes
                           and _annotations(nodes[p["spec"]["nodeName"]]).get(FAULT_ANNOTATION) == "crash"), None)
        crashed_before = crash_node is not None and job in (
            _annotations(crash_node).get(CRASHED_ANNOTATION) or "").split(",")
        save_every = _env(pod, "SAVE_INTERVAL", 250)
        total = _env(pod, "TRAIN_ITERS", 5000)
        run = self.runs.get(meta["uid"])
        if run is None:
            resume = save_every if crashed_before else 0
            run = self.runs[meta["uid"]] = Run(workload_logs.serve(custom, pod, self.logs_dir), now, resume,
                                               self.styles.style(meta["namespace"]).training)
        fmt = FORMATS[run.style]
        lines: list[str] = []
        first, last = group[0]["metadata"]["uid"] == meta["uid"], group[-1]["metadata"]["uid"] == meta["uid"]
        prints_steps = first if fmt.steps_on_first else last
        if first and not run.header:
            run.header = True
            started = fmt.start(len(group) * 8) + (fmt.resume(run.first_step) if run.first_step else [])
            lines += [workload_logs.cri_line(line, now) for line in started]
        due = int((now - run.start).total_seconds() / LINE_SECONDS)
        if "stall" in faults:
            due = min(due, STALL_AFTER_LINES)
        while run.printed < due:
            run.printed += 1
            step = run.first_step + run.printed * LOG_INTERVAL
            if step > total:
                break
            when = run.start + timedelta(seconds=run.printed * LINE_SECONDS)
            if prints_steps:
                lines.append(workload_logs.cri_line(fmt.step(Step(step, total, when, LOG_INTERVAL, STEP_MS)), when))
            if first and step % save_every == 0:
                saved = fmt.save(step, when, when + timedelta(seconds=SAVE_SECONDS))
                lines += [workload_logs.cri_line(line, at) for line, at in saved]
                if crash_node is not None and not crashed_before and not run.crashed and \
                        (when - run.start).total_seconds() >= CRASH_AFTER_SECONDS:
                    run.crashed = True
                    self.crashed.add(meta["labels"].get(JOBSET_UID, ""))
                    self._crash(core, crash_node, job, pod)
        if lines:
            with run.path.open("a", encoding="utf-8") as handle:
                handle.write("".join(lines))

    @staticmethod
    def _crash(core: client.CoreV1Api, node: Obj, job: str, pod: Obj) -> None:
        """Remember the Job crashed once (its next workload resumes from the checkpoint), then end the pod's
        container; the kubelet restarts it, and `tick` fails each restart until the workload's Job gives up."""
        done = [j for j in (_annotations(node).get(CRASHED_ANNOTATION) or "").split(",") if j]
        core.patch_node(node["metadata"]["name"], {"metadata": {"annotations": {CRASHED_ANNOTATION: ",".join([*done, job])}}})
        _end(core, pod, CRASH)


def _end(core: client.CoreV1Api, pod: Obj, exit_: tuple[int, str]) -> None:
    """End the pod's running container with `exit_` (code, message)."""
    meta = pod["metadata"]
    core.patch_namespaced_pod(meta["name"], meta["namespace"], {"metadata": {"annotations": stages.exit_annotations(
        containers.restarts(pod), *exit_)}})
