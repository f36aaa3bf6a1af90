"""Per-GPU evidence at fleet scale: burn-in logs to rows to shards to a bundle's NDJSON, against gzip alone.

Run from the repo root: `.venv/bin/python bench/evidence.py [--nodes 1000] [--seconds 1800] [--gpus 8]`. The
default is issue 40's scale: 1,000 nodes x 8 GPUs x one window a second x 30 minutes = 14.4 M rows.

- **ours** (a child process of its own, so its peak RSS is its own): per node, the GEMM burn-in harness's log
  (docs/gemm-burn-in-output.md), one 1 s window after another, made before the clock starts for that node (the
  cluster prints it: its making is not ours), read as the certification reads it (`gemm_burn_in.read_log`: the
  strict parser, the rows in the fixed order; one node's rows at most are held, 14,400 at the default) and encoded
  (`shards.encode`), each shard written to a file as the cluster would hold it in a ConfigMap. Then the bundle
  (`bundle.write_bundle`, as certification_results writes it): every shard in order, its lines split by component
  into `components/gpu.ndjson.tmp`, fsynced, renamed, and the manifest.
- **floor** (another child process): `gzip.GzipFile` with its defaults (level 9) over the same NDJSON bytes, read
  from the bundle's file in 1 MiB blocks and compressed into a sink that only counts: what the standard library
  needs to turn those bytes into gzip at all.

Printed: rows, rows/s, seconds and peak RSS of each (resource.getrusage maxrss of the child), the time of each of
ours' stages, the ratio ours/floor, then the targets, one line each: peak RSS <= 300 MB, time <= 2x the floor.
Nothing asserts: this prints. Output goes to `--out` (kept) or a temporary folder (removed).
"""
from __future__ import annotations

import argparse
import gzip
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / ".collections")]

from ansible_collections.cre.certification.plugins.module_utils.driver import bundle  # noqa: E402
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import shards  # noqa: E402
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.gemm_burn_in import (  # noqa: E402
    MARKER,
    read_log,
)

RSS_TARGET_MB = 300
RATIO_TARGET = 2.0
BLOCK = 1 << 20
START = 1_772_445_600   # 2026-03-02T10:00:00Z: fixed, so equal runs write equal bytes


def harness_lines(node: int, seconds: int, gpus: int) -> Iterator[str]:
    """One node's harness log, a line at a time: begin, `seconds` windows of `gpus` records, end. Figures vary by
    node, GPU and window so the rows compress like real ones, not like copies."""
    yield f"{MARKER} begin gpus={gpus} dtype=bf16 m=8192 n=8192 k=8192 window_s=1 warmup_s=60"
    uuids = [f"GPU-{node:08x}-{gpu:04x}-4b1e-9c2d-{node * gpus + gpu:012x}" for gpu in range(gpus)]
    for window in range(seconds):
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(START + window))
        for gpu in range(gpus):
            wobble = (node * 7 + gpu * 13 + window * 3) % 97
            yield (f"{MARKER} window w={window} time={stamp} gpu={gpu} uuid={uuids[gpu]} tflops={590 + wobble / 4:.1f} "
                   f"sm_mhz={1755 + wobble % 40} power_w={650 + wobble / 2:.1f} power_limit_w=700.0 "
                   f"temp_c={60 + wobble % 15} throttle={'sw_power_cap' if wobble > 90 else 'none'} xid=none check=ok")
    yield f"{MARKER} end windows={seconds}"


def ours(nodes: int, seconds: int, gpus: int, out: Path) -> dict:
    shard_dir, components = out / "shards", out / "bundle" / "components"
    shard_dir.mkdir(parents=True, exist_ok=True)
    components.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    rows = partial = 0
    names: list[str] = []
    read_seconds = 0.0
    made = 0.0
    for node in range(nodes):
        begun = time.perf_counter()
        log = "\n".join(harness_lines(node, seconds, gpus))   # what the cluster printed: its making is not ours
        made += time.perf_counter() - begun
        begun = time.perf_counter()
        node_rows, why = read_log(log, f"node-{node:04d}")
        partial += why is not None
        read_seconds += time.perf_counter() - begun
        for k, shard in enumerate(shards.encode(node_rows).shards, 1):
            name = f"{shards.shard_name(f'node-{node:04d}', 1, k)}.gz"
            (shard_dir / name).write_bytes(shard.data)
            names.append(name)
        rows += len(node_rows)
        # One node's log and rows at most are held, as the certification drops a Job's once its shards are made;
        # kept while the next node's are made, two nodes' would be (and the heap they leave behind ages the read).
        del log, node_rows
    sharded = time.perf_counter()
    manifest = bundle.write_bundle(out / "bundle", {"bench": "evidence"},
                                   ((shard_dir / name).read_bytes() for name in names),
                                   {"rows": rows, "shards": len(names), "jobs": nodes, "truncated": 0}, [])
    target = components / "gpu.ndjson"
    written = manifest["totals"]["components"].get("gpu", 0)
    end = time.perf_counter()
    return {"rows": rows, "written": written, "partial": partial, "shards": len(names),
            "shard_bytes": sum((shard_dir / n).stat().st_size for n in names), "ndjson_bytes": target.stat().st_size,
            "seconds": end - start - made, "read_seconds": read_seconds,
            "shard_seconds": sharded - start - made - read_seconds, "made_seconds": made,
            "bundle_seconds": end - sharded, "maxrss_mb": _maxrss_mb()}


