"""nccl-tests logs as evidence rows: one per group per message size, read by the measurement's own reader.

The rows are what the BandwidthMeasurement read (logs/nccl_log.py, checked by logs/nccl_tables.py), never a second
reading: each result row the measured test's tables kept gives two rows (metric `busbw` and `algbw`, GB/s), with
the message size and the transport the log shows (NCCL's `Using network` lines, and MNNVL where its INFO lines say,
as plan/network.py judges them) in `detail`; `sample` is the row's position in the test's tables (a size printed
once per reduction under `--op all` keeps each). Thresholds judge the peak of a Job elsewhere (the job tier), so
every kept row is `pass`. A line the tables refused is a `warn` row (metric `refused`, no value, the reason and the
line in `detail`) and makes the read partial, as does a withheld figure, an `# Avg bus bandwidth` that contradicts
the rows, or a table the log ends in before its `# Avg bus bandwidth` line.
"""
from __future__ import annotations

from typing import Any

from ..logs.nccl_log import NcclParse, NcclParser, collective_of, select
from ..logs.nccl_tables import Table
from .rows import Row, sorted_rows


def rows(log: str, *, job: dict[str, Any], node: str, group: str, profile: dict[str, Any],
         test_type: str = "") -> tuple[list[Row], str | None]:
    """The rows of `log` read with the LogProfile `profile` for `test_type` (a BandwidthMeasurement's
    spec.testType; "" reads every test the log names), in the fixed order, and why the read is partial (None
    when whole). The rows' node is `group` (the group was measured, not one node of it), else `node`.
    LogProfileError when the profile cannot read bandwidth. `job` is the Job's object: its rows' workflow,
    iteration, job and attempt are the cluster path's to fill."""
    del job  # the signature every row source shares (sources.py)
    parsed = NcclParser.from_profile(profile).parse(log, test_type)
    readings = [parsed]
    if not test_type and not parsed.chosen and parsed.others:
        readings = [select(parsed.tables, name, parsed.transports, parsed.mnnvl) for name in parsed.others]
    out: list[Row] = []
    problems: list[str] = []
    for reading in readings:
        test = reading.measured or collective_of(test_type)
        out += _test_rows(reading, group or node, test)
        problems += _problems(reading, test)
    return sorted_rows(out), "; ".join(problems) or None


def transport(parsed: NcclParse) -> str:
    """What the log shows NCCL ran over: its `Using network` names and MNNVL where the INFO lines say."""
    seen = f"network {', '.join(parsed.transports)}" if parsed.transports else "network not in the log"
    mnnvl = {True: "; MNNVL on", False: "; MNNVL off", None: ""}[parsed.mnnvl.enabled]
    return seen + mnnvl


def _test_rows(parsed: NcclParse, node: str, test: str | None) -> list[Row]:
    over = transport(parsed)
    out: list[Row] = []
    position = 0
    for table in parsed.chosen:
        for kind, item in _in_order(table):
            if kind == "kept":
                size, alg, bus = item
                detail = f"{size} B; {over}"
                out += [Row(node, "group", None, None, test, "busbw", bus, "GB/s", "pass", detail, position),
                        Row(node, "group", None, None, test, "algbw", alg, "GB/s", "pass", detail, position)]
            else:
                line, why = item
                out.append(Row(node, "group", None, None, test, "refused", None, None, "warn",
                               f"refused: {why}: {line.strip()}", position))
            position += 1
    return out


def _in_order(table: Table) -> list[tuple[str, Any]]:
    """The table's result lines in log order, each kept (size, algbw, busbw) or refused (line, why): the kept rows
    are the very Row objects of its proposals, the refused ones follow the proposals' order, cut rows last."""
    kept = iter(table.rows)
    refused = iter(table.refused)
    following = next(kept, None)
    out: list[tuple[str, Any]] = []
    for proposed in table.proposed:
        if proposed.row is following:
            out.append(("kept", (following.size, following.alg_bw, following.bus_bw)))
            following = next(kept, None)
        else:
            out.append(("refused", next(refused)))
    out += [("refused", item) for item in refused]
    return out


def _problems(parsed: NcclParse, test: str | None) -> list[str]:
    """Why the reading lost rows, each said once."""
    name = test or "the test"
    out = []
    if parsed.refused:
        out.append(f"{name}: {len(parsed.refused)} result line(s) refused (first: {parsed.refused[0][1]})")
    if parsed.withheld:
        out.append(f"{name}: {parsed.withheld}")
    out += [f"{name}: {problem}" for problem in parsed.warnings]
    if any(t.columns is not None and t.rows and t.avg_bus is None for t in parsed.chosen):
        out.append(f"{name}: a table ends before its # Avg bus bandwidth line (the log ends early)")
    return out
