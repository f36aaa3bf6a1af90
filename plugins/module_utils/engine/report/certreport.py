"""The certification report, as `nvcrectl` writes it (surroundings.md §3.5): CertReport JSON, JUnit XML, Markdown.

Input per category: `{domain, variant, workflow, succeeded, failed, jobs}` — the Workflow as read (None when it
was never created), the decoded node-result ConfigMaps (`succeeded`: node names, `failed`: `{name, reason,
message}`) and, optionally, the category's NVCRE Jobs by name (for the failed groups' reason and log tail).
Everything is sorted or kept in category order, so the same input always gives the same bytes.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import datetime
from typing import Any

from ..api.objects import go_duration
from ..api.vocabulary import ANNOTATION_TEST_SCALE
from ..reconcile.certification_tier import workflow_phase

TITLE = "Cluster Certification Report"
PASSED, FAILED, RUNNING, INCOMPLETE = "PASSED", "FAILED", "RUNNING", "INCOMPLETE"
# Per node and category: the node passed, failed, was excluded before the run, or has no verdict yet.
NODE_PASSED, NODE_FAILED, NODE_SKIPPED, NODE_PENDING = "PASSED", "FAILED", "SKIPPED", "PENDING"
_MNNVL = re.compile(r"NCCL_MNNVL_ENABLE=(\S+)")


# ------------------------------------------------------------------ helpers over the Workflow


def _status(workflow: dict | None) -> dict:
    return (workflow or {}).get("status") or {}


def _orchestration(workflow: dict | None) -> dict:
    return _status(workflow).get("orchestration") or {}


def _true_condition(workflow: dict | None, kind: str) -> dict | None:
    return next((c for c in _status(workflow).get("conditions") or []
                 if c.get("type") == kind and c.get("status") == "True"), None)


def _parse_time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def _runtime(workflow: dict | None, phase: str) -> str:
    """Creation to the terminal condition's transition; empty while the Workflow runs."""
    cond = _true_condition(workflow, phase) if phase in ("Succeeded", "Failed") else None
    start = _parse_time(((workflow or {}).get("metadata") or {}).get("creationTimestamp"))
    end = _parse_time((cond or {}).get("lastTransitionTime"))
    return go_duration(int((end - start).total_seconds())) if start and end else ""


def _mnnvl(workflow: dict | None) -> bool | None:
    """Whether the trainer runs with NCCL_MNNVL_ENABLE on (args `NCCL_MNNVL_ENABLE=x` or env); None if unset."""
    trainer = ((((workflow or {}).get("spec") or {}).get("jobTemplate") or {}).get("spec") or {}) \
        .get("workload", {}).get("trainJob", {}).get("trainer") or {}
    for arg in trainer.get("args") or []:
        if match := _MNNVL.search(str(arg)):
            return match.group(1) != "0"
    for env in trainer.get("env") or []:
        if env.get("name") == "NCCL_MNNVL_ENABLE":
            return str(env.get("value", "")) != "0"
    return None


def _all_groups(orchestration: dict) -> list[tuple[int, dict]]:
    """(iteration, group) for every iteration in history plus the current (last) one."""
    out = [(entry.get("iteration", 0), group) for entry in orchestration.get("iterationHistory") or []
           for group in entry.get("groups") or []]
    current = orchestration.get("currentIteration") or 1
    return out + [(current, group) for group in orchestration.get("groups") or []]


def _job_name(group: dict) -> str:
    return group.get("jobName") or (group.get("jobRef") or {}).get("name") or ""


# ------------------------------------------------------------------ CertReport


def _failed_groups(orchestration: dict, jobs: dict[str, dict], failed: list[dict]) -> list[dict]:
    """Current groups that failed, with their Job's Failed reason and log tail (or the nodes' first reason)."""
    by_node: dict[str, str] = {}
    for entry in failed:
        by_node.setdefault(entry["name"], entry.get("reason", ""))
    out = []
    for group in orchestration.get("groups") or []:
        if group.get("phase") != "Failed":
            continue
        job = jobs.get(_job_name(group)) or {}
        cond = _true_condition(job, "HardwareFailed") or _true_condition(job, "Failed") or {}
        nodes = list(group.get("nodes") or [])
        reason = cond.get("reason") or next((by_node[n] for n in nodes if n in by_node), "")
        out.append({"name": group["name"], "nodeCount": len(nodes), "nodes": nodes, "reason": reason,
                    "failureLog": (job.get("status") or {}).get("failureLog", "")})
    return out


