"""What to do about each failure: a severity and one recommended action per failure reason the engine can emit
(failed-nodes records, Job Failed/HardwareFailed/ValidationFailed reasons, Workflow and Certification Failed
reasons, measurement outcomes that fail a diagnose gate, and ours, `RegressionDetected`).

Severities, worst first:
- critical: the node's hardware is faulty; take it out of service.
- high: a node or group failed what the certification checks (performance, stability); it is not fit as it is.
- medium: the run could not judge (scheduling, measurement, discovery); fix the cause and certify again.
- low: the certification's own input or configuration is wrong; no node is at fault.

`annotate(report)` adds `severity` and `action` to the report's failed nodes, failed groups and node verdicts
with a reason, and the top-level `remedies` list (a reason, its severity and action, the nodes it names) that
automation acts on. Pure: a CertReport in, the same dict (annotated) out. Every reason a test finds in the engine
must be in `REMEDIES` or, when it never marks a failure, in `NOT_FAILURES` (tests/unit/engine/report/test_remedies.py).
"""
from __future__ import annotations

from typing import Any

from ..api import vocabulary as v
from .text import natural

CRITICAL, HIGH, MEDIUM, LOW = "critical", "high", "medium", "low"
SEVERITIES = (CRITICAL, HIGH, MEDIUM, LOW)
REGRESSION_DETECTED = v.REGRESSION_DETECTED

