"""The fleet report: one row per inventory host, from its folder's report.json (a CertReport) and status.json (what
the play recorded: when it ran, whether it hit its timeout, or the error that stopped it). A row counts its
failing GPUs beside its failed nodes, the fleet their total; the burn-in fleet rule names the slow GPUs and nodes
across the clusters; a row counts its nodes with configuration findings (node drift), and the fields whose values
differ across the clusters are named with their nodes per host.

status.json: `{host, state: reported|error, started, finished, timedOut, task, message}` (times RFC 3339 UTC).
A host whose run stopped on an error shows the error, never the report an earlier run left in its folder.
Pure: dicts in, dicts and Markdown out; rows sorted by host so the same folders give the same bytes.
"""
from __future__ import annotations

import re
from typing import Any

from ..api.objects import go_duration, parse_time
from . import gpu_evidence as ge
from .certreport import FAILED, INCOMPLETE, PASSED, RUNNING
from .fleet_burn_in import fleet_burn_in
from .fleet_configuration import config_nodes, fleet_configuration
from .text import natural, seconds

FLEET_TITLE = "Fleet Certification Report"
ERROR = "ERROR"  # a host's verdict when no report stands for its run
STATE_REPORTED, STATE_ERROR = "reported", "error"
TIMED_OUT = "timed out"
TIMED_OUT_MESSAGE = "the run hit its timeout (certify_timeout)"
# What stopped a host, from its error message (the first that matches wins).
ERROR_KINDS = (
    ("forbidden", re.compile(r"\b403\b|forbidden", re.I)),
    ("unauthorized", re.compile(r"\b401\b|unauthorized", re.I)),
    ("unreachable", re.compile(r"connection refused|max retries exceeded|name or service not known|no route to host|"
                               r"network is unreachable|failed to establish|name resolution|connecting to the cluster|"
                               r"connect(ion)? ?timeout|connection timed out|unreachable", re.I)),
    (TIMED_OUT, re.compile(r"timed out|timeout", re.I)),
)
# What to do about each kind (the fleet row and the play's summary say it).
HINTS = {
    "forbidden": "grant the credential the RBAC the collection needs (docs/certify.md), then run the play again",
    "unauthorized": "renew the credential (token or kubeconfig user) of this host, then run the play again",
    "unreachable": "check the host's kubeconfig/context (k8s_kubeconfig, k8s_context) and that this controller "
                   "reaches its API server, then run the play again",
    TIMED_OUT: "run the play again to continue where it stopped",
    "no report": "run playbooks/certify.yml for this host",
    "failed": "see the message, fix the cause and run the play again",
}
# Ansible's wrapping of a module's message adds nothing to it.
WRAPPING = re.compile(r"^((Task|Module|Action) failed: )+")
Obj = dict[str, Any]


def error_kind(message: str) -> str:
    """unreachable, forbidden, unauthorized, timed out, or failed (anything else)."""
    return next((kind for kind, pattern in ERROR_KINDS if pattern.search(message)), "failed")


def duration(report: Obj | None, status: Obj | None) -> int | None:
    """Seconds the host's run took: the play's start to end, else the report's category runtimes summed."""
    start, end = (parse_time((status or {}).get(k)) for k in ("started", "finished"))
    if start and end:
        return int((end - start).total_seconds())
    runtimes = [seconds(c.get("runtime") or "") for c in (report or {}).get("categories") or []]
    return sum(runtimes) if any(runtimes) else None


def host_error(folder: str, report: Obj | None, status: Obj | None) -> Obj | None:
    """The error that stopped the host's run, or None when its report stands."""
    if status and status.get("state") == STATE_ERROR:
        message = WRAPPING.sub("", str(status.get("message") or "")) or "the run stopped without a message"
        return _error(error_kind(message), str(status.get("task") or ""), message)
    if report is None:
        return _error("no report", "", f"no report.json in {folder}")
    if status and status.get("timedOut"):
        return _error(TIMED_OUT, "", TIMED_OUT_MESSAGE)
    return None


def _error(kind: str, task: str, message: str) -> Obj:
    return {"kind": kind, "task": task, "message": message, "hint": HINTS[kind]}


def host_row(host: str, folder: str, report: Obj | None, status: Obj | None) -> Obj:
    """One row of the fleet report."""
    error = host_error(folder, report, status)
    shown = report if error is None or error["kind"] == TIMED_OUT else None
    categories = (shown or {}).get("categories") or []
    took = duration(shown, status)
    return {
        "host": host,
        "verdict": shown["result"] if shown else ERROR,
        "name": (shown or report or {}).get("name", ""),
        "platform": (shown or {}).get("platform", ""),
        "gpu": (shown or {}).get("gpu", ""),
        "totalNodes": (shown or {}).get("totalNodes", 0),
        "categories": [{"category": f"{c['domain']}/{c['variant']}", "status": c["status"],
                        "failureReason": c.get("failureReason", "")} for c in categories],
        "categoriesPassed": sum(1 for c in categories if c["status"] == "Succeeded"),
        "categoriesTotal": len(categories),
        "failedNodes": [{k: e.get(k, "") for k in ("name", "reason", "message")}
                        for e in (shown or {}).get("failedNodes") or []],
        **failing_gpus(shown),
        "configNodes": config_nodes(shown),
        "duration": go_duration(took) if took is not None else "",
        "error": error,
        "folder": folder,
        **history(shown),
    }


def failing_gpus(report: Obj | None) -> Obj:
    """`failingGpus`: the GPUs (node and index, each once) that failed in any category, and `gpuEvidence`: the
    worst evidence state it rests on (final, partial, missing); both None when no category reads evidence."""
    state = ge.report_state(report or {})
    return {"failingGpus": len(ge.failing(report or {})) if state else None, "gpuEvidence": state}


