"""Certification (nvcre.nvidia.com/v1alpha1): a suite of catalog categories run one after another."""
from __future__ import annotations

import re
from typing import Annotated, Literal

from ..api.objects import quantity
from .common import (
    QUALIFIED_NAME,
    VALIDATIONS,
    ApiVersion,
    Conditions,
    K8sModel,
    LocalObjectRef,
    NonEmpty,
    ObjectMeta,
    Quantity,
    TargetSpec,
    WorkloadMetadata,
    cel,
    cel_string,
    fail,
)
from .gang import GangSchedulerSpec
from .priority import PriorityClassName
from .pydantic_api import AfterValidator, ConfigDict, Field, JsonValue, StringConstraints, model_validator

# Go-style duration restricted to h/m/s/ms, as the Certification CRD accepts it.
ShortDuration = Annotated[str, StringConstraints(pattern=r"^([0-9]+(h|m|s|ms))+$")]
NIC_DOMAIN_MESSAGE = "nicResourceName must not use the reserved kubernetes.io or k8s.io domains"
_RESERVED_NIC = r"^([^/]*\.)?(kubernetes|k8s)\.io/"
RESOURCE_NAMES = ("cpu", "memory")


def _nic_resource_name(name: str) -> str:
    if re.match(_RESERVED_NIC, name):
        raise fail("reserved_domain", NIC_DOMAIN_MESSAGE)
    return name


# An extended resource name outside the reserved domains (Certification options and WorkloadRun).
NicResourceName = Annotated[str, StringConstraints(max_length=317, pattern=QUALIFIED_NAME),
                            AfterValidator(_nic_resource_name), Field(json_schema_extra={VALIDATIONS: [
                                cel(f"!self.matches({cel_string(_RESERVED_NIC)})", NIC_DOMAIN_MESSAGE)]})]


# ---- resources: CEL on the API server, the same rules here ----

def _negative_message(side: str, name: str) -> str:
    return f"{side}.{name} must be non-negative"


def _exceeds_message(name: str) -> str:
    return f"requests.{name} must not exceed limits.{name}"


def _resource_rules() -> list[JsonValue]:
    rules: list[JsonValue] = []
    for name in RESOURCE_NAMES:
        for side in ("limits", "requests"):
            rules.append(cel(f"!has(self.{side}) || !has(self.{side}.{name}) || "
                             f"!quantity(string(self.{side}.{name})).isLessThan(quantity('0'))", _negative_message(side, name)))
        rules.append(cel(f"!has(self.requests) || !has(self.limits) || !has(self.requests.{name}) || "
                         f"!has(self.limits.{name}) || quantity(string(self.requests.{name}))"
                         f".compareTo(quantity(string(self.limits.{name}))) <= 0", _exceeds_message(name)))
    return rules


class CPUMemory(K8sModel):
    cpu: Quantity | None = None
    """CPU cores (a quantity such as 64 or 500m)."""
    memory: Quantity | None = None
    """Memory (a quantity such as 500Gi)."""


class Resources(K8sModel):
    """Training container sizing; each value falls back to the catalog default on its own."""

    model_config = ConfigDict(json_schema_extra={VALIDATIONS: _resource_rules()})

    limits: CPUMemory | None = None
    """Most the container may use."""
    requests: CPUMemory | None = None
    """What the scheduler reserves for the container; not above limits."""

    @model_validator(mode="after")
    def _ordered(self) -> Resources:
        for name in RESOURCE_NAMES:
            limit = getattr(self.limits, name, None) if self.limits else None
            request = getattr(self.requests, name, None) if self.requests else None
            for side, value in (("limits", limit), ("requests", request)):
                if value is not None and quantity(value) < 0:
                    raise fail("negative", _negative_message(side, name))
            if limit is not None and request is not None and quantity(request) > quantity(limit):
                raise fail("request_exceeds_limit", _exceeds_message(name))
        return self


