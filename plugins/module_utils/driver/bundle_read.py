"""A results bundle read back, offline (the bundle_read module): its manifest checked against every file it lists,
then the rows asked for, filtered while they are read.

Only the manifest says what the bundle holds: a folder without one is refused, never globbed (a bundle whose
writing did not finish has no manifest, bundle.py). A manifest that does not parse, whose `fileCount` is not the
number of files it lists, that lists a file absent, of another size or another sha256, or whose `formatVersion`
this collection does not know, is refused with one line naming what and where.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any, Optional

from ..engine.api.errors import InputError
from .bundle import COMPONENTS_DIR, FORMAT_VERSION, MANIFEST

Obj = dict[str, Any]
CHUNK = 1 << 20


def _refuse(rule: str) -> InputError:
    return InputError("path", rule)


def manifest_of(folder: Path) -> Obj:
    """The manifest of the bundle in `folder`, checked for shape (not yet against the files)."""
    path = folder / MANIFEST
    if not folder.is_dir():
        raise _refuse(f"{folder} is not a folder: give the bundle_dir that certification_results wrote")
    if not path.is_file():
        raise _refuse(f"{folder} has no {MANIFEST}: it is no results bundle, or its writing did not finish; write it "
                      "again with certification_results bundle_dir")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise _refuse(f"{path} does not parse as JSON ({err}): write the bundle again") from None
    if not isinstance(manifest, dict):
        raise _refuse(f"{path} is not a JSON object: write the bundle again")
    if manifest.get("formatVersion") != FORMAT_VERSION:
        raise _refuse(f"{path}: formatVersion {manifest.get('formatVersion')!r} is unknown; this collection reads "
                      f"{FORMAT_VERSION} (read it with the collection version that wrote it)")
    files = manifest.get("files")
    if not isinstance(files, list) or not all(_entry_ok(e) for e in files):
        raise _refuse(f"{path}: files is not a list of {{path, sha256, size}}: write the bundle again")
    if manifest.get("fileCount") != len(files):
        raise _refuse(f"{path}: fileCount is {manifest.get('fileCount')!r} but it lists {len(files)} files: the "
                      "manifest was changed; write the bundle again")
    return manifest


def _entry_ok(entry: Any) -> bool:
    """A file entry whose path stays inside the bundle."""
    if not (isinstance(entry, dict) and isinstance(entry.get("path"), str) and isinstance(entry.get("sha256"), str)
            and isinstance(entry.get("size"), int)):
        return False
    path = PurePosixPath(entry["path"])
    return bool(entry["path"]) and not path.is_absolute() and ".." not in path.parts and path.name != MANIFEST


def verify(folder: Path, manifest: Obj) -> None:
    """Every file the manifest lists is there, of its size and sha256."""
    for entry in manifest["files"]:
        path = folder / entry["path"]
        if not path.is_file():
            raise _refuse(f"{folder}: {entry['path']} is listed in {MANIFEST} but missing: the bundle is incomplete; "
                          "write it again")
        size, sha = path.stat().st_size, hashlib.sha256()
        if size != entry["size"]:
            raise _refuse(f"{folder}: {entry['path']} is {size} bytes, {MANIFEST} says {entry['size']}: the file "
                          "was changed after the bundle was written")
        with open(path, "rb") as handle:
            while chunk := handle.read(CHUNK):
                sha.update(chunk)
        if sha.hexdigest() != entry["sha256"]:
            raise _refuse(f"{folder}: {entry['path']} has sha256 {sha.hexdigest()}, {MANIFEST} says "
                          f"{entry['sha256']}: the file was changed after the bundle was written")


def _rows(folder: Path, manifest: Obj, component: Optional[str]) -> Iterator[Obj]:  # noqa: UP045
    """The rows of the component files the manifest lists (of `component` only, when given), in its order."""
    for entry in manifest["files"]:
        parts = PurePosixPath(entry["path"]).parts
        if len(parts) != 2 or parts[0] != COMPONENTS_DIR or not parts[1].endswith(".ndjson"):
            continue
        if component is not None and parts[1] != f"{component}.ndjson":
            continue
        with open(folder / entry["path"], encoding="utf-8") as handle:
            for number, text in enumerate(handle, 1):
                try:
                    yield json.loads(text)
                except ValueError as err:
                    raise _refuse(f"{folder}: {entry['path']} line {number} is not a JSON row ({err})") from None


def read_bundle(folder: Path, node: Optional[str] = None, component: Optional[str] = None,  # noqa: UP045
                outcome: Optional[str] = None, limit: int = 0) -> Obj:  # noqa: UP045
    """The bundle's totals, its manifest in short, and its rows matching every filter given (the first `limit`,
    all with 0); `matched` counts every matching row."""
    manifest = manifest_of(folder)
    verify(folder, manifest)
    rows: list[Obj] = []
    matched = 0
    for row in _rows(folder, manifest, component):
        if (node is None or row.get("node") == node) and (outcome is None or row.get("outcome") == outcome):
            matched += 1
            if not limit or len(rows) < limit:
                rows.append(row)
    return {"totals": manifest.get("totals") or {}, "matched": matched, "rows": rows,
            "manifest": {"formatVersion": manifest["formatVersion"], "fileCount": manifest["fileCount"],
                         "files": [{"path": e["path"], "size": e["size"]} for e in manifest["files"]]}}
