"""The GEMM burn-in harness's output (docs/gemm-burn-in-output.md), read strictly into one row per GPU per window.

The harness (issue 41) prints a `begin` record, then per window one `window` record per GPU, then an `end` record,
each a line starting `gemm-burn-in/1` (after the kubelet's stamp, when the log has one) with its fields as
`key=value` in a fixed order. Lines without the marker are not the harness's (CUDA banners, warnings) and are left
alone. A marked line that does not read as its record, field by field, is refused and counted, never guessed; so
is a window record that goes back in time, repeats a GPU, names a GPU the begin record does not have, or gives a
GPU another UUID than before. Rows lost are a partial read: refused lines, no begin or end record (the log starts
late or ends early), a window short of GPUs, an end record whose window count is not the windows read.

A row: component `gpu`, the GPU's index and UUID, test `gemm`, metric `tflops` (the window's mean, TFLOPS),
`sample` the window, `time` its start; `detail` the NVML fields as the harness printed them (SM clock, power draw
and limit, temperature, throttle reasons, XIDs, the result check), one row rather than six: a 30-minute run of a
1,000-node fleet is already 14.4 M rows at one window a second. The outcome judges what one window shows alone: a
wrong result, an XID or a hardware throttle reason (slowdown, thermal, power brake) fail; everything that needs
the series (warm-up, the floors, the node median, degradation) is issue 41's verdict over these rows.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .gc_pause import paused
from .rows import Row, sorted_rows

MARKER = "gemm-burn-in/1"
TEST = "gemm"
_NUMBER = r"\d+(?:\.\d+)?"
_TIME = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z"
# NVML's clock event (throttle) reasons as the harness names them (nvmlClocksEventReason*, docs table).
THROTTLE = frozenset(("applications_clocks", "display_clocks", "gpu_idle", "hw_power_brake", "hw_slowdown",
                      "hw_thermal", "sw_power_cap", "sw_thermal", "sync_boost"))
FAULTS = frozenset(("hw_slowdown", "hw_thermal", "hw_power_brake"))   # a software power cap alone is no fault
BEGIN = (("gpus", r"[1-9]\d*"), ("dtype", r"bf16|fp16|fp8|tf32"), ("m", r"[1-9]\d*"), ("n", r"[1-9]\d*"),
         ("k", r"[1-9]\d*"), ("window_s", _NUMBER), ("warmup_s", _NUMBER))
WINDOW = (("w", r"\d+"), ("time", _TIME), ("gpu", r"\d+"), ("uuid", r"GPU-[0-9a-fA-F-]+"), ("tflops", _NUMBER),
          ("sm_mhz", r"\d+"), ("power_w", _NUMBER), ("power_limit_w", _NUMBER), ("temp_c", r"-?\d+"),
          ("throttle", r"none|[a-z_]+(?:,[a-z_]+)*"), ("xid", r"none|\d+(?:,\d+)*"), ("check", r"ok|wrong"))
END = (("windows", r"\d+"),)
RECORDS = {"begin": BEGIN, "window": WINDOW, "end": END}
_TUPLE = tuple.__new__
_PIECE = 1 << 16   # characters of a log split into lines at a time (lines_of)
_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d) ", re.ASCII)


def _record(fields: tuple[tuple[str, str], ...]) -> re.Pattern[str]:
    return re.compile(" ".join(f"{key}=({pattern})" for key, pattern in fields), re.ASCII)


_REGEX = {kind: _record(fields) for kind, fields in RECORDS.items()}
# The common line, a window record, in one match: the kubelet's stamp, the marker, the record, carriage returns;
# groups: w, time, gpu, uuid, tflops, then the NVML fields as one (the row's detail), then each of them.
_WINDOW_LINE = re.compile(f"(?:{_STAMP.pattern})?{re.escape(MARKER)} window {_record(WINDOW[:5]).pattern} "
                          f"({_record(WINDOW[5:]).pattern})\r*", re.ASCII)
# The commonest of all, a window of no clock event, no XID, a right result: the same match with those three fields
# spelled out, its NVML fields not taken apart. Twice as fast as the match above, which the others still get.
_CLEAN_LINE = re.compile(f"(?:{_STAMP.pattern})?{re.escape(MARKER)} window {_record(WINDOW[:5]).pattern} "
                         f"({' '.join(f'{key}=(?:{pattern})' for key, pattern in WINDOW[5:9])} throttle=none "
                         "xid=none check=ok)\r*", re.ASCII)


def why_not(kind: str, text: str) -> str:
    """The first field of a `kind` record that `text` (the line after `<marker> <kind> `) does not give right."""
    words = text.split(" ")
    for position, (key, pattern) in enumerate(RECORDS[kind]):
        if position >= len(words):
            return f"{key} is missing"
        name, equals, value = words[position].partition("=")
        if name != key or not equals:
            return f"{words[position]!r} is not {key}=..."
        if not re.fullmatch(pattern, value, re.ASCII):
            return f"{key}={value!r} is not {pattern}"
    return f"{' '.join(words[len(RECORDS[kind]):])!r} follows the last field"


@dataclass
class GemmReader:
    """One node's harness log, read in order: `read_all` gives the rows lines make, `finish` why the read is
    partial. Holds the GPUs' UUIDs and the window being read, never the rows."""

    node: str
    gpus: int | None = None
    # The begin record's fields as printed (dtype, shape, window_s, warmup_s): what the verdict judges the run by.
    begin: dict[str, str] = field(default_factory=dict)
    begun: bool = False
    ended: int | None = None
    refused: int = 0
    first_refused: str = ""
    windows: int = 0
    short: int = 0
    first_short: str = ""
    _window: int = -1
    _seen: set[int] = field(default_factory=set)
    _uuids: dict[int, str] = field(default_factory=dict)
    _number: int = 0

    def read_all(self, lines: Iterable[str]) -> list[Row]:
        """The rows `lines` make, in their order (more lines may follow in another call). The common line (a
        window record in one match, of a GPU known by its UUID and not yet read in the window being read, no clock
        event) is made here without a call: a fleet's burn-in is millions of them. The collector is paused
        meanwhile (gc_pause.py)."""
        with paused():
            return self._read_all(lines)

    def _read_all(self, lines: Iterable[str]) -> list[Row]:
        out: list[Row] = []
        append, node, number = out.append, self.node, self._number
        clean, fullmatch = _CLEAN_LINE.fullmatch, _WINDOW_LINE.fullmatch
        # The reader's state as the common line reads it; read again after any other line changed it.
        current, seen, known, ended = self._window, self._seen, self._uuids, self.ended
        # A window's number and time as last printed, its GPUs' UUIDs as first read: the rows of a window share
        # these objects instead of a copy each (a third less memory to fault in, rows made and held by the million).
        current_text, stamp_before = "", ""
        for line in lines:
            number += 1
            fast = clean(line)
            if fast is not None:
                w, stamp, g, uuid, tflops, detail = fast.groups()
                throttle = xid = "none"
                check = "ok"
            elif (fast := fullmatch(line)) is not None:
                w, stamp, g, uuid, tflops, detail, _sm, _power, _limit, _temp, throttle, xid, check = fast.groups()
            else:
                self._number = number
                fields = self._other(line)
                current, seen, ended = self._window, self._seen, self.ended
                if fields is None:
                    continue
                w, stamp, g, uuid, tflops, detail, throttle, xid, check = fields
            window, gpu = current if w == current_text else int(w), int(g)
            if window == current and throttle == "none" and gpu not in seen and (first := known.get(gpu)) == uuid \
                    and ended is None:
                seen.add(gpu)
                fault, uuid = False, first or uuid
            else:
                self._number = number
                admitted = self._admit(window, gpu, uuid, throttle)
                current, seen = self._window, self._seen
                if admitted is None:
                    continue
                fault, current_text = admitted, w
            if stamp == stamp_before:
                stamp = stamp_before
            else:
                stamp_before = stamp
            # A Row made as the tuple it is, all 16 fields given: a third cheaper than its __new__.
            append(_TUPLE(Row, (node, "gpu", gpu, uuid, TEST, "tflops", float(tflops), "TFLOPS",
                                "fail" if fault or check == "wrong" or xid != "none" else "pass", detail, window,
                                stamp, None, None, None, None)))
        self._number = number
        return out

    def _other(self, line: str) -> tuple[str, ...] | None:
        """A line the one match did not take: a begin or end record taken in, a window record's fields as printed
        (its detail: the NVML fields, sm_mhz on), None for a line of another program or one refused."""
        start = line.find(MARKER)
        if start < 0 or (start and not _STAMP.fullmatch(line, 0, start)):
            return None
        kind, _space, rest = line[start + len(MARKER) + 1:].rstrip("\r").partition(" ")
        regex = _REGEX.get(kind)
        match = regex.fullmatch(rest) if regex else None
        if match is None:
            self._refuse(f"{kind!r} is no record (begin, window, end)" if regex is None else why_not(kind, rest))
            return None
        if kind == "window":
            return (*match.group(1, 2, 3, 4, 5), rest[match.start(6) - len("sm_mhz="):], *match.group(10, 11, 12))
        if kind == "begin" and (self.begun or self.windows):
            self._refuse("a begin record after the run began")
        elif kind == "begin":
            self.begun, self.gpus = True, int(match[1])
            self.begin = {key: match[i + 1] for i, (key, _pattern) in enumerate(BEGIN)}
        elif self.ended is not None:
            self._refuse("a second end record")
        else:
            self._close_window()
            self.ended = int(match[1])
        return None

    def _admit(self, window: int, gpu: int, uuid: str, throttle: str) -> bool | None:
        """A window record that is not the common line, checked and taken in: whether its clock events are a
        fault, None when it is refused."""
        problem = self._out_of_place(window, gpu, uuid)
        if problem:
            self._refuse(problem)
            return None
        fault = False
        if throttle != "none":
            reasons = throttle.split(",")
            if "none" in reasons or not THROTTLE.issuperset(reasons):
                self._refuse(f"throttle={throttle!r} names no NVML reason ({', '.join(sorted(THROTTLE))} or "
                             "none)")
                return None
            fault = not FAULTS.isdisjoint(reasons)
        if window != self._window:
            self._close_window()
            self._window, self.windows = window, self.windows + 1
        self._seen.add(gpu)
        if gpu not in self._uuids:   # a refused line's UUID is no GPU's
            self._uuids[gpu] = uuid
        return fault

    def _out_of_place(self, window: int, gpu: int, uuid: str) -> str:
        if self.ended is not None:
            return "a window record after the end record"
        if window < self._window:
            return f"window {window} comes after window {self._window}"
        if window == self._window and gpu in self._seen:
            return f"GPU {gpu} is in window {window} twice"
        if self.gpus is not None and gpu >= self.gpus:
            return f"GPU {gpu} is not one of the {self.gpus} the begin record names"
        known = self._uuids.get(gpu)
        if known is not None and known != uuid:
            return f"GPU {gpu} is {uuid} where it was {known} before"
        return ""

    def _refuse(self, why: str) -> None:
        """No row: the line is counted as refused (the first one's reason kept)."""
        self.refused += 1
        self.first_refused = self.first_refused or f"line {self._number}: {why}"
        return None

    def _close_window(self) -> None:
        if self._window >= 0 and self.gpus is not None and len(self._seen) < self.gpus:
            self.short += 1
            self.first_short = self.first_short or f"window {self._window} has {len(self._seen)} of {self.gpus} GPUs"
        self._seen = set()

    def finish(self) -> str | None:
        """Why the read lost rows ("; "-joined), None when it is whole."""
        if self.ended is None:
            self._close_window()
        out = []
        if self.refused:
            out.append(f"{self.refused} line(s) refused (first: {self.first_refused})")
        if not self.begun and (self.windows or self.ended is not None):
            out.append("no begin record: the log starts after the run began")
        if self.ended is None and (self.begun or self.windows):
            out.append("no end record: the log ends before the run did")
        elif self.ended is not None and self.ended != self.windows:
            out.append(f"the end record counts {self.ended} windows where {self.windows} were read")
        if self.short:
            out.append(f"{self.short} window(s) short of GPUs (first: {self.first_short})")
        return "; ".join(out) or None


