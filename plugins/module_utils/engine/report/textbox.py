"""The Summary box nvcrectl ends its text report with (user-docs §4.3: `Categories: 8/8 passed`, `Failed Nodes:
none`, `Result: PASSED`), titled with the Certification and the inventory host it ran for. With per-GPU evidence
it counts the failing GPUs below the failed nodes (`Failing GPUs: 1 (evidence partial)`)."""
from __future__ import annotations

from typing import Any

from . import gpu_evidence as ge

MIN_WIDTH = 40


def summary_lines(report: dict[str, Any]) -> list[str]:
    categories = report.get("categories") or []
    passed = sum(1 for c in categories if c["status"] == "Succeeded")
    failed = report.get("failedNodes") or []
    lines = [f"Categories: {passed}/{len(categories)} passed",
             f"Failed Nodes: {len(failed)}" if failed else "Failed Nodes: none"]
    lines += [f"  {e['name']}: {e['reason']}" if e.get("reason") else f"  {e['name']}" for e in failed]
    if state := ge.report_state(report):
        lines.append(f"Failing GPUs: {ge.failing_text(len(ge.failing(report)), state)}")
    return [*lines, f"Result: {report['result']}"]


def summary_box(report: dict[str, Any], host: str = "") -> str:
    title = f" Summary: {report['name']}" + (f" ({host}) " if host else " ")
    body = summary_lines(report)
    width = max(MIN_WIDTH, len(title) + 2, *(len(line) + 2 for line in body))
    top = "\u256d\u2500" + title + "\u2500" * (width - len(title) - 1) + "\u256e"
    rows = [f"\u2502 {line.ljust(width - 2)} \u2502" for line in body]
    return "\n".join([top, *rows, "\u2570" + "\u2500" * (width) + "\u256f"])
