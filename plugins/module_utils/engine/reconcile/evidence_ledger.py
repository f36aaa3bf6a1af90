"""The Job tier's evidence steps (issue 40): a Job attempt's rows read, sealed and written as shards, crash-safely.

Once the workload is over (Succeeded or Failed) and before the Job's terminal condition is written:

1. no seal for this attempt: the rows are computed from the workload pods' logs (the driver reads them when
   `needs_log` names them): a DCGM Job's every worker (its reader judges each node's GPUs), a measured Job's
   measurement pod (evidence_measured: rows only, no verdict), encoded in their fixed order, the seal written in
   a status write, and every shard ConfigMap created after it in the same Step;
2. a shard the seal names is missing: the rows are computed again and the missing shards created: equal rows
   give equal bytes, so the recomputed sha256s must be the seal's; when they are not (the log is gone or
   differs) the seal is marked `partial` with why, and no row is made up;
3. shards of this Job with another attempt's label (a retried group's losing attempt) are deleted;
4. only when every sealed shard exists does the Job move on to its terminal condition (`Gate.step` None); a
   measured Job with no row to write (its log unreadable) seals with its terminal write.

Killed anywhere, the next pass recomputes the same seal, the same bytes and the same names from the cluster.
"""
from __future__ import annotations

import heapq
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Optional

from ..api.actions import Action, Create, Delete, Ref, Step, UpdateStatus
from ..api.errors import InputError
from ..api.objects import json_copy, meta, terminal
from ..api.vocabulary import LABEL_WORKFLOW, WORKFLOW
from ..evidence import shards
from ..evidence.gemm_verdict import GemmParametersError
from ..evidence.rows import sort_key
from ..evidence.sources import (
    GEMM_BURN_IN,
    NODE_DRIFT,
    Labels,
    NodeReading,
    dcgm_tests_gpus,
    reader_of,
    rows_of,
    trainer_words,
)
from ..plan import jobs, workload
from . import burn_in_parameters, evidence_measured, node_drift_parameters
from .world import JobWorld

Obj = dict[str, Any]
ITERATION = re.compile(r"-iter-(\d+)$")
# The readers judged against the node they ran on: (the Job, its node) -> what the reader needs of both.
PARAMETERS: dict[str, Callable[[Obj, Optional[Obj]], Any]] = {  # noqa: UP045 - as above
    GEMM_BURN_IN: burn_in_parameters.of_job, NODE_DRIFT: node_drift_parameters.of_job}
TRAINER_CONTAINER = "node"  # the container Trainer runs the trainer's command in


@dataclass
class Read:
    """A Job attempt's output read: the format, each judged pod's reading (a measured Job's have none: its rows
    are in `encoded` alone), the shards and why the read is partial."""

    fmt: str
    readings: list[NodeReading] = field(default_factory=list)
    encoded: shards.Encoded = field(default_factory=shards.Encoded)
    partial: Optional[str] = None  # noqa: UP045 - ansible-test's pylint reads module_utils as older Python


@dataclass
class Gate:
    """What the evidence asks of this pass: `step` (writes still to do before the Job may end; None: it may end),
    the seal the terminal write carries, the read it rests on, and the other attempts' shards to delete."""

    read: Read
    seal: Obj
    step: Optional[Step] = None  # noqa: UP045 - as above
    deletes: list[Action] = field(default_factory=list)


def attempt(job: Obj) -> int:
    """The Job's launch: its retry label plus 1 (the contract's attempt)."""
    return jobs.retry_of(job) + 1


def targets(pods: list[Obj]) -> list[tuple[str, str, str]]:
    """(pod, container, node) whose log holds the output: each bound worker pod's trainer container, by name."""
    out = []
    for pod in sorted(pods, key=lambda p: meta(p).get("name", "")):
        spec = pod.get("spec") or {}
        names = [c.get("name", "") for c in spec.get("containers") or []]
        if not spec.get("nodeName") or not names:
            continue
        out.append((meta(pod).get("name", ""), TRAINER_CONTAINER if TRAINER_CONTAINER in names else names[0],
                    str(spec["nodeName"])))
    return out


