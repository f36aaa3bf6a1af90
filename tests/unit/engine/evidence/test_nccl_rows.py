"""nccl-tests logs as evidence rows: the real logs of every table format the reader accepts, and the hand-written
ones for transports, several tests, refused lines and a log that ends mid-table."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.logprofiles import builtin_profile
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.nccl_rows import rows
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.rows import Row, row_schema, sorted_rows

DATA = Path(__file__).resolve().parents[1] / "data"
REAL = DATA / "real_logs" / "nccl"
HAND = DATA / "nccl_logs"
PROFILE = builtin_profile("nccl-bandwidth")


def read(path: Path, test_type: str = "") -> tuple[list[Row], str | None]:
    return rows(path.read_text(encoding="utf-8"), job={}, node="node-0", group="group-1", profile=PROFILE,
                test_type=test_type)


@pytest.mark.parametrize("path", sorted(REAL.glob("*.log")), ids=lambda p: p.stem[:3])
def test_every_real_log_gives_its_rows_with_the_largest_size_as_printed(path: Path) -> None:
    """001 today's table, 003 and 016 c. 2019 without root, 006 `mpirun --tag-output`, 012 `--op all`, 015 RoCE."""
    expect = json.loads(path.with_suffix(".expect.json").read_text(encoding="utf-8"))
    test = expect["tests"][0]   # 012 (`--op all`) lists its reductions apart: its first is the table's first rows
    out, partial = read(path, "all_reduce" if test["test"].startswith("all_reduce") else "")
    assert partial is None and out == sorted_rows(out)
    bus = [r for r in out if r.metric == "busbw"]
    assert len(bus) == len([r for r in out if r.metric == "algbw"]) == sum(t["rows"] for t in expect["tests"])
    largest = [r for r in out if r.detail.startswith(f"{test['largest_size']} B;")]
    assert {(r.metric, r.value) for r in largest[:2]} == {("busbw", test["largest_oop_busbw"]),
                                                          ("algbw", test["largest_oop_algbw"])}
    seen = ", ".join(expect["transports"]) or "not in the log"
    assert {r.detail.split("; ")[1] for r in out} == {f"network {seen}"}
    shape = {(r.node, r.component, r.index, r.unit, r.outcome) for r in out}
    assert shape == {("group-1", "group", None, "GB/s", "pass")}
    for row in out:
        jsonschema.validate(row.to_dict(), row_schema())


def test_a_row_is_named_by_its_test_size_and_position_with_the_transport_seen() -> None:
    out, partial = read(HAND / "t21-v2.19.1-gb200-mnnvl-nvls.log", "all_reduce")
    assert partial is None
    assert out[0] == Row("group-1", "group", None, None, "all_reduce", "algbw", out[0].value, "GB/s", "pass",
                         "1048576 B; network IB; MNNVL on", 0)
    assert [r.sample for r in out if r.metric == "busbw"] == [0, 1, 2, 3]


@pytest.mark.parametrize(("log", "network"), [("t18-v2.16.2-efa-aws-libfabric", "network AWS Libfabric"),
                                              ("t20-v2.13.8-socket", "network Socket"),
                                              ("t28-v2.19.1-gb200-fabric-not-ready-mnnvl-off", "network IB; MNNVL off")])
def test_the_transport_is_what_the_log_shows(log: str, network: str) -> None:
    out, _partial = read(HAND / f"{log}.log")
    assert {r.detail.split("; ", 1)[1] for r in out} == {network}


def test_every_test_of_a_log_is_read_unless_one_is_asked_for() -> None:
    path = HAND / "t15-v2.18.5-alltoall-then-sendrecv.log"
    both, partial = read(path)
    assert partial is None and sorted({r.test for r in both}) == ["alltoall", "sendrecv"]
    one, _partial = read(path, "sendrecv")
    assert {r.test for r in one} == {"sendrecv"} and len(one) < len(both)


def test_a_refused_line_is_a_warn_row_and_the_read_is_partial() -> None:
    out, partial = read(HAND / "t23-v2.18.5-allreduce-impossible-busbw-ratio.log", "all_reduce")
    [refused] = [r for r in out if r.metric == "refused"]
    assert (refused.outcome, refused.value, refused.unit) == ("warn", None, None)
    assert refused.detail.startswith("refused: busbw 245.70 is not algbw 245.70 x 1.75 (all_reduce on 8 ranks): ")
    assert refused.sample not in {r.sample for r in out if r.metric == "busbw"}   # its own position in the table
    assert partial is not None and partial.startswith("all_reduce: 1 result line(s) refused (first: busbw 245.70")


def test_a_log_killed_mid_table_is_partial_never_zero() -> None:
    out, partial = read(HAND / "t22-v2.17.9-allreduce-pod-killed-mid-row.log", "all_reduce")
    assert [r.detail for r in out if r.metric == "refused"][0].startswith("refused: the row is cut short: ")
    assert len([r for r in out if r.metric == "busbw"]) == 7   # the rows kept stay evidence
    assert partial is not None and "its peak is not known" in partial and "the log ends early" in partial


def test_a_log_without_a_table_is_zero_rows_and_whole() -> None:
    assert rows("NCCL INFO Bootstrap : Using eth0\n", job={}, node="n", group="", profile=PROFILE) == ([], None)


def test_the_group_names_the_rows_else_the_node() -> None:
    out, _partial = rows((HAND / "t19-v2.17.9-ib-mlx5.log").read_text(), job={}, node="node-7", group="",
                         profile=PROFILE)
    assert {r.node for r in out} == {"node-7"}
