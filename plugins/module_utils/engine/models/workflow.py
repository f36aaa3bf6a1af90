"""Workflow (nvcre.nvidia.com/v1alpha1): one catalog category run over node groups, iterations and overrides."""
from __future__ import annotations

from typing import Annotated, Literal

from .common import (
    PRESERVE,
    AnyJSON,
    AnyObject,
    ApiVersion,
    Conditions,
    Duration,
    K8sModel,
    LocalObjectRef,
    NonEmpty,
    ObjectMeta,
    Schemaless,
    TargetSpec,
    TemplateMeta,
    Timestamp,
    WorkloadReference,
    fail,
    fixed_presence,
    immutable,
)
from .gang import GangSchedulerSpec
from .job import JobSpec
from .pydantic_api import ConfigDict, Field, model_validator

Placement = Literal["Pinned", "Unpinned"]
GroupPhase = Literal["Pending", "Running", "Succeeded", "Failed"]
DiagnoseStage = Literal["intra-screening", "intra-screening-no-nvl", "inter-screening", "bisection", "confirmation",
                        "cross-boundary", "complete"]


# ---- orchestration ----

class TopologySpec(K8sModel):
    topology_key: NonEmpty
    strict_domain: bool | None = None
    """One Job per topology domain."""


class DiagnoseSpec(K8sModel):
    min_group_size: Annotated[int, Field(ge=1)] = 2
    topology_key: str | None = None


class ExecutionSpec(K8sModel):
    max_concurrent: Annotated[int, Field(ge=0)] = 0
    """Groups running at once; 0 = unlimited."""
    timeout_per_job: Duration | None = None
    retry_failed_groups: Annotated[int, Field(ge=0)] = 0


class OrchestrationSpec(K8sModel):
    target: TargetSpec | None = None
    """Unset selects all nodes."""
    topology: TopologySpec | None = None
    """Unset chunks nodes in name order."""
    diagnose: DiagnoseSpec | None = None
    """Enables adaptive fault isolation."""
    execution: ExecutionSpec | None = None
    iterations: Annotated[int, Field(ge=1)] = 1
    placement: Placement | None = None
    """No default: empty means Pinned."""


class OrchestrationOverrideSpec(K8sModel):
    """Non-nil fields replace the base ones."""

    target: TargetSpec | None = None
    topology: TopologySpec | None = None
    execution: ExecutionSpec | None = None
    iterations: Annotated[int, Field(ge=1)] | None = None
    placement: Placement | None = None


# ---- overrides ----

class StringMatchSpec(K8sModel):
    equals: str | None = None
    in_: list[str] | None = Field(None, alias="in")
    not_in: list[str] | None = None


class IntMatchSpec(K8sModel):
    equals: int | None = None
    greater_than: int | None = None
    less_than: int | None = None


class TopologyMatchSpec(K8sModel):
    mode: str | None = None
    """`topology` or `simple`."""
    domain_count: IntMatchSpec | None = None


class WhenSpec(K8sModel):
    """All present clauses must hold; an empty `when` always matches."""

    gpu_architecture: StringMatchSpec | None = None
    platform: StringMatchSpec | None = None
    workload_kind: str | None = None
    topology: TopologyMatchSpec | None = None
    config: AnyJSON | None = None
    expression: str | None = None
    """CEL over platform, gpuArchitecture, workloadKind, topologyMode, domainCount."""


class DependencySpec(Schemaless):
    """Any Kubernetes object inline, plus a sibling `when` that gates it."""

    model_config = ConfigDict(json_schema_extra={PRESERVE: True, "x-kubernetes-embedded-resource": True})

    api_version: NonEmpty
    kind: NonEmpty
    when: WhenSpec | None = None

    @model_validator(mode="after")
    def _embedded_metadata(self) -> DependencySpec:
        # The API server validates an embedded resource's metadata; the engine reads it, so check it here too.
        metadata = (self.model_extra or {}).get("metadata")
        if metadata is None:
            return self
        if not isinstance(metadata, dict):
            raise fail("metadata", "metadata must be an object")
        for key in ("name", "namespace", "generateName"):
            if key in metadata and not isinstance(metadata[key], str):
                raise fail("metadata", f"metadata.{key} must be a string")
        for key in ("labels", "annotations"):
            value = metadata.get(key)
            if value is not None and not (isinstance(value, dict) and all(
                    isinstance(k, str) and isinstance(v, str) for k, v in value.items())):
                raise fail("metadata", f"metadata.{key} must map strings to strings")
        return self


class OverrideSpec(K8sModel):
    when: WhenSpec
    job_template: AnyObject | None = None
    """Strategic merge patch of the JobTemplateSpec."""
    job_template_patch: AnyJSON | None = None
    """RFC 6902 JSON Patch of the JobTemplateSpec."""
    dependencies: list[DependencySpec] | None = None
    orchestration: OrchestrationOverrideSpec | None = None


# ---- the rest of the spec ----

class JobTemplateSpec(K8sModel):
    metadata: TemplateMeta | None = None
    spec: JobSpec


class Tracking(K8sModel):
    per_node: bool = False
    per_domain: bool = False


class ThresholdSpec(K8sModel):
    thresholds: dict[str, str] | None = None
    """metric -> CEL expression over `value`."""


class PerformanceValidationSpec(K8sModel):
    enabled: bool = False
    plugin: str | None = None
    config: AnyJSON | None = None
    tracking: Tracking | None = None
    thresholds: ThresholdSpec | None = None
    measurement_timeout: Duration | None = None


