"""The measurement pass of the Workflow loop: each BandwidthMeasurement of the Workflow, reconciled by the
engine (engine/reconcile/bandwidth_tier.py) with the pod logs it asks for.

Logs are read as any client reads them, from the API server's pod log endpoint with kubelet timestamps:
a running sample reads only the window since the previous read, the final read reads the whole log once,
in pages. The throttle and the read anchor are kept here, per measurement, for the length of the run.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..engine.api.actions import Ref, Step
from ..engine.api.objects import is_true, parse_time, timestamp
from ..engine.api.vocabulary import API_VERSION, BANDWIDTH_MEASUREMENT, COMPLETE, GOODPUT_MEASUREMENT, LABEL_WORKFLOW, LOG_PROFILE
from ..engine.reconcile import bandwidth_tier
from ..engine.spec.log_lines import split_timestamp
from ..kube.rest import ApiException, Kube
from .execute import status_message

PAGE_BYTES = 8 * 1024 * 1024
CACHE_BYTES = 8 * 1024 * 1024  # beyond this a measurement keeps no copy: its final read reads the whole log
MAX_PAGES = 64
KINDS = (BANDWIDTH_MEASUREMENT, GOODPUT_MEASUREMENT)

Obj = dict[str, Any]


class UnreadableLog(Exception):
    """The log cannot be read in full (not worth retrying)."""


@dataclass
class Memory:
    last_sample: datetime | None = None
    last_fetch: datetime | None = None
    pod: str = ""            # the pod whose log `text` holds
    text: str = ""           # every line read from it so far, once each (so the final read fetches only the rest)


def extend(known: str, window: str) -> str:
    """`known` and the lines of `window` it lacks: windows start a second early (sinceTime has second precision),
    so lines stamped before the last known one, or equal to a known line of its second, are already there."""
    if not known:
        return window
    lines = known.splitlines(keepends=True)
    last = split_timestamp(lines[-1])[0]
    if last is None:
        return known + window
    same_second = {line for line in lines[-512:] if split_timestamp(line)[0] == last}
    fresh = []
    for line in window.splitlines(keepends=True):
        stamp = split_timestamp(line)[0]
        if stamp is None or stamp < last or (stamp == last and line in same_second):
            continue
        fresh.append(line)
    return known + "".join(fresh)


def list_measurements(kube: Kube, namespace: str, workflow: str) -> list[Obj]:
    """The Workflow's measurements (they carry its label), of every kind the collection knows."""
    out: list[Obj] = []
    for kind in KINDS:
        out.extend(kube.list(API_VERSION, kind, namespace, f"{LABEL_WORKFLOW}={workflow}"))
    return out


def read_log(kube: Kube, namespace: str, pod: str, container: str, since: datetime | None) -> str:
    """The log with kubelet timestamps: the window from `since`, or (None) the whole log in pages, each line once."""
    if since is not None:
        return kube.pod_log(namespace, pod, container, since=timestamp(since), timestamps=True, limit_bytes=PAGE_BYTES)
    lines: list[str] = []
    seen_up_to: datetime | None = None
    resume = ""
    for _page in range(MAX_PAGES):
        text = kube.pod_log(namespace, pod, container, since=resume, timestamps=True, limit_bytes=PAGE_BYTES)
        page = text.splitlines(keepends=True)
        full = len(text.encode()) >= PAGE_BYTES
        if full and page and not page[-1].endswith("\n"):
            page = page[:-1]  # the cut line comes again on the next page
        for line in page:
            stamp, _rest = split_timestamp(line)
            if seen_up_to is not None and (stamp is None or stamp <= seen_up_to) and line in lines:
                continue
            lines.append(line)
        if not full:
            return "".join(lines)
        last, _rest = split_timestamp(lines[-1]) if lines else (None, "")
        if last is None:
            raise UnreadableLog("a truncated page ends in a line without a timestamp")
        next_resume = timestamp(last.replace(microsecond=0))
        if next_resume == resume:
            raise UnreadableLog("one second of output is larger than a page")
        seen_up_to, resume = last, next_resume
    raise UnreadableLog(f"more than {MAX_PAGES} pages")


