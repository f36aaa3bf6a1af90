"""WorkloadRun (nvcre.nvidia.com/v1alpha1): one workload of the user's own, run as one generated Workflow."""
from __future__ import annotations

from typing import Annotated, Literal

from .certification import NicResourceName, Resources, ShortDuration, WorkflowRef
from .common import (
    VALIDATIONS,
    AnyObject,
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
    fail,
)
from .gang import GangSchedulerSpec
from .job import BandwidthMeasurementSpec, EnvVar, GoodputMeasurementSpec
from .priority import PriorityClassName
from .pydantic_api import ConfigDict, Field, StringConstraints, model_validator
from .workflow import OverrideSpec, Placement

TORCH_MESSAGE = "exactly one of script or module must be set"
CONFIG_MESSAGE = "exactly one of inline or configMapRef must be set"
FRAMEWORK_MESSAGE = "at most one of torch, mpi or exec may be set"


def _one_of(*fields: str) -> str:
    return f"[{', '.join(f'has(self.{f})' for f in fields)}].filter(x, x).size()"


class TorchFramework(K8sModel):
    """torchrun, one process per GPU on every node."""

    model_config = ConfigDict(json_schema_extra={VALIDATIONS: [cel(f"{_one_of('script', 'module')} == 1",
                                                                   TORCH_MESSAGE)]})

    script: NonEmpty | None = None
    """Python script torchrun starts (path in the image)."""
    module: NonEmpty | None = None
    """Python module torchrun starts (`torchrun -m`)."""
    args: list[str] | None = None
    """Arguments after the script or module."""

    @model_validator(mode="after")
    def _script_xor_module(self) -> TorchFramework:
        if (self.script is None) == (self.module is None):
            raise fail("torch", TORCH_MESSAGE)
        return self


class MPIFramework(K8sModel):
    """mpirun from a launcher pod over sshd workers, one rank per GPU."""

    binary: NonEmpty
    """Program every rank runs (e.g. /usr/local/bin/all_reduce_perf_mpi)."""
    args: list[str] | None = None
    """Arguments of the binary."""
    mpi_args: list[str] | None = None
    """Extra mpirun arguments (before the binary); a `-x NAME` here wins over the forwarded env of that name."""
    mpi_implementation: Literal["OpenMPI"] = "OpenMPI"
    """MPI implementation of the TrainingRuntime."""
    mpirun_path: NonEmpty
    """Path of mpirun in the image (e.g. /usr/local/mpi/bin/mpirun)."""


class ExecFramework(K8sModel):
    """Any command, one process per node."""

    command: Annotated[list[str], Field(min_length=1)]
    """Command (entrypoint) of the workload container."""
    args: list[str] | None = None
    """Its arguments."""


class Framework(K8sModel):
    model_config = ConfigDict(json_schema_extra={VALIDATIONS: [cel(f"{_one_of('torch', 'mpi', 'exec')} <= 1",
                                                                   FRAMEWORK_MESSAGE)]})

    torch: TorchFramework | None = None
    mpi: MPIFramework | None = None
    exec: ExecFramework | None = None

    @model_validator(mode="after")
    def _at_most_one(self) -> Framework:
        # None at all is allowed here: NVCRE's controller records it as Failed/BuildFailed.
        if sum(x is not None for x in (self.torch, self.mpi, self.exec)) > 1:
            raise fail("framework", FRAMEWORK_MESSAGE)
        return self


class ConfigMapName(K8sModel):
    name: NonEmpty


class ConfigSource(K8sModel):
    """Files mounted at /config: inline (a `<run>-config` ConfigMap is created) or an existing ConfigMap."""

    model_config = ConfigDict(json_schema_extra={VALIDATIONS: [cel(f"{_one_of('inline', 'configMapRef')} == 1",
                                                                   CONFIG_MESSAGE)]})

    inline: dict[str, str] | None = None
    """File name to content."""
    config_map_ref: ConfigMapName | None = None
    """An existing ConfigMap in the run's namespace."""

    @model_validator(mode="after")
    def _inline_xor_ref(self) -> ConfigSource:
        if (self.inline is None) == (self.config_map_ref is None):
            raise fail("config", CONFIG_MESSAGE)
        return self


