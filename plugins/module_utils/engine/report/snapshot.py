"""The report snapshot kept in the cluster: a ConfigMap owned by the Certification (it goes with it) holding
`report.json.gz` (binaryData: gzip of report.json), as NVCRE's report exporter keeps its snapshot
(surroundings.md §3.5: `report.json.gz` with sha256, at most 8 MiB raw / 512 KiB gz, else PayloadTooLarge).
NVCRE does not document the ConfigMap's name: ours is `<certification>-report`.

Pure: the Certification and report.json's text in, the ConfigMap out, and back.
"""
from __future__ import annotations

import base64
import gzip
import hashlib
from typing import Any

from ..api.errors import InputError
from ..api.objects import controller_reference, meta
from ..api.vocabulary import API_VERSION, CERTIFICATION, GROUP, LABEL_CERTIFICATION, LABEL_MANAGED_BY, MANAGED_BY_NVCRE

KEY = "report.json.gz"
ANNOTATION_SHA256 = f"{GROUP}/report-sha256"  # of report.json (the uncompressed text)
MAX_RAW, MAX_GZ = 8 << 20, 512 << 10
PAYLOAD_TOO_LARGE = "PayloadTooLarge"

Obj = dict[str, Any]


def name(certification: str) -> str:
    return f"{certification}-report"


def compress(text: str) -> bytes:
    """gzip with no timestamp, so the same report always gives the same bytes (and no needless write)."""
    return gzip.compress(text.encode("utf-8"), mtime=0)


def too_large(text: str, packed: bytes) -> str:
    """PayloadTooLarge's message when the snapshot exceeds NVCRE's limits, else ""."""
    raw = len(text.encode("utf-8"))
    if raw > MAX_RAW or len(packed) > MAX_GZ:
        return (f"{PAYLOAD_TOO_LARGE}: the report is {raw} bytes ({len(packed)} gzipped); a snapshot holds at most "
                f"{MAX_RAW} bytes ({MAX_GZ} gzipped)")
    return ""


def configmap(certification: Obj, text: str, packed: bytes) -> Obj:
    cert = meta(certification)
    return {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name(cert["name"]), "namespace": cert.get("namespace") or "default",
                     "labels": {LABEL_MANAGED_BY: MANAGED_BY_NVCRE, LABEL_CERTIFICATION: cert["name"]},
                     "annotations": {ANNOTATION_SHA256: hashlib.sha256(text.encode("utf-8")).hexdigest()},
                     "ownerReferences": [controller_reference(certification, CERTIFICATION, API_VERSION)]},
        "binaryData": {KEY: base64.b64encode(packed).decode("ascii")},
    }


def same(live: Obj, desired: Obj) -> bool:
    """The live snapshot already holds this report, with our labels and owner."""
    return live.get("binaryData") == desired["binaryData"] and all(
        meta(live).get(k) == desired["metadata"][k] for k in ("labels", "annotations", "ownerReferences"))


def report_text(cm: Obj) -> str:
    """report.json's text from a snapshot; refused when it is not one or its sha256 does not match."""
    ref = f"ConfigMap {meta(cm).get('namespace')}/{meta(cm).get('name')}"
    try:
        text = gzip.decompress(base64.b64decode((cm.get("binaryData") or {})[KEY])).decode("utf-8")
    except (KeyError, ValueError, OSError, EOFError) as exc:
        raise InputError("from_snapshot", f"{ref} holds no readable {KEY} ({exc or type(exc).__name__})") from exc
    expected = (meta(cm).get("annotations") or {}).get(ANNOTATION_SHA256, "")
    if expected and hashlib.sha256(text.encode("utf-8")).hexdigest() != expected:
        raise InputError("from_snapshot", f"{ref}: {KEY} does not match its sha256 annotation {ANNOTATION_SHA256}")
    return text