def _node_verdicts(category: dict) -> dict[str, dict]:
    """node -> {result, reason, message} for every node the category knows about."""
    orchestration = _orchestration(category.get("workflow"))
    verdicts: dict[str, dict] = {}
    for name in orchestration.get("excludedNodes") or []:
        verdicts[name] = {"result": NODE_SKIPPED, "reason": "Excluded",
                          "message": orchestration.get("exclusionReason", "")}
    failed_groups: dict[str, str] = {}
    for _iteration, group in _all_groups(orchestration):
        for node in group.get("nodes") or []:
            if group.get("phase") == "Failed":
                failed_groups.setdefault(node, group["name"])
            verdicts.setdefault(node, {"result": NODE_PENDING, "reason": "", "message": ""})
    for name in category.get("succeeded") or []:
        verdicts[name] = {"result": NODE_PASSED, "reason": "", "message": ""}
    for name, group_name in failed_groups.items():
        if verdicts[name]["result"] == NODE_PENDING:
            # In a failed group without a failed-nodes record: the group's failure is the node's verdict.
            verdicts[name] = {"result": NODE_FAILED, "reason": "GroupFailed",
                              "message": f"group {group_name} failed; no failure recorded for this node"}
    recorded: set[str] = set()
    for entry in category.get("failed") or []:
        if entry["name"] in recorded:
            continue  # the first record (sorted by reason) stands for the node; all stay in failedNodes
        recorded.add(entry["name"])
        verdicts[entry["name"]] = {"result": NODE_FAILED, "reason": entry.get("reason", ""),
                                   "message": entry.get("message", "")}
    return dict(sorted(verdicts.items()))


def category_report(category: dict) -> dict:
    """One CategoryReport (measurement sections stay empty until measurements are collected)."""
    workflow = category.get("workflow")
    phase = workflow_phase(workflow)
    orchestration = _orchestration(workflow)
    failed_cond = _true_condition(workflow, "Failed") or {}
    annotations = ((workflow or {}).get("metadata") or {}).get("annotations") or {}
    groups = _all_groups(orchestration)
    report: dict[str, Any] = {
        "domain": category["domain"],
        "variant": category["variant"],
        "workflow": ((workflow or {}).get("metadata") or {}).get("name", ""),
        "status": phase,
        "failureReason": failed_cond.get("message", ""),
        "runtime": _runtime(workflow, phase),
        "testScale": annotations.get(ANNOTATION_TEST_SCALE, ""),
        "nodesPerJob": orchestration.get("nodesPerJob", 0),
        "jobs": sum(1 for _iteration, g in groups if _job_name(g) or g.get("phase") not in (None, "Pending")),
        "mnnvl": _mnnvl(workflow),
        "failedGroups": _failed_groups(orchestration, category.get("jobs") or {}, category.get("failed") or []),
        "cliques": [], "domains": [], "bandwidth": [], "groupBandwidth": [],
        "iterations": [
            {"iteration": i, "groups": [{"name": g["name"], "phase": g.get("phase") or "Pending"}
                                        for at, g in groups if at == i]}
            for i in sorted({at for at, _group in groups})],
    }
    if failed_cond.get("reason"):
        report["failureCondition"] = failed_cond["reason"]
    if orchestration.get("diagnose"):
        report["diagnose"] = orchestration["diagnose"]
    report["nodes"] = _node_verdicts(category)
    return report


def overall_result(categories: list[dict], excluded: list[str]) -> str:
    """RUNNING until every category is terminal; then FAILED, INCOMPLETE (passed, nodes excluded) or PASSED."""
    if any(c["status"] in ("Pending", "InProgress") for c in categories):
        return RUNNING
    if any(c["status"] == "Failed" for c in categories):
        return FAILED
    return INCOMPLETE if excluded else PASSED


def build_report(name: str, categories: list[dict], title: str = TITLE) -> dict:
    """The CertReport of a Certification (or of one Workflow: a single category)."""
    reports = [category_report(c) for c in categories]
    orchestrations = [_orchestration(c.get("workflow")) for c in categories]
    first = next((o for o in orchestrations if o.get("detectedPlatform")), {})
    excluded = sorted({n for o in orchestrations for n in o.get("excludedNodes") or []})
    reasons = list(dict.fromkeys(o["exclusionReason"] for o in orchestrations if o.get("exclusionReason")))
    failed_nodes = sorted(
        ({"name": e["name"], "category": f"{c['domain']}/{c['variant']}", "reason": e.get("reason", ""),
          "message": e.get("message", "")} for c in categories for e in c.get("failed") or []),
        key=lambda e: (e["name"], e["category"], e["reason"]))
    node_names = sorted({n for r in reports for n in r["nodes"]})
    node_results = []
    for node in node_names:
        per = {f"{r['domain']}/{r['variant']}": r["nodes"][node]["result"] for r in reports if node in r["nodes"]}
        results = set(per.values())
        overall = next(v for v in (NODE_FAILED, NODE_PENDING, NODE_PASSED, NODE_SKIPPED) if v in results)
        node_results.append({"name": node, "result": overall, "categories": per})
    return {
        "title": title,
        "name": name,
        "platform": first.get("detectedPlatform", ""),
        "gpu": first.get("detectedGPUArchitecture", ""),
        "totalNodes": max((o.get("totalNodes", 0) for o in orchestrations), default=0),
        "excludedNodes": excluded,
        "exclusionReason": ". ".join(reasons),
        "categories": reports,
        "failedNodes": failed_nodes,
        "result": overall_result(reports, excluded),
        "nodeResults": node_results,
    }


