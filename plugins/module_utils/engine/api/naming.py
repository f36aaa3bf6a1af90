"""Deterministic object names (NVCRE pkg/naming, workflow spec §8.1, §10, §13).

Every child name is a pure function of its parent, so a run resumes from the cluster alone.
"""
from __future__ import annotations

import re
from typing import Any

WORKFLOW_MAX = 31
JOB_MAX = 35
WORKLOAD_MAX = 44
GENERIC_MAX = 63

_HASH_SEGMENT = re.compile(r"-([0-9a-f]{5})$")


def natural(name: str) -> list[Any]:
    """Natural order of names: group-2 before group-10."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


def fnv32a(text: str) -> int:
    """FNV-1a, 32 bit, over the UTF-8 bytes (Go's hash/fnv New32a)."""
    value = 0x811C9DC5
    for byte in text.encode("utf-8"):
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def short_hash(text: str) -> str:
    """First five characters of `%05x` of FNV-32a: the suffix Truncate appends."""
    return f"{fnv32a(text):05x}"[:5]


def truncate(name: str, limit: int) -> str:
    """`name` if it fits, else its first `limit-6` characters (trailing `-` trimmed), `-`, short hash."""
    if len(name) <= limit:
        return name
    return f"{name[: limit - 6].rstrip('-')}-{short_hash(name)}"


def extract_hash(workflow_name: str) -> str:
    """The hash segment a truncated name already ends with, else the short hash of the name.

    NVCRE takes "the trailing 5-char segment if present"; we require it to look like a Truncate
    suffix (five lowercase hex digits) so that a plain word such as `-nccl5` is not mistaken for one.
    """
    match = _HASH_SEGMENT.search(workflow_name)
    return match.group(1) if match else short_hash(workflow_name)


def workflow_name(certification: str, domain: str, variant: str) -> str:
    """Child Workflow of a Certification category: `<certification>-<domain>-<variant>`, max 31."""
    return truncate(f"{certification}-{domain}-{variant}", WORKFLOW_MAX)


def single_job(diagnose: bool, iterations: int, total_groups: int) -> bool:
    """True when a Workflow runs exactly one Job in total, which then gets the short `-job` names."""
    return not diagnose and iterations <= 1 and total_groups <= 1


def job_name(workflow: str, group: str, iteration: int, single: bool) -> str:
    """`<workflow>-job` for a single-Job Workflow, else `<workflow>-<group>-iter-<n>`; max 35."""
    name = f"{workflow}-job" if single else f"{workflow}-{group}-iter-{iteration}"
    return truncate(name, JOB_MAX)


def measurement_name(job: str, kind: str) -> str:
    """A Job's measurement: `<job>-bandwidth` or `<job>-goodput`."""
    return truncate(f"{job}-{kind}", GENERIC_MAX)


def workload_name(job: str) -> str:
    """The TrainJob a Job creates: `<job>-workload`."""
    return truncate(f"{job}-workload", WORKLOAD_MAX)


def dependency_suffix(workflow: str, group: str, iteration: int, single: bool) -> str:
    """Suffix of job-scoped dependency copies: `-<h>-job` or `-<h>-<group>-iter-<n>` (§7.2)."""
    tail = "job" if single else f"{group}-iter-{iteration}"
    return f"-{extract_hash(workflow)}-{tail}"


def dependency_copy_name(name: str, suffix: str) -> str:
    """Name of a job-scoped copy (or of a renamed shared reference), max 63."""
    return truncate(f"{name}{suffix}", GENERIC_MAX)


def succeeded_nodes_configmap(workflow_uid: str) -> str:
    return f"succeeded-nodes-{workflow_uid[:8]}"


def failed_nodes_configmap(workflow_uid: str) -> str:
    return f"failed-nodes-{workflow_uid[:8]}"
