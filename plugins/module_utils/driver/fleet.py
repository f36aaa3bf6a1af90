"""Read the per-host folders under one or more report dirs (a run's, or several job slices') and write the fleet
report (fleet.json, fleet.md, fleet.html). Offline: only the controller's files."""
from __future__ import annotations

import json
import os
from typing import Any

from ..engine.api.errors import InputError
from ..engine.report import fleet
from ..engine.report.fleet_html import fleet_html
from ..engine.report.fleet_md import fleet_markdown
from .results import write_files

FILES = ("fleet.json", "fleet.md", "fleet.html")
REPORT, STATUS = "report.json", "status.json"

Obj = dict[str, Any]


def _read_json(path: str) -> tuple[Obj | None, str]:
    """The object in `path` (None if the file is missing) and why it could not be read ("" if it could)."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except FileNotFoundError:
        return None, ""
    except (OSError, ValueError) as exc:
        return None, f"reading {path}: {exc}"
    if not isinstance(data, dict):
        return None, f"reading {path}: not a JSON object"
    return data, ""


def host_folder(host: str, folder: str) -> tuple[Obj | None, float, Obj, Obj | None]:
    """(status, modification time, row, the report the row shows) of one host's folder."""
    report, problem = _read_json(os.path.join(folder, REPORT))
    status, status_problem = _read_json(os.path.join(folder, STATUS))
    if problem or status_problem:  # a file we cannot read is this host's error, not the fleet's
        status = {**(status or {}), "state": fleet.STATE_ERROR, "message": problem or status_problem}
    row = fleet.host_row(host, folder, report, status)
    stamps = [os.path.getmtime(os.path.join(folder, n)) for n in (REPORT, STATUS) if os.path.exists(os.path.join(folder, n))]
    return status, max(stamps, default=0.0), row, report if row["verdict"] != fleet.ERROR else None


def collect(report_dirs: list[str], hosts: list[str]) -> tuple[list[Obj], dict[str, Obj]]:
    """A row per host found (a sub-folder holding report.json or status.json) or expected (`hosts`), and the
    report each row shows; a host in several dirs counts once (fleet.latest)."""
    found: dict[str, list[tuple[Obj | None, float, Obj, Obj | None]]] = {}
    for base in report_dirs:
        if not os.path.isdir(base):
            raise InputError("report_dir", f"{base} is not a directory: give the cre_report_dir the runs wrote to")
        for host in sorted(os.listdir(base)):
            folder = os.path.join(base, host)
            if os.path.isdir(folder) and any(os.path.exists(os.path.join(folder, n)) for n in (REPORT, STATUS)):
                found.setdefault(host, []).append(host_folder(host, folder))
    rows, reports = [], {}
    for host, candidates in found.items():
        chosen = fleet.latest([(status, mtime, (row, report)) for status, mtime, row, report in candidates])
        rows.append(chosen[0])
        if chosen[1] is not None:
            reports[host] = chosen[1]
    for host in sorted(set(hosts) - set(found)):
        rows.append(fleet.host_row(host, os.path.join(report_dirs[0], host), None, None))
    return rows, reports


def fleet_report(args: Obj, check_mode: bool) -> Obj:
    report_dirs = [os.path.abspath(d) for d in args["report_dir"]]
    if not report_dirs:
        raise InputError("report_dir", "give at least one directory")
    rows, reports = collect(report_dirs, args["hosts"] or [])
    if not rows:
        raise InputError("report_dir", f"no cluster report under {', '.join(report_dirs)}: each host's folder "
                                       f"holds {REPORT} (run playbooks/certify.yml first)")
    built = fleet.build_fleet(rows, reports)
    dest = os.path.abspath(args["dest"] or report_dirs[0])
    contents = {"fleet.json": json.dumps(built, indent=2, sort_keys=True) + "\n",
                "fleet.md": fleet_markdown(built, reports), "fleet.html": fleet_html(built, reports)}
    return {"changed": write_files(dest, contents, check_mode), "result": built["result"], "fleet": built,
            "summary": fleet.summary(built), "files": [os.path.join(dest, name) for name in FILES]}
