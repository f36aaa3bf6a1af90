"""The certification report, as `nvcrectl` writes it (surroundings.md §3.5, user-docs §3.8): the CertReport JSON
and its short summary. `junit.py`, `markdown.py` and `html.py` render it.

Input per category: `{domain, variant, workflow, succeeded, failed, jobs, measurements}` — the Workflow as read
(None when it was never created), the decoded node-result ConfigMaps (`succeeded`: node names, `failed`: `{name,
reason, message}`), the category's NVCRE Jobs by name (the failed groups' reason and failure log), the
Workflow's BandwidthMeasurements and GoodputMeasurements and, for a category with evidence, its `evidence` entry
(evidence/summary.category_evidence). Only final measurements (Complete with JobSucceeded)
give figures: provisional ones and those that ended otherwise (JobFailed, NoDataCollected, LogsUnavailable) give
none. Everything is sorted or kept in category order, so the same input always gives the same bytes.
"""
from __future__ import annotations

import re
from typing import Any

from ..api.objects import condition, go_duration, is_true, meta, parse_time, status_orchestration, thresholds_of
from ..api.vocabulary import (
    ANNOTATION_CATALOG_SOURCE,
    ANNOTATION_TEST_SCALE,
    BANDWIDTH_MEASUREMENT,
    GOODPUT_MEASUREMENT,
    HARDWARE_FAILED,
    IN_PROGRESS,
    THRESHOLD_VIOLATED,
)
from ..api.vocabulary import FAILED as PHASE_FAILED
from ..api.vocabulary import PENDING as PHASE_PENDING
from ..api.vocabulary import RUNNING as PHASE_RUNNING
from ..api.vocabulary import SUCCEEDED as PHASE_SUCCEEDED
from ..logs.log_lines import go_float
from ..logs.nccl_log import merge_transports, peak
from ..spec import thresholds
from ..status import job_measurements
from ..status.workflow import all_groups, job_name, workflow_phase
from . import diagnose_report, remedies
from .text import NODE_FAILED, NODE_PASSED, NODE_PENDING, NODE_SKIPPED

TITLE = "Certification Report"
PASSED, FAILED, RUNNING, INCOMPLETE = "PASSED", "FAILED", "RUNNING", "INCOMPLETE"
FAILURE_LOG_FIELDS = ("podName", "nodeName", "exitCode", "reason", "tail")
# The measured values by their threshold keys (JUnit property names); unpacking fails if the registry changes.
BUS_BW, _ALG_BW, GOODPUT_RATIO, AVG_TFLOPS, AVG_STEP_TIME = thresholds.KEYS
_MNNVL = re.compile(r"NCCL_MNNVL_ENABLE=(\S+)")


# ------------------------------------------------------------------ helpers over the Workflow


def _true_condition(obj: dict | None, kind: str) -> dict | None:
    return condition(obj, kind) if is_true(obj, kind) else None


def _runtime(workflow: dict | None, phase: str) -> str:
    """Creation to the terminal condition's transition; empty while the Workflow runs."""
    cond = _true_condition(workflow, phase) if phase in (PHASE_SUCCEEDED, PHASE_FAILED) else None
    start = parse_time(meta(workflow).get("creationTimestamp"))
    end = parse_time((cond or {}).get("lastTransitionTime"))
    return go_duration(int((end - start).total_seconds())) if start and end else ""


def _mnnvl(workflow: dict | None) -> str:
    """Enabled or Disabled, as the trainer sets NCCL_MNNVL_ENABLE (args `NCCL_MNNVL_ENABLE=x` or env); empty if unset."""
    trainer = ((((workflow or {}).get("spec") or {}).get("jobTemplate") or {}).get("spec") or {}) \
        .get("workload", {}).get("trainJob", {}).get("trainer") or {}
    values = [m.group(1) for arg in trainer.get("args") or [] if (m := _MNNVL.search(str(arg)))]
    values += [str(e.get("value", "")) for e in trainer.get("env") or [] if e.get("name") == "NCCL_MNNVL_ENABLE"]
    if not values:
        return ""
    return "Disabled" if values[0] == "0" else "Enabled"


