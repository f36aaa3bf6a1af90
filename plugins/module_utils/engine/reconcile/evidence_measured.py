"""A measured Job's evidence (issue 40): the rows of the log its BandwidthMeasurement or GoodputMeasurement reads,
read by the measurement's own reader (evidence/nccl_rows.py: one `group` row per message size and figure;
evidence/training_rows.py: one `step` row per step and figure).

- Which measurements: those the Job's spec asks for (job_measurements.wanted): the Job tier creates them with its
  terminal write, after the evidence is sealed, so the spec is what is known.
- Which log: the pod and container the measurement itself reads: `bandwidth_pod` with the profile's workerStrategy
  (an MPI profile reads the launcher, which carries no Job label: hence JobWorld.workload_pods); for goodput the
  pod it reads the steps from (the last worker for a `Multi` profile, else worker-0); the profile's containerName.
- Which profile: the one the driver resolved for the measurement's logProfileRef (JobWorld.log_profiles, by the
  measurement passes' own rule, driver/measurements.Profiles).
- The rows' node: the Job's group (its nvcre.nvidia.com/group label, the report's group name), else the pod's node.

No verdict rests on these rows (the thresholds judge the measurement, as before): a read that lost rows, an empty or
unreadable log, a pod or profile that is not there makes the read partial, recorded in the seal, failing nothing.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..api.objects import meta
from ..api.vocabulary import BANDWIDTH_MEASUREMENT, GOODPUT_MEASUREMENT, LABEL_GROUP
from ..evidence import nccl_rows, training_rows
from ..evidence.rows import Row
from ..evidence.sources import Labels
from ..logs.log_lines import LogProfileError
from . import job_measurements, measurement_pods
from .measurement import container
from .world import JobWorld

Obj = dict[str, Any]
NCCL_TESTS, TRAINING = "nccl-tests", "training"
FORMATS = {BANDWIDTH_MEASUREMENT: NCCL_TESTS, GOODPUT_MEASUREMENT: TRAINING}
UNRESOLVED = "the run did not resolve it"


@dataclass(frozen=True)
class Source:
    """One measurement of the Job whose log is evidence: the rows' format, its LogProfile's name, its testType."""

    fmt: str
    profile: str
    test_type: str = ""


@dataclass(frozen=True)
class Target:
    """Where a Source's log is: the pod ("" when there is none to read), its container and node, the profile
    (None when it could not be read) and why nothing can be read ("" when the log can)."""

    source: Source
    pod: str = ""
    container: str = ""
    node: str = ""
    profile: Obj | None = None
    problem: str = ""

    @property
    def key(self) -> str:
        """The log's key in JobWorld.evidence_logs."""
        return f"{self.pod}/{self.container}"


def sources(job: Obj) -> list[Source]:
    """The Job's measurements whose logs are evidence, in the order its spec's kinds come (bandwidth, goodput)."""
    return [Source(FORMATS[m["kind"]], str(m["spec"].get("logProfileRef") or ""), str(m["spec"].get("testType") or ""))
            for m in job_measurements.wanted(job) if m["kind"] in FORMATS]


def profile_refs(job: Obj) -> list[str]:
    """The LogProfiles the Job's measured evidence reads with (the driver resolves these), each once."""
    return sorted({s.profile for s in sources(job) if s.profile})


def group(job: Obj) -> str:
    """The group the rows are of: the Job's group label ("" without one: the rows then name the pod's node)."""
    return str((meta(job).get("labels") or {}).get(LABEL_GROUP) or "")


def targets(world: JobWorld) -> list[Target]:
    """Each Source's log, as its measurement would read it from the Job's workload."""
    workload = str(((world.job.get("status") or {}).get("workloadRef") or {}).get("name") or "")
    out = []
    for source in sources(world.job):
        profile, why = world.log_profiles.get(source.profile, (None, UNRESOLVED))
        if profile is None:
            out.append(Target(source, problem=f"LogProfile {source.profile!r} could not be read: {why}"))
            continue
        if source.fmt == NCCL_TESTS:
            pod = measurement_pods.bandwidth_pod(world.workload_pods, workload, profile)
            missing = measurement_pods.no_pod_message(meta(world.job).get("namespace", ""), workload, profile)
        else:
            pod = _steps_pod(world.workload_pods, workload, profile)
            missing = f"no worker pod of workload {workload} to read"
        if pod is None:
            out.append(Target(source, profile=profile, problem=missing))
            continue
        out.append(Target(source, meta(pod).get("name", ""), container(profile),
                          str((pod.get("spec") or {}).get("nodeName") or ""), profile))
    return out


def _steps_pod(pods: list[Obj], workload: str, profile: Obj) -> Obj | None:
    """The pod a GoodputMeasurement reads the steps from: the last worker for a `Multi` profile (§1.5: the steps are
    the last worker's, the lifecycle worker-0's), else worker-0."""
    first, last = measurement_pods.goodput_pods(pods, workload)
    multi = ((profile.get("spec") or {}).get("workerStrategy") or {}).get("type") == "Multi"
    return last if multi and last is not None else first


def read(world: JobWorld) -> tuple[list[list[Row]], list[str]]:
    """Each target's rows (each list in the fixed order, not yet labelled: `labelled` does that as they are
    encoded) and why the read is partial, `<fmt> of pod <pod>: why`."""
    out: list[list[Row]] = []
    reasons: list[str] = []
    for target in targets(world):
        fmt = target.source.fmt
        if target.problem:
            reasons.append(f"{fmt}: {target.problem}")
            continue
        where = f"{fmt} of pod {target.pod}"
        log = world.evidence_logs.get(target.key)
        if log is None:
            reasons.append(f"{where}: its log could not be read")
            continue
        if not log.strip():
            reasons.append(f"{where}: the log is empty, no {fmt} output to read")
            continue
        try:
            rows, partial = _rows(target, world.job, log)
        except LogProfileError as err:
            reasons.append(f"{where}: LogProfile {target.source.profile!r} cannot read it: {err}")
            continue
        out.append(rows)
        if partial:
            reasons.append(f"{where}: {partial}")
    return out, reasons


def _rows(target: Target, job: Obj, log: str) -> tuple[list[Row], str | None]:
    profile = target.profile or {}
    if target.source.fmt == NCCL_TESTS:
        return nccl_rows.rows(log, job=job, node=target.node, group=group(job), profile=profile,
                              test_type=target.source.test_type)
    return training_rows.rows(log, job=job, node=target.node, group=group(job), profile=profile)


def labelled(rows: Iterator[Row], labels: Labels) -> Iterator[Row]:
    """`rows` with the cluster path's labels (workflow, iteration, job, attempt) where they have none, one by one as
    they are encoded: a second list of a long run's rows is never held."""
    for row in rows:
        yield row if row.job is not None else row._replace(workflow=labels.workflow, iteration=labels.iteration,
                                                           job=labels.job, attempt=labels.attempt)