class _Count:
    """A file that keeps nothing: it counts what gzip writes."""

    def __init__(self) -> None:
        self.bytes = 0

    def write(self, data: bytes) -> int:
        self.bytes += len(data)
        return len(data)

    def flush(self) -> None:
        """Nothing is held."""


def floor(path: Path) -> dict:
    start = time.perf_counter()
    sink = _Count()
    with open(path, "rb") as source, gzip.GzipFile(fileobj=sink, mode="wb", mtime=0) as zipped:
        while block := source.read(BLOCK):
            zipped.write(block)
    return {"seconds": time.perf_counter() - start, "gzip_bytes": sink.bytes, "maxrss_mb": _maxrss_mb()}


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # KiB on Linux


def _child(*args: str) -> dict:
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"bench child {' '.join(args)} failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", maxsplit=1)[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--seconds", type=int, default=1800, help="windows per GPU (1 s each)")
    parser.add_argument("--gpus", type=int, default=8)
    parser.add_argument("--out", type=Path, help="keep the shards and the bundle here")
    parser.add_argument("--child", choices=("ours", "floor"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "ours":
        print(json.dumps(ours(args.nodes, args.seconds, args.gpus, args.out)))
        return 0
    if args.child == "floor":
        print(json.dumps(floor(args.out)))
        return 0
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-evidence-"))
    try:
        return report(args, out)
    finally:
        if args.out is None:
            shutil.rmtree(out, ignore_errors=True)


def report(args: argparse.Namespace, out: Path) -> int:
    expected = args.nodes * args.gpus * args.seconds
    print(f"evidence: {args.nodes} nodes x {args.gpus} GPUs x {args.seconds} windows of 1 s = {expected:,} rows")
    mine = _child("--child", "ours", "--nodes", str(args.nodes), "--seconds", str(args.seconds),
                  "--gpus", str(args.gpus), "--out", str(out))
    base = _child("--child", "floor", "--out", str(out / "bundle" / "components" / "gpu.ndjson"))
    ratio = mine["seconds"] / base["seconds"]
    print(f"ours   {mine['rows']:>12,} rows {mine['seconds']:9.1f} s {mine['rows'] / mine['seconds']:>11,.0f} rows/s "
          f"peak RSS {mine['maxrss_mb']:6.1f} MB")
    print(f"  logs -> rows (parse, order) {mine['read_seconds']:.1f} s; rows -> shards {mine['shard_seconds']:.1f} s "
          f"({mine['shards']:,} shards, {mine['shard_bytes'] / 2**20:,.1f} MiB); shards -> NDJSON "
          f"{mine['bundle_seconds']:.1f} s ({mine['ndjson_bytes'] / 2**20:,.1f} MiB, {mine['written']:,} rows); "
          f"partial reads {mine['partial']}")
    print(f"floor  {mine['written']:>12,} rows {base['seconds']:9.1f} s {mine['written'] / base['seconds']:>11,.0f} "
          f"rows/s peak RSS {base['maxrss_mb']:6.1f} MB (gzip.GzipFile, level 9, {base['gzip_bytes'] / 2**20:,.1f} MiB)")
    print(f"ours/floor {ratio:.2f}")
    whole = mine["rows"] == mine["written"] == expected and not mine["partial"]
    checks = [(f"every row written once ({expected:,})", whole),
              (f"peak RSS <= {RSS_TARGET_MB} MB", mine["maxrss_mb"] <= RSS_TARGET_MB),
              (f"time <= {RATIO_TARGET:g}x the floor", ratio <= RATIO_TARGET)]
    print("Targets")
    for what, passed in checks:
        print(f"  {'PASS' if passed else 'MISS'}  {what}")
    return 0 if whole else 1


if __name__ == "__main__":
    raise SystemExit(main())