def _iterations(groups: list[tuple[int, dict]]) -> list[dict]:
    """Per iteration: Failed if a group failed and Succeeded if all did, once every group is done (else Running,
    or Pending before any started); the duration from the first group's start to the last one's completion."""
    out = []
    for number in sorted({at for at, _group in groups}):
        members = [g for at, g in groups if at == number]
        phases = {g.get("phase") or PHASE_PENDING for g in members}
        done = phases <= {PHASE_SUCCEEDED, PHASE_FAILED}
        if done:
            status = PHASE_FAILED if PHASE_FAILED in phases else PHASE_SUCCEEDED
        else:
            status = PHASE_PENDING if phases == {PHASE_PENDING} else PHASE_RUNNING
        starts = [t for g in members if (t := parse_time(g.get("startTime")))]
        ends = [parse_time(g.get("completionTime")) for g in members]
        duration = ""
        if done and starts and all(ends):
            duration = go_duration(int((max(e for e in ends if e) - min(starts)).total_seconds()))
        out.append({"number": number, "status": status, "duration": duration})
    return out


# ------------------------------------------------------------------ measurements


def _number(text: Any) -> float:
    return go_float(str(text or "")) or 0.0


def _results(m: dict) -> list[dict]:
    return (m.get("status") or {}).get("results") or []


def _counted(category: dict) -> dict[tuple[str, str], dict]:
    """(kind, Job name) -> the measurement whose figures count: the first by name that is final and, while the Job
    of that name exists, measures it (an earlier iteration's Job is gone); a bandwidth one needs readable results."""
    jobs = category.get("jobs") or {}
    out: dict[tuple[str, str], dict] = {}
    for m in sorted(category.get("measurements") or [], key=lambda m: meta(m).get("name", "")):
        measured_job = ((m.get("spec") or {}).get("jobRef") or {}).get("name", "")
        job = jobs.get(measured_job)
        if not job_measurements.final(m) or (job is not None and not job_measurements.measures(m, job)):
            continue
        if m.get("kind") == BANDWIDTH_MEASUREMENT and peak(_results(m)) is None:
            continue
        out.setdefault((m.get("kind", ""), measured_job), m)
    return out


def _combined(measurements: list[dict]) -> list[dict]:
    """One bandwidth table over several measurements: per size (ascending) the sample-weighted means of algBW and
    busBW (two decimals) and the samples summed."""
    sums: dict[int, tuple[float, float, int]] = {}
    for m in measurements:
        for row in _results(m):
            alg, bus, count = go_float(str(row.get("algBW", ""))), go_float(str(row.get("busBW", ""))), \
                int(row.get("samples") or 0)
            if alg is None or bus is None or count <= 0:
                continue
            alg_sum, bus_sum, total = sums.get(int(row["sizeBytes"]), (0.0, 0.0, 0))
            sums[int(row["sizeBytes"])] = (alg_sum + alg * count, bus_sum + bus * count, total + count)
    return [{"size": size, "algBW": round(alg_sum / total, 2), "busBW": round(bus_sum / total, 2), "samples": total}
            for size, (alg_sum, bus_sum, total) in sorted(sums.items())]


def _curve(m: dict) -> list[list[float]]:
    """[[sizeBytes, busBW], ...] of one measurement, ascending: a group's own curve (pairs keep report.json small)."""
    rows = [(int(row["sizeBytes"]), bus) for row in _results(m)
            if (bus := go_float(str(row.get("busBW", "")))) is not None and row.get("sizeBytes") is not None]
    return [[size, bus] for size, bus in sorted(rows)]


