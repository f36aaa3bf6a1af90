"""A DCGM Job's world for the evidence unit tables (reconcile/evidence_ledger, evidence_blame, evidence_totals):
one Job running `dcgmi diag --json` on one node of 8 GPUs, its workload ended or running, its pod's log."""
from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile.world import JobWorld
from tests.unit.engine.evidence.dcgm_docs import MEMORY_MESSAGE, V4_TESTS, all_tests, v4

Obj = dict[str, Any]
NOW = datetime(2026, 1, 1, 0, 5, tzinfo=UTC)
NS, WORKFLOW, WF_UID = "nvcre", "dcgm", "wf-uid-1"
JOB, NODE = "dcgm-group-0-iter-1", "gpu-node-000"
POD = f"{JOB}-workload-node-0-0"
GPUS = range(8)


def dcgm_log(failing: dict[tuple[str, int], tuple[str, list[tuple[str, int]]]] | None = None) -> str:
    """A DCGM 4.x `--json` output of 8 GPUs, every test passing but `failing` (test, GPU) -> (status, errors)."""
    return json.dumps(v4(all_tests(V4_TESTS, "Pass", GPUS, failing or {}), list(GPUS)), indent=4)


GPU3_MEMORY = {("memory", 3): ("Fail", [(MEMORY_MESSAGE, 12)])}
ALL_SKIP_5 = {(test, 5): ("Skip", []) for test in V4_TESTS}


def job(retry: int = 0, args: tuple[str, ...] = ("diag", "-r", "2", "--json"), status: Obj | None = None) -> Obj:
    labels = {"nvcre.nvidia.com/workflow": WORKFLOW, "nvcre.nvidia.com/group": "group-0"}
    if retry:
        labels["cre.certification/retry"] = str(retry)
    return {
        "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job",
        "metadata": {"name": JOB, "namespace": NS, "uid": "job-uid", "resourceVersion": "7", "generation": 1,
                     "labels": labels, "annotations": {"nvcre.nvidia.com/group-nodes": NODE},
                     "ownerReferences": [{"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow",
                                          "name": WORKFLOW, "uid": WF_UID, "controller": True}]},
        "spec": {"workload": {"trainJob": {"runtimeRef": {"name": "dcgm-runtime"},
                                           "trainer": {"command": ["dcgmi"], "args": list(args)}}}},
        "status": status if status is not None else {
            "workloadRef": {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                            "name": f"{JOB}-workload", "namespace": NS, "uid": "wl-uid"},
            "conditions": [{"type": "InProgress", "status": "True", "reason": "WorkloadRunning",
                            "message": "Workload 1/1 is running", "lastTransitionTime": "2026-01-01T00:00:00Z"}]},
    }


def workload(ended: str | None = "Complete") -> Obj:
    conditions = [{"type": ended, "status": "True", "reason": ended, "message": f"jobset {ended.lower()}"}] \
        if ended else []
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": f"{JOB}-workload", "namespace": NS, "uid": "wl-uid",
                         "ownerReferences": [{"kind": "Job", "name": JOB, "uid": "job-uid", "controller": True}]},
            "status": {"conditions": conditions}}


def pod(exit_code: int = 0) -> Obj:
    term = {"exitCode": exit_code, "reason": "Error" if exit_code else "Completed"}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": POD, "namespace": NS, "labels": {"nvcre.nvidia.com/job": JOB}},
            "spec": {"nodeName": NODE, "containers": [{"name": "node"}]},
            "status": {"phase": "Failed" if exit_code else "Succeeded",
                       "containerStatuses": [{"name": "node", "state": {"terminated": term}}]}}


def shard_metadata(cm: Obj) -> Obj:
    """A shard ConfigMap as the driver's informer keeps it: metadata only."""
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {**cm["metadata"], "uid": f"uid-{cm['metadata']['name']}"}}


def world(the_job: Obj | None = None, log: str | None = "", ended: str | None = "Complete",
          existing: list[Obj] | None = None, skip_is_failure: bool = False) -> JobWorld:
    """The Job's world; `log` the pod's whole log (None: it could not be read), `existing` its shard ConfigMaps."""
    failed = ended == "Failed"
    return JobWorld(the_job or job(), workload(ended), [pod(1 if failed else 0)], {}, {}, now=NOW,
                    evidence_logs={f"{POD}/node": log}, gpus_per_node=8, skip_is_failure=skip_is_failure,
                    shards={cm["metadata"]["name"]: shard_metadata(cm)
                            for cm in existing or []})
