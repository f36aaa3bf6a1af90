"""What the two measurement tiers share (spec/measurements.md §2, §3): the log-read protocol with the driver,
the sample interval, the Job's terminal anchor and the status write.

A tier that needs a pod's log answers with the `Read`s to make; the driver makes them and calls the tier
again with what it got (`LogRead`), so the tiers stay free of I/O.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ..api.actions import Action, UpdateStatus
from ..api.objects import condition, parse_duration, parse_time
from ..api.vocabulary import FAILED, SUCCEEDED

REQUEUE = 15.0                        # RequeueInterval
DEFAULT_SAMPLE_INTERVAL = timedelta(seconds=60)
MAX_LOOKBACK = timedelta(minutes=30)  # maxLogLookback

Obj = dict[str, Any]


@dataclass
class LogRead:
    """What the driver read: the text (kubelet timestamps on), or why it could not (`error`)."""

    text: str = ""
    error: str = ""
    retryable: bool = True


@dataclass
class Read:
    """A log the pass needs: `since` None means the whole log (the final bandwidth read)."""

    pod: str
    container: str
    since: datetime | None


def sample_interval(m: Obj) -> timedelta:
    """spec.sampleInterval, 60s when absent."""
    text = (m.get("spec") or {}).get("sampleInterval")
    return parse_duration(text) if text else DEFAULT_SAMPLE_INTERVAL


def profile_ref(m: Obj) -> str:
    return (m.get("spec") or {}).get("logProfileRef", "")


def container(profile: Obj | None) -> str:
    """The container whose log is read; "" names none (single-container pods)."""
    return ((profile or {}).get("spec") or {}).get("containerName") or ""


def since(start: datetime | None, floor: datetime) -> datetime:
    """A window's start, never earlier than `floor` (maxLogLookback before now or the anchor)."""
    return max(start or floor, floor)


def terminal_anchor(job: Obj, now: datetime) -> datetime:
    """The Job's terminal time: its True Succeeded (else Failed) condition's transition, else the pass's time."""
    for kind in (SUCCEEDED, FAILED):
        cond = condition(job, kind)
        when = parse_time((cond or {}).get("lastTransitionTime")) if (cond or {}).get("status") == "True" else None
        if when is not None:
            return when
    return now


def status_write(m: Obj, status: Obj) -> list[Action]:
    """The status update of `m` as read (resourceVersion kept), or nothing when the status is unchanged."""
    if status == (m.get("status") or {}):
        return []
    return [UpdateStatus({**m, "status": status})]
