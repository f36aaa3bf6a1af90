"""Certification (nvcre.nvidia.com/v1alpha1): a suite of catalog categories run one after another."""
from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, ConfigDict, Field, StringConstraints, model_validator
from pydantic.config import JsonValue

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

# Go-style duration restricted to h/m/s/ms, as the Certification CRD accepts it.
ShortDuration = Annotated[str, StringConstraints(pattern=r"^([0-9]+(h|m|s|ms))+$")]
NIC_DOMAIN_MESSAGE = "nicResourceName must not use the reserved kubernetes.io or k8s.io domains"
_RESERVED_NIC = r"^([^/]*\.)?(kubernetes|k8s)\.io/"
RESOURCE_NAMES = ("cpu", "memory")


def _nic_resource_name(name: str) -> str:
    if re.match(_RESERVED_NIC, name):
        raise fail("reserved_domain", NIC_DOMAIN_MESSAGE)
    return name


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
    memory: Quantity | None = None


class Resources(K8sModel):
    """Training container sizing; each value falls back to the catalog default on its own."""

    model_config = ConfigDict(json_schema_extra={VALIDATIONS: _resource_rules()})

    limits: CPUMemory | None = None
    requests: CPUMemory | None = None

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
    gpus_per_node: Annotated[int, Field(ge=1)] | None = None
    mlnx_per_node: Annotated[int, Field(ge=0)] | None = None
    """0 opts out of the NIC request."""
    nic_resource_name: Annotated[str, StringConstraints(max_length=317, pattern=QUALIFIED_NAME),
                                 AfterValidator(_nic_resource_name), Field(json_schema_extra={VALIDATIONS: [
                                     cel(f"!self.matches({cel_string(_RESERVED_NIC)})", NIC_DOMAIN_MESSAGE)]})] | None = None
    enable_mnnvl: bool | None = Field(None, alias="enableMNNVL")
    enable_checkpoint: bool | None = None
    max_steps: Annotated[int, Field(ge=-1)] | None = None
    exit_duration_mins: Annotated[int, Field(ge=0)] | None = None
    startup_stall_timeout_seconds: Annotated[int, Field(ge=0)] | None = None
    save_interval: Annotated[int, Field(ge=0)] | None = None
    save_retain_interval: Annotated[int, Field(ge=0)] | None = None
    save_top_k: int | None = None
    storage_size: Quantity | None = None
    storage_class_name: str | None = None
    max_restarts: Annotated[int, Field(ge=0)] | None = None
    resources: Resources | None = None
    image: Annotated[str, StringConstraints(min_length=1, max_length=512)] | None = None
    image_pull_secrets: list[str] | None = None
    source_repo: Annotated[str, StringConstraints(max_length=2048,
                                                  pattern=r"^(https|ssh)://[A-Za-z0-9._~:/@%+-]+$")] | None = None
    repeat_count: Annotated[int, Field(ge=1)] | None = None
    test_scale: Literal["intra-node", "intra-rack", "diagnose", "full-scale"] | None = None
    max_bytes: Annotated[str, StringConstraints(pattern=r"^[0-9]+(K|M|G|T)?$")] | None = None
    num_iterations: Annotated[int, Field(ge=1)] | None = None
    num_cycles: Annotated[int, Field(ge=1)] | None = None
    max_concurrent: Annotated[int, Field(ge=0)] | None = None
    min_group_size: Annotated[int, Field(ge=1)] | None = None
    timeout_per_job: ShortDuration | None = None
    measurement_timeout: ShortDuration | None = None
    thresholds: dict[str, str] | None = None
    workload_metadata: WorkloadMetadata | None = None
    rdma_device_access: Literal["hostPath", "devicePlugin"] | None = None


class Category(K8sModel):
    domain: NonEmpty
    variant: NonEmpty
    options: CategoryOptions | None = None


class CertificationSpec(CategoryOptions):
    target: TargetSpec | None = None
    categories: Annotated[list[Category], Field(min_length=1, max_length=64)]
    gang_scheduler: GangSchedulerSpec | None = None


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
