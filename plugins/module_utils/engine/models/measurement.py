"""LogProfile, BandwidthMeasurement and GoodputMeasurement (nvcre.nvidia.com/v1alpha1), measurements.md §1-§3.

A LogProfile says how to read a workload's log (cluster-scoped data, no status); the two measurements are
the per-Job records the measurement passes keep up to date. Their numeric status values are decimal strings
(`%.2f` for bandwidth, `%.6f` for goodput), as NVCRE writes them, so they stay strings here.
"""
from __future__ import annotations

from typing import Annotated, Literal

from .common import (
    ApiVersion,
    Conditions,
    Duration,
    K8sModel,
    LocalObjectRef,
    NonEmpty,
    ObjectMeta,
    Timestamp,
)
from .pydantic_api import Field

# Applied by the measurement passes when spec.sampleInterval is absent (not a CRD default).
DEFAULT_SAMPLE_INTERVAL = "60s"

StringSet = Annotated[list[str], Field(json_schema_extra={"x-kubernetes-list-type": "set"})]


# ---- LogProfile ----

class TimestampFormat(K8sModel):
    layout: NonEmpty
    """Go time layout for `timestamp` captures (e.g. 2006-01-02T15:04:05.999999999Z)."""


class EventPattern(K8sModel):
    regex: NonEmpty
    """Go RE2 regular expression with named groups."""
    example: str | None = None
    """A line the regex must match (checked when the goodput parser compiles the profile)."""
    units: dict[str, str] | None = None
    """Capture -> s, ms or us (stepTiming, elapsedTime, saveDuration); unlisted or unknown means seconds."""


class Patterns(K8sModel):
    training_step: EventPattern | None = None
    checkpoint_save: EventPattern | None = None
    checkpoint_done: EventPattern | None = None
    checkpoint_restore: EventPattern | None = None
    checkpoint_loaded: EventPattern | None = None
    application_start: EventPattern | None = None
    warmup_step: EventPattern | None = None
    bandwidth_result: EventPattern | None = None
    network_transport: EventPattern | None = None


class WorkerStrategy(K8sModel):
    type: Literal["Single", "Multi"]
    lifecycle_pod: Literal["first", "last"] = "first"
    """Read by no controller: lifecycle events always come from the lowest-index pod."""
    training_step_pod: Literal["first", "last"] = "first"
    """Read by no controller: steps always come from the highest-index pod."""
    replicated_job_name: str = "trainer"


class LogProfileSpec(K8sModel):
    timestamp: TimestampFormat
    patterns: Patterns
    worker_strategy: WorkerStrategy | None = None
    container_name: str | None = None
    """Container whose log is read; empty names none (single-container pods only)."""
    warmup_steps: int | None = None
    log_interval: int | None = None
    """Steps between logged iterations; other steps are dropped."""


class LogProfile(K8sModel):
    api_version: ApiVersion
    kind: Literal["LogProfile"]
    metadata: ObjectMeta
    spec: LogProfileSpec


# ---- BandwidthMeasurement ----

class BandwidthSpec(K8sModel):
    job_ref: LocalObjectRef
    """The Job measured (only the name is used)."""
    log_profile_ref: NonEmpty
    sample_interval: Duration | None = None
    """60s when absent."""
    test_type: str | None = None
    """e.g. all_reduce (a metrics label only)."""


class BandwidthResult(K8sModel):
    size_bytes: int
    alg_bw: str = Field(alias="algBW")
    """GB/s, two decimals."""
    bus_bw: str = Field(alias="busBW")
    """GB/s, two decimals."""
    samples: int


class BandwidthStatus(K8sModel):
    results: list[BandwidthResult] | None = None
    transport: StringSet | None = None
    """Network transports NCCL reported (record only)."""
    mnnvl: bool | None = None
    """Ours: whether NCCL's communicators across nodes ran over multi-node NVLink (its `MNNVL 0|1` lines)."""
    fabric_not_ready: StringSet | None = None
    """Ours: the hosts whose GPU fabric NCCL found not ready (which turns MNNVL off), with the state."""
    measured_test: str | None = None
    """Ours: the collective whose rows are the results, as the log names it (its test binary)."""
    other_tests: StringSet | None = None
    """Ours: the other tests the log holds (never averaged into the results)."""
    refused_rows: int | None = None
    """Ours: result rows of the measured test that their table does not confirm, so not counted."""
    first_refused_row: str | None = None
    """Ours: the first of them and why."""
    refused_row_lines: list[str] | None = None
    """Ours: each of them (the first 20) as the log printed it, and why."""
    table_warnings: list[str] | None = None
    """Ours: what the measured test's tables say against their rows (a `# Avg bus bandwidth` that disagrees)."""
    start_time: Timestamp | None = None
    completion_time: Timestamp | None = None
    conditions: Conditions | None = None


class BandwidthMeasurement(K8sModel):
    api_version: ApiVersion
    kind: Literal["BandwidthMeasurement"]
    metadata: ObjectMeta
    spec: BandwidthSpec
    status: BandwidthStatus | None = None


# ---- GoodputMeasurement ----

class GoodputSpec(K8sModel):
    job_ref: LocalObjectRef
    log_profile_ref: NonEmpty
    sample_interval: Duration | None = None
    """60s when absent."""


class PendingInterruption(K8sModel):
    """An interruption waiting for the next training step to complete its accounting."""

    t_checkpoint: Timestamp | None = None
    t_interrupt: Timestamp | None = None
    checkpoint_step: int | None = None
    last_step: int | None = None
    t_ch: str | None = None
    """Lost work in seconds."""
    reason: str | None = None


class GoodputStatus(K8sModel):
    result: str | None = None
    """Goodput ratio."""
    current_step: int | None = None
    highest_step: int | None = None
    training_time_sec: str | None = None
    lost_work_time_sec: str | None = None
    reschedule_time_sec: str | None = None
    resume_time_sec: str | None = None
    checkpoint_save_time_sec: str | None = None
    interruption_count: int | None = None
    last_checkpoint_step: int | None = None
    last_checkpoint_time: Timestamp | None = None
    start_time: Timestamp | None = None
    completion_time: Timestamp | None = None
    last_step_timestamp: Timestamp | None = None
    avg_step_time_sec: str | None = None
    log_interval: int | None = None
    warmup_base_step: int | None = None
    warmup_time_sec: str | None = None
    non_warmup_time_sec: str | None = None
    last_non_warmup_step: int | None = None
    prior_warmup_time_sec: str | None = None
    prior_non_warmup_time_sec: str | None = None
    avg_tflops_per_gpu: str | None = Field(None, alias="avgTFLOPSPerGPU")
    application_start_time: Timestamp | None = None
    application_stop_time: Timestamp | None = None
    pending_interruption: PendingInterruption | None = None
    conditions: Conditions | None = None


class GoodputMeasurement(K8sModel):
    api_version: ApiVersion
    kind: Literal["GoodputMeasurement"]
    metadata: ObjectMeta
    spec: GoodputSpec
    status: GoodputStatus | None = None