def _image(workflow: dict | None) -> str:
    """The trainer image of the Workflow's TrainJob template: a key a baseline never compares across."""
    spec = (((workflow or {}).get("spec") or {}).get("jobTemplate") or {}).get("spec") or {}
    return str(((spec.get("workload") or {}).get("trainJob") or {}).get("trainer", {}).get("image") or "")


def _below_min(expression: str, bus_bw: float) -> bool:
    """The peak busBW violates the Workflow's busBandwidthGBps threshold."""
    problem = thresholds.evaluate_all({BUS_BW: expression}, {BUS_BW: bus_bw}) if expression else None
    return problem is not None and problem[0] == THRESHOLD_VIOLATED


def _measured(category: dict, groups: list[tuple[int, dict]]) -> dict:
    """bandwidth and transport over every iteration's final measurements; groupBandwidth and domains (goodput)
    for the final iteration's groups, each group's figure from its Job's measurement."""
    workflow = category.get("workflow")
    counted = _counted(category)
    every = list({meta(m).get("name"): m for _at, g in groups
                  if (m := counted.get((BANDWIDTH_MEASUREMENT, job_name(g))))}.values())
    minimum = thresholds_of((workflow or {}).get("spec")).get(BUS_BW, "")
    group_bandwidth, domains = [], []
    for group in status_orchestration(workflow).get("groups") or []:
        nodes = list(group.get("nodes") or [])
        if bm := counted.get((BANDWIDTH_MEASUREMENT, job_name(group))):
            bus_bw = (peak(_results(bm)) or (0.0, 0.0))[0]
            group_bandwidth.append({
                "groupName": group["name"], "nodes": nodes, "busBW": bus_bw,
                "transport": ", ".join((bm.get("status") or {}).get("transport") or []),
                "belowMin": _below_min(minimum, bus_bw), "failed": group.get("phase") == PHASE_FAILED,
                "curve": _curve(bm)})
        if gm := counted.get((GOODPUT_MEASUREMENT, job_name(group))):
            status = gm.get("status") or {}
            domains.append({"name": group["name"], "nodeCount": len(nodes), "goodput": _number(status.get("result")),
                            "tflops": _number(status.get("avgTFLOPSPerGPU")),
                            "stepTime": _number(status.get("avgStepTimeSec"))})
    return {"bandwidth": _combined(every), "threshold": minimum,
            "transport": merge_transports([], [t for m in every for t in (m.get("status") or {}).get("transport") or []]),
            "groupBandwidth": group_bandwidth, "domains": domains}


# ------------------------------------------------------------------ CertReport


def _first_records(failed: list[dict]) -> dict[str, dict]:
    """name -> the node's first failed-nodes record, its reasons in sorted order (NVCRE's ConfigMap order)."""
    out: dict[str, dict] = {}
    for entry in sorted(failed, key=lambda e: (e["name"], e.get("reason", ""))):
        out.setdefault(entry["name"], entry)
    return out


def _failed_groups(orchestration: dict, jobs: dict[str, dict], records: dict[str, dict]) -> list[dict]:
    """Current groups that failed, with their Job's Failed reason (or their nodes' first) and failure log."""
    out = []
    for group in orchestration.get("groups") or []:
        if group.get("phase") != PHASE_FAILED:
            continue
        job = jobs.get(job_name(group)) or {}
        cond = _true_condition(job, HARDWARE_FAILED) or _true_condition(job, PHASE_FAILED) or {}
        nodes = list(group.get("nodes") or [])
        reason = cond.get("reason") or next((records[n].get("reason", "") for n in nodes if n in records), "")
        entry: dict[str, Any] = {"name": group["name"], "nodeCount": len(nodes), "nodes": nodes, "reason": reason}
        if log := (job.get("status") or {}).get("failureLog"):
            entry["failureLog"] = {k: log[k] for k in FAILURE_LOG_FIELDS if k in log}
        out.append(entry)
    return out


