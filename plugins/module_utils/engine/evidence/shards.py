"""Evidence shards: rows as gzipped NDJSON in ConfigMap `binaryData`, and the seal that says how many there are.

The format every writer and reader shares (issue 40):
- a shard is one gzip stream (level 6, Z_FILTERED, no name, mtime 0, so equal rows give equal bytes and sha256)
  of NDJSON lines, one row each (`line`), in the rows' fixed order (rows.sort_key);
- a new shard starts once the compressed bytes pass SHARD_BYTES, or earlier when the next batch of lines could
  push the shard past CONFIGMAP_BYTES (the API's limit on a ConfigMap's data, decoded); a row over ROW_BYTES
  compressed is dropped and listed in `truncated`, never cut;
- shard k (1-based) of a Job attempt is ConfigMap `<job>-evidence-<attempt>-<k>`, labelled for a selector
  (LABEL_EVIDENCE=rows, LABEL_WORKFLOW, LABEL_JOB, LABEL_ATTEMPT) and annotated with its row count, sha256 and
  `k/K`;
- the seal (Job `status.evidence`) is written before the first shard: the attempt, the row and shard counts, each
  shard's sha256, the truncated rows and, for a read that lost rows, `partial` (why). Missing (no seal), partial
  (`partial` set) and zero (a seal of 0 rows) stay three states.
"""
from __future__ import annotations

import base64
import hashlib
import json
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from ..api.objects import controller_reference
from ..api.vocabulary import API_VERSION, WORKFLOW
from .one_behind import OneBehind
from .rows import FIELDS, Row

SHARD_BYTES = 768 * 1024
ROW_BYTES = 256 * 1024
CONFIGMAP_BYTES = 1024 * 1024
LEVEL = 6
DATA_KEY = "rows.ndjson.gz"

LABEL_EVIDENCE = "cre.certification/evidence"
EVIDENCE_ROWS = "rows"
LABEL_WORKFLOW = "cre.certification/workflow"
LABEL_JOB = "cre.certification/job"
LABEL_ATTEMPT = "cre.certification/attempt"
ANNOTATION_ROWS = "cre.certification/evidence-rows"
ANNOTATION_SHA256 = "cre.certification/evidence-sha256"
ANNOTATION_SHARD = "cre.certification/evidence-shard"
SELECTOR = f"{LABEL_EVIDENCE}={EVIDENCE_ROWS}"

# Deflate's worst case over stored input (5 bytes per 16 KiB block) and the gzip trailer, with room to spare.
_OVERHEAD = 64
# What deflate (memLevel 8) can hold back, compressed, after a call returns: one block of at most 16,383 symbols
# of 6 bytes at worst (a match's length and distance codes with their extra bits), its trees, the lookahead of
# 262 bytes not yet coded. Once a shard has more input than this, this (not its input) bounds what is held.
MEM_LEVEL = 8
_HELD = 128 * 1024

Obj = dict[str, Any]


@dataclass(frozen=True)
class Shard:
    data: bytes
    rows: int
    sha256: str


@dataclass
class Encoded:
    """A Job attempt's rows encoded: the shards in order, the row count they hold, the rows dropped."""

    shards: list[Shard] = field(default_factory=list)
    rows: int = 0
    truncated: list[Obj] = field(default_factory=list)


# One encoder for every value json.dumps writes some other way than below: json.dumps builds a new one per call.
_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
_STR = json.encoder.encode_basestring   # C where the interpreter has it: ensure_ascii=False's string encoder
# The row's fields a sample changes (value, detail, sample, time); the others are the same across a component's
# samples, so their JSON is made once per LineEncoder.
_VALUE, _DETAIL, _SAMPLE, _TIME = (FIELDS.index(name) for name in ("value", "detail", "sample", "time"))
_FIXED_FIELDS = itemgetter(*(n for n in range(len(FIELDS)) if n not in (_VALUE, _DETAIL, _SAMPLE, _TIME)))
_SAMPLE_FIELDS = itemgetter(_VALUE, _DETAIL, _SAMPLE, _TIME)
_CACHED = 4096   # distinct fixed parts a LineEncoder keeps (a Job's rows have a few hundred)
# Lines handed to deflate at once: one call (and one hand-over to its thread) per batch, not one per row. At
# 128 KiB the bound below still lets a shard fill to SHARD_BYTES; larger batches would cut shards short of it.
BATCH_BYTES = 128 * 1024


