"""The trainer's multi-node NVLink switch `NCCL_MNNVL_ENABLE` (workflow spec §9: diagnose's no-NVL re-tests).

The value may sit in the trainer's args (`-x NCCL_MNNVL_ENABLE=1`, or inside a shell command line) or in its
env; args are looked at first, as NVCRE does.
"""
from __future__ import annotations

import re
from typing import Any

VARIABLE = "NCCL_MNNVL_ENABLE"
_ASSIGNMENT = re.compile(rf"{VARIABLE}=(\S*)")


def _trainer(job_spec: dict[str, Any]) -> dict[str, Any] | None:
    train_job = (job_spec.get("workload") or {}).get("trainJob")
    return None if train_job is None else train_job.get("trainer")


def enabled(job_spec: dict[str, Any]) -> bool:
    """The Job spec turns MNNVL on: its first `NCCL_MNNVL_ENABLE` (args, then env) has a value other than 0."""
    first = _first(job_spec)
    return first is not None and first != "0"


def _first(job_spec: dict[str, Any]) -> str | None:
    trainer = _trainer(job_spec) or {}
    values = [m.group(1) for arg in trainer.get("args") or [] if (m := _ASSIGNMENT.search(str(arg)))]
    values += [str(e.get("value", "")) for e in trainer.get("env") or [] if e.get("name") == VARIABLE]
    return values[0] if values else None


def forced_off(job_spec: dict[str, Any]) -> bool:
    """The Job spec turns MNNVL off: its first `NCCL_MNNVL_ENABLE` is 0 (unset, NCCL decides: on where it can)."""
    return _first(job_spec) == "0"


def force_off(job_spec: dict[str, Any]) -> None:
    """Set MNNVL to 0 in place: in every arg that assigns it, else in the env entry, else as a new env entry."""
    trainer = _trainer(job_spec)
    if trainer is None:
        return
    args = trainer.get("args") or []
    if any(_ASSIGNMENT.search(str(arg)) for arg in args):
        trainer["args"] = [_ASSIGNMENT.sub(f"{VARIABLE}=0", arg) if isinstance(arg, str) else arg for arg in args]
        return
    env = trainer.setdefault("env", [])
    for entry in env:
        if entry.get("name") == VARIABLE:
            entry.pop("valueFrom", None)
            entry["value"] = "0"
            return
    env.append({"name": VARIABLE, "value": "0"})
