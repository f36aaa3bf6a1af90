"""Where playbooks/certify.yml puts each cluster's report: the results role's `results_dest` as the play sets it,
templated by a real ansible-playbook run in another directory (no cluster needed)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.ansible_run import ENV, ROOT


def results_dest_expression() -> str:
    """certify.yml's first play notes each host's folder (cre_host_report_dir) before anything else."""
    play = yaml.safe_load((ROOT / "playbooks" / "certify.yml").read_text())[0]
    return play["tasks"][0]["ansible.builtin.set_fact"]["cre_host_report_dir"]


def report_dirs(cwd: Path, host_vars: dict[str, dict]) -> dict[str, str]:
    """results_dest per inventory host, as certify.yml's play computes it, run from `cwd`."""
    (cwd / "inventory.yml").write_text(yaml.safe_dump({"clusters": {"hosts": host_vars}}))
    (cwd / "play.yml").write_text(yaml.safe_dump([{
        "name": "Report dirs", "hosts": "clusters", "connection": "local", "gather_facts": False,
        "vars": {"results_dest": results_dest_expression()},
        "tasks": [{"name": "Show", "ansible.builtin.debug": {"var": "results_dest"}}]}]))
    env = {**os.environ, **ENV, "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg")}
    proc = subprocess.run([str(ROOT / ".venv/bin/ansible-playbook"), "-i", "inventory.yml", "play.yml"], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (task,) = json.loads(proc.stdout)["plays"][0]["tasks"]
    return {host: result["results_dest"] for host, result in task["hosts"].items()}


@pytest.fixture(name="workdir")
def workdir_fixture(tmp_path: Path) -> Path:
    (tmp_path / "runs").mkdir()
    return (tmp_path / "runs").resolve()


def test_default_is_cre_reports_in_the_working_directory_one_folder_per_host(workdir):
    dirs = report_dirs(workdir, {"east": {}, "west": {}})
    assert dirs == {"east": str(workdir / "cre-reports" / "east"), "west": str(workdir / "cre-reports" / "west")}


def test_a_shared_report_dir_still_gets_one_folder_per_host(workdir, tmp_path):
    shared = {"cre_report_dir": str(tmp_path / "fleet")}
    dirs = report_dirs(workdir, {"east": shared, "west": shared})
    assert dirs == {"east": str(tmp_path.resolve() / "fleet" / "east"), "west": str(tmp_path.resolve() / "fleet" / "west")}


def test_a_relative_report_dir_is_taken_from_the_working_directory(workdir):
    dirs = report_dirs(workdir, {"east": {"cre_report_dir": "reports"}, "west": {"cre_report_dir": ""}})
    assert dirs == {"east": str(workdir / "reports" / "east"), "west": str(workdir / "cre-reports" / "west")}
