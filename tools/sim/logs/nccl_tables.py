"""The result tables nccl-tests prints, in two generations (`log_style` field `nccl_table`).

`current`: the table the simulator has always printed (nccl-tests 2.13's columns, with `redop` and `root`;
our own widths and two-decimal times).
`no-root`: nccl-tests 2.9 and before (src/all_reduce.cu etc. of 2019-2021, as real-logs/nccl/003 shows): each
test prints its own header; all_reduce, reduce_scatter and alltoall have `redop` (alltoall passes an empty op
name, so its rows leave the column blank), all_gather and sendrecv have neither `redop` nor `root`; each half
ends in a float `error` (`%5.0le`); a time over 10 ms prints with no decimals, over 100 us with one (common.cu,
BenchTime); `count` is the elements per rank and `size` the bytes moved, as the tests' GetCollByteCount say;
`# Avg bus bandwidth` (`%g`) averages every busbw printed, in-place ones too. sendrecv_perf first shipped in
2.10, whose type column is 8 wide where 2.9's is 6: a log that holds it is printed as 2.10 printed it.

The figures are our own: a group's peak bus bandwidth is reached at the largest size; smaller sizes follow a
saturation curve.
"""
from __future__ import annotations

from dataclasses import dataclass

HALF_BANDWIDTH_BYTES = 32 * 1024 * 1024   # where the curve reaches half its peak
HEADER = ("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   "
          "busbw #wrong",
          "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  "
          "(GB/s)")
REDUCING = ("all_reduce", "reduce_scatter")
PER_RANK_COUNT = ("all_gather", "alltoall", "reduce_scatter")   # their `count` column is per rank
NO_REDOP_COLUMN = ("all_gather", "sendrecv")
IN_PLACE_TIME = 0.998      # an in-place run is a little faster


@dataclass(frozen=True)
class Table:
    body: list[str]      # the header and a row per size
    summary: list[str]   # printed once the communicators are destroyed


FACTOR_ONE = ("broadcast", "hypercube", "reduce", "sendrecv")   # busbw = algbw on any number of ranks


def bus_factor(collective: str, ranks: int) -> float:
    """busbw / algbw (the tests' GetBw): 2(n-1)/n for all_reduce, 1 for broadcast, reduce, sendrecv and hypercube,
    (n-1)/n otherwise. On one rank the (n-1) factors are 0: nccl-tests prints a busbw of 0.00 there."""
    if collective in FACTOR_ONE:
        return 1.0
    ranks = max(ranks, 1)
    return (2.0 if collective == "all_reduce" else 1.0) * (ranks - 1) / ranks


def table(generation: str, collective: str, smallest: int, largest: int, peak_bus: float, ranks: int,
          log_tests: tuple[str, ...]) -> Table:
    """The table of one test in one generation; `log_tests`: every test of the log (their build's generation)."""
    if generation == "no-root":
        return _no_root(collective, smallest, largest, peak_bus, ranks, 8 if "sendrecv" in log_tests else 6)
    return _current(collective, smallest, largest, peak_bus, ranks)


def _curve(size: int, largest: int, peak_bus: float) -> float:
    return peak_bus * (size / (size + HALF_BANDWIDTH_BYTES)) / (largest / (largest + HALF_BANDWIDTH_BYTES))


def _current(collective: str, smallest: int, largest: int, peak_bus: float, ranks: int) -> Table:
    factor = bus_factor(collective, ranks)
    redop = "sum" if collective in REDUCING else "none"
    lines, buses = [*HEADER], []
    size = max(smallest, 1)
    while size <= largest:
        # The curve is the busbw's, or the algbw's where the busbw is 0 (one rank): the time comes from the algbw.
        alg = _curve(size, largest, peak_bus) / (factor or 1.0)
        bus = alg * factor
        time_us = 30.0 + size / (alg * 1e3) if alg else 30.0
        lines.append(f"{size:>12} {size // 4:>13} {'float':>9} {redop:>7} {-1:>7} {time_us:>8.2f} {alg:>7.2f} "
                     f"{bus:>7.2f} {0:>6} {time_us * 0.998:>8.2f} {alg * 1.002:>7.2f} {bus * 1.002:>7.2f} {0:>6}")
        buses += [bus, bus * 1.002]
        size *= 2
    # nccl-tests averages every busbw it measured, out-of-place and in-place, and prints it with %g.
    return Table(lines, ["# Out of bounds values : 0 OK",
                         f"# Avg bus bandwidth    : {sum(buses) / max(len(buses), 1):g} "])


def _time(usec: float) -> str:
    return f"{usec:7.0f}" if usec > 10000.0 else f"{usec:7.1f}" if usec > 100.0 else f"{usec:7.2f}"


def _no_root(collective: str, smallest: int, largest: int, peak_bus: float, ranks: int, type_width: int) -> Table:
    factor = bus_factor(collective, ranks)
    redop = collective not in NO_REDOP_COLUMN
    split = ranks if collective in PER_RANK_COUNT else 1
    error = 2e-07 if collective in REDUCING else 0.0   # float rounding of a sum; the others only move data

    def columns(size: str, count: str, kind: str, op: str, halves: tuple[str, ...]) -> str:
        return f"{size:>12}  {count:>12}  {kind:>{type_width}}" + (f"  {op:>6}" if redop else "") + "".join(halves)

    half, placed = "  {:>7}  {:>6}  {:>6}  {:>5}", "            out-of-place                       in-place          "
    # The header's first column is `# %10s`: a row's 12-wide size column with `#` in its first place.
    lines = ["#", "#" + columns("", "", "", "", (placed,))[1:],
             "#" + columns("size", "count", "type", "redop", (half.format("time", "algbw", "busbw", "error"),) * 2)[1:],
             "#" + columns("(B)", "(elements)", "", "", (half.format("(us)", "(GB/s)", "(GB/s)", ""),) * 2)[1:]]
    buses = []
    size = max(smallest, 1)
    while size <= largest:
        count = size // 4 // split
        moved = count * 4 * split
        # algbw = bytes moved / time (GetBw): the time whose algbw is the curve's at this size
        oop = (factor or 1.0) * (moved + HALF_BANDWIDTH_BYTES) * largest / (largest + HALF_BANDWIDTH_BYTES) / \
            (peak_bus * 1e3)
        halves = []
        for usec in (oop, oop * IN_PLACE_TIME):
            alg = moved / (usec * 1e3)
            halves.append(f"  {_time(usec)}  {alg:6.2f}  {alg * factor:6.2f}  {error:5.0e}")
            buses.append(alg * factor)
        lines.append(columns(str(moved), str(count), "float", "sum" if collective in REDUCING else "", tuple(halves)))
        size *= 2
    return Table(lines, ["# Out of bounds values : 0 OK",
                         f"# Avg bus bandwidth    : {sum(buses) / max(len(buses), 1):g} ", "#"])
