"""The writes of the node-result ConfigMaps (workflow spec §10): `succeeded-nodes-<uid8>` and `failed-nodes-<uid8>`.

Writes are unions with what already exists, so merging the same result twice changes nothing: a
reconcile pass that is killed and re-run cannot lose or duplicate a node. Their content is encoded by
`status/node_results.py` with no timestamp, so equal content gives equal bytes and an unchanged ConfigMap
is not rewritten.
"""
from __future__ import annotations

import json
from typing import Any

from ..api import naming
from ..api.actions import Create, Replace
from ..api.objects import controller_reference
from ..api.vocabulary import API_VERSION, WORKFLOW
from ..status.node_results import (
    FAILED_KEY,
    SUCCEEDED_KEY,
    encode_failed,
    encode_succeeded,
    read_failed,
    read_succeeded,
)

Obj = dict[str, Any]


def _configmap(workflow: Obj, name: str, key: str, value: str) -> Obj:
    meta = workflow.get("metadata") or {}
    cm_meta: Obj = {"name": name, "namespace": meta.get("namespace", "")}
    if meta.get("uid"):
        cm_meta["ownerReferences"] = [controller_reference(workflow, WORKFLOW, API_VERSION)]
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": cm_meta, "binaryData": {key: value}}


def _write(workflow: Obj, live: Obj | None, name: str, key: str, value: str) -> Create | Replace | None:
    if live is None:
        return Create(_configmap(workflow, name, key, value), owner_uid=(workflow.get("metadata") or {}).get("uid", ""))
    if (live.get("binaryData") or {}).get(key) == value:
        return None
    updated = json.loads(json.dumps(live))
    updated.setdefault("binaryData", {})[key] = value
    return Replace(updated)


def merge_succeeded(workflow: Obj, configmaps: dict[str, Obj], names: list[str]) -> tuple[str, Create | Replace | None]:
    """(ConfigMap name, the write that makes it hold its nodes ∪ `names`, or None when it already does)."""
    name = naming.succeeded_nodes_configmap((workflow.get("metadata") or {}).get("uid", ""))
    live = configmaps.get(name)
    return name, _write(workflow, live, name, SUCCEEDED_KEY, encode_succeeded(read_succeeded(live) + names))


def merge_failed(workflow: Obj, configmaps: dict[str, Obj], entries: list[Obj]) -> tuple[str, Create | Replace | None]:
    """(ConfigMap name, the write that makes it hold its entries ∪ `entries`, or None). On a repeated
    (name, reason) the newest message wins."""
    name = naming.failed_nodes_configmap((workflow.get("metadata") or {}).get("uid", ""))
    live = configmaps.get(name)
    return name, _write(workflow, live, name, FAILED_KEY, encode_failed(read_failed(live) + entries))


def regressed(workflow: Obj, configmaps: dict[str, Obj], entries: list[Obj]) -> list[tuple[str, Create | Replace]]:
    """The writes that move regressed nodes (`entries`, reason RegressionDetected) out of the succeeded nodes and
    into the failed nodes; only the writes that change something. A node is never in both lists."""
    names = {e["name"] for e in entries}
    failed_name, failed_write = merge_failed(workflow, configmaps, entries)
    uid = (workflow.get("metadata") or {}).get("uid", "")
    succeeded_name = naming.succeeded_nodes_configmap(uid)
    live = configmaps.get(succeeded_name)
    kept = [n for n in read_succeeded(live) if n not in names]
    succeeded_write = _write(workflow, live, succeeded_name, SUCCEEDED_KEY, encode_succeeded(kept)) if live else None
    return [(n, w) for n, w in ((failed_name, failed_write), (succeeded_name, succeeded_write)) if w is not None]
