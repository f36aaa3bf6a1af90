"""The results bundle: a folder a user keeps and checks later, written so that a manifest only ever vouches for files
that are whole.

`write_bundle` writes `results.json` (the report, as report.json), `components/<component>.ndjson` (every row of
that component, streamed from the shards: one shard and one row in memory at a time), `snapshots/<node>.json` (each
node-drift node's configuration as collected, what golden_generate reads), `truncation.json` (the rows
dropped and the reads that lost rows), `schema/evidence-row.schema.json` and, last, `manifest.json` (each file's
path, sha256 and size, the file count, the row totals). Any manifest already there is removed first, and every file
goes to `<path>.tmp`, is fsynced and renamed (then the folder is fsynced): a crash at any point leaves either no
manifest or one whose files are all there. When the shards read do not add up to the seals, no manifest is written
(BundleRefused). Equal inputs give equal bytes: the JSON is sorted and indented, the rows keep the shards' order.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from contextlib import closing
from itertools import groupby
from pathlib import Path
from typing import IO, Any

from ..engine.api.naming import natural
from ..engine.evidence import shards as shard_format
from ..engine.evidence.rows import COMPONENTS, row_schema
from ..kube.rest import Kube
from . import evidence_store
from .ahead import ahead
from .errors import DriverError
from .evidence_store import WorkflowEvidence

FORMAT_VERSION = 1
MANIFEST = "manifest.json"
RESULTS = "results.json"
TRUNCATION = "truncation.json"
COMPONENTS_DIR = "components"
SCHEMA = "schema/evidence-row.schema.json"
SNAPSHOTS_DIR = "snapshots"
# A node-drift node's snapshot row (engine/evidence/sources.py: test configuration, metric snapshot), as its line
# spells it in the schema's field order.
SNAPSHOT_ROW = b'"test":"configuration","metric":"snapshot",'
TOTALS = ("rows", "shards")  # what the shards read must match in the seals' totals
DEPTH = 2  # blocks unzipped ahead of the one written (a block: what 64 KiB of gzip holds, some MiB)

Obj = dict[str, Any]


class BundleRefused(DriverError):
    """The shards do not add up to the seals: no manifest was written."""


def json_text(data: Any) -> str:
    """The bundle's (and report.json's) JSON: sorted keys, indented, a final newline; the same data, the same bytes."""
    return json.dumps(data, indent=2, sort_keys=True) + "\n"


class _Written:
    """A file being written to `<path>.tmp`, hashed as it goes; `close` fsyncs and renames it into place."""

    def __init__(self, directory: Path, relative: str) -> None:
        self.relative, self.path = relative, directory / relative
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = self.path.with_name(self.path.name + ".tmp")
        self.handle: IO[bytes] = open(self.tmp, "wb")  # noqa: SIM115 - closed in close() or discard()
        self.sha, self.size = hashlib.sha256(), 0

    def write(self, data: bytes) -> None:
        self.handle.write(data)
        self.sha.update(data)
        self.size += len(data)

    def close(self) -> Obj:
        self.handle.flush()
        os.fsync(self.handle.fileno())
        self.handle.close()
        os.replace(self.tmp, self.path)
        fsync_dir(self.path.parent)
        return {"path": self.relative, "sha256": self.sha.hexdigest(), "size": self.size}

    def discard(self) -> None:
        self.handle.close()
        self.tmp.unlink(missing_ok=True)


def fsync_dir(directory: Path) -> None:
    """Make a rename in `directory` durable."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _whole(directory: Path, relative: str, text: str) -> Obj:
    out = _Written(directory, relative)
    out.write(text.encode("utf-8"))
    return out.close()


def remove_manifest(directory: Path) -> None:
    """Take away a manifest, so that it never vouches for files about to change."""
    path = directory / MANIFEST
    if path.exists():
        path.unlink()
        fsync_dir(directory)


