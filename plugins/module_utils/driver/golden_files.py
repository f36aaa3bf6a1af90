"""golden_generate's files: the snapshots of a trusted run read from the controller's disk, the profile written.

`src` names files or folders (searched recursively, in name order). A file is a snapshot's JSON (an object with
`node` and `gpus`, or a list of them: what a results bundle keeps per node) or a node-drift collector's output
(`kubectl logs` of a node-drift pod, `node-drift/1` records). In a folder, files that are neither are left alone (a
results bundle holds rows and a manifest too); a file named in `src` must be one. A node found twice keeps its
latest snapshot (by its collection `time`).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

try:
    import yaml
except ImportError:  # requirements.py: the face names PyYAML before this is used
    from ..requirements import ABSENT as yaml  # type: ignore[no-redef]

from ..engine.api.errors import InputError
from ..engine.catalog.golden_defaults import defaults, load_text
from ..engine.evidence import node_snapshot
from ..engine.evidence.config_snapshot import gpu, nic, node
from ..engine.evidence.dcgm_results import UnreadableOutput
from ..engine.evidence.golden_generate import generate
from .local_files import write_if_changed

Obj = dict[str, Any]
HEADER = ("# A golden profile written by cre.certification.golden_generate from a trusted run's snapshots: each pinned\n"
          "# value is the majority of the run's nodes of the product (nodes: how many held it, of: how many reported\n"
          "# it). Edit it freely; docs/golden-configuration.md describes every field.\n")


def _snapshot(data: Any, where: str) -> Obj:
    """A snapshot's JSON with every key of the contract (absent ones None)."""
    if not isinstance(data, dict) or not isinstance(data.get("node"), str) or not isinstance(data.get("gpus"), list):
        raise InputError("src", f"{where} is not a node snapshot: give an object with node (a string) and gpus (a list)")
    gpus = [gpu(int(g.get("index", i)), **{k: v for k, v in g.items() if k != "index"})
            for i, g in enumerate(data["gpus"]) if isinstance(g, dict)]
    nics = [nic(str(n.get("device")), n.get("port"), **{k: v for k, v in n.items() if k not in ("device", "port")})
            for n in data.get("nics") or [] if isinstance(n, dict)]
    return {**node(data["node"], gpus, nics, driver=data.get("driver"), cuda=data.get("cuda"),
                   kernel=data.get("kernel"), attached_gpus=data.get("attached_gpus")), "time": data.get("time")}


def _read(path: Path, named: bool) -> list[Obj]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise InputError("src", f"cannot read {path}: {err.strerror}") from None
    if node_snapshot.is_collector_output(text):
        try:
            return [node_snapshot.read(text)]
        except UnreadableOutput as err:
            raise InputError("src", f"{path} is not node-drift output: {err}") from None
    try:
        data = json.loads(text) if path.suffix == ".json" else None
    except ValueError:
        data = None
    items = data if isinstance(data, list) else [data]
    if data is not None and all(isinstance(i, dict) and "node" in i and "gpus" in i for i in items):
        return [_snapshot(item, f"{path}[{i}]" if isinstance(data, list) else str(path)) for i, item in enumerate(items)]
    if named:
        raise InputError("src", f"{path} is neither a node snapshot's JSON nor a node-drift collector's output")
    return []


def snapshots(sources: list[str]) -> tuple[list[Obj], list[str]]:
    """The snapshots under `sources` (one per node, its latest) and the files they came from."""
    found: dict[str, tuple[Obj, str]] = {}
    for source in sources:
        root = Path(source)
        if not root.exists():
            raise InputError("src", f"{source} does not exist: give snapshot files, collector outputs or folders")
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for path in files:
            for snapshot in _read(path, named=not root.is_dir()):
                earlier = found.get(snapshot["node"])
                if earlier is None or str(snapshot.get("time") or "") >= str(earlier[0].get("time") or ""):
                    found[snapshot["node"]] = (snapshot, str(path))
    return [s for s, _p in found.values()], sorted({p for _s, p in found.values()})


def generate_file(args: Obj, check_mode: bool) -> Obj:
    """golden_generate: the profile of the snapshots under `args["src"]`, written to `args["dest"]`."""
    found, files = snapshots(args["src"])
    if not found:
        raise InputError("src", f"no node snapshot in {', '.join(args['src'])}: give the folder of a results bundle, "
                                "saved node-drift pod logs or snapshot JSON files")
    made = generate(found, defaults().catalog, args["platform"])
    text = HEADER + yaml.safe_dump(made["profile"], sort_keys=False, default_flow_style=False)
    changed = write_if_changed(args["dest"], text, check_mode)
    return {"changed": changed, "profile": made["profile"], "unpinned": made["unpinned"],
            "nodes": sorted(s["node"] for s in found), "files": files}


def run_profile(path: str | None) -> Obj:
    """certification_run's `golden_profile`: the file read and checked over the shipped profile (InputError naming
    the path and the field), as the JSON its Certification carries: {"golden_profile_json": ...}; {} without one."""
    if not path:
        return {}
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise InputError("golden_profile", f"cannot read {path}: {err.strerror}") from None
    load_text(text, f"golden_profile {path}")
    return {"golden_profile_json": json.dumps(yaml.safe_load(text), sort_keys=True, separators=(",", ":"))}