def _json(value: Any) -> str:
    """One value as json.dumps writes it (compact, ensure_ascii=False)."""
    kind = value.__class__
    if kind is str:
        return _STR(value)
    if value is None:
        return "null"
    if kind is int:
        return int.__repr__(value)
    if kind is float and value - value == 0:   # finite: NaN and the infinities go to json as json spells them
        return float.__repr__(value)
    return _ENCODE(value)


def _fixed(row: Row) -> tuple[str, str, str]:
    """A row's JSON around its sample's fields: up to value, between value and detail, after time."""
    text = [f"{_STR(name)}:{_json(value)}" for name, value in zip(FIELDS, row)]
    return ("{" + ",".join(text[:_VALUE]) + ',"value":', "," + ",".join(text[_VALUE + 1:_DETAIL]) + ',"detail":',
            "," + ",".join(text[_TIME + 1:]) + "}\n")


class LineEncoder:
    """Rows to NDJSON lines, byte for byte what `json.dumps(row.to_dict(), separators=(",", ":"),
    ensure_ascii=False)` and a newline give, several times faster: a fleet's burn-in writes millions of rows
    (bench/evidence.py). Only the fields a sample changes are encoded per row; the fixed parts are those of the
    row before (rows come in runs of one component's samples) or looked up. (Looked up by value, so rows equal in
    them share one: the schema's integers are ints, never 1.0 or True.)"""

    def __init__(self) -> None:
        self._fixed: dict[tuple[Any, ...], tuple[str, str, str]] = {}
        self._key: tuple[Any, ...] = ()
        self._parts = ("", "", "")

    def __call__(self, row: Row | Obj) -> bytes:
        return next(self.each((row,)))

    def each(self, rows: Iterable[Row | Obj]) -> Iterator[bytes]:
        """The line of each row, in order (a generator: its state in locals, not looked up per row)."""
        key, parts = self._key, self._parts
        for row in rows:
            if row.__class__ is not Row:
                yield (_ENCODE(row) + "\n").encode()
                continue
            fixed = _FIXED_FIELDS(row)
            if fixed != key:
                key, parts = fixed, self._parts_of(fixed, row)
                self._key, self._parts = key, parts
            head, middle, tail = parts
            value, detail, sample, stamp = _SAMPLE_FIELDS(row)
            yield (f'{head}{float.__repr__(value) if value.__class__ is float and value - value == 0 else _json(value)}'
                   f'{middle}{_STR(detail) if detail.__class__ is str else _json(detail)},'
                   f'"sample":{sample if sample.__class__ is int else _json(sample)},'
                   f'"time":{_STR(stamp) if stamp.__class__ is str else _json(stamp)}{tail}').encode()

    def _parts_of(self, fixed: tuple[Any, ...], row: Row) -> tuple[str, str, str]:
        parts = self._fixed.get(fixed)
        if parts is None:
            if len(self._fixed) >= _CACHED:
                self._fixed.clear()
            parts = self._fixed[fixed] = _fixed(row)
        return parts


def line(row: Row | Obj) -> bytes:
    """One NDJSON line: compact JSON, the schema's field order, UTF-8 as is."""
    return LineEncoder()(row)


def _compressor() -> Any:
    # 31: a gzip wrapper, no name, mtime 0. Z_FILTERED: rows are mostly digits, whose short matches cost more bits
    # than their literals; on a burn-in's rows it is 5% smaller and 7% faster than the default strategy.
    return zlib.compressobj(LEVEL, zlib.DEFLATED, 31, MEM_LEVEL, zlib.Z_FILTERED)


