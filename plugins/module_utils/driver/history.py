"""A cluster's earlier certifications and what a report is compared with.

Earlier reports come from the report snapshots the cluster keeps (ConfigMaps `<certification>-report`, found by
their labels; a deleted Certification took its snapshot with it, so it is simply not there) and from report files
the user names (a `report.json`, or a folder searched for them, e.g. the fleet's `cre-reports/`). Reports from
older versions lack `created`: a snapshot's ConfigMap creation time, or a file's modification time, stands in.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..engine.api.errors import InputError
from ..engine.api.objects import meta
from ..engine.api.vocabulary import LABEL_CERTIFICATION, LABEL_MANAGED_BY, MANAGED_BY_NVCRE
from ..engine.history import baseline, compare, offenders, trend
from ..engine.report import snapshot
from ..kube.rest import Kube
from .local_files import write_if_changed

REPORT = "report.json"
SNAPSHOTS = f"{LABEL_MANAGED_BY}={MANAGED_BY_NVCRE},{LABEL_CERTIFICATION}"

Obj = dict[str, Any]


@dataclass(frozen=True)
class Earlier:
    report: Obj
    source: str  # where it was read: `ConfigMap <ns>/<name>` or a file path


def _stamped(report: Obj, fallback: str) -> Obj:
    return report if report.get("created") else {**report, "created": fallback}


def snapshots(kube: Kube, namespace: str) -> tuple[list[Earlier], list[str]]:
    """Every readable report snapshot in the namespace, and one warning per snapshot that is not readable."""
    found, warnings = [], []
    for cm in kube.list("v1", "ConfigMap", namespace, SNAPSHOTS):
        if snapshot.KEY not in (cm.get("binaryData") or {}):
            continue
        source = f"ConfigMap {namespace}/{meta(cm).get('name')}"
        try:
            report = json.loads(snapshot.report_text(cm))
        except (InputError, ValueError) as exc:
            warnings.append(f"history: {source} skipped: {getattr(exc, 'rule', exc)}")
            continue
        if isinstance(report, dict) and report.get("name"):
            found.append(Earlier(_stamped(report, meta(cm).get("creationTimestamp", "")), source))
    return found, warnings


def _report_paths(path: str) -> list[str]:
    if os.path.isdir(path):
        return sorted(os.path.join(top, REPORT) for top, _dirs, files in os.walk(path) if REPORT in files)
    return [path]


def report_files(paths: list[str], option: str) -> list[Earlier]:
    """The reports in `paths` (files, or folders searched for report.json); an unreadable one is refused."""
    found = []
    for index, given in enumerate(str(p) for p in paths):  # plain str: Ansible's tagged strings do not dump
        where = f"{option}[{index}]"
        if not os.path.exists(given):
            raise InputError(where, f"{given} does not exist: name a report.json or a folder of them")
        for path in _report_paths(given):
            try:
                with open(path, encoding="utf-8") as handle:
                    report = json.load(handle)
                mtime = datetime.fromtimestamp(os.path.getmtime(path), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            except (OSError, ValueError) as exc:
                raise InputError(where, f"reading {path}: {exc}") from exc
            if not isinstance(report, dict) or not isinstance(report.get("categories"), list):
                raise InputError(where, f"{path} is not a certification report (report.json)")
            found.append(Earlier(_stamped(report, mtime), path))
    return found


def earlier(current: Obj, found: list[Earlier]) -> list[Earlier]:
    """The reports made before `current` (not itself), one per certification, newest first."""
    created = current.get("created") or ""
    unique: dict[tuple[str, str], Earlier] = {}
    for item in found:
        report = item.report
        if report.get("name") == current.get("name") or (created and report.get("created", "") >= created):
            continue
        unique.setdefault((report.get("name", ""), report.get("created", "")), item)
    return sorted(unique.values(), key=lambda e: (e.report.get("created", ""), e.report.get("name", "")), reverse=True)


def load_baseline(path: str, option: str) -> Obj:
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as exc:
        raise InputError(option, f"reading the baseline {path}: {exc.strerror or exc}") from exc
    return baseline.load(text, path)


def repeat_window(option: Obj) -> tuple[int, int]:
    """(failed, of) of the repeat_offenders option, refused unless 1 <= failed <= of."""
    failed, of = int(option.get("failed") or 2), int(option.get("of") or 3)
    if not 1 <= failed <= of:
        raise InputError("repeat_offenders.failed", f"must be between 1 and repeat_offenders.of ({of}), got {failed}")
    return failed, of


def comparison(report: Obj, history: list[Earlier], args: Obj) -> Obj:
    """The report's `comparison`: against the baseline file when one is given, else the previous certification;
    repeat offenders and the trend over the history either way."""
    rules = args.get("rules") or {}
    base: Obj = {"entries": []}
    against: Obj | None = None
    if args.get("baseline"):
        base = load_baseline(args["baseline"], "baseline")
        against = {"kind": "baseline", "name": base["metadata"]["name"], "created": base["metadata"].get("created", ""),
                   "source": args["baseline"]}
    elif history:
        previous = history[0]
        base = baseline.generate([(previous.source, previous.report)], previous.report.get("name", ""),
                                 previous.report.get("created", ""))
        against = {"kind": "certification", "name": previous.report.get("name", ""),
                   "created": previous.report.get("created", ""), "source": previous.source}
    out = {**compare.compare(report, base, against or {}, rules, bool(args.get("enforce"))), "against": against}
    failed, of = repeat_window(args.get("repeat_offenders") or {})
    out["repeatOffenders"] = offenders.repeat_offenders(report, [e.report for e in history], failed, of)
    out["trend"] = trend.trend(report, [e.report for e in history])
    return out


def generate_file(args: Obj, check_mode: bool) -> Obj:
    """baseline_generate: the baseline of the reports in `args["reports"]`, written to `args["dest"]`."""
    found = report_files(args["reports"], "reports")
    if not found:
        raise InputError("reports", f"no report.json found in {', '.join(args['reports'])}")
    created = max(item.report.get("created", "") for item in found)
    made = baseline.generate([(item.source, item.report) for item in found], str(args["name"]), created,
                             str(args["trim_rule"]))
    text = baseline.dump(made)
    changed = write_if_changed(args["dest"], text, check_mode)
    trimmed = {f"{entry['key']['category']} {figure}": info["trimmed"]
               for entry in made["entries"] for figure, info in entry["figures"].items() if info.get("trimmed")}
    return {"changed": changed, "baseline": made, "reports": [item.source for item in found], "trimmed": trimmed}
