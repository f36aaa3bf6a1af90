"""nccl-tests output as a BandwidthMeasurement reads it (measurements.md §1.1.8, §1.2.4, §1.4, §2.6, §4.2).

The profile's `bandwidthResult` regex proposes result rows (size, algbw, busbw); its optional `networkTransport`
regex picks the `NCCL INFO Using network <name>` lines. Beyond NVCRE, each line loses its launcher prefix
(launcher_prefix.py), each stream's lines are read as nccl-tests tables (the test that printed them, its ranks,
its header, its `# Avg bus bandwidth`), and a proposed row counts only when its table confirms it
(nccl_tables.py); the rows of the test the measurement asked for (`spec.testType`) are the result, every row of
it as NVCRE reads them (`--op all` and `-d all` print each size once per reduction and type: all are measured),
unless a table refused rows of larger sizes than it kept. Rows of all windows are folded into `status.results`
as running averages per message size, formatted as NVCRE writes them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .launcher_prefix import split_prefix
from .log_lines import LogProfileError, compile_regex, go_float, lines
from .nccl_mnnvl import Mnnvl
from .nccl_tables import COLLECTIVES, Row, Table, avg_bus, binary_named, fits, header_columns, propose

RESULT_GROUPS = ("size", "algBW", "busBW")
NcclRow = Row
_RANK_LINE = re.compile(r"#\s+Rank\s+\d+", re.ASCII)


@dataclass
class NcclParse:
    rows: list[NcclRow] = field(default_factory=list)
    """The rows of the measured test, in log order."""
    transports: list[str] = field(default_factory=list)
    """Distinct, sorted."""
    tables: list[Table] = field(default_factory=list)
    measured: str = ""
    """The collective the rows are of ("" when the log does not say)."""
    others: list[str] = field(default_factory=list)
    """The other tests the log holds, sorted."""
    refused: list[tuple[str, str]] = field(default_factory=list)
    """(line, why) of the measured test's rows that were not counted."""
    warnings: list[str] = field(default_factory=list)
    """What the measured test's tables say against their rows (a `# Avg bus bandwidth` that disagrees)."""
    mnnvl: Mnnvl = field(default_factory=Mnnvl)
    """What the NCCL INFO lines said of multi-node NVLink."""
    withheld: str = ""
    """Why the measured test's rows give no figure although some were kept (a table refused rows of larger sizes
    than those it kept; `rows` is then empty), or ""."""
    chosen: list[Table] = field(default_factory=list)
    """The measured test's tables, in log order (its rows and refused lines, table by table: the evidence rows'
    source)."""


def strip_prefix(line: str) -> str:
    """Drop a leading timestamp the way NVCRE does: a long line with `-` at 4 and `T` at 10 loses its first word."""
    if len(line) > 20 and line[4] == "-" and line[10] == "T":
        space = line.find(" ")
        if space >= 0:
            return line[space + 1:]
    return line


@dataclass
class _Stream:
    """What one stream (a rank's lines) has said so far."""

    test: str | None = None         # the collective of the test binary named last
    ranks: int | None = None        # the `# Using devices` lines counted
    table: Table | None = None


def collective_of(test_type: str) -> str | None:
    """The collective a testType names (`all_reduce`, `loopback_all_reduce`), else None."""
    name = test_type.removeprefix("loopback_")
    return name if name in COLLECTIVES else None


@dataclass(frozen=True)
class NcclParser:
    result: re.Pattern[str]
    transport: re.Pattern[str] | None = None

    @classmethod
    def from_profile(cls, profile: dict[str, Any]) -> NcclParser:
        """Compile a LogProfile object; LogProfileError (NVCRE's texts) when it cannot read bandwidth."""
        name = (profile.get("metadata") or {}).get("name", "")
        patterns = (profile.get("spec") or {}).get("patterns") or {}
        result_pattern = patterns.get("bandwidthResult")
        if not result_pattern:
            raise LogProfileError(f"LogProfile {name} has no bandwidthResult pattern")
        result = compile_regex(result_pattern.get("regex", ""), "compiling bandwidthResult regex")
        if not set(RESULT_GROUPS) <= set(result.groupindex):
            raise LogProfileError("bandwidthResult regex must have named groups: size, algBW, busBW")
        transport_pattern = patterns.get("networkTransport")
        if not transport_pattern:
            return cls(result)
        transport = compile_regex(transport_pattern.get("regex", ""), "compiling networkTransport regex")
        if "transport" not in transport.groupindex:
            raise LogProfileError("networkTransport regex must have named group: transport")
        return cls(result, transport)

    def parse(self, text: str, test_type: str = "") -> NcclParse:
        """The measured test's rows in log order, every table read, and the transports named."""
        streams: dict[str, _Stream] = {}
        tables: list[Table] = []
        transports: set[str] = set()
        mnnvl = Mnnvl()
        for raw in lines(text):
            key, line = split_prefix(strip_prefix(raw))
            stream = streams.setdefault(key, _Stream())
            mnnvl.read(line)
            found = self.transport.search(line) if self.transport else None
            if found and (found["transport"] or "").strip():
                transports.add(found["transport"].strip())
            match = self.result.search(line)
            proposed = propose(line, match) if match else None
            if proposed is not None:
                if stream.table is None:
                    stream.table = Table(stream.test, stream.ranks)
                    tables.append(stream.table)
                stream.table.proposed.append(proposed)
            elif match is None:
                _read_other(stream, line, tables)
        for table in tables:
            table.finish()
        return select(tables, test_type, sorted(transports), mnnvl)