_RECERTIFY = "then certify again"
# reason -> (severity, action: for a single node, or for the run when the reason is a category's or a run's).
REMEDIES: dict[str, tuple[str, str]] = {
    # Hardware: the node must leave service.
    v.HARDWARE_FAILURE_DETECTED: (CRITICAL, "Drain the node and run the vendor's diagnostics (NVIDIA field "
                                            "diagnostics / dcgmi diag -r 4) before returning it to service."),
    "JobHardwareFailed": (CRITICAL, "Drain the nodes the failed-nodes list names and run the vendor's diagnostics "
                                    "(NVIDIA field diagnostics / dcgmi diag -r 4) before returning them to service."),
    # Performance and stability: the node or group is not fit as it is.
    v.THRESHOLD_VIOLATION: (HIGH, "Check the node's NICs and links (ibstat, link speed and error counters, cabling) "
                                  "and its GPU clocks, then certify it again."),
    v.THRESHOLD_VIOLATED: (HIGH, "Check the NICs and links of the group's nodes (ibstat, error counters, cabling), "
                                 f"{_RECERTIFY}."),
    v.TRANSPORT_MISMATCH: (HIGH, "Install or configure the NCCL network plugin so NCCL runs over the platform's "
                                 "network (NCCL_NET, the IB/EFA/TCPX plugin), then certify again."),
    v.WORKLOAD_FAILED: (HIGH, "Read the failure log of the node's pod (exit code, last lines) and check the node's GPU "
                              f"and network health, {_RECERTIFY}."),
    v.EVIDENCE_LACKING: (HIGH, "Find why the diagnostic tested nothing on the GPUs named (every test skipped, or its "
                               "output unreadable: the DCGM host engine, the GPU's driver, the run level), "
                               f"{_RECERTIFY}."),
    v.WORKLOAD_STALLED: (HIGH, "Check the node for hung GPUs or NCCL (dmesg XID errors, nvidia-smi) and its "
                               f"storage and network, {_RECERTIFY}."),
    v.JOB_TIMED_OUT: (HIGH, "Check why the workload did not finish in time (a hung GPU or a slow link on its nodes) "
                            "or raise the Job's timeout if the test legitimately needs longer."),
    "IterationsFailed": (HIGH, "Fix the failed groups' nodes the failed-nodes list names (see each node's reason), "
                               f"{_RECERTIFY}."),
    "JobValidationFailed": (HIGH, "Fix what the failed groups' nodes violated (see each node's reason), "
                                  f"{_RECERTIFY}."),
    v.WORKFLOW_FAILED: (HIGH, "See the failed category's reason and fix its cause, then certify again."),
    v.BELOW_FLEET_MEDIAN: (MEDIUM, "Compare the GPU with its fleet: check its clocks, power limit, cooling and "
                                   "placement (docs/gemm-burn-in-verdict.md, the fleet rule); a whole node slow "
                                   "points at its power or cooling."),
    REGRESSION_DETECTED: (MEDIUM, "Compare the node's figures with the baseline's and check what changed since "
                                  "(driver, firmware, NCCL, cabling); a deliberate change needs a new baseline."),
    # The run could not judge: scheduling, measurement, discovery.
    v.WORKLOAD_SCHEDULING_BLOCKED: (MEDIUM, "Free or add capacity (GPUs, NICs, the queue's quota) so the workload "
                                            f"can be scheduled, {_RECERTIFY}."),
    "GangSchedulingConflict": (MEDIUM, "Make the gang-scheduling settings agree (queue, scheduler name, min "
                                       f"member) for every group, {_RECERTIFY}."),
    v.WORKLOAD_CREATION_ERROR: (MEDIUM, "Check that the training operator and its runtime are installed and the "
                                        f"service account may create TrainJobs, {_RECERTIFY}."),
    v.DEPENDENCY_CREATION_ERROR: (MEDIUM, "Check the category's dependencies (ConfigMaps, PVCs, secrets) can be "
                                          f"created in the namespace, {_RECERTIFY}."),
    v.MEASUREMENT_CREATION_ERROR: (MEDIUM, "Check that the measurement CRDs are installed and may be created in "
                                           f"the namespace, {_RECERTIFY}."),
    v.MEASUREMENT_TIMEOUT: (MEDIUM, "Check that the workload logs its results in the format the LogProfile reads "
                                    "and raise the measurement timeout if it needs longer."),
    v.MEASUREMENT_UNREADABLE: (MEDIUM, "Check the workload's log against its LogProfile: none of its result rows "
                                       "could be trusted."),
    "MeasurementUnavailable": (MEDIUM, "Run the workload long enough to log every figure its thresholds need."),
    v.JOB_FAILED: (MEDIUM, "The workload failed before it gave figures: read its failure log and fix the cause, "
                           f"{_RECERTIFY}."),
    v.NO_DATA_COLLECTED: (MEDIUM, "Check that the workload prints its results and the LogProfile matches them, "
                                  f"{_RECERTIFY}."),
    v.LOGS_UNAVAILABLE: (MEDIUM, "Check that the workload pods' logs can be read (log rotation, RBAC for pods/log), "
                                 f"{_RECERTIFY}."),
    v.ROWS_REFUSED: (MEDIUM, "Check the workload's log: it has result rows but none could be trusted, or those of "
                             "its largest sizes were refused (mixed, edited or partial runs; status.refusedRowLines "
                             "says why)."),
    "NodeDiscoveryError": (MEDIUM, "Check the node selector and that the GPU nodes carry nvidia.com/gpu.present=true "
                                   "(GPU feature discovery running)."),
    "HeterogeneousPlatform": (MEDIUM, "Select nodes of one platform (by label) for the certification."),
    "HeterogeneousGPU": (MEDIUM, "Select nodes of one GPU product (by label) for the certification."),
    "StatusUpdateConflict": (MEDIUM, "Stop the other writer that keeps changing the Certification's status (a "
                                     "resident NVCRE controller), then run the play again."),
    "PartitionError": (MEDIUM, "Give the category enough schedulable nodes for its nodes per job, or lower its test "
                               "scale."),
    # Input and configuration: no node is at fault.
    v.BUILD_FAILED: (LOW, "Fix the category's definition or the detected GPU architecture the build needs, "
                          f"{_RECERTIFY}."),
    v.CATEGORY_NOT_FOUND: (LOW, "Name a category the catalog has (cre.certification.catalog_info lists them)."),
    v.WORKFLOW_DELETED: (LOW, "Someone deleted the run's Workflow; delete the WorkloadRun and run it again."),
    v.WORKLOAD_RUN_NAME_COLLISION: (LOW, "Choose another WorkloadRun name or delete the object that holds it."),
    v.WORKFLOW_VALIDATION_FAILED: (HIGH, "The workload ran but missed its thresholds: see the ValidationFailed "
                                         "condition for the figures, then check the nodes it names."),
    v.CERTIFICATION_NAME_COLLISION: (LOW, "Choose another Certification name or delete the object that holds it."),
    v.WORKFLOW_NAME_COLLISION: (LOW, "Delete the Workflow of the same name that another owner holds, or rename the "
                                     "Certification."),
    v.JOB_NAME_COLLISION: (LOW, "Delete the Job of the same name that another owner holds."),
    v.DEPENDENCY_NAME_COLLISION: (LOW, "Delete or rename the object that holds the dependency's name."),
    v.LOG_PROFILE_NOT_FOUND: (LOW, "Install the LogProfile the workload names or fix its name."),
    v.UNKNOWN_THRESHOLD_KEY: (LOW, "Use only threshold keys the measurements give (busBandwidthGBps, "
                                   "algBandwidthGBps, goodputRatio, avgTFLOPSPerGPU, avgStepTimeSec)."),
    v.INVALID_THRESHOLD_EXPRESSION: (LOW, "Fix the threshold's CEL expression (e.g. value >= 400)."),
    "CheckpointPVCMissing": (LOW, "Add the checkpoint PVC the category needs to its dependencies."),
    "OverrideError": (LOW, "Fix the override the message names (its patch paths and values)."),
}

