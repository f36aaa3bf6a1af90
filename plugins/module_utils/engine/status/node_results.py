"""What the node-result ConfigMaps hold (workflow spec §10): the node names of `succeeded-nodes-<uid8>` and the
`{name, reason, message}` entries of `failed-nodes-<uid8>`, gzip and base64 in `binaryData`.

The gzip streams carry no timestamp (mtime 0), so equal content gives equal bytes. `reconcile/node_results.py`
writes them.
"""
from __future__ import annotations

import base64
import gzip
import json
from typing import Any

SUCCEEDED_KEY = "succeeded-nodes.csv.gz"
FAILED_KEY = "failed-nodes.json.gz"

Obj = dict[str, Any]


def _gzip(data: bytes) -> str:
    return base64.b64encode(gzip.compress(data, mtime=0)).decode("ascii")


def _gunzip(cm: Obj | None, key: str) -> bytes:
    encoded = ((cm or {}).get("binaryData") or {}).get(key)
    return gzip.decompress(base64.b64decode(encoded)) if encoded else b""


def encode_succeeded(names: list[str]) -> str:
    """base64 of the gzip of the sorted, deduplicated, comma-separated names (as `binaryData` holds it)."""
    return _gzip(",".join(sorted(set(names))).encode())


def encode_failed(entries: list[Obj]) -> str:
    """base64 of the gzip of `[{name, reason, message}]`, one entry per (name, reason), sorted by both."""
    by_key = {(e.get("name", ""), e.get("reason", "")): e for e in entries}
    rows = [{"name": k[0], "reason": k[1], "message": by_key[k].get("message", "")} for k in sorted(by_key)]
    # Go's encoding/json: compact, HTML-escaped; ensure_ascii=False keeps UTF-8 as Go writes it.
    text = json.dumps(rows, separators=(",", ":"), ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return _gzip(text.encode())


def read_succeeded(cm: Obj | None) -> list[str]:
    """The node names in a succeeded-nodes ConfigMap ([] when absent or empty)."""
    text = _gunzip(cm, SUCCEEDED_KEY).decode()
    return [n for n in text.split(",") if n]


def read_failed(cm: Obj | None) -> list[Obj]:
    """The `{name, reason, message}` entries of a failed-nodes ConfigMap ([] when absent or empty)."""
    data = _gunzip(cm, FAILED_KEY)
    return json.loads(data) if data else []