def gpus_text(row: Obj) -> str:
    """`2`, `2 (evidence partial)`, or "" when the host's report counts no GPU."""
    return ge.failing_text(row["failingGpus"], row["gpuEvidence"]) if row.get("gpuEvidence") else ""


def config_text(row: Obj) -> str:
    """`3 nodes`, `0 nodes`, or "" when the host's report has no node-drift category."""
    count = row.get("configNodes")
    return "" if count is None else f"{count} node{'' if count == 1 else 's'}"


def history(report: Obj | None) -> Obj:
    """`comparison` (what the host's last certification was compared with and the change: against, summary; None
    when its report has no comparison) and `repeatOffenders`, from the report's `comparison`."""
    found = (report or {}).get("comparison")
    if not isinstance(found, dict):
        return {"comparison": None, "repeatOffenders": []}
    return {"comparison": {"against": found.get("against"), "summary": found.get("summary") or {}},
            "repeatOffenders": [{k: e.get(k) for k in ("name", "failed", "of", "certifications", "reasons")}
                                for e in found.get("repeatOffenders") or []]}


def since_text(row: Obj) -> str:
    """The change since the host's last certification: `vs certification cert-1: 1 regressed, 0 missing of 6
    compared, 0 refused`; "nothing to compare with yet"; "" without a comparison."""
    found = row.get("comparison")
    if not found:
        return ""
    against = found.get("against")
    if not against:
        return "nothing to compare with yet"
    summary = found.get("summary") or {}
    return (f"vs {against.get('kind') or 'baseline'} {against.get('name') or '-'}: "
            f"{summary.get('regressed', 0)} regressed, {summary.get('missing', 0)} missing of "
            f"{summary.get('compared', 0)} compared, {summary.get('refused', 0)} refused")


def offenders_text(row: Obj) -> str:
    """`node-3 (2 of 3)`, one per repeat offender."""
    return ", ".join(f"{e.get('name')} ({e.get('failed')} of {e.get('of')})" for e in row.get("repeatOffenders") or [])


def latest(candidates: list[tuple[Obj | None, float, Any]]) -> Any:
    """Of one host's entries from several report dirs (job slices): the run that finished last (status.json's
    `finished`, else the files' modification time); on a tie, the dir given last. Each candidate is
    (status, mtime, entry)."""
    def when(item: tuple[int, tuple[Obj | None, float, Any]]) -> tuple[float, int]:
        index, (status, mtime, _row) = item
        finished = parse_time((status or {}).get("finished"))
        return (finished.timestamp() if finished else mtime), index
    return max(enumerate(candidates), key=when)[1][2]


def overall(rows: list[Obj]) -> str:
    """FAILED when a host failed or stopped on an error, else RUNNING, INCOMPLETE, PASSED (the worst wins)."""
    verdicts = {r["verdict"] for r in rows}
    for worst in (FAILED, ERROR, RUNNING, INCOMPLETE):
        if worst in verdicts:
            return FAILED if worst == ERROR else worst
    return PASSED if rows else RUNNING


def build_fleet(rows: list[Obj], reports: dict[str, Obj] | None = None) -> Obj:
    """The fleet from its rows, and from `reports` (host -> the CertReport its row shows) `burnIn` (the burn-in
    fleet rule across the clusters, fleet_burn_in; None when no report has a burn-in) and `configuration` (node
    drift across the clusters, fleet_configuration; None when no report has a node-drift category)."""
    ordered = sorted(rows, key=lambda r: natural(r["host"]))
    counts: dict[str, int] = {}
    for row in ordered:
        counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    counted = [r["failingGpus"] for r in ordered if r.get("failingGpus") is not None]
    return {"title": FLEET_TITLE, "result": overall(ordered), "hosts": len(ordered),
            "counts": dict(sorted(counts.items())), "failingGpus": sum(counted) if counted else None, "rows": ordered,
            "burnIn": fleet_burn_in(reports or {}), "configuration": fleet_configuration(reports or {})}


def summary_line(row: Obj) -> str:
    """`east: PASSED (1/1 categories passed, failed nodes: none, 2m3s)`, or the error that stopped the host."""
    error = row["error"]
    if row["verdict"] == ERROR:
        return f"{row['host']}: {ERROR} {error['kind']}: {error['message']} ({error['hint']})"
    failed = ", ".join(f"{n['name']} ({n['reason']})" if n["reason"] else n["name"] for n in row["failedNodes"])
    took = f", {row['duration']}" if row["duration"] else ""
    note = f"; {error['kind']}: {error['message']} ({error['hint']})" if error else ""
    gpus = f", failing GPUs: {gpus_text(row)}" if gpus_text(row) else ""
    config = f", configuration findings on {config_text(row)}" if config_text(row) else ""
    return (f"{row['host']}: {row['verdict']} ({row['categoriesPassed']}/{row['categoriesTotal']} categories passed, "
            f"failed nodes: {failed or 'none'}{gpus}{config}{took}){note}")


def fleet_counts(fleet: Obj) -> str:
    """`3 clusters`, and `, 2 failing GPUs` when a host's report counts GPUs (`(evidence partial)` when a host's
    count rests on evidence that is not whole: a count is never taken for more than it is)."""
    gpus = fleet.get("failingGpus")
    if gpus is None:
        return f"{fleet['hosts']} clusters"
    partial = any(r.get("gpuEvidence") not in (None, "final") for r in fleet["rows"])
    return (f"{fleet['hosts']} clusters, {gpus} failing GPU{'' if gpus == 1 else 's'}"
            + (" (evidence partial)" if partial else ""))


def summary(fleet: Obj) -> list[str]:
    return [*(summary_line(r) for r in fleet["rows"]), f"Fleet: {fleet['result']} ({fleet_counts(fleet)})"]