def node_verdict(group: dict | None, status: str, reason: str = "", message: str = "") -> dict:
    """A node's verdict; its rack is its group's topology domain when the group lies in one."""
    domains = (group or {}).get("domains") or []
    return {"group": (group or {}).get("name", ""), "rack": domains[0] if len(domains) == 1 else "",
            "status": status, "reason": reason, "message": message}


def _node_verdicts(category: dict, records: dict[str, dict]) -> dict[str, dict]:
    """node -> {group, rack, status, reason, message} for every node the category knows about. A reason is only
    ever a failed-nodes record's: a node of a failed group that no record blames is Failed without one."""
    orchestration = status_orchestration(category.get("workflow"))
    latest: dict[str, dict] = {}     # node -> its group in the latest iteration
    failed_in: dict[str, dict] = {}  # node -> the first failed group it was in
    for _iteration, group in all_groups(orchestration):
        for node in group.get("nodes") or []:
            latest[node] = group
            if group.get("phase") == PHASE_FAILED:
                failed_in.setdefault(node, group)
    verdicts = {name: node_verdict(None, NODE_SKIPPED, message=orchestration.get("exclusionReason", ""))
                for name in orchestration.get("excludedNodes") or []}
    for node, group in latest.items():
        verdicts.setdefault(node, node_verdict(group, NODE_PENDING))
    for name in category.get("succeeded") or []:
        verdicts[name] = node_verdict(latest.get(name), NODE_PASSED)
    for node, group in failed_in.items():
        if verdicts[node]["status"] == NODE_PENDING:
            verdicts[node] = node_verdict(group, NODE_FAILED)
    for name, entry in records.items():
        verdicts[name] = node_verdict(failed_in.get(name) or latest.get(name), NODE_FAILED,
                                      entry.get("reason", ""), entry.get("message", ""))
    return dict(sorted(verdicts.items()))


def category_report(category: dict) -> dict:
    """One CategoryReport, plus our own `workflow`, `failureCondition` and per-node verdicts (`nodes`)."""
    workflow = category.get("workflow")
    phase = workflow_phase(workflow)
    orchestration = status_orchestration(workflow)
    failed_cond = _true_condition(workflow, PHASE_FAILED) or {}
    annotations = meta(workflow).get("annotations") or {}
    groups = all_groups(orchestration)
    records = _first_records(category.get("failed") or [])
    report: dict[str, Any] = {
        "domain": category["domain"],
        "variant": category["variant"],
        "workflow": meta(workflow).get("name", ""),
        "status": phase,
        "failureReason": failed_cond.get("message", ""),
        "runtime": _runtime(workflow, phase),
        "testScale": annotations.get(ANNOTATION_TEST_SCALE, ""),
        **catalog_source(annotations),
        "nodesPerJob": orchestration.get("nodesPerJob", 0),
        "jobs": sum(1 for _iteration, g in groups if job_name(g) or g.get("phase") not in (None, PHASE_PENDING)),
        "mnnvl": _mnnvl(workflow),
        "image": _image(workflow),
        "failedGroups": _failed_groups(orchestration, category.get("jobs") or {}, records),
        "cliques": [],
        **_measured(category, groups),
        "iterations": _iterations(groups),
    }
    if failed_cond.get("reason"):
        report["failureCondition"] = failed_cond["reason"]
    if category.get("warnings"):  # ours: the Warning events the build emitted (GPUArchitectureDefaults)
        report["warnings"] = list(category["warnings"])
    if category.get("evidence"):  # ours (issue 40): the state of its rows and each GPU's verdict (evidence/summary)
        report["evidence"] = category["evidence"]
    if category.get("burnIn"):  # ours (issue 41): each node's GPUs' TFLOPS series and findings (gemm_report)
        report["burnIn"] = category["burnIn"]
    if category.get("configuration"):  # ours (issue 42): each node's findings and the fleet's drift (drift.py)
        report["configuration"] = category["configuration"]
    if orchestration.get("diagnose"):
        report["diagnose"] = orchestration["diagnose"]
        report["diagnoseRounds"] = diagnose_report.diagnose_rounds(orchestration)
    report["nodes"] = _node_verdicts(category, records)
    return report


