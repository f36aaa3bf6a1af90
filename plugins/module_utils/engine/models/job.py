"""Job (nvcre.nvidia.com/v1alpha1): one node group's run of the workload, and the JobSpec a Workflow embeds."""
from __future__ import annotations

from typing import Annotated, Literal

from .common import (
    VALIDATIONS,
    AnyObject,
    ApiVersion,
    Conditions,
    Duration,
    IntOrString,
    K8sModel,
    NonEmpty,
    ObjectMeta,
    Schemaless,
    Timestamp,
    WorkloadMetadata,
    WorkloadReference,
    cel,
    fail,
    fixed_presence,
    immutable,
    list_map,
)
from .pydantic_api import ConfigDict, Field, StringConstraints, model_validator

# Applied by the Job controller when the field is absent (not CRD defaults).
DEFAULT_STARTUP_STALL_TIMEOUT_SECONDS = 1200
DEFAULT_SCHEDULING_STALL_GRACE_SECONDS = 300
DEFAULT_MEASUREMENT_TIMEOUT = "5m"

UNION_MESSAGE = "exactly one of the fields in [trainJob] must be set"


# ---- Kubeflow Trainer v2 TrainJobSpec: typed where we read it, anything else kept ----

class RuntimeRef(Schemaless):
    api_group: str | None = None
    """trainer.kubeflow.org when absent."""
    kind: str | None = None
    """ClusterTrainingRuntime when absent."""
    name: NonEmpty


class EnvVar(Schemaless):
    name: NonEmpty
    value: str | None = None


class Trainer(Schemaless):
    image: str | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    env: list[EnvVar] | None = None
    num_nodes: Annotated[int, Field(ge=1)] | None = None
    num_proc_per_node: IntOrString | None = None


class RuntimePatch(Schemaless):
    manager: str | None = None
    training_runtime_spec: AnyObject | None = None
    """Overlay of the TrainingRuntime spec (template.spec.replicatedJobs[] by name)."""


class TrainJobSpec(Schemaless):
    runtime_ref: RuntimeRef
    trainer: Trainer | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    runtime_patches: list[RuntimePatch] | None = None
    suspend: bool | None = None
    managed_by: str | None = None


class WorkloadSpec(K8sModel):
    """The workload this Job runs: a union with exactly one member."""

    model_config = ConfigDict(json_schema_extra={VALIDATIONS: [
        cel("[has(self.trainJob)].filter(x, x == true).size() == 1", UNION_MESSAGE)]})

    train_job: TrainJobSpec | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> WorkloadSpec:
        if self.train_job is None:
            raise fail("union", UNION_MESSAGE)
        return self


# ---- the JobSpec fields around the workload ----

class CELMonitor(K8sModel):
    expression: Annotated[str, StringConstraints(min_length=1, max_length=2048)]
    """CEL over `node` (the whole Node); true means a hardware failure."""


class NodeHealthMonitor(K8sModel):
    cel: CELMonitor | None = None


class Checkpoint(K8sModel):
    pvc_name: str | None = None
    max_restarts: Annotated[int, Field(ge=0)] = 0


class GoodputMeasurementSpec(K8sModel):
    log_profile_ref: NonEmpty
    sample_interval: Duration = "60s"


class BandwidthMeasurementSpec(K8sModel):
    log_profile_ref: NonEmpty
    sample_interval: Duration = "60s"
    test_type: str | None = None
    """e.g. all_reduce, alltoall (the Prometheus nccl_test label)."""


class JobSpec(K8sModel):
    """What one Job runs. The CEL rules are type-level, so they also bind in Workflow.spec.jobTemplate.spec."""

    model_config = ConfigDict(json_schema_extra=fixed_presence(
        "workloadMetadata", "nodeHealthMonitor", "goodputMeasurement", "bandwidthMeasurement"))

    workload: Annotated[WorkloadSpec, Field(json_schema_extra=immutable("workload"))]
    workload_metadata: Annotated[WorkloadMetadata, Field(json_schema_extra=immutable("workloadMetadata"))] | None = None
    node_health_monitor: Annotated[NodeHealthMonitor, Field(
        json_schema_extra=immutable("nodeHealthMonitor"))] | None = None
    goodput_measurement: Annotated[GoodputMeasurementSpec, Field(
        json_schema_extra=immutable("goodputMeasurement"))] | None = None
    bandwidth_measurement: Annotated[BandwidthMeasurementSpec, Field(
        json_schema_extra=immutable("bandwidthMeasurement"))] | None = None
    checkpoint: Checkpoint | None = None
    stall_multiplier: Annotated[int, Field(ge=1)] | None = None
    """Opt-in stall detection: a multiple of the average step time."""
    startup_stall_timeout_seconds: Annotated[int, Field(ge=1)] | None = None
    """1200 when absent."""
    scheduling_stall_grace_seconds: Annotated[int, Field(ge=1)] | None = None
    """300 when absent."""
    timeout_per_job: Duration | None = None
    thresholds: dict[str, str] | None = None
    """metric -> CEL expression over `value`."""
    measurement_timeout: Duration | None = None
    """5m when absent."""


# ---- status ----

class FailedNode(K8sModel):
    name: str
    reason: Literal["EvidenceLacking", "HardwareFailureDetected", "ThresholdViolation", "TransportMismatch",
                    "WorkloadFailed"]
    message: str | None = None


class FailureLog(K8sModel):
    pod_name: str | None = None
    node_name: str | None = None
    exit_code: int | None = None
    reason: str | None = None
    tail: Annotated[str, StringConstraints(max_length=32768)] | None = None


class JobEvidence(K8sModel):
    """Ours (issue 40): the seal of a Job attempt's evidence rows, written before its first shard ConfigMap."""

    attempt: Annotated[int, Field(ge=1)]
    """The Job's launch: its retry label plus 1."""
    rows: Annotated[int, Field(ge=0)]
    """The rows the shards hold (0: the output named none; a partial read says so in `partial`)."""
    shards: Annotated[int, Field(ge=0)]
    sha256: list[str]
    """Each shard's sha256, in shard order."""
    truncated: list[AnyObject] | None = None
    """The rows dropped for their size."""
    partial: str | None = None
    """Why rows were lost (an unreadable or empty output, shards gone): absent when the read was whole."""


class JobStatus(K8sModel):
    conditions: Conditions | None = None
    failed_nodes: Annotated[list[FailedNode], Field(json_schema_extra=list_map("name", "reason"))] | None = None
    workload_ref: WorkloadReference | None = None
    workload_start_time: Timestamp | None = None
    scheduling_blocked_since: Timestamp | None = None
    scheduling_resumed_time: Timestamp | None = None
    restart_count: Annotated[int, Field(ge=0)] | None = None
    failure_log: FailureLog | None = None
    evidence: JobEvidence | None = None
    """Ours: the seal of the evidence rows of the workload's output (absent: none read, or no reader)."""


class Job(K8sModel):
    api_version: ApiVersion
    kind: Literal["Job"]
    metadata: ObjectMeta
    spec: JobSpec
    status: JobStatus | None = None
