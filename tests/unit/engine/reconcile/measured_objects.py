"""A measured Job's world for the evidence unit tables (reconcile/evidence_measured, evidence_ledger): an nccl-tests
Job of group-0 on two nodes (an MPI launcher, which carries no Job label, and two workers) asking for a
BandwidthMeasurement, or a training Job asking for a GoodputMeasurement; its workload ended; the read pod's log."""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.logprofiles import builtin_profile
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile.world import JobWorld

Obj = dict[str, Any]
NOW = datetime(2026, 3, 2, 10, 30, tzinfo=UTC)
NS, WORKFLOW, WF_UID, GROUP = "nvcre", "nccl", "wf-uid-1", "group-0"
JOB = f"{WORKFLOW}-{GROUP}-iter-1"
WORKLOAD = f"{JOB}-workload"
LAUNCHER, WORKER_0, WORKER_1 = f"{WORKLOAD}-launcher-0-0", f"{WORKLOAD}-node-0-0", f"{WORKLOAD}-node-0-1"
NODES = ("gpu-node-000", "gpu-node-001")
TRAINING_LOG = ("2024-09-12T14:03:23.165700000Z  [2024-09-12 14:03:23] iteration       48/     500 | elapsed time per "
                "iteration (ms): 1532.7 | throughput per GPU (TFLOP/s/GPU): 402.6 | lm loss: 5.918337E+00 |\n"
                "2024-09-12T14:03:24.695600000Z  [2024-09-12 14:03:24] iteration       49/     500 | elapsed time per "
                "iteration (ms): 1529.9 | throughput per GPU (TFLOP/s/GPU): 403.3 | lm loss: 5.901264E+00 |\n")
PROFILES = {name: (builtin_profile(name), "") for name in ("nccl-bandwidth", "megatron-bridge")}
BANDWIDTH = {"logProfileRef": "nccl-bandwidth", "testType": "all_reduce"}
GOODPUT = {"logProfileRef": "megatron-bridge"}


def job(measured: Obj | None = None, retry: int = 0, args: tuple[str, ...] = ("all_reduce_perf", "-b", "8"),
        ended: str | None = None) -> Obj:
    """The Job; `measured` its spec's measurement fields (e.g. {"bandwidthMeasurement": BANDWIDTH})."""
    labels = {"nvcre.nvidia.com/workflow": WORKFLOW, "nvcre.nvidia.com/group": GROUP}
    if retry:
        labels["cre.certification/retry"] = str(retry)
    conditions = [{"type": "InProgress", "status": "True", "reason": "WorkloadRunning",
                   "message": "Workload 1/1 is running", "lastTransitionTime": "2026-03-02T10:00:00Z"}]
    if ended:
        conditions = [{"type": ended, "status": "True", "reason": "WorkloadCompleted", "message": "done",
                       "lastTransitionTime": "2026-03-02T10:20:00Z"}]
    return {
        "apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Job",
        "metadata": {"name": JOB, "namespace": NS, "uid": "job-uid", "resourceVersion": "7", "generation": 1,
                     "labels": labels, "annotations": {"nvcre.nvidia.com/group-nodes": ",".join(NODES)},
                     "ownerReferences": [{"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow",
                                          "name": WORKFLOW, "uid": WF_UID, "controller": True}]},
        "spec": {"workload": {"trainJob": {"runtimeRef": {"name": "mpi-runtime"},
                                           "trainer": {"command": ["mpirun"], "args": list(args)}}},
                 **(measured or {})},
        "status": {"workloadRef": {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                                   "name": WORKLOAD, "namespace": NS, "uid": "wl-uid"},
                   "conditions": conditions},
    }


def workload(ended: str | None = "Complete") -> Obj:
    conditions = [{"type": ended, "status": "True", "reason": ended, "message": f"jobset {ended.lower()}"}] \
        if ended else []
    return {"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
            "metadata": {"name": WORKLOAD, "namespace": NS, "uid": "wl-uid",
                         "ownerReferences": [{"kind": "Job", "name": JOB, "uid": "job-uid", "controller": True}]},
            "status": {"conditions": conditions}}


def pod(name: str, replicated: str, index: int, node: str, exit_code: int = 0, job_label: bool = True) -> Obj:
    term = {"exitCode": exit_code, "reason": "Error" if exit_code else "Completed"}
    labels = {"jobset.sigs.k8s.io/jobset-name": WORKLOAD, "jobset.sigs.k8s.io/replicatedjob-name": replicated,
              "batch.kubernetes.io/job-completion-index": str(index)}
    if job_label:
        labels["nvcre.nvidia.com/job"] = JOB
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NS, "labels": labels, "creationTimestamp": "2026-03-02T10:00:00Z"},
            "spec": {"nodeName": node, "containers": [{"name": "node"}]},
            "status": {"phase": "Failed" if exit_code else "Succeeded",
                       "containerStatuses": [{"name": "node", "state": {"terminated": term}}]}}


def pods(exit_code: int = 0, launcher: bool = True) -> tuple[list[Obj], list[Obj]]:
    """(the Job-labelled workers, every pod of the workload: an MPI launcher, which has no Job label, too)."""
    workers = [pod(WORKER_0, "node", 0, NODES[0], exit_code), pod(WORKER_1, "node", 1, NODES[1], exit_code)]
    return workers, [pod(LAUNCHER, "launcher", 0, NODES[0], exit_code, job_label=False)] * launcher + workers


def world(the_job: Obj, logs: dict[str, str | None] | None = None, ended: str | None = "Complete",
          existing: list[Obj] | None = None, profiles: dict[str, tuple[Obj | None, str]] | None = None) -> JobWorld:
    """The Job's world; `logs` "<pod>/<container>" -> the whole log, `existing` its shard ConfigMaps (metadata). A
    training Job (one asking for a GoodputMeasurement) runs no MPI launcher."""
    workers, every = pods(1 if ended == "Failed" else 0, "goodputMeasurement" not in the_job["spec"])
    return JobWorld(the_job, workload(ended), workers, {}, {}, now=NOW, evidence_logs=logs or {},
                    shards={cm["metadata"]["name"]: {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
                        **cm["metadata"], "uid": f"uid-{cm['metadata']['name']}"}} for cm in existing or []},
                    workload_pods=every, log_profiles=PROFILES if profiles is None else profiles)
