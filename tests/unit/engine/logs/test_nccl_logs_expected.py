"""Every nccl-tests log in the test data read to what a careful reader takes from it (its `.expect.json`): the
real logs copied from public runs (`data/real_logs/nccl`, sources in their README) and the variants written from
nccl-tests' own print formats (`data/nccl_logs`, FORMATS.md)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.logprofiles import builtin_profile
from ansible_collections.cre.certification.plugins.module_utils.engine.logs import nccl_log

DATA = Path(__file__).parents[1] / "data"
LOGS = sorted([*(DATA / "real_logs" / "nccl").glob("*.log"), *(DATA / "nccl_logs").glob("*.log")])
PARSER = nccl_log.NcclParser.from_profile(builtin_profile("nccl-bandwidth"))


def collective(test: dict) -> str:
    return test.get("collective") or re.match(r"(\w+?)_perf", test["test"]).group(1)


def by_collective(expect: dict) -> dict[str, dict]:
    """Per collective its expected tests as one: `--op all` lists one test per reduction op, and every row of
    every op is read (the largest size and the top busbw of them all, the first op's on a tie)."""
    out: dict[str, dict] = {}
    for test in expect["tests"]:
        seen = out.setdefault(collective(test), {**test, "rows": 0})
        seen["rows"] += test["rows"]
        if test["rows"] and test["largest_size"] > seen["largest_size"]:
            seen.update({k: v for k, v in test.items() if k.startswith("largest_")})
        if test["rows"] and test["max_oop_busbw"] > seen["max_oop_busbw"]:
            seen.update({k: v for k, v in test.items() if k.startswith("max_oop_busbw")})
    return out


def test_there_are_logs_to_read():
    assert len(LOGS) >= 5


@pytest.mark.parametrize("log", LOGS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_log_read_as_expected(log: Path):
    expect = json.loads(log.with_suffix(".expect.json").read_text())
    text = log.read_text()
    for name, test in by_collective(expect).items():
        parsed = PARSER.parse(text, name)
        rows = parsed.rows
        assert bool(parsed.withheld) == test.get("withheld", False), parsed.withheld
        assert len(rows) == test["rows"], (name, parsed.refused[:3])
        if not rows:
            continue
        largest = max(rows, key=lambda r: r.size)
        top = max(rows, key=lambda r: r.bus_bw)
        assert (largest.size, largest.alg_bw, largest.bus_bw) == (
            test["largest_size"], test["largest_oop_algbw"], test["largest_oop_busbw"])
        assert (top.bus_bw, top.size) == (test["max_oop_busbw"], test["max_oop_busbw_size"])
        averages = {t.avg_bus for t in parsed.tables if t.rows and t.rows[0] in rows}
        assert averages == {test["avg_bus_bandwidth"]}
    whole = PARSER.parse(text)
    assert whole.transports == sorted(expect["transports"])
    # MNNVL: True/False where the log's NCCL INFO lines say, None (absent) where they do not.
    assert (whole.mnnvl.enabled, whole.mnnvl.not_ready_hosts()) == (
        expect.get("mnnvl"), expect.get("fabric_not_ready", []))
    if "refused" in expect:
        refused = [r for t in PARSER.parse(text).tables for r in t.refused]
        assert len(refused) == expect["refused"], refused
