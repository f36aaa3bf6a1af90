"""The measurements of a Job as read (spec/measurements.md §2.2): which are its own, and which are final.

A retried group's new Job has the same name as the one before; the Job UID annotation tells their measurements
apart. `reconcile/job_measurements.py` creates them.
"""
from __future__ import annotations

from typing import Any

from ..api.objects import condition, is_true, meta
from ..api.vocabulary import ANNOTATION_JOB_UID, COMPLETE, JOB_SUCCEEDED

Obj = dict[str, Any]


def of_job(measurements: list[Obj], job: Obj, kind: str) -> list[Obj]:
    """The measurements of `kind` whose jobRef names this Job, by name (NVCRE's index by jobRef name)."""
    name = meta(job).get("name")
    return sorted((m for m in measurements if m.get("kind") == kind
                   and ((m.get("spec") or {}).get("jobRef") or {}).get("name") == name),
                  key=lambda m: meta(m).get("name", ""))


def measures(m: Obj, job: Obj) -> bool:
    """The measurement is of this very Job: no Job UID recorded, or this Job's (a same-named later Job is another)."""
    uid = (meta(m).get("annotations") or {}).get(ANNOTATION_JOB_UID)
    return not uid or uid == meta(job).get("uid")


def final(m: Obj) -> bool:
    """Complete with JobSucceeded: the exact figures of the Job's whole log (what thresholds may read)."""
    return is_true(m, COMPLETE) and (condition(m, COMPLETE) or {}).get("reason") == JOB_SUCCEEDED