def summary(report: dict) -> dict:
    """The short form a task returns and AWX stats carry."""
    categories = report["categories"]
    return {
        "name": report["name"],
        "result": report["result"],
        "categories_passed": sum(1 for c in categories if c["status"] == "Succeeded"),
        "categories_total": len(categories),
        "failed_nodes": sorted({e["name"] for e in report["failedNodes"]}),
        "categories": [{"category": f"{c['domain']}/{c['variant']}", "workflow": c["workflow"],
                        "status": c["status"], "failure_reason": c["failureReason"]} for c in categories],
    }


# ------------------------------------------------------------------ JUnit


def junit_xml(report: dict) -> str:
    """One testsuite per category, one testcase per node (classname `<domain>/<variant>`). A category that
    failed before any node ran (build, discovery) is one failed testcase named after its Workflow."""
    root = ET.Element("testsuites", name=report["name"])
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for cat in report["categories"]:
        key = f"{cat['domain']}/{cat['variant']}"
        suite = ET.SubElement(root, "testsuite", name=key)
        counts = {"tests": 0, "failures": 0, "skipped": 0}
        cases = list(cat["nodes"].items())
        if not cases:
            verdict = {"Failed": NODE_FAILED, "Succeeded": NODE_PASSED}.get(cat["status"], NODE_PENDING)
            cases = [(cat["workflow"] or key, {"result": verdict, "reason": cat.get("failureCondition", ""),
                                               "message": cat["failureReason"]})]
        for node, verdict in cases:
            case = ET.SubElement(suite, "testcase", name=node, classname=key)
            counts["tests"] += 1
            if verdict["result"] == NODE_FAILED:
                counts["failures"] += 1
                failure = ET.SubElement(case, "failure", message=verdict["message"], type=verdict["reason"])
                failure.text = f"{verdict['reason']}: {verdict['message']}" if verdict["reason"] else verdict["message"]
            elif verdict["result"] == NODE_SKIPPED:
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=verdict["message"])
            elif verdict["result"] == NODE_PENDING:
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=f"category {key} is {cat['status']}")
        for attr, value in counts.items():
            suite.set(attr, str(value))
            totals[attr] += value
        if cat["runtime"]:
            suite.set("time", str(_seconds(cat["runtime"])))
    for attr, value in totals.items():
        root.set(attr, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _seconds(duration: str) -> int:
    total = 0
    for amount, unit in re.findall(r"(\d+)([hms])", duration):
        total += int(amount) * {"h": 3600, "m": 60, "s": 1}[unit]
    return total


# ------------------------------------------------------------------ Markdown


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown(report: dict) -> str:
    """A table per category (its facts, then its nodes) and the Summary box's three lines."""
    lines = [f"# {report['title']}: {report['name']}", "",
             "| Platform | GPU | Total Nodes | Excluded Nodes |", "|---|---|---|---|",
             f"| {_cell(report['platform'] or '-')} | {_cell(report['gpu'] or '-')} | {report['totalNodes']} "
             f"| {len(report['excludedNodes'])} |", ""]
    if report["exclusionReason"]:
        lines += [f"Excluded: {_cell(report['exclusionReason'])}", ""]
    for cat in report["categories"]:
        lines += [f"## {cat['domain']}/{cat['variant']}", "", "| Field | Value |", "|---|---|",
                  f"| Workflow | {_cell(cat['workflow'] or '-')} |", f"| Status | {cat['status']} |"]
        if cat["failureReason"]:
            lines.append(f"| Failure | {_cell(cat['failureReason'])} |")
        mnnvl = {True: "on", False: "off", None: "-"}[cat["mnnvl"]]
        lines += [f"| Duration | {cat['runtime'] or '-'} |", f"| Test Scale | {cat['testScale'] or '-'} |",
                  f"| Nodes/Job | {cat['nodesPerJob']} |", f"| Jobs | {cat['jobs']} |", f"| MNNVL | {mnnvl} |", ""]
        if cat["nodes"]:
            lines += ["| Node | Result | Reason | Message |", "|---|---|---|---|"]
            lines += [f"| {_cell(n)} | {v['result']} | {_cell(v['reason'])} | {_cell(v['message'])} |"
                      for n, v in cat["nodes"].items()]
            lines.append("")
    passed = sum(1 for c in report["categories"] if c["status"] == "Succeeded")
    failed_nodes = sorted({e["name"] for e in report["failedNodes"]})
    lines += ["## Summary", "", f"- Categories: {passed}/{len(report['categories'])} passed",
              f"- Failed Nodes: {len(failed_nodes)}" + (f" ({', '.join(failed_nodes)})" if failed_nodes else ""),
              f"- Result: {report['result']}", ""]
    return "\n".join(lines)
