"""Run the collection as a user would: `ansible localhost -m cre.certification.<module>` from the repo root."""
from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
ENV = {"ANSIBLE_LOAD_CALLBACK_PLUGINS": "1", "ANSIBLE_STDOUT_CALLBACK": "ansible.posix.json",
       "ANSIBLE_LOCALHOST_WARNING": "0", "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0"}


def ansible_module(module: str, args: dict[str, Any], *flags: str, timeout: float = 120) -> tuple[int, dict]:
    """The exit code and the task result (json callback) of one ad-hoc run of `cre.certification.<module>`."""
    module_args = ["-a", json.dumps(args)] if args else []  # ansible reads "-a {}" as raw params
    proc = subprocess.run([str(ROOT / ".venv" / "bin" / "ansible"), "localhost", *flags, "-m",
                           f"cre.certification.{module}", *module_args],
                          cwd=ROOT, env={**os.environ, **ENV}, capture_output=True, text=True, timeout=timeout,
                          check=False)
    lines = proc.stdout.splitlines()
    start = lines.index("{")  # progress lines printed while the task ran come before the JSON report
    result = json.loads("\n".join(lines[start:]))["plays"][0]["tasks"][0]["hosts"]["localhost"]
    return proc.returncode, {**result, "_progress": lines[:start]}


def run_playbook(playbook: str, hosts: dict[str, dict[str, Any]], cwd: Path, timeout: float = 600
                 ) -> subprocess.CompletedProcess[str]:
    """`ansible-playbook -i inventory.yml playbooks/<playbook>` in `cwd`, over an inventory of these hosts in the group
    `clusters` (local connection, this checkout's Python), as a user runs it; reports land in `cwd`/cre-reports."""
    inventory = {"clusters": {"vars": {"ansible_connection": "local",
                                       "ansible_python_interpreter": str(ROOT / ".venv/bin/python")},
                              "hosts": hosts}}
    (cwd / "inventory.yml").write_text(yaml.safe_dump(inventory))
    return subprocess.run([str(ROOT / ".venv/bin/ansible-playbook"), "-i", "inventory.yml",
                           str(ROOT / "playbooks" / playbook)], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, check=False,
                          env={**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg")})


def run_until(module: str, args: dict[str, Any], kill: Callable[[str], bool] | None, timeout: float = 300) -> list[str]:
    """Run `cre.certification.<module>` with -vvv (every API write on a line of its own) and SIGKILL it, task
    worker included, as soon as `kill` says so of a line; returns the lines read."""
    proc = subprocess.Popen(
        [str(ROOT / ".venv/bin/ansible"), "localhost", "-vvv", "-m", f"cre.certification.{module}",
         "-a", json.dumps(args)], cwd=ROOT, env={**os.environ, **ENV, "ANSIBLE_NOCOLOR": "1", "PYTHONUNBUFFERED": "1"},
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    seen = []
    assert proc.stdout is not None
    for line in proc.stdout:
        seen.append(line)
        if kill is not None and kill(line):
            # Ansible's task worker runs in a session of its own: SIGKILL it too, wherever it is.
            for pid in [proc.pid, *children(proc.pid)]:
                os.kill(pid, signal.SIGKILL)
            break
    proc.wait(timeout=timeout)
    return seen


def children(pid: int) -> list[int]:
    """Direct child processes of `pid`, from /proc."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out
