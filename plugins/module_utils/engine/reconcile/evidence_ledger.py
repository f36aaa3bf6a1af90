"""The Job tier's evidence steps (issue 40): a Job attempt's rows read, sealed and written as shards, crash-safely.

Once the workload is over (Succeeded or Failed) and before the Job's terminal condition is written:

1. no seal for this attempt: the rows are computed from the workload pods' logs (the driver reads them when
   `needs_log` names them), encoded in their fixed order, the seal written in a status write, and every shard
   ConfigMap created after it in the same Step;
2. a shard the seal names is missing: the rows are computed again and the missing shards created: equal rows
   give equal bytes, so the recomputed sha256s must be the seal's; when they are not (the log is gone or
   differs) the seal is marked `partial` with why, and no row is made up;
3. shards of this Job with another attempt's label (a retried group's losing attempt) are deleted;
4. only when every sealed shard exists does the Job move on to its terminal condition (`Gate.step` None).

Killed anywhere, the next pass recomputes the same seal, the same bytes and the same names from the cluster.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

from ..api.actions import Action, Create, Delete, Ref, Step, UpdateStatus
from ..api.objects import json_copy, meta, terminal
from ..api.vocabulary import LABEL_WORKFLOW, WORKFLOW
from ..evidence import shards
from ..evidence.rows import Row, sorted_rows
from ..evidence.sources import Labels, NodeReading, dcgm_tests_gpus, reader_of, rows_of, trainer_words
from ..plan import jobs, workload
from .world import JobWorld

Obj = dict[str, Any]
ITERATION = re.compile(r"-iter-(\d+)$")
TRAINER_CONTAINER = "node"  # the container Trainer runs the trainer's command in


@dataclass
class Read:
    """A Job attempt's output read: the format, each pod's reading, the shards and why the read is partial."""

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


def needs_log(world: JobWorld) -> list[tuple[str, str]]:
    """The (pod, container) logs the driver reads whole for this pass: those of a Job with a reader whose workload
    is over and whose terminal condition is not written yet (the seal, the shards and the verdict rest on them)."""
    job = world.job
    if terminal(job) or reader_of(job) is None or not (job.get("status") or {}).get("workloadRef") \
            or not over(world):
        return []
    return [(pod, container) for pod, container, _node in targets(world.pods)]


def _labels(job: Obj, number: int) -> Labels:
    name = meta(job).get("name", "")
    found = ITERATION.search(name)
    return Labels(str((meta(job).get("labels") or {}).get(LABEL_WORKFLOW, "")), int(found[1]) if found else 1, name,
                  number)


def read(world: JobWorld, fmt: str, number: int) -> Read:
    """Every worker pod's output read with `fmt`, the rows merged in their fixed order and encoded."""
    labels = _labels(world.job, number)
    found = targets(world.pods)
    gpu_tests = dcgm_tests_gpus(trainer_words(world.job))
    readings = [rows_of(fmt, world.evidence_logs.get(f"{pod}/{container}"), node, world.gpus_per_node,
                        world.skip_is_failure, labels, pod, gpu_tests) for pod, container, node in found]
    reasons = [r.partial for r in readings if r.partial]
    if not found:
        reasons.append("no pod of the workload was left to read its output from")
    rows: list[Row] = sorted_rows([row for r in readings for row in r.rows])
    return Read(fmt, readings, shards.encode(rows), "; ".join(reasons) or None)


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
    fmt = reader_of(job)
    if fmt is None:
        return None
    number = attempt(job)
    now = read(world, fmt, number)
    deletes: list[Action] = [_delete(cm) for cm in world.shards.values() if shards.attempt_of(cm) != number]
    seal = (job.get("status") or {}).get("evidence")
    if not seal or seal.get("attempt") != number:
        seal = shards.seal(number, now.encoded, now.partial)
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