def over(world: JobWorld) -> bool:
    """The Job's workload exists and has ended (Succeeded or Failed)."""
    live = world.workload
    return live is not None and workload.status(live)[0] in (workload.SUCCEEDED, workload.FAILED)


def has_evidence(job: Obj) -> bool:
    """Whether the Job's output is evidence: a reader reads its trainer's words, or a measurement its log."""
    return reader_of(job) is not None or bool(evidence_measured.sources(job))


def needs_profiles(world: JobWorld) -> list[str]:
    """The LogProfiles the driver resolves for this pass (JobWorld.log_profiles): those a measured Job's evidence
    reads with, once its workload is over and until its terminal condition is written."""
    if terminal(world.job) or not over(world):
        return []
    return evidence_measured.profile_refs(world.job)


def needs_log(world: JobWorld) -> list[tuple[str, str]]:
    """The (pod, container) logs the driver reads whole for this pass: those of a Job with evidence whose workload
    is over and whose terminal condition is not written yet (the seal, the shards and the verdict rest on them)."""
    job = world.job
    if terminal(job) or not has_evidence(job) or not (job.get("status") or {}).get("workloadRef") \
            or not over(world):
        return []
    judged = [(pod, container) for pod, container, _node in targets(world.pods)] if reader_of(job) else []
    return judged + [pair for pair in stamped(world) if pair not in judged]


def stamped(world: JobWorld) -> list[tuple[str, str]]:
    """The measured logs among them: read with the kubelet's timestamps, as the measurement reads them (a training
    step's time is its line's stamp)."""
    return [(t.pod, t.container) for t in evidence_measured.targets(world) if t.pod]


def _labels(job: Obj, number: int) -> Labels:
    name = meta(job).get("name", "")
    found = ITERATION.search(name)
    return Labels(str((meta(job).get("labels") or {}).get(LABEL_WORKFLOW, "")), int(found[1]) if found else 1, name,
                  number)


def read(world: JobWorld, fmt: Optional[str], number: int) -> Read:  # noqa: UP045 - as above
    """Every worker pod's output read with the reader `fmt` (None: the Job has none) and the measured logs, the rows
    merged in their fixed order (each list is in it already) and encoded as they stream."""
    labels = _labels(world.job, number)
    readings: list[NodeReading] = []
    reasons: list[str] = []
    if fmt is not None:
        found = targets(world.pods)
        words = trainer_words(world.job)
        gpu_tests = dcgm_tests_gpus(words)
        resolve = PARAMETERS.get(fmt)
        try:
            parameters = {node: resolve(world.job, world.nodes.get(node)) for _p, _c, node in found} if resolve else {}
        except (GemmParametersError, InputError) as err:
            return Read(fmt, [], shards.encode([]), f"the Job's parameters do not read: {err}")
        readings = [rows_of(fmt, world.evidence_logs.get(f"{pod}/{container}"), node, world.gpus_per_node,
                            world.skip_is_failure, labels, pod, gpu_tests, parameters.get(node))
                    for pod, container, node in found]
        reasons = [r.partial for r in readings if r.partial]
        if not found:
            reasons.append("no pod of the workload was left to read its output from")
    measured, why = evidence_measured.read(world)
    rows = heapq.merge(*(r.rows for r in readings), *measured, key=sort_key)
    encoded = shards.encode(evidence_measured.labelled(rows, labels))
    name = fmt or ", ".join(s.fmt for s in evidence_measured.sources(world.job))
    return Read(name, readings, encoded, "; ".join([*reasons, *why]) or None)


