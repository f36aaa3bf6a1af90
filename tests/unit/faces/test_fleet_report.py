"""fleet_report through ansible-playbook, offline: per-host folders of two report dirs (job slices) merged into
one fleet report, under the action group's auth defaults (accepted and ignored)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import yaml

from ansible_collections.cre.certification.plugins.module_utils.kube.client import auth_argument_spec
from ansible_collections.cre.certification.plugins.modules import fleet_report
from tests.ansible_run import ENV, ROOT

DATA = ROOT / "tests" / "unit" / "engine" / "data" / "report"
AUTH_DEFAULTS = {"kubeconfig": "/nonexistent/kubeconfig", "context": "lab-admin", "host": "https://127.0.0.1:1"}


def host_folder(base: Path, host: str, report: str | None, status: dict) -> None:
    folder = base / host
    folder.mkdir(parents=True)
    if report:
        shutil.copy(DATA / f"{report}.json", folder / "report.json")
    (folder / "status.json").write_text(json.dumps({"host": host, **status}))


def play(tmp_path: Path, args: dict, *flags: str) -> tuple[int, dict]:
    (tmp_path / "fleet.yml").write_text(yaml.safe_dump([{
        "name": "Fleet", "hosts": "localhost", "connection": "local", "gather_facts": False,
        "module_defaults": {"group/cre.certification.certification": AUTH_DEFAULTS},
        "tasks": [{"name": "Fleet report", "cre.certification.fleet_report": args, "register": "fleet"}]}]))
    proc = subprocess.run([str(ROOT / ".venv/bin/ansible-playbook"), *flags, str(tmp_path / "fleet.yml")], cwd=ROOT,
                          env={**os.environ, **ENV}, capture_output=True, text=True, timeout=120, check=False)
    (task,) = json.loads(proc.stdout)["plays"][0]["tasks"]
    return proc.returncode, task["hosts"]["localhost"]


def test_two_slices_merge_into_one_fleet_report(tmp_path: Path) -> None:
    one, two = tmp_path / "slice-1", tmp_path / "slice-2"
    host_folder(one, "east", "passed", {"state": "reported", "started": "2026-12-01T10:00:00Z",
                                        "finished": "2026-12-01T10:01:00Z"})
    host_folder(one, "west", "passed", {"state": "reported", "finished": "2026-12-01T09:00:00Z"})
    host_folder(two, "west", "failed", {"state": "reported", "finished": "2026-12-01T11:00:00Z"})  # rerun, later
    host_folder(two, "dead", None, {"state": "error", "task": "Apply the CRDs with server-side apply",
                                    "message": "Task failed: API error 403 Forbidden: customresourcedefinitions is "
                                               "forbidden"})
    (two / "not-a-host").mkdir()
    dest = tmp_path / "fleet"
    args = {"report_dir": [str(one), str(two)], "dest": str(dest), "hosts": ["east", "ghost"]}
    rc, result = play(tmp_path, args, "--check")
    assert rc == 0 and result["changed"] and not dest.exists(), result
    rc, result = play(tmp_path, args)
    assert rc == 0, result
    assert "Unsupported parameters" not in json.dumps(result)
    assert result["summary"] == [
        "dead: ERROR forbidden: API error 403 Forbidden: customresourcedefinitions is forbidden (grant the credential "
        "the RBAC the collection needs (docs/certify.md), then run the play again)",
        "east: PASSED (1/1 categories passed, failed nodes: none, 1m0s)",
        "ghost: ERROR no report: no report.json in " + str(one / "ghost") + " (run playbooks/certify.yml for this host)",
        "west: FAILED (1/2 categories passed, failed nodes: node-1 (HardwareFailureDetected), 2m45s)",
        "Fleet: FAILED (4 clusters)"]
    written = json.loads((dest / "fleet.json").read_text())
    assert written == result["fleet"] and written["rows"][3]["folder"] == str(two / "west")
    assert sorted(p.name for p in dest.iterdir()) == ["fleet.html", "fleet.json", "fleet.md"]
    assert play(tmp_path, args)[1]["changed"] is False  # same folders, same bytes


def test_no_report_at_all_is_one_clear_line(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    rc, result = play(tmp_path, {"report_dir": [str(tmp_path / "empty")]})
    assert rc != 0 and result["msg"] == (f"report_dir: no cluster report under {tmp_path / 'empty'}: each host's folder "
                                         "holds report.json (run playbooks/certify.yml first)")
    rc, result = play(tmp_path, {"report_dir": [str(tmp_path / "nowhere")]})
    assert rc != 0 and result["msg"] == (f"report_dir: {tmp_path / 'nowhere'} is not a directory: give the "
                                         "cre_report_dir the runs wrote to")


def test_takes_the_auth_options_and_documents_ignoring_them() -> None:
    spec = fleet_report.SPEC["argument_spec"]
    assert {name: spec[name] for name in auth_argument_spec()} == auth_argument_spec()
    doc = yaml.safe_load(fleet_report.DOCUMENTATION)
    assert any("ignores them" in line for line in doc["description"])
