"""The workload object a Job runs: a Kubeflow Trainer TrainJob (surroundings.md §2.1, §2.3; NVCRE pkg/workload).

`build` is NVCRE's `workload.BuildObject` for the TrainJob adapter: validate the user's
`workloadMetadata.labels`, merge them with the adapter's, add the ownership labels and the controller owner
reference, and inject the pod label `nvcre.nvidia.com/job` into the worker replicatedJob's pod template through a
runtimePatch (NVCRE's InjectPodLabel: the MPI launcher's pods carry no such label). `status` is the adapter's
GetStatus: the TrainJob's conditions as a workload phase.
"""
from __future__ import annotations

from typing import Any

from ..api import naming
from ..api.errors import InputError
from ..api.objects import condition, controller_reference, json_copy
from ..api.vocabulary import (
    API_VERSION,
    JOB,
    LABEL_JOB,
    LABEL_MANAGED_BY,
    MANAGED_BY_NVCRE,
    TRAINER_API_VERSION,
    TRAINJOB,
)
from ..spec import gang
from .jobs import DEFAULT_TARGET, LAUNCHER

# Trainer requires a domain-prefixed manager per runtimePatch; ours names the label it owns.
POD_LABEL_PATCH_MANAGER = "nvcre.nvidia.com/job"
LABELS_PATH = "spec.workloadMetadata.labels"
ADAPTER_LABELS_PATH = "spec.workload.trainJob.labels"

PENDING = "Pending"
RUNNING = "Running"
SUCCEEDED = "Succeeded"
FAILED = "Failed"

Obj = dict[str, Any]


def build(job: Obj) -> Obj:
    """The TrainJob `<job>-workload` for `job`; InputError on invalid or conflicting labels."""
    meta = job.get("metadata") or {}
    spec = job.get("spec") or {}
    name = meta.get("name", "")
    train_job = json_copy((spec.get("workload") or {}).get("trainJob"))
    if not isinstance(train_job, dict):
        raise InputError("spec.workload", "exactly one of the fields in [trainJob] must be set")
    labels = _labels(spec, train_job, name)
    _inject_pod_label(train_job, name)
    obj_meta: Obj = {"name": naming.workload_name(name)}
    if meta.get("namespace"):
        obj_meta["namespace"] = meta["namespace"]
    obj_meta["labels"] = labels
    obj_meta["ownerReferences"] = [controller_reference(job, JOB, job.get("apiVersion", API_VERSION))]
    return {"apiVersion": TRAINER_API_VERSION, "kind": TRAINJOB, "metadata": obj_meta, "spec": train_job}


def _labels(spec: Obj, train_job: Obj, job_name: str) -> dict[str, str]:
    """User labels (validated) merged with the adapter's, then managed-by and the job label.

    The TrainJob adapter's own labels are `trainJob.labels`, which Trainer propagates to the JobSet; the
    object carries them too, so one key cannot name two queues (our reading: the spec only says that a
    different value for the same key is an error).
    """
    user = dict((spec.get("workloadMetadata") or {}).get("labels") or {})
    if error := gang.labels_error(user, LABELS_PATH):
        path, _sep, rule = error.partition(": ")
        raise InputError(path, rule)
    adapter = dict(train_job.get("labels") or {})
    for key in sorted(user.keys() & adapter.keys()):
        if user[key] != adapter[key]:
            raise InputError(f'{LABELS_PATH}["{key}"]',
                             f'value "{user[key]}" conflicts with "{adapter[key]}" from {ADAPTER_LABELS_PATH}')
    return {**adapter, **user, LABEL_MANAGED_BY: MANAGED_BY_NVCRE, LABEL_JOB: job_name}


def worker_target(train_job: Obj) -> str:
    """NVCRE's workerTargetJob: the first replicatedJob the patches address that is not the launcher, else `node`."""
    names = (rj.get("name") or "" for rj in gang.runtime_patch_jobs(train_job))
    return next((name for name in names if name and name != LAUNCHER), DEFAULT_TARGET)


def _inject_pod_label(train_job: Obj, job_name: str) -> None:
    """Append our runtimePatch labelling the worker replicatedJob's pods.

    The user's patches are kept in order; a stale patch of our manager is replaced, not duplicated.
    """
    patches = [p for p in train_job.get("runtimePatches") or [] if (p or {}).get("manager") != POD_LABEL_PATCH_MANAGER]
    train_job["runtimePatches"] = patches  # a stale patch of ours names no worker
    patches.append({"manager": POD_LABEL_PATCH_MANAGER, "trainingRuntimeSpec": {"template": {"spec": {
        "replicatedJobs": [{"name": worker_target(train_job), "template": {"spec": {"template": {"metadata": {
            "labels": {LABEL_JOB: job_name}}}}}}]}}}})


def status(train_job: Obj) -> tuple[str, str]:
    """(phase, message) of a TrainJob: terminal conditions first, then suspension, else Running."""
    for cond_type, phase in (("Failed", FAILED), ("Complete", SUCCEEDED)):
        cond = condition(train_job, cond_type)
        if cond and cond.get("status") == "True":
            return phase, cond.get("message") or cond.get("reason") or ""
    suspended = condition(train_job, "Suspended")
    suspended_true = suspended is not None and suspended.get("status") == "True"
    if suspended_true or (train_job.get("spec") or {}).get("suspend"):
        return PENDING, (suspended or {}).get("message", "") if suspended_true else ""
    return RUNNING, ""