# reason -> the action when it names a group of several nodes (else the node's action stands).
GROUP_ACTIONS = {
    v.THRESHOLD_VIOLATION: "Run the diagnose category on the group's nodes to find the slow node or link, then check "
                           "its NICs and links.",
}

# Reasons the engine writes that never mark a failure (progress, success, events, a failure log's notes).
NOT_FAILURES = frozenset({
    v.NOT_APPLICABLE, v.WORKLOAD_RESTARTING, v.JOB_RUNNING, v.JOB_SUCCEEDED, v.FINAL_READ_PENDING,
    v.WORKLOAD_RESTARTED, v.THRESHOLDS_MET, "AllWorkflowsSucceeded", "WorkflowCreated", v.WORKFLOW_SUCCEEDED,
    "WorkflowRunning", "WaitingForNodes", "OverrideApplied", "OverrideNoOp", "NoOverridesMatched",
    "PodNotFound", "NoTerminatedContainer", v.GPU_ARCHITECTURE_DEFAULTS,
})

UNKNOWN = (MEDIUM, "See the reason's message; this version of the collection has no advice for it.")


def remedy(reason: str, nodes: int = 1) -> dict[str, str]:
    """`{severity, action}` for a failure reason; `nodes` > 1 when it names a group of that many nodes."""
    severity, action = REMEDIES.get(reason, UNKNOWN)
    return {"severity": severity, "action": GROUP_ACTIONS.get(reason, action) if nodes > 1 else action}


def _rank(entry: dict[str, Any]) -> tuple[int, str]:
    return SEVERITIES.index(entry["severity"]), entry["reason"]


def annotate(report: dict[str, Any]) -> dict[str, Any]:
    """The report with `severity` and `action` beside each reason, and `remedies` (worst first)."""
    named: dict[str, list[str]] = {}
    advice: dict[str, dict[str, str]] = {}

    def note(reason: str, nodes: list[str], found: dict[str, str]) -> None:
        named.setdefault(reason, [])
        named[reason] += [n for n in nodes if n not in named[reason]]
        advice.setdefault(reason, found)

    for category in report.get("categories") or []:
        for group in category.get("failedGroups") or []:
            if group.get("reason"):
                group.update(remedy(group["reason"], len(group.get("nodes") or [])))
                note(group["reason"], [], remedy(group["reason"]))  # the nodes to act on are the failed ones
        for verdict in (category.get("nodes") or {}).values():
            if verdict.get("reason"):
                verdict.update(remedy(verdict["reason"]))
        if category.get("failureCondition"):
            note(category["failureCondition"], [], remedy(category["failureCondition"]))
    for entry in report.get("failedNodes") or []:
        if entry.get("reason"):
            entry.update(remedy(entry["reason"]))
            note(entry["reason"], [entry["name"]], remedy(entry["reason"]))
    report["remedies"] = sorted(({"reason": reason, **advice[reason], "nodes": sorted(nodes, key=natural)}
                                 for reason, nodes in named.items()), key=_rank)
    return report
