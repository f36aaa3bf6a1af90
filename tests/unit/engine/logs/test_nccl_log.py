"""NCCL log parsing and bandwidth aggregation (nccl_log.py), table-driven from data/nccl/."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.logprofiles import builtin_profile
from ansible_collections.cre.certification.plugins.module_utils.engine.logs import nccl_log
from ansible_collections.cre.certification.plugins.module_utils.engine.logs.log_lines import LogProfileError

DATA = Path(__file__).parents[1] / "data" / "nccl"
PROFILES = yaml.safe_load((DATA / "profiles.yaml").read_text())
PARSE = yaml.safe_load((DATA / "parse.yaml").read_text())
AGGREGATE = yaml.safe_load((DATA / "aggregate.yaml").read_text())
PARSER = nccl_log.NcclParser.from_profile(builtin_profile("nccl-bandwidth"))


def rows(table: list[list]) -> list[nccl_log.NcclRow]:
    return [nccl_log.NcclRow(size, alg, bus) for size, alg, bus in table]


def nccl_profile(case: dict) -> dict:
    return {"metadata": {"name": "p"}, "spec": {"timestamp": {"layout": "x"}, "patterns": case["patterns"]}}


@pytest.mark.parametrize("case", [c for c in PROFILES if "error" not in c], ids=lambda c: c["id"])
def test_from_profile_reads_the_bandwidth_result_pattern(case):
    parser = nccl_log.NcclParser.from_profile(nccl_profile(case))
    assert parser.result.pattern == case["patterns"]["bandwidthResult"]["regex"]


@pytest.mark.parametrize("case", [c for c in PROFILES if "error" in c], ids=lambda c: c["id"])
def test_from_profile_refuses_a_bad_profile(case):
    with pytest.raises(LogProfileError) as err:
        nccl_log.NcclParser.from_profile(nccl_profile(case))
    assert str(err.value) == case["error"]


@pytest.mark.parametrize("case", PARSE, ids=lambda c: c["id"])
def test_parse(case):
    parsed = PARSER.parse("\n".join(case["lines"]) + "\n")
    assert parsed.rows == rows(case["rows"])
    assert parsed.transports == case.get("transports", [])


def test_profile_without_transport_pattern_finds_none():
    profile = builtin_profile("nccl-bandwidth")
    del profile["spec"]["patterns"]["networkTransport"]
    parsed = nccl_log.NcclParser.from_profile(profile).parse("2026-03-02T10:00:05Z x NCCL INFO Using network IB\n")
    assert parsed.transports == []


@pytest.mark.parametrize(("line", "stripped"), [
    ("2026-03-02T10:00:05Z   8  2", "  8  2"),
    ("2026-03-02T10:00:05.123456789Z x", "x"),
    ("2026-03-02T1 short", "2026-03-02T1 short"),  # 20 characters or fewer: kept
    ("nccl-w-0:211:211 [0] NCCL INFO", "nccl-w-0:211:211 [0] NCCL INFO"),  # char 10 is no T
    ("2026-03-02T10:00:05Z-no-space-anywhere", "2026-03-02T10:00:05Z-no-space-anywhere"),
])
def test_strip_prefix(line, stripped):
    assert nccl_log.strip_prefix(line) == stripped


@pytest.mark.parametrize("case", AGGREGATE, ids=lambda c: c["id"])
def test_aggregate(case):
    before = [dict(item) for item in case["results"]]
    assert nccl_log.aggregate(case["results"], rows(case["rows"])) == case["expected"]
    assert case["results"] == before, "aggregate must not change its input"


def test_final_read_aggregates_each_row_once_from_empty():
    """The terminal read starts from empty, so samples counts the rows of each size in the whole log."""
    table = PARSER.parse((Path(__file__).parents[1] / "data" / "logs" / "nccl-all-reduce.log").read_text()).rows
    results = nccl_log.aggregate([], table + table)
    assert [(r["sizeBytes"], r["samples"]) for r in results] == [(8, 2), (1048576, 2), (134217728, 2), (8589934592, 2)]


@pytest.mark.parametrize(("old", "new", "merged"), [
    ([], ["IB"], ["IB"]),
    (["Socket"], ["IB", " IB ", ""], ["IB", "Socket"]),
    (["IB"], [], ["IB"]),
    ([], ["  "], []),
])
def test_merge_transports(old, new, merged):
    assert nccl_log.merge_transports(old, new) == merged


@pytest.mark.parametrize(("results", "expected"), [
    ([], None),
    ([{"sizeBytes": 8, "algBW": "0.00", "busBW": "0.00", "samples": 1}], (0.0, 0.0)),
    # independent maxima: the largest busBW and the largest algBW need not share a size
    ([{"sizeBytes": 8, "algBW": "460.00", "busBW": "800.00", "samples": 1},
      {"sizeBytes": 16, "algBW": "451.80", "busBW": "847.12", "samples": 1}], (847.12, 460.0)),
    ([{"sizeBytes": 8, "algBW": "bad", "busBW": "1.00", "samples": 1},
      {"sizeBytes": 16, "algBW": "2.00", "busBW": "3.00", "samples": 1}], (3.0, 2.0)),
])
def test_peak(results, expected):
    assert nccl_log.peak(results) == expected
