"""What both log parsers share (measurements.md §1.1-§1.2): lines, kubelet timestamps, Go time layouts, Go numbers.

Logs are always fetched with `timestamps=true`, so every line starts with the kubelet's RFC3339Nano stamp and
one space. LogProfiles name their own timestamps with Go layouts (`2006-01-02 15:04:05.999999`), which we
translate to a regular expression once per layout. Numbers are converted as Go's strconv does, so a capture
Go would reject is rejected here too.
"""
from __future__ import annotations

import math
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from functools import lru_cache

RFC3339_NANO = "2006-01-02T15:04:05.999999999Z07:00"
_PREFIX = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))\s", re.ASCII)


class LogProfileError(Exception):
    """A LogProfile that cannot be compiled into a parser; the message is NVCRE's text."""


def lines(text: str) -> Iterator[str]:
    """The lines of a log as Go's bufio.ScanLines gives them: split on \\n, one trailing \\r dropped."""
    parts = text.split("\n")
    if parts and parts[-1] == "":
        parts.pop()
    for part in parts:
        yield part[:-1] if part.endswith("\r") else part


def split_timestamp(line: str) -> tuple[datetime | None, str]:
    """The kubelet prefix time (aware, UTC) and the rest of the line; (None, line) when there is no valid prefix."""
    match = _PREFIX.match(line)
    if match:
        when = parse_layout(match.group(1), RFC3339_NANO)
        if when is not None:
            return when, line[match.end():]
    return None, line


# ---- Go time layouts ----

# Go's layout elements, longest first where one is a prefix of another (time/format.go nextStdChunk).
_ELEMENT = re.compile(r"January|Jan|Monday|Mon|MST|2006|0[1-6]|15|_2|[1-5]|PM|pm|Z07:00|Z0700|Z07|-07:00|-0700|-07|"
                      r"[.,](?:0+|9+)(?!\d)")
_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december"]
_DIGITS = {"2006": r"\d{4}", "06": r"\d{2}", "01": r"\d{2}", "1": r"\d{1,2}", "02": r"\d{2}", "_2": r" ?\d{1,2}",
           "2": r"\d{1,2}", "15": r"\d{1,2}", "03": r"\d{2}", "3": r"\d{1,2}", "04": r"\d{2}", "4": r"\d{1,2}",
           "05": r"\d{2}", "5": r"\d{1,2}"}
_FIELD = {"2006": "year", "06": "year2", "01": "month", "1": "month", "02": "day", "_2": "day", "2": "day",
          "15": "hour", "03": "hour12", "3": "hour12", "04": "minute", "4": "minute", "05": "second", "5": "second"}
_ZONES = {"Z07:00": r"Z|[+-]\d{2}:\d{2}", "Z0700": r"Z|[+-]\d{4}", "Z07": r"Z|[+-]\d{2}",
          "-07:00": r"[+-]\d{2}:\d{2}", "-0700": r"[+-]\d{4}", "-07": r"[+-]\d{2}"}
_OPTIONAL_FRACTION = r"(?:[.,](?P<{}>\d+))?"


