"""The measurement pass of the Workflow loop: each Bandwidth- and GoodputMeasurement of the Workflow, reconciled
by the engine (engine/reconcile/bandwidth_tier.py, goodput_tier.py) with the pod logs it asks for.

Logs are read as any client reads them, from the API server's pod log endpoint with kubelet timestamps:
a running sample reads only the window since the previous read, the final bandwidth read reads the whole log
once, in pages. What NVCRE keeps in memory (the throttle, the read anchor, goodput's open checkpoint save) is
kept here, per measurement, for the length of the run.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..engine.api.actions import Step
from ..engine.api.objects import is_true, parse_time, timestamp
from ..engine.api.vocabulary import API_VERSION, BANDWIDTH_MEASUREMENT, COMPLETE, GOODPUT_MEASUREMENT, LABEL_WORKFLOW
from ..engine.logs.log_lines import split_timestamp
from ..engine.reconcile import bandwidth_tier, goodput_tier
from ..engine.reconcile.measurement import LogRead, Read
from ..kube.errors import Unreachable
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
    """A BandwidthMeasurement's throttle and read anchor, and what it has read of its pod's log."""

    last_sample: datetime | None = None
    last_fetch: datetime | None = None
    pod: str = ""            # the pod whose log `text` holds
    text: str = ""           # every line read from it so far, once each (so the final read fetches only the rest)
    ended: str = ""          # the container, when `text` was read after it had ended (its whole log, not to be read again)


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


def _ended(pods: list[Obj], name: str, container: str) -> str:
    """The container as it ended (its ID, restarts and end), or "" while it runs: a log read once it has ended is
    its whole log, and stays so while the container is the same one."""
    statuses = (_pod(pods, name).get("status") or {}).get("containerStatuses") or []
    for status in statuses:
        if status.get("name") == container or (not container and len(statuses) == 1):
            ended = (status.get("state") or {}).get("terminated")
            return f"{status.get('containerID', '')}/{status.get('restartCount', 0)}/{ended['finishedAt']}" if (
                ended and ended.get("finishedAt")) else ""
    return ""


def _started(pods: list[Obj], name: str) -> datetime:
    """The pod's start (the far future when unknown, so that a copy of its log is never trusted)."""
    return parse_time((_pod(pods, name).get("status") or {}).get("startTime")) or datetime.max.replace(tzinfo=UTC)


def _pod(pods: list[Obj], name: str) -> Obj:
    return next((p for p in pods if (p.get("metadata") or {}).get("name") == name), {})


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


@dataclass(frozen=True)
class Open:
    """An open measurement, its Job (None when gone), the Job's pods and its LogProfile (or why it is missing)."""

    m: Obj
    job: Obj | None
    pods: list[Obj]
    profile: Obj | None
    problem: str

    @property
    def name(self) -> str:
        return str(self.m["metadata"]["name"])


class Profiles:
    """A measurement's spec.logProfileRef resolved: the LogProfile (cluster-scoped, from the run's watch of them),
    or why it could not be read, each name looked up once per pass (`clear` starts a pass). The measurement passes
    and the Job tier's evidence steps (driver/worlds.py) resolve with it, so both read a log with the same profile."""

    def __init__(self, lookup: Callable[[str], Obj | None]) -> None:
        self._lookup = lookup
        self._found: dict[str, tuple[Obj | None, str]] = {}

    def clear(self) -> None:
        self._found = {}

    def __call__(self, name: str) -> tuple[Obj | None, str]:
        if name not in self._found:
            try:
                found = self._lookup(name)
                self._found[name] = (found, "" if found else f'logprofiles.nvcre.nvidia.com "{name}" not found')
            except (ApiException, LookupError) as exc:
                self._found[name] = (None, status_message(exc) if isinstance(exc, ApiException) else str(exc))
        return self._found[name]


class MeasurementPass(ABC):
    """One kind's measurements, reconciled once per driver pass: what both kinds share is the LogProfile
    (looked up once per pass in the run's watch of them), the loop over the open measurements and the log reads
    the engine asks for."""

    kind = ""

    def __init__(self, kube: Kube, namespace: str, profiles: Callable[[str], Obj | None]) -> None:
        self.kube, self.namespace = kube, namespace
        self._profiles = Profiles(profiles)

    def profile(self, name: str) -> tuple[Obj | None, str]:
        """The LogProfile (cluster-scoped), once per pass; or why it could not be read."""
        return self._profiles(name)

    def open(self, measurements: list[Obj], jobs: dict[str, Obj], pods: dict[str, list[Obj]]) -> list[Open]:
        """Every open measurement of this kind, with what its reconcile reads."""
        self._profiles.clear()
        out = []
        for m in measurements:
            if m.get("kind") != self.kind or is_true(m, COMPLETE):
                continue
            job_name = ((m.get("spec") or {}).get("jobRef") or {}).get("name", "")
            profile, problem = self.profile((m.get("spec") or {}).get("logProfileRef", ""))
            out.append(Open(m, jobs.get(job_name), pods.get(job_name, []), profile, problem))
        return out

    def step(self, item: Open, now: datetime) -> Step:
        """The engine's Step for one open measurement. Each measurement's memory is its own, so measurements may be
        stepped in parallel (their log reads then overlap)."""
        return self.reconcile(item.m, item.job, item.pods, item.profile, item.problem, now)

    @abstractmethod
    def reconcile(self, m: Obj, job: Obj | None, pods: list[Obj], profile: Obj | None, problem: str,
                  now: datetime) -> Step:
        """The engine's Step for one measurement, with the logs it asked for read."""

    def read(self, read: Read) -> LogRead:
        try:
            return LogRead(read_log(self.kube, self.namespace, read.pod, read.container, read.since))
        except UnreadableLog as exc:
            return LogRead(error=f"reading log of pod {read.pod}: log cannot be read in full: {exc}", retryable=False)
        except ApiException as exc:
            return LogRead(error=f"reading log of pod {read.pod}: {status_message(exc)}")
        except Unreachable as exc:  # the API server restarting: read again on a later pass
            return LogRead(error=f"reading log of pod {read.pod}: {exc.cause}")


