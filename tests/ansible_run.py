"""Run the collection as a user would: `ansible localhost -m cre.certification.<module>` from the repo root."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

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
