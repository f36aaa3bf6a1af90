"""nccl-tests tables read as a careful reader reads them (nccl_log.py, nccl_tables.py, launcher_prefix.py):
launcher prefixes, every table generation, several tests in one log, and no figure the table does not print."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.logprofiles import builtin_profile
from ansible_collections.cre.certification.plugins.module_utils.engine.logs import nccl_log
from ansible_collections.cre.certification.plugins.module_utils.engine.logs.launcher_prefix import split_prefix

CASES = yaml.safe_load((Path(__file__).parents[1] / "data" / "nccl" / "tables.yaml").read_text())
# NVCRE's own bandwidthResult (spec/measurements.md §1.6), which misreads an older table.
NVCRE_REGEX = r"^\s*(?P<size>\d+)\s+\d+\s+\w+\s+\w+\s+-?\d+\s+[\d.]+\s+(?P<algBW>[\d.]+)\s+(?P<busBW>[\d.]+)"


def parser(kind: str) -> nccl_log.NcclParser:
    profile = builtin_profile("nccl-bandwidth")
    if kind != "builtin":
        profile["spec"]["patterns"]["bandwidthResult"]["regex"] = NVCRE_REGEX if kind == "nvcre" else kind
    return nccl_log.NcclParser.from_profile(profile)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["id"])
def test_tables(case):
    parsed = parser(case.get("profile", "builtin")).parse("\n".join(case["lines"]) + "\n", case["test_type"])
    assert [[r.size, r.alg_bw, r.bus_bw] for r in parsed.rows] == case["rows"]
    assert parsed.measured == case.get("measured", "all_reduce")
    assert parsed.others == case.get("others", [])
    assert parsed.transports == case.get("transports", [])
    assert parsed.warnings == case.get("warnings", [])
    assert len(parsed.refused) == case.get("refused", 0), parsed.refused
    if parsed.refused:
        assert parsed.refused[0][1] == case["why"]


@pytest.mark.parametrize(("line", "stream", "rest"), [
    ("[1,0]<stdout>:     8   2", "mpi:1,0", "    8   2"),  # OpenMPI 5 puts a space after the tag
    ("[1,12]<stderr>: x", "mpi:1,12", "x"),
    ("[rank3]:# Avg bus bandwidth", "rank:3", "# Avg bus bandwidth"),
    ("[default0]:x", "rank:0", "x"),
    (" 0:   8  2", "task:0", "  8  2"),
    ("15: #", "task:15", "#"),
    ("     1048576        262144     float", "", "     1048576        262144     float"),
    ("node-b:101:101 [0] NCCL INFO", "", "node-b:101:101 [0] NCCL INFO"),
])
def test_launcher_prefixes(line, stream, rest):
    assert split_prefix(line) == (stream, rest)