@lru_cache(maxsize=32)
def _layout_regex(layout: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
    """The layout as a regex whose group i holds field fields[i]."""
    out: list[str] = []
    fields: list[str] = []

    def group(field: str, regex: str) -> str:
        fields.append(field)
        return f"(?P<g{len(fields) - 1}>{regex})"

    pos = 0
    elements = list(_ELEMENT.finditer(layout))
    for index, match in enumerate(elements):
        out.append(re.escape(layout[pos:match.start()]))
        element, pos = match.group(0), match.end()
        if element in _DIGITS:
            out.append(group(_FIELD[element], _DIGITS[element]))
            following = elements[index + 1] if index + 1 < len(elements) else None
            fraction_next = following is not None and following.start() == pos and following.group(0)[0] in ".,"
            if _FIELD[element] == "second" and not fraction_next:
                # Go accepts a fractional second after the seconds even when the layout has none.
                fields.append("fraction")
                out.append(_OPTIONAL_FRACTION.format(f"g{len(fields) - 1}"))
        elif element[0] in ".,":
            if element[1] == "9":
                fields.append("fraction")
                out.append(_OPTIONAL_FRACTION.format(f"g{len(fields) - 1}"))
            else:
                out.append(r"[.,]" + group("fraction", rf"\d{{{len(element) - 1}}}"))
        elif element in _ZONES:
            out.append(group("zone", _ZONES[element]))
        elif element == "Jan":
            out.append(group("month_abbr", "[A-Za-z]{3}"))
        elif element == "January":
            out.append(group("month_name", "[A-Za-z]+"))
        elif element in ("PM", "pm"):
            out.append(group("ampm", "[AaPp][Mm]"))
        else:  # Mon, Monday, MST: matched, not used (a zone abbreviation reads as UTC)
            out.append("[A-Za-z]+")
    out.append(re.escape(layout[pos:]))
    return re.compile("".join(out), re.ASCII), tuple(fields)


def _zone(text: str) -> timezone:
    if text == "Z":
        return UTC
    digits = text[1:].replace(":", "")
    offset = timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0))
    return timezone(-offset if text[0] == "-" else offset)


def parse_layout(value: str, layout: str) -> datetime | None:
    """`value` read with the Go layout (aware, UTC; no zone in the layout means UTC); None when it does not parse.

    Fractions beyond microseconds are truncated. Missing date parts default to 1 (Go uses year 0, which
    Python cannot hold).
    """
    regex, fields = _layout_regex(layout)
    match = regex.fullmatch(value)
    if not match:
        return None
    parts: dict[str, str] = {field: match.group(f"g{i}") for i, field in enumerate(fields)
                             if match.group(f"g{i}") is not None}
    try:
        year = int(parts.get("year", 1))
        if "year2" in parts:
            short = int(parts["year2"])
            year = short + (1900 if short >= 69 else 2000)
        month = int(parts.get("month", 1))
        if "month_abbr" in parts:
            month = [name[:3] for name in _MONTHS].index(parts["month_abbr"].lower()) + 1
        if "month_name" in parts:
            month = _MONTHS.index(parts["month_name"].lower()) + 1
        hour = int(parts.get("hour", parts.get("hour12", 0)))
        if "hour12" in parts:
            if not 1 <= hour <= 12:
                return None
            hour = hour % 12 + (12 if parts.get("ampm", "").lower() == "pm" else 0)
        micro = int(parts.get("fraction", "0")[:6].ljust(6, "0"))
        zone = _zone(parts["zone"]) if "zone" in parts else UTC
        when = datetime(year, month, int(parts.get("day", "1").strip()), hour, int(parts.get("minute", 0)),
                        int(parts.get("second", 0)), micro, tzinfo=zone)
    except ValueError:  # out of range, or not a month name
        return None
    return when.astimezone(UTC)


# ---- Go numbers ----

_GO_INT = re.compile(r"[+-]?\d+", re.ASCII)
_GO_FLOAT = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)", re.ASCII | re.IGNORECASE)


def go_int(text: str) -> int | None:
    """strconv.ParseInt(text, 10, 64), None on error."""
    if not _GO_INT.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def go_float(text: str) -> float | None:
    """strconv.ParseFloat(text, 64), None on error (an overflow to infinity is an error in Go)."""
    if not _GO_FLOAT.fullmatch(text):
        return None
    value = float(text)
    if math.isinf(value) and "inf" not in text.lower():
        return None
    return value


def compile_regex(pattern: str, what: str) -> re.Pattern[str]:
    """A profile regex as RE2 reads it (\\d \\s \\w are ASCII); LogProfileError `<what>: <error>` when it is bad."""
    try:
        return re.compile(pattern, re.ASCII)
    except re.error as err:
        raise LogProfileError(f"{what}: {err}") from None