def _components(directory: Path, shards: Iterable[bytes], snapshots: dict[str, bytes]
                ) -> tuple[dict[str, _Written], int, dict[str, int]]:
    """The component files written from the shards' rows (not yet renamed), the shards read, the rows per
    component; each node-drift snapshot row's snapshot put in `snapshots` (node -> its JSON file's bytes)."""
    files: dict[str, _Written] = {}
    count_shards, count_rows = 0, dict[str, int]()
    try:
        # The next blocks are fetched and unzipped by a thread while this one is written: zlib, hashlib and file
        # writes let go of the GIL, so the two overlap.
        with closing(ahead(_unzipped(shards), DEPTH)) as blocks:
            for count_shards, block in blocks:
                for component, run, count in _runs(block):
                    if component not in COMPONENTS:  # it names a file: only the schema's components
                        raise BundleRefused(f"a row of shard {count_shards} has component {component!r}, not one of "
                                            f"{', '.join(COMPONENTS)}")
                    if component not in files:
                        files[component] = _Written(directory, f"{COMPONENTS_DIR}/{component}.ndjson")
                        count_rows[component] = 0
                    files[component].write(run)
                    count_rows[component] += count
                    for text in run.splitlines() if SNAPSHOT_ROW in run else ():
                        if SNAPSHOT_ROW in text:  # a later run of a node (an iteration) replaces its earlier one
                            row = json.loads(text)
                            snapshots[row["node"]] = json_text(json.loads(row["value"])).encode()
    except BaseException:
        for written in files.values():
            written.discard()
        raise
    return files, count_shards, count_rows


def _unzipped(shards: Iterable[bytes]) -> Iterator[tuple[int, bytes]]:
    """Each shard's NDJSON in blocks of whole lines, with the shard's number (1-based); a shard of no line as one
    empty block, so that every shard read is counted."""
    for k, data in enumerate(shards, 1):
        empty = True
        for block in shard_format.blocks(data):
            empty = False
            yield k, block
        if empty:
            yield k, b""


def _runs(block: bytes) -> Iterator[tuple[str | None, bytes, int]]:
    """A block's lines in runs of one component: the component as its lines spell it, the lines, how many.

    The lines go through as the shard holds them (ours: sha-checked against the seal), split by component, never
    parsed and written again, which would be most of a bundle's time. A block of one component, the common case,
    is not split at all: each of our lines has one `,"component":"` key (inside a JSON string a quote is escaped),
    so when the first line's component is named as often as there are lines, it is every line's."""
    first = shard_format.component_of(block)
    count = block.count(b"\n")
    if first is not None and block.endswith(b"\n") and \
            block.count(b',"component":"' + first.encode() + b'"') == count:
        yield first, block, count
        return
    for component, run in groupby(block.splitlines(keepends=True), shard_format.component_of):
        lines = list(run)
        yield component, b"".join(lines), len(lines)


def write_bundle(directory: Path, report: Obj, shards: Iterable[bytes], seals: Obj, truncation: list[Obj]) -> Obj:
    """Write the bundle of `report` into `directory` and return its manifest. `shards`: every counted shard's bytes
    in order; `seals`: the seals' totals (`rows`, `shards`, `jobs`, `truncated`, ...); `truncation`: per sealed Job
    its dropped rows and partial read. BundleRefused, and no manifest, when the shards do not add up to the seals."""
    directory.mkdir(parents=True, exist_ok=True)
    remove_manifest(directory)
    snapshots: dict[str, bytes] = {}
    files, count_shards, by_component = _components(directory, shards, snapshots)
    read = {"rows": sum(by_component.values()), "shards": count_shards}
    if differ := [f"{key}: {read[key]} read, the seals count {seals.get(key, 0)}" for key in TOTALS
                  if read[key] != seals.get(key, 0)]:
        for written in files.values():
            written.discard()
        raise BundleRefused("; ".join(differ))
    entries = [_whole(directory, RESULTS, json_text(report))]
    for component in sorted(files):
        entries.append(files[component].close())
    _drop_stale_components(directory, set(files))
    for node in sorted(snapshots):
        entries.append(_whole(directory, f"{SNAPSHOTS_DIR}/{node}.json", snapshots[node].decode()))
    _drop_stale(directory / SNAPSHOTS_DIR, {f"{node}.json" for node in snapshots})
    entries.append(_whole(directory, TRUNCATION, json_text(truncation)))
    entries.append(_whole(directory, SCHEMA, json_text(row_schema())))
    entries.sort(key=lambda e: e["path"])
    manifest = {"formatVersion": FORMAT_VERSION, "fileCount": len(entries), "files": entries,
                "totals": {**{k: seals.get(k, 0) for k in ("rows", "shards", "jobs", "truncated")},
                           "components": dict(sorted(by_component.items()))}}
    _whole(directory, MANIFEST, json_text(manifest))
    return manifest


