"""nccl-tests output as a BandwidthMeasurement reads it (measurements.md §1.1.8, §1.2.4, §1.4, §2.6, §4.2).

The profile's `bandwidthResult` regex picks result rows (size, algbw, busbw); its optional `networkTransport`
regex picks the `NCCL INFO Using network <name>` lines. Rows of all windows are folded into
`status.results` as running averages per message size, formatted as NVCRE writes them (`%.2f`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .log_lines import LogProfileError, compile_regex, go_float, go_int, lines

RESULT_GROUPS = ("size", "algBW", "busBW")


@dataclass(frozen=True)
class NcclRow:
    size: int
    alg_bw: float
    bus_bw: float


@dataclass
class NcclParse:
    rows: list[NcclRow] = field(default_factory=list)
    transports: list[str] = field(default_factory=list)
    """Distinct, sorted."""


def strip_prefix(line: str) -> str:
    """Drop a leading timestamp the way NVCRE does: a long line with `-` at 4 and `T` at 10 loses its first word."""
    if len(line) > 20 and line[4] == "-" and line[10] == "T":
        space = line.find(" ")
        if space >= 0:
            return line[space + 1:]
    return line


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

    def parse(self, text: str) -> NcclParse:
        """Rows in log order (a capture that is not a Go number skips its line) and the transports named."""
        rows: list[NcclRow] = []
        transports: set[str] = set()
        for raw in lines(text):
            line = strip_prefix(raw)
            match = self.result.search(line)
            if match:
                size, alg_bw, bus_bw = (go_int(match["size"] or ""), go_float(match["algBW"] or ""),
                                        go_float(match["busBW"] or ""))
                if size is not None and alg_bw is not None and bus_bw is not None:
                    rows.append(NcclRow(size, alg_bw, bus_bw))
            found = self.transport.search(line) if self.transport else None
            if found and (found["transport"] or "").strip():
                transports.add(found["transport"].strip())
        return NcclParse(rows, sorted(transports))


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
