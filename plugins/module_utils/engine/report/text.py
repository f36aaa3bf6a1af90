"""Text helpers the report writers share: Markdown cells, natural order, sizes and durations."""
from __future__ import annotations

import re
from typing import Any

# natural lives in api/ so history/ sorts the same way; the report writers keep importing it from here.
from ..api.naming import natural

__all__ = ["NODE_FAILED", "NODE_PASSED", "NODE_PENDING", "NODE_SKIPPED", "md_cell", "natural", "seconds", "size_text"]

# A node's status in a category: NVCRE's Passed and Failed, or excluded before the run, or no verdict yet.
NODE_PASSED, NODE_FAILED, NODE_SKIPPED, NODE_PENDING = "Passed", "Failed", "Skipped", "Pending"


def seconds(duration: str) -> int:
    total = 0
    for amount, unit in re.findall(r"(\d+)([hms])", duration):
        total += int(amount) * {"h": 3600, "m": 60, "s": 1}[unit]
    return total


def md_cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def size_text(size: int) -> str:
    """Bytes in binary units, as NVCRE's bandwidth table prints them (`8 B`, `1 MB`, `16 GB`)."""
    for unit, scale in (("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:g} {unit}"
    return f"{size} B"