class WorkloadRunCheckpoint(K8sModel):
    storage_size: Quantity
    """Size of the `<run>-checkpoint-pvc` claim (ReadWriteMany)."""
    storage_class_name: str | None = None
    """Its StorageClass; the cluster default when absent."""
    max_restarts: Annotated[int, Field(ge=0)] | None = None
    """Checkpoint restarts a Job may make. Default 0."""


class WorkloadOrchestration(K8sModel):
    placement: Placement | None = None
    """Pinned (default: numNodes is the size of each group over the target) or Unpinned (one job of numNodes)."""
    test_scale: Literal["intra-node", "intra-rack", "full-scale"] | None = None
    """intra-node: one node per job; intra-rack: one job per topology domain; full-scale (default)."""
    repeat_count: Annotated[int, Field(ge=1)] | None = None
    """Iterations of the Workflow. Default 1."""
    max_concurrent: Annotated[int, Field(ge=0)] | None = None
    """Jobs running at once (0: no limit)."""
    timeout_per_job: ShortDuration | None = None
    """Time a Job may run. Default 1h."""


class WorkloadRunSpec(K8sModel):
    target: TargetSpec | None = None
    """Nodes to run on; default nvidia.com/gpu.present=true."""
    image: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    """Workload image."""
    framework: Framework
    """Exactly one of torch, mpi, exec."""
    num_nodes: Annotated[int, Field(ge=1)]
    """Nodes per job: the size of each group under Pinned, the whole job under Unpinned."""
    config: ConfigSource | None = None
    gpus_per_node: Annotated[int, Field(ge=1)] | None = None
    """GPUs per pod. Default: the architecture's count."""
    mlnx_per_node: Annotated[int, Field(ge=0)] | None = None
    """RDMA NICs per pod (0: none). Default: the architecture's count."""
    nic_resource_name: NicResourceName | None = None
    """Extended resource name of the RDMA NICs."""
    image_pull_secrets: list[str] | None = None
    """Secrets used to pull the image (launcher and workers)."""
    env: list[EnvVar] | None = None
    """Merged over the NCCL defaults by name (yours win); MPI forwards each to the ranks with -x."""
    volumes: list[AnyObject] | None = None
    """Pod volumes of the workload pods."""
    volume_mounts: list[AnyObject] | None = None
    """Mounts of the workload container."""
    init_containers: list[AnyObject] | None = None
    """Init containers of the workload pods."""
    enable_mnnvl: bool | None = Field(None, alias="enableMNNVL")
    """NCCL_MNNVL_ENABLE. Default: on for GB200/GB300."""
    checkpoint: WorkloadRunCheckpoint | None = None
    resources: Resources | None = None
    """CPU and memory of the workload container."""
    orchestration: WorkloadOrchestration | None = None
    thresholds: dict[str, str] | None = None
    """Metric to a CEL expression over `value`; a miss fails the Job (ThresholdViolation)."""
    goodput_measurement: GoodputMeasurementSpec | None = None
    bandwidth_measurement: BandwidthMeasurementSpec | None = None
    overrides: list[OverrideSpec] | None = None
    """Workflow overrides, after the generated platform ones."""
    gang_scheduler: GangSchedulerSpec | None = None
    priority_class_name: PriorityClassName | None = None
    """PriorityClass of every pod of the run (launcher and workers), with or without a gang scheduler; it must
    exist before the run starts."""
    workload_metadata: WorkloadMetadata | None = None


class WorkloadRunStatus(K8sModel):
    conditions: Conditions | None = None
    workflow_ref: WorkflowRef | None = None
    detected_platform: str | None = None
    detected_gpu_architecture: str | None = Field(None, alias="detectedGPUArchitecture")
    resolved_gpus_per_node: int | None = None
    succeeded_nodes_ref: LocalObjectRef | None = None
    failed_nodes_ref: LocalObjectRef | None = None


class WorkloadRun(K8sModel):
    api_version: ApiVersion
    kind: Literal["WorkloadRun"]
    metadata: ObjectMeta
    spec: Annotated[WorkloadRunSpec, Field(json_schema_extra={VALIDATIONS: [
        cel("self == oldSelf", "spec is immutable after creation")]})]
    status: WorkloadRunStatus | None = None
