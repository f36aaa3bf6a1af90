"""A Workflow's stored evidence read back: its shard ConfigMaps, its Jobs' seals and its own totals, checked against
each other (engine/evidence/shards.py is the format).

The shards are found by their labels (`cre.certification/evidence=rows,cre.certification/workflow=<wf>`), listed as
metadata only (a shard's bytes are up to 1 MiB: the list of a large Workflow's would not fit in memory), then read
one at a time in a fixed order: Jobs in natural name order, then attempt, then k. Only the attempt a Job's seal
names counts; another attempt's shards, or a live Job's with no seal, are ignored and reported. A Job that is
gone (an earlier iteration's, deleted when the next one started) took its seal with it: its last attempt's shards
count, checked against their own annotations and, summed, against the Workflow's `earlierIterations`. Every way the shards
and the seals disagree is one line in `problems`: a shard missing, an extra one, a sha256 that differs (from the
annotation or from the seal), a row count that differs from the seal.
"""
from __future__ import annotations

import hashlib
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..engine.api.actions import Ref
from ..engine.api.naming import natural
from ..engine.evidence import shards
from ..kube.rest import Kube

Obj = dict[str, Any]
# The API's metadata-only answer to a list (PartialObjectMetadataList): labels and annotations, no binaryData.


@dataclass(frozen=True)
class ShardRef:
    """One counted shard: its ConfigMap, whose attempt and which of how many, and what its annotations say."""

    name: str
    job: str
    attempt: int
    k: int
    rows: int
    sha256: str


@dataclass
class WorkflowEvidence:
    """What one Workflow stored: its `status.evidence`, its Jobs' seals, the shards that count (in order), and
    what does not match (`problems`) or was left out (`ignored`). `problems` grows as the shards are read."""

    namespace: str
    workflow: str
    status: Obj | None
    seals: dict[str, Obj]
    shards: list[ShardRef] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    # What the shards of Jobs that are gone (earlier iterations') hold: checked against earlierIterations.
    earlier: dict[str, int] = field(default_factory=lambda: {"rows": 0, "shards": 0})

    @property
    def stored(self) -> bool:
        """Whether the Workflow or any of its Jobs has `status.evidence` (what a cluster shows of a reader)."""
        return self.status is not None or bool(self.seals)

    def final(self) -> bool:
        return (self.status or {}).get("final") is True


def read(kube: Kube, workflow: Obj, jobs: dict[str, Obj]) -> WorkflowEvidence:
    """The stored evidence of `workflow` (`jobs`: its Jobs by name); no request when nothing is sealed."""
    meta = workflow.get("metadata") or {}
    seals = {name: seal for name, job in jobs.items() if (seal := (job.get("status") or {}).get("evidence"))}
    out = WorkflowEvidence(meta.get("namespace") or "default", meta.get("name", ""),
                           (workflow.get("status") or {}).get("evidence"), seals)
    if not out.stored:
        return out
    found: dict[str, list[Obj]] = {}
    for item in kube.list_metadata("v1", "ConfigMap", out.namespace,
                                   f"{shards.SELECTOR},{shards.LABEL_WORKFLOW}={out.workflow}"):
        labels = item.get("labels") or {}
        found.setdefault(labels.get(shards.LABEL_JOB, ""), []).append(item)
    for job in sorted(set(seals) | set(found), key=natural):
        if job in seals or job in jobs:
            _match(out, job, seals.get(job), found.get(job, []))
        else:
            _earlier(out, job, found[job])
    _check_status(out)
    return out