def catalog_source(annotations: dict) -> dict:
    """Where a category came from: `source: builtin`, or `source: user` with the entry file (`sourcePath`)."""
    path = annotations.get(ANNOTATION_CATALOG_SOURCE)
    return {"source": "user", "sourcePath": path} if path else {"source": "builtin"}


def overall_result(categories: list[dict], excluded: list[str]) -> str:
    """RUNNING until every category is terminal; then FAILED, INCOMPLETE (passed, nodes excluded) or PASSED."""
    if any(c["status"] in (PHASE_PENDING, IN_PROGRESS) for c in categories):
        return RUNNING
    if any(c["status"] == PHASE_FAILED for c in categories):
        return FAILED
    return INCOMPLETE if excluded else PASSED


def _node_results(reports: list[dict]) -> list[dict]:
    """One entry per node with a verdict: Failed when a category failed it, else Passed when one passed it and
    none is still pending; group and rack are those of the first category that decided it."""
    out = []
    for node in sorted({n for r in reports for n in r["nodes"]}):
        verdicts = [r["nodes"][node] for r in reports if node in r["nodes"]]
        statuses = {v["status"] for v in verdicts}
        if NODE_FAILED in statuses:
            status = NODE_FAILED
        elif NODE_PASSED in statuses and NODE_PENDING not in statuses:
            status = NODE_PASSED
        else:
            continue
        decided = next(v for v in verdicts if v["status"] == status)
        out.append({"name": node, "group": decided["group"], "rack": decided["rack"], "status": status})
    return out


def build_report(name: str, categories: list[dict], title: str = TITLE, created: str = "") -> dict:
    """The CertReport of a Certification (or of one Workflow: a single category); `created` is that object's
    creationTimestamp, the order a history of reports is read in."""
    reports = [category_report(c) for c in categories]
    orchestrations = [status_orchestration(c.get("workflow")) for c in categories]
    first = next((o for o in orchestrations if o.get("detectedPlatform")), {})
    excluded = sorted({n for o in orchestrations for n in o.get("excludedNodes") or []})
    reasons = list(dict.fromkeys(o["exclusionReason"] for o in orchestrations if o.get("exclusionReason")))
    failed: dict[str, dict] = {}  # a node's first record, in category order
    for category in categories:
        for node, entry in _first_records(category.get("failed") or []).items():
            failed.setdefault(node, {"name": node, "reason": entry.get("reason", ""),
                                     "message": entry.get("message", "")})
    return remedies.annotate({  # severity and action beside every reason (report/remedies.py)
        "title": title,
        "name": name,
        "created": created,
        "platform": first.get("detectedPlatform", ""),
        "gpu": first.get("detectedGPUArchitecture", ""),
        "gpuProduct": next((p for o in orchestrations for p in o.get("gpuProducts") or [] if p), ""),
        "totalNodes": max((o.get("totalNodes", 0) for o in orchestrations), default=0),
        "excludedNodes": excluded,
        "exclusionReason": ". ".join(reasons),
        "categories": reports,
        "failedNodes": [failed[n] for n in sorted(failed)],
        "result": overall_result(reports, excluded),
        "nodeResults": _node_results(reports),
    })


def summary(report: dict) -> dict:
    """The short form a task returns and AWX stats carry."""
    categories = report["categories"]
    return {
        "name": report["name"],
        "result": report["result"],
        "categories_passed": sum(1 for c in categories if c["status"] == PHASE_SUCCEEDED),
        "categories_total": len(categories),
        "failed_nodes": [e["name"] for e in report["failedNodes"]],
        "categories": [{"category": f"{c['domain']}/{c['variant']}", "workflow": c["workflow"],
                        "status": c["status"], "failure_reason": c["failureReason"]} for c in categories],
    }
