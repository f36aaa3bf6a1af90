"""The report's `configuration` of a node-drift category, from the rows its shards hold (issue 42): each node's
snapshot (the row that keeps it) judged against the golden profile its own Job and node give, exactly as the Job
tier judged it, then the fleet's drift across every node of the run (which one node's Job cannot see)."""
from __future__ import annotations

import json
from typing import Any

from ..engine.api.actions import Ref
from ..engine.api.errors import InputError
from ..engine.api.vocabulary import ANNOTATION_GROUP_NODES
from ..engine.evidence import drift, golden
from ..engine.evidence.golden import GoldenParameters
from ..engine.evidence.sources import NODE_DRIFT, SNAPSHOT, reader_of
from ..engine.reconcile import node_drift_parameters
from ..kube.rest import Kube
from . import evidence_store

Obj = dict[str, Any]


def of(kube: Kube, stored: evidence_store.WorkflowEvidence, jobs: dict[str, Obj]) -> Obj | None:
    """`configuration` of a category whose Jobs run the node-drift collector (None otherwise)."""
    collecting = [job for job in jobs.values() if reader_of(job) == NODE_DRIFT]
    if not collecting:
        return None
    by_node: dict[str, GoldenParameters] = {}
    for job in collecting:
        for node in filter(None, ((job.get("metadata") or {}).get("annotations") or {})
                           .get(ANNOTATION_GROUP_NODES, "").split(",")):
            try:
                by_node[node] = node_drift_parameters.of_job(job, kube.get(Ref("v1", "Node", "", node)))
            except InputError:
                continue  # the run's profile does not read: its seal says so (partial), and the report judges none
    snapshots: list[Obj] = []
    found: list[Obj] = []
    for row in evidence_store.rows(kube, stored):
        if row.get("test") != golden.TEST or row.get("metric") != SNAPSHOT or not isinstance(row.get("value"), str):
            continue
        snapshot = json.loads(row["value"])
        snapshots.append(snapshot)
        params = by_node.get(row["node"])
        if params is not None:
            found += golden.findings(snapshot, params.profile, params.product, params.platform)
    profile = next(iter(by_node.values())).profile if by_node else None
    return drift.configuration(snapshots, found, profile)
