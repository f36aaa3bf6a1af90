"""roles/results' verdict through a real ansible-playbook run, without a cluster: the role runs from a copy of the
collection whose certification_results action returns a canned report. An unfinished run (timed out, RUNNING,
INCOMPLETE) fails the play unless results_fail_on_incomplete is false; FAILED stays results_fail_on_failure's."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.ansible_run import ROOT

FAKE_ACTION = '''
import json
import os

from ansible.plugins.action import ActionBase


class ActionModule(ActionBase):
    def run(self, tmp=None, task_vars=None):
        result = os.environ["FAKE_RESULT"]
        return {"changed": False, "result": result, "files": [], "report": {"result": result},
                "summary": {"name": "lab-cert", "categories_passed": 1, "categories_total": 1,
                            "failed_nodes": json.loads(os.environ["FAKE_FAILED_NODES"])}}
'''


@pytest.fixture(scope="module", name="collections")
def collections_fixture(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("collections")
    tree = root / "ansible_collections" / "cre" / "certification"
    shutil.copytree(ROOT / "roles" / "results", tree / "roles" / "results")
    shutil.copy2(ROOT / "galaxy.yml", tree / "galaxy.yml")
    (tree / "meta").mkdir()
    (tree / "meta" / "runtime.yml").write_text('---\nrequires_ansible: ">=2.19.0"\n')
    (tree / "plugins" / "action").mkdir(parents=True)
    (tree / "plugins" / "action" / "certification_results.py").write_text(FAKE_ACTION)
    return root


def run(collections: Path, tmp_path: Path, result: str, failed_nodes: tuple[str, ...] = (), **extra) -> tuple[int, str]:
    (tmp_path / "play.yml").write_text(yaml.safe_dump([{
        "name": "Report", "hosts": "localhost", "connection": "local", "gather_facts": False,
        "roles": [{"role": "cre.certification.results",
                   "vars": {"results_certification_name": "lab-cert", "results_dest": str(tmp_path / "r"), **extra}}],
    }]))
    env = {**os.environ, "ANSIBLE_COLLECTIONS_PATH": str(collections), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_LOCALHOST_WARNING": "0", "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0",
           "FAKE_RESULT": result, "FAKE_FAILED_NODES": json.dumps(list(failed_nodes))}
    env.pop("ANSIBLE_CONFIG", None)
    proc = subprocess.run([str(ROOT / ".venv/bin/ansible-playbook"), "play.yml"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.parametrize(("result", "extra", "words"), [
    ("RUNNING", {}, "RUNNING (the run has not finished; run the play again to continue)"),
    ("INCOMPLETE", {}, "INCOMPLETE (categories passed, but nodes were excluded: gpu-node-003)"),
    ("RUNNING", {"results_timed_out": True}, "RUNNING (the run hit its timeout; run the play again to continue"),
    ("PASSED", {"results_timed_out": True}, "PASSED (the run hit its timeout"),
])
def test_unfinished_run_fails_the_play(collections, tmp_path, result, extra, words):
    rc, out = run(collections, tmp_path, result, ("gpu-node-003",), **extra)
    assert rc != 0, out
    assert f"Certification lab-cert: {words}" in " ".join(out.split()), out
    assert "Set results_fail_on_incomplete to false to only report" in " ".join(out.split())


@pytest.mark.parametrize(("result", "extra"), [
    ("RUNNING", {"results_fail_on_incomplete": False}),
    ("INCOMPLETE", {"results_fail_on_incomplete": False}),
    ("RUNNING", {"results_fail_on_incomplete": False, "results_timed_out": True}),
    ("PASSED", {}),
    ("PASSED", {"results_timed_out": False}),
    ("FAILED", {"results_fail_on_failure": False}),
])
def test_finished_or_allowed_runs_pass(collections, tmp_path, result, extra):
    rc, out = run(collections, tmp_path, result, **extra)
    assert rc == 0, out


def test_failed_still_fails_with_incomplete_allowed(collections, tmp_path):
    rc, out = run(collections, tmp_path, "FAILED", ("gpu-node-001",), results_fail_on_incomplete=False)
    assert rc != 0 and "FAILED" in out, out


def test_certify_playbook_passes_the_timeout():
    """certify.yml's last play fails each host on its verdict with the run's timed_out."""
    fleet_play = yaml.safe_load((ROOT / "playbooks" / "certify.yml").read_text())[-1]
    (verdict,) = [t for t in fleet_play["tasks"] if (t.get("ansible.builtin.include_role") or {}).get("tasks_from")
                  == "verdict"]
    assert verdict["vars"]["results_timed_out"] == "{{ certify_result['timed_out'] | default(false) }}"