def _compressed_size(data: bytes) -> int:
    zipper = _compressor()
    return len(zipper.compress(data)) + len(zipper.flush())


class ShardWriter:
    """Rows in, finished shards out, holding one shard at most: `add_all` returns the shards rows completed,
    `close` the last one (or `stop`, given up on: either stops the deflating thread). Lines go to deflate in batches of
    BATCH_BYTES, and the limits are checked per batch.

    Deflate runs one batch behind, on a thread of its own (OneBehind): zlib lets go of the GIL while it compresses,
    so the next batch's lines are encoded meanwhile; a burn-in's rows are encoded a quarter faster. The calls and
    their order are one thread's, so are the bytes, and each limit is checked on the bytes every batch before made."""

    def __init__(self) -> None:
        self.truncated: list[Obj] = []
        self._line = LineEncoder()
        self._batch: list[bytes] = []
        self._batch_bytes = 0
        self._deflate = OneBehind("deflate")
        self._reset()

    def _reset(self) -> None:
        self._zip = _compressor()
        self._parts: list[bytes] = []
        self._emitted = 0
        self._fed = 0   # raw bytes fed into this shard
        self._rows = 0

    def add_all(self, rows: Iterable[Row | Obj]) -> list[Shard]:
        """The rows in; the shards they completed."""
        done: list[Shard] = []
        batch, size = self._batch, self._batch_bytes
        for data in self._line.each(rows):
            if len(data) > ROW_BYTES and (compressed := _compressed_size(data)) > ROW_BYTES:
                self.truncated.append(_truncated(json.loads(data), compressed))   # the row, as its line holds it
                continue
            batch.append(data)
            size += len(data)
            if size >= BATCH_BYTES:
                self._batch_bytes = size
                done += self._feed()
                batch, size = self._batch, 0
        self._batch_bytes = size
        return done

    def _feed(self) -> list[Shard]:
        """The batch into the shard, after the batch before (`_taken`): a new shard first when this batch could
        push the shard past CONFIGMAP_BYTES."""
        data, rows = b"".join(self._batch), len(self._batch)
        self._batch, self._batch_bytes = [], 0
        done = self._taken()
        held = min(self._fed + _OVERHEAD, _HELD)
        if self._rows and self._emitted + held + len(data) + _OVERHEAD > CONFIGMAP_BYTES - _OVERHEAD:
            done.append(self._finish())
        self._deflate.put(self._zip.compress, data)
        self._rows += rows
        self._fed += len(data)
        return done

    def _taken(self) -> list[Shard]:
        """The batch being deflated taken into the shard; the shard finished once it passes SHARD_BYTES."""
        out = self._deflate.take()
        if out:
            self._parts.append(out)
            self._emitted += len(out)
        return [self._finish()] if self._emitted >= SHARD_BYTES else []

    def close(self) -> list[Shard]:
        """The last shards; none when no row is waiting (an empty attempt has no shard)."""
        try:
            done = self._feed() if self._batch else []
            done += self._taken()
            return done + [self._finish()] if self._rows else done
        finally:
            self.stop()

    def stop(self) -> None:
        """Stop the deflating thread (a writer given up on: an error on the way)."""
        self._deflate.close()

    def _finish(self) -> Shard:
        data = b"".join([*self._parts, self._zip.flush()])
        shard = Shard(data, self._rows, hashlib.sha256(data).hexdigest())
        self._reset()
        return shard


def encode(rows: Iterable[Row | Obj]) -> Encoded:
    """Every shard of `rows` (in the fixed order already: the caller sorts)."""
    writer, out = ShardWriter(), Encoded()
    try:
        out.shards += writer.add_all(rows)
        out.shards += writer.close()
    finally:
        writer.stop()
    out.rows = sum(s.rows for s in out.shards)
    out.truncated = writer.truncated
    return out