def lines_of(text: str) -> Iterator[str]:
    """`text.splitlines()`, one piece of text at a time: a node's log is megabytes, and its lines all made at once
    are megabytes more of fresh memory to fault in, node after node. Cut after a newline, no line boundary
    (not even a CR LF) is split, so the lines are splitlines' own."""
    start, size = 0, len(text)
    while start < size:
        cut = text.find("\n", start + _PIECE)
        end = size if cut < 0 else cut + 1
        yield from text[start:end].splitlines()
        start = end


def read_log(log: str, node: str) -> tuple[list[Row], str | None]:
    """Every row of one node's harness log, in the fixed order, and why the read is partial."""
    return read_lines(lines_of(log), node)


def read_lines(lines: Iterable[str], node: str) -> tuple[list[Row], str | None]:
    """Every row of one node's harness lines, in the fixed order, and why the read is partial."""
    reader = GemmReader(node)
    out = reader.read_all(lines)
    return sorted_rows(out), reader.finish()


def rows(log: str, *, job: dict[str, Any], node: str, group: str) -> tuple[list[Row], str | None]:
    """The rows of one node's harness log (the signature of nccl_rows.rows; the rows' node is `node`: each GPU is
    the node's, whatever its group)."""
    del job, group  # the signature every row source shares (sources.py)
    return read_log(log, node)