def _earlier(out: WorkflowEvidence, job: str, items: list[Obj]) -> None:
    """The shards of a Job that is gone: a Job of a completed iteration, deleted when the next one started, whose
    seal went with it (the Workflow keeps its sums in `status.evidence.earlierIterations`). Its last attempt's
    shards count, checked against their own annotations: shards 1..K, each saying K, the bytes their sha256."""
    attempts = {a for item in items if (a := shards.attempt_of({"metadata": item})) is not None}
    if not attempts:
        out.problems.append(f"ConfigMaps of Job {job}: no attempt label reads as a number")
        return
    last = max(attempts)
    mine = [i for i in items if shards.attempt_of({"metadata": i}) == last]
    for item in items:
        if item not in mine:
            out.ignored.append(f"ConfigMap {out.namespace}/{item.get('name', '')}: attempt "
                               f"{(item.get('labels') or {}).get(shards.LABEL_ATTEMPT)} of Job {job}, whose last is "
                               f"{last}")
    positions = {p for item in mine if (p := _position(item)) is not None}
    total = max((p[1] for p in positions), default=0)
    if positions != {(k, total) for k in range(1, total + 1)} or len(mine) != total:
        out.problems.append(f"Job {job} (an earlier iteration's): its shards of attempt {last} are "
                            f"{sorted(positions)}, not 1..{total} of {total}")
        return
    for item in sorted(mine, key=lambda i: (_position(i) or (0, 0))[0]):
        annotations = item.get("annotations") or {}
        rows = annotations.get(shards.ANNOTATION_ROWS, "")
        ref = ShardRef(item.get("name", ""), job, last, (_position(item) or (0, 0))[0],
                       int(rows) if rows.isdigit() else 0, annotations.get(shards.ANNOTATION_SHA256, ""))
        out.shards.append(ref)
        out.earlier["rows"] += ref.rows
        out.earlier["shards"] += 1


def _position(item: Obj) -> tuple[int, int] | None:
    """(k, K) from a shard's `k/K` annotation; None when it does not read so."""
    k, _slash, total = ((item.get("annotations") or {}).get(shards.ANNOTATION_SHARD) or "").partition("/")
    return (int(k), int(total)) if k.isdigit() and total.isdigit() else None


def _match(out: WorkflowEvidence, job: str, seal: Obj | None, items: list[Obj]) -> None:
    """The shards of `job` that count, checked against its seal; the rest ignored or reported."""
    counted = _of_sealed_attempt(out, job, seal, items)
    if seal is not None:
        _check_seal(out, job, seal, counted)


def _of_sealed_attempt(out: WorkflowEvidence, job: str, seal: Obj | None, items: list[Obj]) -> dict[int, Obj]:
    """k -> the shard of the attempt `seal` names; other attempts' (or all, with no seal) are ignored."""
    attempt = seal.get("attempt") if seal else None
    counted: dict[int, Obj] = {}
    for item in sorted(items, key=lambda i: natural(i.get("name", ""))):
        name, labels = item.get("name", ""), item.get("labels") or {}
        if seal is None:
            out.ignored.append(f"ConfigMap {out.namespace}/{name}: Job {job} has no seal")
        elif str(labels.get(shards.LABEL_ATTEMPT)) != str(attempt):
            out.ignored.append(f"ConfigMap {out.namespace}/{name}: attempt {labels.get(shards.LABEL_ATTEMPT)}, "
                               f"Job {job}'s seal is of attempt {attempt}")
        elif (position := _position(item)) is None:
            out.problems.append(f"ConfigMap {out.namespace}/{name}: annotation {shards.ANNOTATION_SHARD} is not k/K")
        elif position[0] in counted:
            out.problems.append(f"ConfigMap {out.namespace}/{name}: a second shard {position[0]} of Job {job}")
        else:
            counted[position[0]] = item
    return counted


def _check_seal(out: WorkflowEvidence, job: str, seal: Obj, counted: dict[int, Obj]) -> None:
    """Shards 1..K of the seal each there, none beyond, each with the seal's sha256, their rows the seal's."""
    attempt = int(seal.get("attempt") or 0)
    expected, sums = int(seal.get("shards") or 0), list(seal.get("sha256") or [])
    holds = 0
    for k in sorted(set(counted) | set(range(1, expected + 1))):
        name = shards.shard_name(job, attempt, k)
        item = counted.get(k)
        if item is None:
            out.problems.append(f"ConfigMap {out.namespace}/{name} is missing: Job {job}'s seal counts {expected} "
                                f"shards")
            continue
        annotations = item.get("annotations") or {}
        total = (_position(item) or (0, 0))[1]
        sha = annotations.get(shards.ANNOTATION_SHA256, "")
        if k > expected:
            out.problems.append(f"ConfigMap {out.namespace}/{item.get('name')} is extra: Job {job}'s seal counts "
                                f"{expected} shards")
            continue
        if total != expected:
            out.problems.append(f"ConfigMap {out.namespace}/{item.get('name')} says shard {k}/{total}, Job {job}'s "
                                f"seal counts {expected}")
        if k > len(sums) or sha != sums[k - 1]:
            out.problems.append(f"ConfigMap {out.namespace}/{item.get('name')}: sha256 {sha or 'absent'} is not "
                                f"the one Job {job}'s seal gives shard {k}")
        rows = annotations.get(shards.ANNOTATION_ROWS, "")
        holds += int(rows) if rows.isdigit() else 0
        out.shards.append(ShardRef(item.get("name", ""), job, attempt, k, int(rows) if rows.isdigit() else 0, sha))
    if holds != int(seal.get("rows") or 0):
        out.problems.append(f"Job {job}: its shards hold {holds} rows, its seal says {seal.get('rows')}")