def _truncated(row: Obj, size: int) -> Obj:
    keys = ("node", "component", "index", "test", "metric", "sample", "workflow", "iteration", "job", "attempt")
    return {**{k: row.get(k) for k in keys}, "compressedBytes": size,
            "reason": f"row over {ROW_BYTES // 1024} KiB compressed"}


def blocks(data: bytes) -> Iterator[bytes]:
    """One shard's NDJSON in blocks of whole lines, streamed 64 KiB of gzip at a time (a stream that does not end
    cleanly raises zlib.error)."""
    unzip = zlib.decompressobj(31)
    rest = b""
    for start in range(0, len(data), 1 << 16):
        more = unzip.decompress(data[start:start + (1 << 16)])
        cut = more.rfind(b"\n") + 1
        if cut:   # one copy of megabytes, not two (rest + more, then its lines)
            yield b"".join((rest, memoryview(more)[:cut]))
            rest = more[cut:]
        else:
            rest += more
    rest += unzip.flush()
    if not unzip.eof:
        raise zlib.error("the gzip stream ends early")
    if rest:
        yield rest


def decode(data: bytes) -> Iterator[Obj]:
    """The rows of one shard's bytes, streamed (a stream that does not end cleanly raises zlib.error)."""
    for block in blocks(data):
        yield from map(json.loads, block.splitlines())


def component_of(text: bytes) -> str | None:
    """The component of one of our NDJSON lines, without parsing it: the first `,"component":"` is the key (inside
    a JSON string a quote is escaped). None when the line has none."""
    start = text.find(b',"component":"') + 14
    end = text.find(b'"', start) if start >= 14 else -1
    return text[start:end].decode() if end > 0 else None


def seal(attempt: int, encoded: Encoded, partial: str | None = None) -> Obj:
    """The Job's `status.evidence`, written before its first shard."""
    out: Obj = {"attempt": attempt, "rows": encoded.rows, "shards": len(encoded.shards),
                "sha256": [s.sha256 for s in encoded.shards]}
    if encoded.truncated:
        out["truncated"] = encoded.truncated
    if partial:
        out["partial"] = partial
    return out


def shard_name(job: str, attempt: int, k: int) -> str:
    return f"{job}-evidence-{attempt}-{k}"


def configmap(workflow: Obj, job: str, attempt: int, k: int, total: int, shard: Shard) -> Obj:
    """Shard k (1-based) of `total` of a Job attempt, owned by the Workflow (it outlives a retried Job)."""
    meta = workflow.get("metadata") or {}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": shard_name(job, attempt, k),
            "namespace": meta.get("namespace", ""),
            "labels": {LABEL_EVIDENCE: EVIDENCE_ROWS, LABEL_WORKFLOW: meta.get("name", ""), LABEL_JOB: job,
                       LABEL_ATTEMPT: str(attempt)},
            "annotations": {ANNOTATION_ROWS: str(shard.rows), ANNOTATION_SHA256: shard.sha256,
                            ANNOTATION_SHARD: f"{k}/{total}"},
            "ownerReferences": [controller_reference(workflow, WORKFLOW, API_VERSION)],
        },
        "binaryData": {DATA_KEY: base64.b64encode(shard.data).decode("ascii")},
    }


def shard_bytes(cm: Obj) -> bytes | None:
    """A shard ConfigMap's gzip bytes (None when it has none)."""
    encoded = (cm.get("binaryData") or {}).get(DATA_KEY)
    return base64.b64decode(encoded) if encoded else None


def attempt_of(cm: Obj) -> int | None:
    """The attempt a shard ConfigMap belongs to, from its label (None when the label is not a number)."""
    value = ((cm.get("metadata") or {}).get("labels") or {}).get(LABEL_ATTEMPT, "")
    return int(value) if value.isdigit() else None
