"""nccl-tests result tables, checked so that no figure is taken that the table does not print (ours, beyond NVCRE).

A profile's `bandwidthResult` regex proposes rows; a proposed row counts unless it is provably wrong:
- its captures are whole whitespace-separated tokens (a regex that stops inside `2e-07` reads `2`);
- under a header (`#  size  count  type ...`), its columns can be placed without doubt: it has the header's
  columns (a blank redop and `-S`'s date and time allowed), or the out-of-place ones a header names followed by
  the in-place half (a header that lists only the out-of-place columns); each token fits its column, and `size`,
  `algBW`, `busBW` are the size and out-of-place algbw and busbw columns (an older table without `root` shifts
  NVCRE's regex one column to the right when the time is an integer);
- where the bus factor is known (the rank count from `# Using devices`, or a collective whose factor is 1 for any
  count), its busbw is its algbw times a factor some nccl-tests version used for the collective, within the
  printed rounding (busbw = algbw x all_reduce 2(n-1)/n; all_gather, reduce_scatter, alltoall, gather, scatter
  (n-1)/n; broadcast, reduce, sendrecv, hypercube 1; all_gather and reduce_scatter built before mid-2020 printed
  busbw = algbw). The table is read with the one factor most of its rows agree on; the others are refused.
Every refused row is kept with its reason. When a table refused rows of larger sizes than every row it kept, its
kept rows give no figure either (`withheld`): the peak of a table lies in its large sizes. The table's
`# Avg bus bandwidth` (the mean of every busbw it printed) is checked against the rows read; a table that
disagrees keeps its rows and says so (`avg_problem`): rows are missing or the log was edited.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .log_lines import go_float, go_int

# nccl-tests' bus factors: busbw = algbw * factor(n) for n ranks (src/*.cu, the tests' GetBw).
_FAMILY = {"all_reduce": "2(n-1)/n", "all_gather": "(n-1)/n", "reduce_scatter": "(n-1)/n", "alltoall": "(n-1)/n",
           "gather": "(n-1)/n", "scatter": "(n-1)/n", "hypercube": "1", "broadcast": "1", "reduce": "1",
           "sendrecv": "1"}
# Factors older nccl-tests builds printed: all_gather and reduce_scatter before ec1b5e2 (2020-06-19) had busbw = algbw.
_OLDER = {"all_gather": "1", "reduce_scatter": "1"}
COLLECTIVES = tuple(sorted(_FAMILY))
# A name of a test binary (`all_reduce_perf`, `alltoall_perf_mpi`) in a line that is not a row.
_BINARY = re.compile(r"\b(" + "|".join(COLLECTIVES) + r")_perf(?:_mpi)?\b")
_NUMBER = r"\d+(?:\.\d+)?"
_COLUMN = {"size": r"\d+", "count": r"\d+", "root": r"-?\d+", "type": r"[A-Za-z]\w*", "redop": r"[A-Za-z]\w*",
           "time": _NUMBER, "algbw": _NUMBER, "busbw": _NUMBER, "#wrong": r"\d+|N/A",
           "error": r"\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|N/A"}
ROUNDING = 0.005            # nccl-tests prints algbw, busbw and the avg line with 2 or more decimals (G1-G3)
_MIN_ANCHOR_ALGBW = 0.5     # below this a row's busbw/algbw ratio says too little to infer a factor from


def factor(collective: str, ranks: int) -> float:
    """The bus factor of today's nccl-tests."""
    return _value(_FAMILY[collective], ranks)


def _value(family: str, ranks: int) -> float:
    if family == "1" or ranks < 1:
        return 1.0
    return (2.0 if family == "2(n-1)/n" else 1.0) * (ranks - 1) / ranks


def candidates(collective: str | None, ranks: int | None) -> list[tuple[float, str]]:
    """(factor, whose) of every factor a row of this table may show; [] when it is not known (no rank count, and
    a collective whose factor depends on it or none named). `# Using devices` without a rank line counted (their
    lines lost or prefixed apart) is no rank count."""
    if not ranks:
        if collective is None or _FAMILY[collective] != "1":
            return []
        return [(1.0, f"{collective} on any number of ranks")]
    out: dict[float, str] = {}
    for name in [collective] if collective else COLLECTIVES:
        families = [(_FAMILY[name], "")] + ([(_OLDER[name], ", as nccl-tests before mid-2020 printed it")]
                                            if name in _OLDER else [])
        for family, when in families:
            whose = f"{name} on {ranks} ranks{when}" if collective else f"a test on {ranks} ranks"
            out.setdefault(round(_value(family, ranks), 9), whose)
    return list(out.items())


def _ranks_for(collective: str, ratio: float) -> int:
    """The rank count whose factor is nearest the observed busbw/algbw ratio."""
    family = _FAMILY[collective]
    if family == "1":
        return 1
    full = 2.0 if family == "2(n-1)/n" else 1.0
    return max(1, round(full / max(full - ratio, 1e-6)))


