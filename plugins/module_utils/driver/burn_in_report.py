"""The report's `burnIn` of a GEMM burn-in category, from the rows its shards hold (issue 41): each node judged
with the parameters its own Job and its GPU product give, exactly as the Job tier judged it."""
from __future__ import annotations

from typing import Any

from ..engine.api.actions import Ref
from ..engine.api.naming import natural
from ..engine.api.vocabulary import ANNOTATION_GROUP_NODES
from ..engine.evidence import gemm_report
from ..engine.evidence.gemm_verdict import GemmParameters, GemmParametersError, is_harness, parameters_of
from ..engine.evidence.sources import trainer_words
from ..engine.reconcile import burn_in_parameters
from ..kube.rest import Kube
from . import evidence_store

Obj = dict[str, Any]


def of(kube: Kube, stored: evidence_store.WorkflowEvidence, jobs: dict[str, Obj], slow_fails: bool = False) -> Obj | None:
    """The report's `burnIn` of a category whose Jobs run the GEMM burn-in harness (None otherwise): its rows read
    again from the shards, each node judged with the parameters its own Job and its product give
    (reconcile/burn_in_parameters, as the Job tier judged it)."""
    harness = {name: job for name, job in jobs.items() if is_harness(trainer_words(job))}
    if not harness:
        return None
    per_node: dict[str, GemmParameters] = {}
    for job in harness.values():
        for node in filter(None, ((job.get("metadata") or {}).get("annotations") or {})
                           .get(ANNOTATION_GROUP_NODES, "").split(",")):
            try:
                per_node[node] = burn_in_parameters.of_job(job, kube.get(Ref("v1", "Node", "", node)))
            except GemmParametersError:
                continue  # its flags do not read: its seal says so (partial), and the report has no figure for it
    category = per_node[min(per_node, key=natural)] if per_node else parameters_of(
        trainer_words(next(iter(harness.values()))))
    return gemm_report.burn_in_report(evidence_store.rows(kube, stored), category, per_node, slow_fails)