def _started(pods: list[Obj], name: str) -> datetime:
    """The pod's start (the far future when unknown, so that a copy of its log is never trusted)."""
    pod = next((p for p in pods if (p.get("metadata") or {}).get("name") == name), {})
    return parse_time((pod.get("status") or {}).get("startTime")) or datetime.max.replace(tzinfo=UTC)


class BandwidthPass:
    """Reconciles the Workflow's BandwidthMeasurements once per driver pass."""

    def __init__(self, kube: Kube, namespace: str) -> None:
        self.kube, self.namespace = kube, namespace
        self.memory: dict[str, Memory] = {}
        self._profiles: dict[str, tuple[Obj | None, str]] = {}

    def profile(self, name: str) -> tuple[Obj | None, str]:
        """The LogProfile (cluster-scoped), read once per pass; or why it could not be read."""
        if name not in self._profiles:
            try:
                found = self.kube.get(Ref(API_VERSION, LOG_PROFILE, "", name))
                self._profiles[name] = (found, "" if found else f'logprofiles.nvcre.nvidia.com "{name}" not found')
            except (ApiException, LookupError) as exc:
                self._profiles[name] = (None, status_message(exc) if isinstance(exc, ApiException) else str(exc))
        return self._profiles[name]

    def steps(self, measurements: list[Obj], jobs: dict[str, Obj], pods: dict[str, list[Obj]], now: datetime
              ) -> list[tuple[str, Step]]:
        """(measurement name, Step) for every open BandwidthMeasurement."""
        self._profiles = {}
        out = []
        for m in measurements:
            if m.get("kind") != BANDWIDTH_MEASUREMENT or is_true(m, COMPLETE):
                continue
            name = m["metadata"]["name"]
            memory = self.memory.setdefault(name, Memory())
            job_name = ((m.get("spec") or {}).get("jobRef") or {}).get("name", "")
            profile, problem = self.profile((m.get("spec") or {}).get("logProfileRef", ""))
            world = bandwidth_tier.BandwidthWorld(m, jobs.get(job_name), pods.get(job_name, []), profile, problem, now,
                                                  memory.last_sample, memory.last_fetch)
            step = bandwidth_tier.reconcile(world)
            if step.read is not None:
                world.log = self._read(step.read, memory, pods.get(job_name, []))
                step = bandwidth_tier.reconcile(world)
            if step.sampled:
                memory.last_sample = now
            if step.fetched:
                memory.last_fetch = now
            out.append((name, step.step))
        return out

    def _read(self, read: bandwidth_tier.Read, memory: Memory, pods: list[Obj]) -> bandwidth_tier.LogRead:
        """The window the tier asked for, kept; for the final read, only what this run has not read of the pod yet,
        joined to what it has. The copy counts only when it starts at the pod's start (a rerun, or a window cut to
        the last 30 minutes, reads the whole log at the end) and while it stays small."""
        try:
            if read.since is not None:
                text = read_log(self.kube, self.namespace, read.pod, read.container, read.since)
                if memory.pod == read.pod and memory.text:
                    memory.text = extend(memory.text, text)
                elif read.since <= _started(pods, read.pod):
                    memory.pod, memory.text = read.pod, text
                if len(memory.text) > CACHE_BYTES:
                    memory.pod, memory.text = "", ""
                return bandwidth_tier.LogRead(text)
            if memory.pod == read.pod and memory.text:
                last = split_timestamp(memory.text.splitlines()[-1])[0]
                if last is not None:
                    rest = read_log(self.kube, self.namespace, read.pod, read.container, last.replace(microsecond=0))
                    if len(rest.encode()) < PAGE_BYTES:
                        return bandwidth_tier.LogRead(extend(memory.text, rest))
            return bandwidth_tier.LogRead(read_log(self.kube, self.namespace, read.pod, read.container, None))
        except UnreadableLog as exc:
            return bandwidth_tier.LogRead(error=f"reading log of pod {read.pod}: log cannot be read in full: {exc}",
                                          retryable=False)
        except ApiException as exc:
            return bandwidth_tier.LogRead(error=f"reading log of pod {read.pod}: {status_message(exc)}")
