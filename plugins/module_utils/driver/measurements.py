"""The measurement pass of the Workflow loop: each Bandwidth- and GoodputMeasurement of the Workflow, reconciled
by the engine (engine/reconcile/bandwidth_tier.py, goodput_tier.py) with the pod logs it asks for.

Logs are read as any client reads them, from the API server's pod log endpoint with kubelet timestamps:
a running sample reads only the window since the previous read, the final bandwidth read reads the whole log
once, in pages. What NVCRE keeps in memory (the throttle, the read anchor, goodput's open checkpoint save) is
kept here, per measurement, for the length of the run.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..engine.api.actions import Ref, Step
from ..engine.api.objects import is_true, timestamp
from ..engine.api.vocabulary import API_VERSION, BANDWIDTH_MEASUREMENT, COMPLETE, GOODPUT_MEASUREMENT, LABEL_WORKFLOW, LOG_PROFILE
from ..engine.reconcile import bandwidth_tier, goodput_tier
from ..engine.reconcile.measurement import LogRead, Read
from ..engine.spec.log_lines import split_timestamp
from ..kube.rest import ApiException, Kube
from .execute import status_message

PAGE_BYTES = 8 * 1024 * 1024
MAX_PAGES = 64
KINDS = (BANDWIDTH_MEASUREMENT, GOODPUT_MEASUREMENT)

Obj = dict[str, Any]


class UnreadableLog(Exception):
    """The log cannot be read in full (not worth retrying)."""


@dataclass
class Memory:
    """A BandwidthMeasurement's throttle and read anchor."""

    last_sample: datetime | None = None
    last_fetch: datetime | None = None


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


class MeasurementPass(ABC):
    """One kind's measurements, reconciled once per driver pass: what both kinds share is the LogProfile
    (read once per pass), the loop over the open measurements and the log reads the engine asks for."""

    kind = ""

    def __init__(self, kube: Kube, namespace: str) -> None:
        self.kube, self.namespace = kube, namespace
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
        """(measurement name, Step) for every open measurement of this kind."""
        self._profiles = {}
        out = []
        for m in measurements:
            if m.get("kind") != self.kind or is_true(m, COMPLETE):
                continue
            job_name = ((m.get("spec") or {}).get("jobRef") or {}).get("name", "")
            profile, problem = self.profile((m.get("spec") or {}).get("logProfileRef", ""))
            out.append((m["metadata"]["name"],
                        self.reconcile(m, jobs.get(job_name), pods.get(job_name, []), profile, problem, now)))
        return out

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


class BandwidthPass(MeasurementPass):
    """The BandwidthMeasurements; the throttle and read anchor are kept per measurement."""

    kind = BANDWIDTH_MEASUREMENT

    def __init__(self, kube: Kube, namespace: str) -> None:
        super().__init__(kube, namespace)
        self.memory: dict[str, Memory] = {}

    def reconcile(self, m: Obj, job: Obj | None, pods: list[Obj], profile: Obj | None, problem: str,
                  now: datetime) -> Step:
        memory = self.memory.setdefault(m["metadata"]["name"], Memory())
        world = bandwidth_tier.BandwidthWorld(m, job, pods, profile, problem, now, memory.last_sample, memory.last_fetch)
        step = bandwidth_tier.reconcile(world)
        if step.read is not None:
            world.log = self.read(step.read)
            step = bandwidth_tier.reconcile(world)
        if step.sampled:
            memory.last_sample = now
        if step.fetched:
            memory.last_fetch = now
        return step.step


class GoodputPass(MeasurementPass):
    """The GoodputMeasurements; the throttle, log anchor and an open checkpoint save are kept per measurement.
    A Multi profile's two workers are read in parallel."""

    kind = GOODPUT_MEASUREMENT

    def __init__(self, kube: Kube, namespace: str) -> None:
        super().__init__(kube, namespace)
        self.memory: dict[str, goodput_tier.GoodputMemory] = {}

    def reconcile(self, m: Obj, job: Obj | None, pods: list[Obj], profile: Obj | None, problem: str,
                  now: datetime) -> Step:
        name = m["metadata"]["name"]
        world = goodput_tier.GoodputWorld(m, job, pods, profile, problem, now,
                                          self.memory.get(name, goodput_tier.GoodputMemory()))
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