class CategoryOptions(K8sModel):
    """Per-category knobs. On the spec they are the global defaults; a per-category value wins (labels merge per key).

    No CRD defaults here: a defaulted per-category value would always override the global one.
    """

    nodes_per_job: Annotated[int, Field(ge=1)] | None = None
    """Nodes per Job (the group size). Default: from the catalog entry (its minimum GPUs, TP x PP, or numNodes); 1
    with testScale intra-node.
    """
    gpus_per_node: Annotated[int, Field(ge=1)] | None = None
    """GPUs each workload pod requests. Default: the architecture's GPU count (8 on H100, 4 on GB200)."""
    mlnx_per_node: Annotated[int, Field(ge=0)] | None = None
    """RDMA NICs each pod requests; 0 opts out of the NIC request. Default: the architecture's NIC count."""
    nic_resource_name: NicResourceName | None = None
    """Extended resource name of the RDMA NICs (e.g. rdma/ib). Default: the one rdma/* or nvidia.com/mlnxnics
    resource every target node offers at mlnxPerNode, else none. The kubernetes.io and k8s.io domains are refused.
    """
    enable_mnnvl: bool | None = Field(None, alias="enableMNNVL")
    """Multi-node NVLink: renders NCCL_MNNVL_ENABLE=1 (true) or 0 (false) in the workload. Default false."""
    enable_checkpoint: bool | None = None
    """Training: keep checkpoints on a PVC (storageSize, storageClassName) so a failed run restarts from the last
    one, up to maxRestarts. Default false.
    """
    max_steps: Annotated[int, Field(ge=-1)] | None = None
    """Training steps per run (-1: no limit, exitDurationMins ends the run). Default 50."""
    exit_duration_mins: Annotated[int, Field(ge=0)] | None = None
    """Training: minutes after which Megatron stops cleanly. Default 30."""
    startup_stall_timeout_seconds: Annotated[int, Field(ge=0)] | None = None
    """Seconds a workload may run before its first progress line without being called stalled. Default 1200."""
    save_interval: Annotated[int, Field(ge=0)] | None = None
    """Training: steps between checkpoints. Default 250."""
    save_retain_interval: Annotated[int, Field(ge=0)] | None = None
    """Training: steps between checkpoints that are kept. Default 1000."""
    save_top_k: int | None = None
    """Training: how many recent checkpoints are kept. Default 1."""
    storage_size: Quantity | None = None
    """Size of the checkpoint PVC (a quantity such as 10Ti). Default 10Ti."""
    storage_class_name: str | None = None
    """StorageClass of the checkpoint PVC. Default: the cluster's default class."""
    max_restarts: Annotated[int, Field(ge=0)] | None = None
    """Checkpoint restarts a Job may make after a failure. Default 3 when enableCheckpoint is true."""
    resources: Resources | None = None
    """CPU and memory of the training container; each of the four values falls back to the catalog default on its own
    (limits cpu 128 / memory 800Gi, requests cpu 64 / memory 500Gi). A per-category block replaces the global one
    whole.
    """
    image: Annotated[str, StringConstraints(min_length=1, max_length=512)] | None = None
    """Container image replacing the trainer image (and the init containers that use the same image)."""
    image_pull_secrets: list[str] | None = None
    """Names of Secrets used to pull the images."""
    source_repo: Annotated[str, StringConstraints(max_length=2048,
                                                  pattern=r"^(https|ssh)://[A-Za-z0-9._~:/@%+-]+$")] | None = None
    """Megatron-LM repository cloned when the image has none (https:// or ssh://). Default
    https://github.com/NVIDIA/Megatron-LM.git.
    """
    repeat_count: Annotated[int, Field(ge=1)] | None = None
    """Iterations of the whole category (the Workflow's orchestration.iterations). Default 1."""
    test_scale: Literal["intra-node", "intra-rack", "diagnose", "full-scale"] | None = None
    """How nodes are grouped: intra-node (one node per Job), intra-rack (groups inside one topology domain), full-
    scale (groups of nodesPerJob), diagnose (fault isolation: screening, bisection, confirmation). Default full-
    scale.
    """
    max_bytes: Annotated[str, StringConstraints(pattern=r"^[0-9]+(K|M|G|T)?$")] | None = None
    """NCCL tests: largest message size (a number with an optional K, M, G or T). Default 16G."""
    num_iterations: Annotated[int, Field(ge=1)] | None = None
    """NCCL tests: iterations per message size. Default 100 (5 in diagnose)."""
    num_cycles: Annotated[int, Field(ge=1)] | None = None
    """NCCL tests: cycles over the message sizes. Default 10 (1 in diagnose)."""
    max_concurrent: Annotated[int, Field(ge=0)] | None = None
    """Jobs that may run at the same time (0: no limit). Default 0."""
    min_group_size: Annotated[int, Field(ge=1)] | None = None
    """Diagnose: groups this small are not split further. Default 2."""
    timeout_per_job: ShortDuration | None = None
    """Time a Job may run (h, m, s, ms, e.g. 90m). Default: the catalog entry's, else 15m in diagnose, else 1h."""
    measurement_timeout: ShortDuration | None = None
    """Time a bandwidth or goodput measurement may take after its Job ends (h, m, s, ms). Default 5m."""
    thresholds: dict[str, str] | None = None
    """Performance thresholds: metric (busBandwidthGBps, algBandwidthGBps, goodputRatio, avgTFLOPsPerGPU,
    avgStepTimeSec) to a CEL expression over its measured `value` that returns a bool, e.g. `value >= 400`. A Job
    whose measurement breaks a threshold fails and blames its nodes with ThresholdViolation.
    """
    workload_metadata: WorkloadMetadata | None = None
    """Labels added to the workload object (the TrainJob), never to its pods."""
    rdma_device_access: Literal["hostPath", "devicePlugin"] | None = None
    """How pods reach the RDMA devices: devicePlugin (the NIC resource) or hostPath (mount /dev/infiniband)."""
    check_transport: bool | None = None
    """Ours: fail a multi-node NCCL group with TransportMismatch when its log shows NCCL ran over another network than
    the platform's (EFA on AWS, TCPXO on GCP H100, InfiniBand/RoCE on Azure, OCI and on-prem with RDMA NICs), e.g.
    a fallback to Socket. Needs NCCL_DEBUG=INFO in the workload (the catalog sets it). Default true.
    """


