"""The shard format: deterministic bytes, the size limits, truncation, the seal and the ConfigMap."""
from __future__ import annotations

import gzip
import hashlib
import json
import random
import threading
import zlib

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import shards
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.rows import Row


def _rows(n: int, seed: int = 1) -> list[Row]:
    rnd = random.Random(seed)
    return [Row(f"node-{i // 800:03d}", "gpu", (i // 100) % 8, f"GPU-{rnd.getrandbits(64):016x}", "gemm",
                "tflops", round(rnd.uniform(500, 700), 3), "TFLOPS", "pass", rnd.choice(["", "ok", "steady"]),
                sample=i % 100, time=f"2026-12-07T00:{i % 60:02d}:00Z", workflow="wf", iteration=0, job="j", attempt=1)
            for i in range(n)]


def test_equal_rows_give_equal_bytes_and_read_back_in_order() -> None:
    rows = _rows(500)
    first, second = shards.encode(rows), shards.encode(rows)
    assert [s.data for s in first.shards] == [s.data for s in second.shards]
    assert first.rows == 500 and len(first.shards) == 1
    assert first.shards[0].sha256 == hashlib.sha256(first.shards[0].data).hexdigest()
    assert list(shards.decode(first.shards[0].data)) == [r.to_dict() for r in rows]
    # A standard gzip reader reads it too: the NDJSON a user can check with zcat.
    assert gzip.decompress(first.shards[0].data).decode().splitlines()[0].startswith('{"node":"node-000"')


def test_a_new_shard_starts_past_768_kib_and_none_passes_the_configmap_limit() -> None:
    encoded = shards.encode(_rows(60_000))
    assert len(encoded.shards) >= 2
    assert all(len(s.data) <= shards.CONFIGMAP_BYTES for s in encoded.shards)
    assert all(len(s.data) >= shards.SHARD_BYTES for s in encoded.shards[:-1])
    assert sum(s.rows for s in encoded.shards) == encoded.rows == 60_000
    back = [row for s in encoded.shards for row in shards.decode(s.data)]
    assert back == [r.to_dict() for r in _rows(60_000)]


def test_a_row_over_256_kib_compressed_is_dropped_and_listed() -> None:
    rnd = random.Random(7)
    noise = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _n in range(400_000))
    big = Row("n1", "gpu", 3, None, "memory", "result", "Fail", None, "fail", noise)
    small = Row("n1", "gpu", 4, None, "memory", "result", "Pass", None, "pass", "")
    encoded = shards.encode([big, small])
    assert encoded.rows == 1 and [r["index"] for r in shards.decode(encoded.shards[0].data)] == [4]
    [dropped] = encoded.truncated
    assert dropped["index"] == 3 and dropped["test"] == "memory" and dropped["compressedBytes"] > shards.ROW_BYTES


def test_a_long_row_that_compresses_well_is_kept() -> None:
    row = Row("n1", "gpu", 0, None, "memory", "result", "Fail", None, "fail", "x" * 400_000)
    assert shards.encode([row]).rows == 1


def test_no_rows_is_zero_rows_and_no_shard_and_the_seal_says_so() -> None:
    encoded = shards.encode([])
    assert encoded.shards == [] and encoded.rows == 0
    assert shards.seal(1, encoded) == {"attempt": 1, "rows": 0, "shards": 0, "sha256": []}
    assert shards.seal(2, encoded, partial="log unreadable")["partial"] == "log unreadable"


def test_the_configmap_carries_its_selector_labels_counts_and_bytes() -> None:
    encoded = shards.encode(_rows(10))
    wf = {"metadata": {"name": "wf", "namespace": "ns", "uid": "u-1"}}
    cm = shards.configmap(wf, "wf-g1", 2, 1, 1, encoded.shards[0])
    meta = cm["metadata"]
    assert meta["name"] == "wf-g1-evidence-2-1" and meta["namespace"] == "ns"
    assert meta["labels"] == {"cre.certification/evidence": "rows", "cre.certification/workflow": "wf",
                              "cre.certification/job": "wf-g1", "cre.certification/attempt": "2"}
    assert meta["annotations"]["cre.certification/evidence-shard"] == "1/1"
    assert meta["annotations"]["cre.certification/evidence-rows"] == "10"
    assert meta["ownerReferences"][0]["uid"] == "u-1" and meta["ownerReferences"][0]["kind"] == "Workflow"
    assert shards.shard_bytes(cm) == encoded.shards[0].data and shards.attempt_of(cm) == 2