def fits(table: Table, collective: str) -> bool:
    """The table's largest row agrees with the collective's bus factor for some rank count (so an unnamed table
    can be told an all_reduce from an all_gather)."""
    top = max(table.rows, key=lambda r: r.alg_bw, default=None)
    if top is None or top.alg_bw < _MIN_ANCHOR_ALGBW:
        return True
    want = factor(collective, _ranks_for(collective, top.bus_bw / top.alg_bw))
    return abs(top.bus_bw - top.alg_bw * want) <= ROUNDING * want + ROUNDING + 1e-9


def binary_named(line: str) -> str | None:
    """The collective of a test binary named in the line (`./build/all_reduce_perf -b 8`), else None."""
    match = _BINARY.search(line)
    return match.group(1) if match else None


@dataclass(frozen=True)
class Row:
    size: int
    alg_bw: float
    bus_bw: float


@dataclass
class Proposed:
    """A line the profile's regex matched, with its whole tokens and what the regex captured."""

    text: str
    tokens: list[tuple[int, int]]
    captures: dict[str, tuple[int, int]]
    row: Row


@dataclass
class Table:
    """One test's table in one stream: from its header (or its first row when the header was not read) to the
    next header or the end."""

    collective: str | None = None
    ranks: int | None = None
    columns: list[str] | None = None
    avg_bus: float | None = None
    proposed: list[Proposed] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    """(line, why) of every proposed row not counted."""
    fragments: list[str] = field(default_factory=list)
    """Lines under a header that begin a row but end before its busbw (a pod killed mid-line, a row split by
    another process's line): refused, never stitched together."""
    avg_problem: str = ""
    """Why the table's `# Avg bus bandwidth` disagrees with the rows read (rows missing or a log edited), or ""."""
    withheld: str = ""
    """Why its kept rows give no figure (rows of larger sizes were refused), or ""."""

    def finish(self) -> None:
        """Sort the proposed rows into rows and refused ones (in log order)."""
        why: dict[int, str] = {}
        kept = []
        for index, proposed in enumerate(self.proposed):
            problem = self._shape_problem(proposed)
            if problem:
                why[index] = problem
            else:
                kept.append(index)
        why |= self._bus_factor_problems(kept)
        kept = [i for i in kept if i not in why]
        self.avg_problem = self._avg_problem(kept)
        self.refused = [(self.proposed[i].text, why[i]) for i in sorted(why)]
        self.refused += [(line, "the row is cut short") for line in self.fragments]
        self.rows = [self.proposed[i].row for i in kept]
        refused_sizes = [self.proposed[i].row.size for i in why] + [_leading_size(line) for line in self.fragments]
        largest = max((row.size for row in self.rows), default=None)
        if largest is not None and max(refused_sizes, default=-1) > largest:
            self.withheld = (f"a table refused rows of sizes above the largest it kept ({largest} B), so its peak "
                             "is not known")

    def _shape_problem(self, proposed: Proposed) -> str:
        text, tokens = proposed.text, proposed.tokens
        for name, span in proposed.captures.items():
            if span not in tokens:
                return f"{name} {text[span[0]:span[1]]!r} is not a whole column"
        if self.columns is None:
            return ""
        columns = self.row_columns(len(tokens))
        if columns is None:
            return f"the row has {len(tokens)} columns where its header has {len(self.columns)}"
        for (start, end), column in zip(tokens, columns):
            pattern = _COLUMN.get(column)
            if pattern and not re.fullmatch(pattern, text[start:end], re.ASCII):
                return f"{text[start:end]!r} is no {column}"
        wanted = {"size": columns.index("size"), "algBW": _first(columns, "algbw"), "busBW": _first(columns, "busbw")}
        for name, index in wanted.items():
            if index is None or proposed.captures[name] != tokens[index]:
                return f"{name} is not read from the header's {name.lower()} column"
        return ""

    def _bus_factor_problems(self, kept: list[int]) -> dict[int, str]:
        """Why each of the `kept` rows' busbw disagrees with its algbw times the factor most rows agree on (the row
        with the largest algbw breaks a tie); nothing where the factor is not known."""
        options = candidates(self.collective, self.ranks)
        if not options or not kept:
            return {}
        anchor = self.proposed[max(kept, key=lambda i: self.proposed[i].row.alg_bw)]
        fitting = [[i for i in kept if _fits(self.proposed[i], want)] for want, _whose in options]
        best = max(range(len(options)), key=lambda k: (len(fitting[k]), _fits(anchor, options[k][0]), -k))
        want, whose = options[best]
        return {i: f"busbw {self.proposed[i].row.bus_bw:.2f} is not algbw {self.proposed[i].row.alg_bw:.2f} x "
                   f"{want:.4g} ({whose})" for i in kept if i not in fitting[best]}

    def fragment(self, line: str) -> bool:
        """A line under this table's header that is part of a row but no whole row: it begins like one (size,
        count, type) or holds only numbers, and its words do not fill the header's columns."""
        words = line.split()
        if self.columns is None or not words:
            return False
        starts = re.match(r"\s*\d+\s+\d+\s+[A-Za-z]\w*", line, re.ASCII) is not None
        numbers = all(re.fullmatch(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|N/A", w, re.ASCII) for w in words)
        if not (starts or numbers):
            return False
        columns = self.row_columns(len(words))
        return columns is None or any(
            (pattern := _COLUMN.get(c)) and not re.fullmatch(pattern, w, re.ASCII) for w, c in zip(words, columns))

    def row_columns(self, tokens: int) -> list[str] | None:
        """The header's columns as a row of `tokens` words fills them: `-S`'s timestamp column holds a date and a
        time, a redop the test has none of is printed blank (hypercube, an older alltoall), and a header that names
        only the out-of-place columns is followed by the in-place half; None when the row fits no such reading."""
        columns = [c for name in self.columns or [] for c in (("date", "clock") if name == "timestamp" else (name,))]
        readings = [columns]
        if columns.count("busbw") == 1 and columns[-1] in ("busbw", "#wrong", "error"):
            check = "error" if "error" in columns else "#wrong"
            whole = columns + ([check] if columns[-1] == "busbw" else [])
            readings.append(whole + ["time", "algbw", "busbw", check])
        for reading in readings:
            if tokens == len(reading):
                return reading
            if tokens == len(reading) - 1 and "redop" in reading:
                return [c for c in reading if c != "redop"]
        return None

    def _avg_problem(self, kept: list[int]) -> str:
        """Why the `# Avg bus bandwidth` line contradicts the rows kept, or "" (only a table read from its header
        on: the line averages every busbw the table printed, out-of-place and in-place)."""
        if self.avg_bus is None or self.columns is None or not kept:
            return ""
        buses = [float(p.text[start:end]) for p in (self.proposed[i] for i in kept)
                 for (start, end), column in zip(p.tokens, self.row_columns(len(p.tokens)) or []) if column == "busbw"]
        mean = sum(buses) / len(buses)
        if abs(mean - self.avg_bus) <= ROUNDING + 1e-6 * self.avg_bus + 1e-9:
            return ""
        return f"its table's # Avg bus bandwidth {self.avg_bus:g} is not the mean of its rows ({mean:.5g})"


def _decimals_slack(text: str) -> float:
    """Half a unit of the last digit printed (`463.04` 0.005, `1846.1` 0.05, `17772` 0.5)."""
    return 0.5 * 10.0 ** -len(text.partition(".")[2])


def _fits(proposed: Proposed, want: float) -> bool:
    """busbw = algbw x want, within the rounding of the two cells as printed."""
    alg, bus = (proposed.text[slice(*proposed.captures[name])] for name in ("algBW", "busBW"))
    slack = _decimals_slack(bus) + _decimals_slack(alg) * want + 1e-9
    return abs(proposed.row.bus_bw - proposed.row.alg_bw * want) <= slack


def _leading_size(line: str) -> int:
    """The size a row cut short begins with (its first word when the line begins like a row), else -1."""
    match = re.match(r"\s*(\d+)\s+\d+\s+[A-Za-z]", line, re.ASCII)
    return int(match.group(1)) if match else -1


def _first(columns: list[str], name: str) -> int | None:
    return columns.index(name) if name in columns else None


def header_columns(comment: str) -> list[str] | None:
    """The column names of a table header line (`#  size  count  type  redop  root  time  algbw  busbw  #wrong
    ...`), else None."""
    words = comment.lstrip("#").split()
    if {"size", "algbw", "busbw"} <= set(words):
        return words
    return None


def avg_bus(comment: str) -> float | None:
    """The figure of a `# Avg bus bandwidth    : 263.45` line, else None."""
    match = re.match(r"#?\s*Avg bus bandwidth\s*:\s*(\S+)", comment)
    return go_float(match.group(1)) if match else None


def propose(text: str, match: re.Match[str]) -> Proposed | None:
    """A proposed row from a bandwidthResult match; None when a capture is not a Go number (NVCRE skips those)."""
    size, alg, bus = go_int(match["size"] or ""), go_float(match["algBW"] or ""), go_float(match["busBW"] or "")
    if size is None or alg is None or bus is None:
        return None
    tokens = [m.span() for m in re.finditer(r"\S+", text)]
    captures = {name: match.span(name) for name in ("size", "algBW", "busBW")}
    return Proposed(text, tokens, captures, Row(size, alg, bus))
