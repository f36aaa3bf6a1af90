"""A saved log as the pod log API returns it: bytes decoded, no newline translation (a progress bar's carriage
returns stay). Logs with carriage returns are kept gzipped (`.gz`), so the tree's text files stay plain lines."""
from __future__ import annotations

import gzip
from pathlib import Path


def text(path: Path) -> str:
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode("utf-8")