def _owner(job: Obj) -> Obj:
    """The Workflow that owns the Job (its controller reference): it owns the shards too, which outlive a retry."""
    ref: Obj = next((o for o in meta(job).get("ownerReferences") or [] if o.get("kind") == WORKFLOW), {})
    name = ref.get("name") or (meta(job).get("labels") or {}).get(LABEL_WORKFLOW, "")
    return {"metadata": {"name": name, "namespace": meta(job).get("namespace", ""), "uid": ref.get("uid", "")}}


def _create(job: Obj, number: int, k: int, encoded: shards.Encoded) -> Create:
    owner = _owner(job)
    cm = shards.configmap(owner, meta(job).get("name", ""), number, k, len(encoded.shards), encoded.shards[k - 1])
    if not owner["metadata"]["uid"]:
        cm["metadata"].pop("ownerReferences")
    return Create(cm, owner_uid=owner["metadata"]["uid"])


def _delete(cm: Obj) -> Delete:
    return Delete(Ref("v1", "ConfigMap", meta(cm).get("namespace", ""), meta(cm).get("name", "")),
                  uid=meta(cm).get("uid", ""))


def gate(world: JobWorld) -> Optional[Gate]:  # noqa: UP045 - as above
    """The evidence steps of a Job whose workload is over; None when nothing reads its output."""
    job = world.job
    if not has_evidence(job):
        return None
    fmt = reader_of(job)
    number = attempt(job)
    now = read(world, fmt, number)
    deletes: list[Action] = [_delete(cm) for cm in world.shards.values() if shards.attempt_of(cm) != number]
    seal = (job.get("status") or {}).get("evidence")
    if not seal or seal.get("attempt") != number:
        seal = shards.seal(number, now.encoded, now.partial)
        if fmt is None and not now.encoded.shards:
            # No shard to write before the Job's end and no verdict resting on the read: the seal rides on the
            # Job's terminal write (a kill before it leaves nothing behind to repair).
            return Gate(now, seal, None, deletes)
        status = {**json_copy(job.get("status") or {}), "evidence": seal}
        creates = [_create(job, number, k, now.encoded) for k in range(1, len(now.encoded.shards) + 1)]
        return Gate(now, seal, Step([UpdateStatus({**job, "status": status}), *creates, *deletes]), deletes)
    name = meta(job).get("name", "")
    wrong, absent = [], []
    for k, sha in enumerate(seal.get("sha256") or [], start=1):
        live = world.shards.get(shards.shard_name(name, number, k))
        if live is None:
            absent.append(k)
        elif (meta(live).get("annotations") or {}).get(shards.ANNOTATION_SHA256) != sha:
            wrong.append(live)
    same = [s.sha256 for s in now.encoded.shards] == list(seal.get("sha256") or [])
    if (absent or wrong) and same:
        creates = [_create(job, number, k, now.encoded) for k in absent]
        return Gate(now, seal, Step([*creates, *(_delete(cm) for cm in wrong), *deletes]), deletes)
    if absent or wrong:
        lost = ", ".join(str(k) for k in sorted([*absent, *(_k(cm) for cm in wrong)]))
        why = now.partial or "the output read again gives other rows than the sealed ones"
        gone = f"shards {lost} of {len(seal.get('sha256') or [])} are gone and cannot be written again: {why}"
        seal = {**seal, "partial": _join(seal.get("partial"), gone)}
    elif not same and not seal.get("partial"):
        # The verdict below rests on this read; the sealed rows are what was kept: say that they differ, and why.
        seal = {**seal, "partial": f"the verdict rests on another read than the sealed rows: "
                                   f"{now.partial or 'the output read again gives other rows'}"}
    return Gate(now, seal, None, deletes)


def _k(cm: Obj) -> int:
    shard = (meta(cm).get("annotations") or {}).get(shards.ANNOTATION_SHARD, "0/0")
    return int(shard.split("/")[0]) if shard.split("/")[0].isdigit() else 0


def _join(before: Optional[str], added: str) -> str:  # noqa: UP045 - as above
    return f"{before}; {added}" if before else added