def totals(seals: Iterable[tuple[str, Obj]]) -> Obj:
    """The sums over (Job name, seal) pairs, as a Workflow's `status.evidence` carries them (without `final`)."""
    out: Obj = {"rows": 0, "shards": 0, "jobs": 0, "truncated": 0, "partial": []}
    for job, seal in seals:
        out["rows"] += int(seal.get("rows") or 0)
        out["shards"] += int(seal.get("shards") or 0)
        out["jobs"] += 1
        out["truncated"] += len(seal.get("truncated") or [])
        if seal.get("partial"):
            out["partial"].append(f"{job}: {seal['partial']}")
    return out


def _check_status(out: WorkflowEvidence) -> None:
    """The Workflow's own totals against its Jobs' seals."""
    if out.status is None:
        out.problems.append(f"Workflow {out.namespace}/{out.workflow} has no status.evidence, yet its Jobs are sealed")
        return
    summed = totals(sorted(out.seals.items(), key=lambda s: natural(s[0])))
    earlier = out.status.get("earlierIterations") or {}
    for key in ("rows", "shards", "jobs", "truncated"):
        if out.status.get(key) != summed[key] + int(earlier.get(key) or 0):
            out.problems.append(f"Workflow {out.namespace}/{out.workflow}: status.evidence.{key} is "
                                f"{out.status.get(key)}, its Jobs' seals sum to {summed[key]}"
                                + (f" and its earlier iterations' to {earlier.get(key) or 0}" if earlier else ""))
    for key in ("rows", "shards"):
        if int(earlier.get(key) or 0) != out.earlier[key]:
            out.problems.append(f"Workflow {out.namespace}/{out.workflow}: status.evidence.earlierIterations.{key} "
                                f"is {earlier.get(key) or 0}, the shards of its earlier iterations' Jobs hold "
                                f"{out.earlier[key]}")


def counted(kube: Kube, evidence: WorkflowEvidence) -> Iterator[tuple[ShardRef, bytes]]:
    """Each counted shard with its bytes, in order, one held at a time. A shard gone, or whose bytes do not give
    its sha256, is left out and reported in `evidence.problems`."""
    for ref in evidence.shards:
        cm = kube.get(Ref("v1", "ConfigMap", evidence.namespace, ref.name))
        data = shards.shard_bytes(cm) if cm is not None else None
        if data is None:
            evidence.problems.append(f"ConfigMap {evidence.namespace}/{ref.name} is missing or holds no "
                                     f"{shards.DATA_KEY}")
            continue
        actual = hashlib.sha256(data).hexdigest()
        if actual != ref.sha256:
            evidence.problems.append(f"ConfigMap {evidence.namespace}/{ref.name}: its bytes' sha256 is {actual}, its "
                                     f"annotation and Job {ref.job}'s seal say {ref.sha256}")
            continue
        yield ref, data


def shard_data(kube: Kube, evidence: WorkflowEvidence) -> Iterator[bytes]:
    """The counted shards' bytes, in order (what a bundle is written from)."""
    for _ref, data in counted(kube, evidence):
        yield data


def rows(kube: Kube, evidence: WorkflowEvidence) -> Iterator[Obj]:
    """Every row of the counted shards, in order; a shard whose rows do not read (or count) as annotated is
    reported in `evidence.problems` (the rows read before that are kept: a report says what was read)."""
    for ref, data in counted(kube, evidence):
        count = 0
        try:
            for row in shards.decode(data):
                count += 1
                yield row
        except (zlib.error, ValueError) as err:
            evidence.problems.append(f"ConfigMap {evidence.namespace}/{ref.name}: row {count + 1} does not read "
                                     f"({err})")
            continue
        if count != ref.rows:
            evidence.problems.append(f"ConfigMap {evidence.namespace}/{ref.name}: holds {count} rows, annotated "
                                     f"{ref.rows}")