def _drop_stale(folder: Path, kept: set[str]) -> None:
    """An earlier bundle's snapshot of a node this run has none of would lie about this one."""
    for path in folder.iterdir() if folder.is_dir() else ():
        if path.name not in kept:
            path.unlink()


def _drop_stale_components(directory: Path, kept: set[str]) -> None:
    """An earlier bundle's component file with no rows now would lie about this one; a `.tmp` left by a write that
    was killed is no file of any bundle."""
    folder = directory / COMPONENTS_DIR
    for path in folder.iterdir() if folder.is_dir() else ():
        if path.name.endswith(".tmp") or (path.suffix == ".ndjson" and path.stem not in kept):
            path.unlink()


def from_cluster(kube: Kube, directory: Path, report: Obj, stored: list[WorkflowEvidence]) -> Obj:
    """The bundle of `report` with the evidence of its Workflows (`stored`, in category order), written from the
    shards in the cluster; its manifest. DriverError, and no manifest, when a Workflow's evidence is not final
    or its shards do not match its seals."""
    sealed = [e for e in stored if e.stored]
    problems = [f"Workflow {e.namespace}/{e.workflow} has no final evidence yet (status.evidence.final is not true)"
                for e in sealed if not e.final()]
    problems += [p for e in sealed for p in e.problems]
    if not problems:
        totals = evidence_store.totals((job, seal) for e in sealed for job, seal in _in_order(e.seals))
        truncation = [entry for e in sealed for entry in _truncation(e)]
        data = (chunk for e in sealed for chunk in evidence_store.shard_data(kube, e))
        try:
            return write_bundle(directory, report, data, totals, truncation)
        except BundleRefused as err:
            problems = [p for e in sealed for p in e.problems] or [f"the shards read do not match the seals ({err})"]
    elif directory.is_dir():
        remove_manifest(directory)
    raise DriverError(f"bundle_dir: no manifest written to {directory}: {'; '.join(problems)}; run "
                      "certification_results again once the run has ended (a Workflow still running is not final), "
                      "or run the certification again if its evidence in the cluster is damaged")


def _truncation(stored: WorkflowEvidence) -> list[Obj]:
    """Per Job of the Workflow: the rows its seal dropped and why its read is partial; and each Job the Workflow's
    totals name as partial without a seal to say it (one that ran and never sealed, an earlier iteration's)."""
    out = [{"workflow": stored.workflow, "job": job, "attempt": seal.get("attempt"),
            "truncated": list(seal.get("truncated") or []), "partial": seal.get("partial")}
           for job, seal in _in_order(stored.seals) if seal.get("truncated") or seal.get("partial")]
    for entry in (stored.status or {}).get("partial") or []:
        job, _sep, why = str(entry).partition(": ")
        if job not in stored.seals:
            out.append({"workflow": stored.workflow, "job": job, "attempt": None, "truncated": [], "partial": why})
    return out


def _in_order(seals: dict[str, Obj]) -> list[tuple[str, Obj]]:
    return sorted(seals.items(), key=lambda s: natural(s[0]))