def test_a_cut_shard_is_refused_not_read_short() -> None:
    data = shards.encode(_rows(50)).shards[0].data
    with pytest.raises(zlib.error):
        list(shards.decode(data[: len(data) // 2]))


def test_a_line_s_component_is_read_without_parsing_it_even_when_a_string_mimics_the_key() -> None:
    tricky = Row('n,"component":"step', "link", 0, None, None, "state", "down", None, "fail", ',"component":"group"')
    text = shards.line(tricky)
    assert shards.component_of(text) == "link"
    assert shards.component_of(b'{"node":"n"}\n') is None
    data = shards.encode([tricky, *_rows(3000)]).shards[0].data
    assert b"".join(shards.blocks(data)) == gzip.decompress(data)


@pytest.mark.parametrize(("detail", "count"), [("noise", 3_000), ("same", 60_000)])
def test_shards_fill_to_768_kib_and_stay_under_the_limit_whatever_deflate_holds_back(detail: str, count: int) -> None:
    # Noise barely compresses (deflate emits as it goes); one line again and again compresses 100-fold (deflate
    # holds a whole block back): either way every shard but the last passes 768 KiB and none passes 1 MiB.
    rnd = random.Random(3)
    same = rnd.randbytes(1000).hex()
    rows = [Row("n1", "gpu", i % 8, None, "gemm", "tflops", 600.5, "TFLOPS", "pass",
                rnd.randbytes(1000).hex() if detail == "noise" else same, sample=i) for i in range(count)]
    encoded = shards.encode(rows)
    assert len(encoded.shards) >= 2 and encoded.rows == count
    assert all(len(s.data) <= shards.CONFIGMAP_BYTES for s in encoded.shards)
    assert all(len(s.data) >= shards.SHARD_BYTES for s in encoded.shards[:-1])


@pytest.mark.parametrize("value", [None, 0, -3, 10**30, 1.0, 0.1, -2.5e-308, 1e300, float("nan"), float("inf"),
                                   float("-inf"), True, False, "", "50%", 'q"uo\\te\n\t\x01', "naïve ∑ 🚀"])
def test_a_line_is_what_json_dumps_writes_for_every_kind_of_value(value: object) -> None:
    # The encoder writes a row's fixed fields once and its sample's fields per row: byte for byte json.dumps.
    encode = shards.LineEncoder()
    for row in (Row("n%1", "gpu", 0, None, "t", "m", value, "%s", "pass", "d", sample=1, job="j"),
                Row("n%1", "gpu", 0, None, "t", "m", 1.5, "%s", "pass", value if isinstance(value, str) else "x",
                    sample=2, time=value if isinstance(value, str) else None, job="j"),
                Row("n", "link", None, "GPU-1", None, "state", "down", None, "fail", "", iteration=value if isinstance(
                    value, int) else None, attempt=2)):
        expected = json.dumps(row.to_dict(), separators=(",", ":"), ensure_ascii=False) + "\n"
        assert encode(row) == expected.encode() == shards.line(row)


def test_the_deflating_thread_changes_no_byte_and_is_gone_after_encode() -> None:
    # Deflate runs one batch behind on a thread of its own: the shard is still the one-thread stream of its lines.
    rows = _rows(20_000)
    encoded = shards.encode(rows)
    [shard] = encoded.shards
    lines = b"".join(shards.line(r) for r in rows)
    zipper = zlib.compressobj(shards.LEVEL, zlib.DEFLATED, 31, shards.MEM_LEVEL, zlib.Z_FILTERED)
    assert len(lines) > 4 * shards.BATCH_BYTES   # several batches handed over
    assert shard.data == zipper.compress(lines) + zipper.flush()
    assert not [t for t in threading.enumerate() if t.name.startswith("deflate")]


def test_a_row_that_fails_on_the_way_stops_the_deflating_thread_too() -> None:
    unwritable = {"node": "n1", "value": object()}   # no JSON for it
    with pytest.raises(TypeError):
        shards.encode([*_rows(5_000), unwritable])
    assert not [t for t in threading.enumerate() if t.name.startswith("deflate")]


def test_a_shard_of_many_blocks_streams_whole_lines_that_make_the_ndjson() -> None:
    data = shards.encode(_rows(30_000)).shards[0].data
    blocks = list(shards.blocks(data))
    assert len(blocks) >= 3 and all(block.endswith(b"\n") for block in blocks)
    assert b"".join(blocks) == gzip.decompress(data)