def _read_other(stream: _Stream, line: str, tables: list[Table]) -> None:
    """A line that is no row: a table's header or summary, the test's name, its devices, or a command."""
    comment = line.strip()
    if stream.table is not None and (avg := avg_bus(comment)) is not None:   # v1 prints it without `#`
        stream.table.avg_bus = avg
        return
    if not comment.startswith("#"):
        named = binary_named(comment)
        if named:
            stream.test, stream.table = named, None
        elif stream.table is not None and stream.table.fragment(line):
            stream.table.fragments.append(line)
        return
    columns = header_columns(comment)
    if columns is not None:
        stream.table = Table(stream.test, stream.ranks, columns)
        tables.append(stream.table)
    elif comment.startswith(("# Collective test starting", "# Collective test concluded")):
        stream.test, stream.table = binary_named(comment), None
    elif comment.startswith("# Using devices"):
        stream.ranks = 0
    elif stream.ranks is not None and _RANK_LINE.match(comment) and stream.table is None:
        stream.ranks += 1
    elif comment.startswith("# nThread"):
        stream.ranks, stream.table = None, None


def select(tables: list[Table], test_type: str, transports: list[str], mnnvl: Mnnvl) -> NcclParse:
    """The tables of the test asked for: those named for its collective; else, when the log names none, every
    table. With no collective asked for and several tests in the log, none (a figure of one collective must
    never be read as another's). Pure: a parse's tables can be selected again for another test."""
    tables = [t for t in tables if t.proposed or t.fragments]
    named = sorted({t.collective for t in tables if t.collective})
    wanted = collective_of(test_type)
    if wanted in named:
        chosen = [t for t in tables if t.collective == wanted]
    elif len(named) <= 1 and (wanted is None or not named):
        chosen = tables
    else:
        chosen = []
    if wanted and not named and len(chosen) > 1:   # unnamed tests: told apart by their bus factors
        chosen = [t for t in chosen if fits(t, wanted)]
    measured = chosen[0].collective or "" if chosen else ""
    withheld = next((t.withheld for t in chosen if t.withheld), "")
    rows = [] if withheld else [row for t in chosen for row in t.rows]
    return NcclParse(rows, transports, tables, measured, [n for n in named if n != measured],
                     [r for t in chosen for r in t.refused], [t.avg_problem for t in chosen if t.avg_problem], mnnvl,
                     withheld, chosen)


def aggregate(results: list[dict[str, Any]], rows: list[NcclRow]) -> list[dict[str, Any]]:
    """`status.results` with `rows` folded in: per size a running average over all samples, sizes in order of first
    appearance, values `%.2f`. A new list; `results` is not changed."""
    sums: dict[int, tuple[float, float, int]] = {}  # size -> (algBW sum, busBW sum, count), first-appearance order
    for row in rows:
        alg_sum, bus_sum, count = sums.get(row.size, (0.0, 0.0, 0))
        sums[row.size] = (alg_sum + row.alg_bw, bus_sum + row.bus_bw, count + 1)
    out = [dict(item) for item in results]
    by_size = {item["sizeBytes"]: item for item in out}
    for size, (alg_sum, bus_sum, count) in sums.items():
        item = by_size.get(size)
        if item is None:
            out.append({"sizeBytes": size, "algBW": f"{alg_sum / count:.2f}", "busBW": f"{bus_sum / count:.2f}",
                        "samples": count})
            continue
        old = item["samples"]
        item["algBW"] = f"{(float(item['algBW']) * old + alg_sum) / (old + count):.2f}"
        item["busBW"] = f"{(float(item['busBW']) * old + bus_sum) / (old + count):.2f}"
        item["samples"] = old + count
    return out


def merge_transports(old: list[str], new: list[str]) -> list[str]:
    """The union, trimmed, without blanks, sorted (status.transport is a set)."""
    return sorted({name.strip() for name in [*old, *new] if name.strip()})


def peak(results: list[dict[str, Any]]) -> tuple[float, float] | None:
    """(max busBW, max algBW) over the message sizes (independent maxima), None without a readable result."""
    values = [(go_float(str(item.get("busBW", ""))), go_float(str(item.get("algBW", "")))) for item in results]
    readable = [(bus, alg) for bus, alg in values if bus is not None and alg is not None]
    if not readable:
        return None
    return max(pair[0] for pair in readable), max(pair[1] for pair in readable)
