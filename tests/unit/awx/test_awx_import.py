"""awx/job-template.yml and awx/import.yml: the job templates name real playbooks and only awx.awx.job_template
options, and the import playbook's awx.awx tasks accept every object of awx/ (each stops only at connecting to
an AWX that does not answer)."""
from __future__ import annotations

import json
import os
import socket
import subprocess
from typing import Any

import pytest
import yaml

from tests.ansible_run import ROOT

JOB_TEMPLATES: list[dict[str, Any]] = yaml.safe_load((ROOT / "awx" / "job-template.yml").read_text())
SCHEDULES: list[dict[str, Any]] = yaml.safe_load((ROOT / "awx" / "schedule.yml").read_text())
# awx.awx option types as Python types.
PYTHON_TYPES = {"str": str, "bool": bool, "int": int, "list": list, "dict": dict}


def closed_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def module_options(module: str) -> dict[str, Any]:
    out = subprocess.run([str(ROOT / ".venv/bin/ansible-doc"), "-j", module], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    return json.loads(out)[module]["doc"]["options"]


@pytest.mark.parametrize("template", JOB_TEMPLATES, ids=lambda t: t["name"])
def test_job_template_uses_awx_options_and_a_real_playbook(template: dict[str, Any]) -> None:
    options = module_options("awx.awx.job_template")
    for key, value in template.items():
        assert key in options, f"{key} is no option of awx.awx.job_template"
        assert isinstance(value, PYTHON_TYPES[options[key]["type"]]), (key, value)
    assert (ROOT / template["playbook"]).is_file()


@pytest.mark.parametrize("schedule", SCHEDULES, ids=lambda s: s["name"])
def test_schedule_uses_awx_options_and_recertifies_with_history(schedule: dict[str, Any]) -> None:
    """A recurring run: a new dated Certification each time, compared with the last, failing on a regression;
    its extra_data are variables the roles declare."""
    options = module_options("awx.awx.schedule")
    for key, value in schedule.items():
        assert key in options, f"{key} is no option of awx.awx.schedule"
        assert isinstance(value, PYTHON_TYPES[options[key]["type"]]), (key, value)
    assert schedule["unified_job_template"] in [t["name"] for t in JOB_TEMPLATES]
    assert "RRULE:FREQ=WEEKLY;INTERVAL=4" in schedule["rrule"] and schedule["enabled"] is False
    data = schedule["extra_data"]
    assert data["certify_dated_name"] is True and data["results_enforce"] is True
    declared = set()
    for role in ("certify", "results"):
        specs = yaml.safe_load((ROOT / "roles" / role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
        declared |= set(specs["main"]["options"])
    assert set(data) <= declared, set(data) - declared


def test_certify_template_runs_one_job_at_a_time_and_asks_for_a_limit() -> None:
    (certify,) = [t for t in JOB_TEMPLATES if t["playbook"] == "playbooks/certify.yml"]
    assert certify["survey_enabled"] and certify["ask_limit_on_launch"] and not certify["allow_simultaneous"]
    assert certify["job_slice_count"] >= 1


@pytest.mark.parametrize("task, items", [
    ("Register the execution environment", ["cre.certification EE"]),
    ("Create the credential types", ["Kubernetes bearer token (cre.certification)",
                                     "Kubeconfig, multi-context (cre.certification)"]),
    ("Create the job templates", [t["name"] for t in JOB_TEMPLATES]),
    ("Create the schedules (disabled)", [s["name"] for s in SCHEDULES]),
])
def test_import_playbook_tasks_accept_the_awx_objects(task: str, items: list[str], tmp_path) -> None:
    port = closed_port()
    proc = subprocess.run(
        [str(ROOT / ".venv/bin/ansible-playbook"), str(ROOT / "awx/import.yml"), "-e", "awx_ee_image=ee:0.1.0",
         "--start-at-task", task],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "CONTROLLER_HOST": f"https://127.0.0.1:{port}", "CONTROLLER_OAUTH_TOKEN": "no-such-token-0123",
             "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1", "ANSIBLE_STDOUT_CALLBACK": "json",
             "ANSIBLE_LOAD_CALLBACK_PLUGINS": "1"})
    assert proc.returncode != 0
    (result,) = [t["hosts"]["localhost"] for t in json.loads(proc.stdout)["plays"][0]["tasks"] if t["task"]["name"] == task]
    results = result.get("results", [result])
    assert [r.get("item", {}).get("name", items[0]) for r in results] == items
    for one in results:  # the arguments passed the module's validation; only the connection failed
        assert f"trying to connect to https://127.0.0.1:{port}/api/v2/" in one["msg"], one["msg"]
        assert "Connection refused" in one["msg"]
