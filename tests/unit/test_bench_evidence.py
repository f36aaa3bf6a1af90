"""bench/evidence.py at a tiny scale: it runs end to end, writes every row once, and prints its figures and
targets in the lines its documentation names (docs/dev/bench.md). Times are the bench's to print, never asserted."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_bench_streams_logs_to_shards_to_ndjson_and_prints_its_targets(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "evidence.py"), "--nodes", "3", "--seconds", "5",
                           "--gpus", "2", "--out", str(tmp_path)], capture_output=True, text=True, check=False,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "evidence: 3 nodes x 2 GPUs x 5 windows of 1 s = 30 rows"
    assert re.match(r"ours +30 rows +[\d.]+ s +[\d,]+ rows/s peak RSS +[\d.]+ MB$", lines[1])
    assert "(3 shards," in lines[2] and "30 rows); partial reads 0" in lines[2]
    assert re.match(r"floor +30 rows .* \(gzip\.GzipFile, level 9, ", lines[3])
    assert re.match(r"ours/floor [\d.]+$", lines[4])
    assert lines[5] == "Targets" and lines[6] == "  PASS  every row written once (30)"
    assert re.match(r"  (PASS|MISS)  peak RSS <= 300 MB$", lines[7])
    assert re.match(r"  (PASS|MISS)  time <= 2x the floor$", lines[8])
    ndjson = (tmp_path / "bundle" / "components" / "gpu.ndjson").read_text().splitlines()
    rows = [json.loads(line) for line in ndjson]
    assert [(r["node"], r["index"], r["sample"]) for r in rows[:6]] == [
        ("node-0000", 0, 0), ("node-0000", 0, 1), ("node-0000", 0, 2), ("node-0000", 0, 3), ("node-0000", 0, 4),
        ("node-0000", 1, 0)]
    assert {(r["component"], r["test"], r["metric"], r["outcome"]) for r in rows} == {("gpu", "gemm", "tflops", "pass")}
    assert sorted(p.name for p in (tmp_path / "shards").iterdir()) == [
        "node-0000-evidence-1-1.gz", "node-0001-evidence-1-1.gz", "node-0002-evidence-1-1.gz"]