class BandwidthPass(MeasurementPass):
    """The BandwidthMeasurements; the throttle and read anchor are kept per measurement."""

    kind = BANDWIDTH_MEASUREMENT

    def __init__(self, kube: Kube, namespace: str, profiles: Callable[[str], Obj | None]) -> None:
        super().__init__(kube, namespace, profiles)
        self.memory: dict[str, Memory] = {}

    def reconcile(self, m: Obj, job: Obj | None, pods: list[Obj], profile: Obj | None, problem: str,
                  now: datetime) -> Step:
        memory = self.memory.setdefault(m["metadata"]["name"], Memory())
        world = bandwidth_tier.BandwidthWorld(m, job, pods, profile, problem, memory.last_sample, memory.last_fetch,
                                              now=now)
        step = bandwidth_tier.reconcile(world)
        read_at = now
        if step.read is not None:
            # The read anchor is when the read went out (NVCRE reads as its reconcile begins). A pass's reads wait
            # their turn, 8 at a time: anchored at the pass's start, the next window read that wait again (512
            # nodes: 1-2 s of every read, a third of a short table).
            read_at = max(now, datetime.now(UTC))
            world.log = self.kept_read(step.read, memory, pods)
            step = bandwidth_tier.reconcile(world)
        if step.sampled:
            memory.last_sample = now
        if step.fetched:
            memory.last_fetch = read_at
        return step.step

    def kept_read(self, read: Read, memory: Memory, pods: list[Obj]) -> LogRead:
        """The window the tier asked for, kept; for the final read, only what this run has not read of the pod yet,
        joined to what it has, or nothing more when the copy was read after the container had ended. The copy counts
        only when it starts at the pod's start (a rerun, or a window cut to the last 30 minutes, reads the whole log
        at the end) and while it stays small."""
        if read.since is not None:
            ended = _ended(pods, read.pod, read.container)  # as the pods were before this read
            window = self.read(read)
            if not window.error:
                if memory.pod == read.pod and memory.text:
                    memory.text = extend(memory.text, window.text)
                elif read.since <= _started(pods, read.pod):
                    memory.pod, memory.text = read.pod, window.text
                whole = len(window.text.encode()) < PAGE_BYTES  # a full page may have been cut short
                memory.ended = ended if memory.pod == read.pod and whole else ""
                if len(memory.text) > CACHE_BYTES:
                    memory.pod, memory.text, memory.ended = "", "", ""
            return window
        kept = memory.pod == read.pod and memory.text
        if kept and memory.ended and memory.ended == _ended(pods, read.pod, read.container):
            return LogRead(memory.text)  # read whole after the container ended: the final read has it already
        last = split_timestamp(memory.text.splitlines()[-1])[0] if kept else None
        if last is not None:
            rest = self.read(Read(read.pod, read.container, last.replace(microsecond=0)))
            if not rest.error and len(rest.text.encode()) < PAGE_BYTES:
                return LogRead(extend(memory.text, rest.text))
        return self.read(read)


class GoodputPass(MeasurementPass):
    """The GoodputMeasurements; the throttle, log anchor and an open checkpoint save are kept per measurement.
    A Multi profile's two workers are read in parallel."""

    kind = GOODPUT_MEASUREMENT

    def __init__(self, kube: Kube, namespace: str, profiles: Callable[[str], Obj | None]) -> None:
        super().__init__(kube, namespace, profiles)
        self.memory: dict[str, goodput_tier.GoodputMemory] = {}

    def reconcile(self, m: Obj, job: Obj | None, pods: list[Obj], profile: Obj | None, problem: str,
                  now: datetime) -> Step:
        name = m["metadata"]["name"]
        world = goodput_tier.GoodputWorld(m, job, pods, profile, problem,
                                          self.memory.get(name, goodput_tier.GoodputMemory()), now=now)
        step = goodput_tier.reconcile(world)
        if step.reads:
            with ThreadPoolExecutor(len(step.reads)) as pool:
                world.logs = dict(zip((r.pod for r in step.reads), pool.map(self.read, step.reads)))
            step = goodput_tier.reconcile(world)
        if step.memory is not None:
            self.memory[name] = step.memory
        return step.step


def waiting(measurements: list[Obj], jobs: dict[str, Obj]) -> bool:
    """Whether a measurement is still open that will complete: after the Workflow ends the run waits for these
    (boundedly). A goodput measurement whose Job is gone never completes (§3.3), so it is not waited for."""
    return any(not is_true(m, COMPLETE) and (
        m.get("kind") != GOODPUT_MEASUREMENT or ((m.get("spec") or {}).get("jobRef") or {}).get("name") in jobs)
        for m in measurements)
