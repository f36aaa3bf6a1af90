"""junit.xml: a CertReport as JUnit XML, one testsuite per category and one testcase per node (surroundings.md
§3.5), the group's measured values and the comparison with earlier runs as testcase properties; a node's burn-in
and configuration findings (node-drift) that fail follow its failure's text, its warnings are its system-out."""
from __future__ import annotations

import xml.etree.ElementTree as ET

from ..api.vocabulary import FAILED as PHASE_FAILED
from ..api.vocabulary import SUCCEEDED as PHASE_SUCCEEDED
from . import burn_in as bi
from . import comparison_text, diagnose_report
from . import configuration as cfg
from . import gpu_evidence as ge
from .certreport import AVG_STEP_TIME, AVG_TFLOPS, BUS_BW, GOODPUT_RATIO, node_verdict
from .text import NODE_FAILED, NODE_PASSED, NODE_PENDING, NODE_SKIPPED, seconds


def _figures(category: dict) -> dict[str, dict[str, str]]:
    """group name -> its measured values by threshold key, formatted as the measurements write them."""
    out: dict[str, dict[str, str]] = {}
    for entry in category["groupBandwidth"]:
        out.setdefault(entry["groupName"], {})[BUS_BW] = f"{entry['busBW']:.2f}"
    for entry in category["domains"]:
        out.setdefault(entry["name"], {}).update({GOODPUT_RATIO: f"{entry['goodput']:.6f}",
                                                  AVG_TFLOPS: f"{entry['tflops']:.6f}",
                                                  AVG_STEP_TIME: f"{entry['stepTime']:.6f}"})
    return out


def junit_xml(report: dict) -> str:
    """One testsuite per category, one testcase per node (classname `<domain>/<variant>`) with its group and the
    group's measured values as properties. A category that failed before any node ran (build, discovery) is one
    failed testcase named after its Workflow. A diagnose category adds the suite properties `diagnose.*` (stage,
    rounds, the node sets), each node's `diagnose` finding, and a failed testcase per infrastructure fault."""
    root = ET.Element("testsuites", name=report["name"])
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for cat in report["categories"]:
        for attr, value in _suite(root, report, cat).items():
            totals[attr] += value
    for attr, value in totals.items():
        root.set(attr, str(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _suite(root: ET.Element, report: dict, cat: dict) -> dict[str, int]:
    """The category's testsuite; returns its counts."""
    key = f"{cat['domain']}/{cat['variant']}"
    suite = ET.SubElement(root, "testsuite", name=key)
    counts = {"tests": 0, "failures": 0, "skipped": 0}
    figures = _figures(cat)
    _properties(suite, diagnose_report.diagnose_properties(cat))
    confirmed = diagnose_report.confirmed_nodes(cat)
    gpu_lines, burn_in, config = ge.gpu_lines(cfg.evidence_left(cat)), bi.node_lines(cat), cfg.node_lines(cat)
    cases = list(cat["nodes"].items())
    if not cases:
        status = {PHASE_FAILED: NODE_FAILED, PHASE_SUCCEEDED: NODE_PASSED}.get(cat["status"], NODE_PENDING)
        cases = [(cat["workflow"] or key, node_verdict(None, status, cat.get("failureCondition", ""),
                                                       cat["failureReason"]))]
    for node, verdict in cases:
        case = ET.SubElement(suite, "testcase", name=node, classname=key)
        counts["tests"] += 1
        properties = {"group": verdict["group"], **figures.get(verdict["group"], {})} if verdict["group"] else {}
        if cat.get("diagnose") and (role := diagnose_report.diagnose_role(cat["diagnose"], confirmed, node)):
            properties["diagnose"] = role
        properties.update(comparison_text.junit_properties(report, key, node, verdict))
        _properties(case, properties)
        fails, warns = burn_in.get(node, ([], []))
        config_fails, config_warns = config.get(node, ([], []))
        outcome = _outcome(case, verdict, f"category {key} is {cat['status']}",
                           fails + config_fails + gpu_lines.get(node, []), warns + config_warns)
        if outcome:
            counts[outcome] += 1
    for fault in (cat.get("diagnose") or {}).get("infrastructureFaults") or []:
        case = ET.SubElement(suite, "testcase", name=f"infrastructure {fault.get('domain', '')}", classname=key)
        counts["tests"] += 1
        counts["failures"] += 1
        message = (f"infrastructure fault between [{', '.join(fault.get('groupA') or [])}] and "
                   f"[{', '.join(fault.get('groupB') or [])}] ({fault.get('stage', '')})")
        ET.SubElement(case, "failure", message=message, type="InfrastructureFault").text = message
    for attr, value in counts.items():
        suite.set(attr, str(value))
    if cat["runtime"]:
        suite.set("time", str(seconds(cat["runtime"])))
    return counts


def _properties(parent: ET.Element, properties: dict[str, str]) -> None:
    """A <properties> element, only when there is one to hold."""
    if properties:
        holder = ET.SubElement(parent, "properties")
        for prop, value in properties.items():
            ET.SubElement(holder, "property", name=prop, value=value)


def _outcome(case: ET.Element, verdict: dict, pending: str, gpu_lines: list[str], warnings: list[str]) -> str:
    """The testcase's <failure> or <skipped>; the count it adds to ("failures", "skipped" or "" for a pass). The
    node's GPU findings (`GPU 3 (GPU-…): memory failed: …`, warnings prefixed) follow a failure's text, and are
    the <system-out> of a node that did not fail; `warnings` (a burn-in's warned findings and slow GPUs) are
    always its <system-out>."""
    if verdict["status"] == NODE_FAILED:
        message = verdict["message"] or (f"group {verdict['group']} failed" if verdict["group"] else "")
        failure = ET.SubElement(case, "failure", message=message)
        if verdict["reason"]:
            failure.set("type", verdict["reason"])
        failure.text = "\n".join([f"{verdict['reason']}: {message}" if verdict["reason"] else message,
                                  *(line for line in gpu_lines if line not in message)])  # the message may name one
        if warnings:
            ET.SubElement(case, "system-out").text = "\n".join(warnings)
        return "failures"
    if gpu_lines or warnings:
        ET.SubElement(case, "system-out").text = "\n".join(gpu_lines + warnings)
    if verdict["status"] == NODE_SKIPPED:
        ET.SubElement(case, "skipped", message=verdict["message"])
        return "skipped"
    if verdict["status"] == NODE_PENDING:
        ET.SubElement(case, "skipped", message=pending)
        return "skipped"
    return ""
