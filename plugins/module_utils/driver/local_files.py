"""The controller's generated files (a baseline, a golden profile): written only when their text changes, so a task
run again on the same inputs reports no change."""
from __future__ import annotations

import os


def write_if_changed(path: str, text: str, check_mode: bool) -> bool:
    """Whether `path` would change to hold `text`; written (its folder made) unless `check_mode`."""
    try:
        with open(path, encoding="utf-8") as handle:
            changed = handle.read() != text
    except FileNotFoundError:
        changed = True
    if changed and not check_mode:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    return changed