class Category(K8sModel):
    domain: NonEmpty
    """Catalog domain (communication, diagnostics, training)."""
    variant: NonEmpty
    """Catalog variant, e.g. nccl-all-reduce (catalog_info lists them)."""
    options: CategoryOptions | None = None
    """Options for this category only; each one set here wins over the global value."""


class CertificationSpec(CategoryOptions):
    target: TargetSpec | None = None
    categories: Annotated[list[Category], Field(min_length=1, max_length=64)]
    gang_scheduler: GangSchedulerSpec | None = None
    priority_class_name: PriorityClassName | None = None
    """PriorityClass of every pod of every category (launcher and workers), with or without a gang scheduler; it
    must exist before the run starts."""


class WorkflowRef(K8sModel):
    name: str
    namespace: str | None = None


class CategoryStatus(K8sModel):
    domain: str
    variant: str
    status: Literal["Pending", "InProgress", "Succeeded", "Failed"] | None = None
    workflow_ref: WorkflowRef | None = None
    succeeded_nodes_ref: LocalObjectRef | None = None
    failed_nodes_ref: LocalObjectRef | None = None


class CertificationStatus(K8sModel):
    conditions: Conditions | None = None
    category_statuses: list[CategoryStatus] | None = None


class Certification(K8sModel):
    api_version: ApiVersion
    kind: Literal["Certification"]
    metadata: ObjectMeta
    spec: Annotated[CertificationSpec, Field(json_schema_extra={VALIDATIONS: [
        cel("self == oldSelf", "spec is immutable after creation")]})]
    status: CertificationStatus | None = None