class ValidationSpec(K8sModel):
    performance: PerformanceValidationSpec | None = None


class WorkflowSpec(K8sModel):
    model_config = ConfigDict(json_schema_extra=fixed_presence("gangScheduler"))

    namespace: str | None = None
    """Declared but unused: children live in the Workflow's own namespace."""
    job_template: JobTemplateSpec
    orchestration: OrchestrationSpec
    dependencies: list[DependencySpec] | None = None
    overrides: list[OverrideSpec] | None = None
    validation: ValidationSpec | None = None
    gang_scheduler: Annotated[GangSchedulerSpec, Field(json_schema_extra=immutable("gangScheduler"))] | None = None


# ---- status ----

class GroupStatus(K8sModel):
    name: str
    """group-0, group-1-overflow, screen-0, bisect-2-0a, ..."""
    nodes: list[str]
    domains: list[str] | None = None
    domain_node_counts: dict[str, int] | None = None
    overflow: bool | None = None
    phase: GroupPhase | None = None
    retries: int | None = None
    job_ref: WorkloadReference | None = None
    start_time: Timestamp | None = None
    completion_time: Timestamp | None = None


class GroupIterationResult(K8sModel):
    name: str
    phase: GroupPhase | None = None
    job_name: str | None = None
    start_time: Timestamp | None = None
    completion_time: Timestamp | None = None


class IterationResult(K8sModel):
    iteration: int
    groups: list[GroupIterationResult] | None = None


class AppliedOverride(K8sModel):
    index: int
    when: str | None = None
    patches: str | None = None
    no_op: bool | None = None


class ScreeningResult(K8sModel):
    nodes: list[str] | None = None
    passed: bool | None = None


class InfrastructureFault(K8sModel):
    domain: str | None = None
    group_a: list[str] | None = None
    group_b: list[str] | None = None
    stage: str | None = None


class PendingProbe(K8sModel):
    domain: str | None = None
    half_a: list[str] | None = None
    half_b: list[str] | None = None
    probe_round: int | None = None


class CrossBoundaryState(K8sModel):
    pending_probes: list[PendingProbe] | None = None
    origin_stage: str | None = None


class DiagnoseStatus(K8sModel):
    stage: DiagnoseStage
    round: int
    healthy_nodes: Annotated[list[str], Field(json_schema_extra={"x-kubernetes-list-type": "set"})] | None = None
    suspect_nodes: Annotated[list[str], Field(json_schema_extra={"x-kubernetes-list-type": "set"})] | None = None
    no_nvl_suspect_nodes: Annotated[list[str], Field(json_schema_extra={"x-kubernetes-list-type": "set"})] | None = (
        Field(None, alias="noNVLSuspectNodes"))
    representative_nodes: list[str] | None = None
    screening_results: dict[str, ScreeningResult] | None = None
    no_nvl_screening_results: dict[str, ScreeningResult] | None = Field(None, alias="noNVLScreeningResults")
    infrastructure_faults: list[InfrastructureFault] | None = None
    cross_boundary_state: CrossBoundaryState | None = None


class OrchestrationStatus(K8sModel):
    total_nodes: int
    nodes_per_job: int
    total_groups: int
    current_iteration: int | None = None
    """1-based."""
    completed_iterations: int | None = None
    iteration_history: list[IterationResult] | None = None
    detected_platform: str | None = None
    detected_gpu_architecture: str | None = Field(None, alias="detectedGPUArchitecture")
    excluded_nodes: list[str] | None = None
    exclusion_reason: str | None = None
    applied_overrides: list[AppliedOverride] | None = None
    diagnose: DiagnoseStatus | None = None
    groups: list[GroupStatus] | None = None
    placement: Placement | None = None
    """The resolved placement."""
    gpu_products: list[str] | None = None
    """Raw nvidia.com/gpu.product values of the targeted nodes."""


class DependencyRef(K8sModel):
    api_version: str
    kind: str
    name: str
    namespace: str | None = None
    scope: Literal["workflow", "job"] | None = None
    group_name: str | None = None
    iteration: int | None = None


class EvidenceSums(K8sModel):
    """Sums over Job seals."""

    rows: Annotated[int, Field(ge=0)]
    shards: Annotated[int, Field(ge=0)]
    jobs: Annotated[int, Field(ge=0)]
    """The Job attempts sealed."""
    truncated: Annotated[int, Field(ge=0)]
    """The rows dropped for their size."""
    partial: list[str] | None = None
    """`<job>: why` for every Job whose rows were lost, or that ran and has no seal."""


class WorkflowEvidence(EvidenceSums):
    """Ours (issue 40): the evidence totals of every Job that ran, and whether they are final."""

    final: bool | None = None
    """True once the Workflow is terminal and every Job that ran is sealed."""
    earlier_iterations: EvidenceSums | None = None
    """The part of the totals from Jobs of completed iterations (deleted when the next iteration starts)."""


class WorkflowStatus(K8sModel):
    conditions: Conditions | None = None
    namespace: str | None = None
    succeeded_nodes_ref: LocalObjectRef | None = None
    failed_nodes_ref: LocalObjectRef | None = None
    dependency_refs: list[DependencyRef] | None = None
    orchestration: OrchestrationStatus | None = None
    node_results: AnyObject | None = None
    domain_results: AnyObject | None = None
    evidence: WorkflowEvidence | None = None


class Workflow(K8sModel):
    api_version: ApiVersion
    kind: Literal["Workflow"]
    metadata: ObjectMeta
    spec: WorkflowSpec
    status: WorkflowStatus | None = None
