"""pydantic models of the nvcre.nvidia.com/v1alpha1 kinds (the source of the CRDs).

One module per kind (certification, workflow, job, measurement: LogProfile and the two measurements, workloadrun),
their building blocks (common, gang, priority), parse (validate and dump Kubernetes JSON), pydantic_api
(pydantic's names, or stand-ins when it is missing) and crdgen (the CRDs from the models). This face exports the
kinds (KINDS) and a parse function per kind.
"""
from __future__ import annotations

from typing import Any

from ..api.vocabulary import API_VERSION, GROUP, VERSION
from .certification import CategoryOptions, Certification, CertificationSpec
from .common import WorkloadMetadata
from .gang import DEFAULT_QUEUE, DEFAULT_QUEUE_LABEL_KEY, GangSchedulerSpec
from .job import (
    DEFAULT_MEASUREMENT_TIMEOUT,
    DEFAULT_SCHEDULING_STALL_GRACE_SECONDS,
    DEFAULT_STARTUP_STALL_TIMEOUT_SECONDS,
    Job,
    JobSpec,
)
from .measurement import DEFAULT_SAMPLE_INTERVAL, BandwidthMeasurement, GoodputMeasurement, LogProfile
from .parse import dump, field_path, parse
from .workflow import Workflow, WorkflowSpec
from .workloadrun import WorkloadRun, WorkloadRunSpec

# The kinds we serve (the CRD generator walks them).
KINDS: dict[str, type] = {"Workflow": Workflow, "Job": Job, "Certification": Certification, "LogProfile": LogProfile,
                          "BandwidthMeasurement": BandwidthMeasurement, "GoodputMeasurement": GoodputMeasurement,
                          "WorkloadRun": WorkloadRun}


def parse_workflow(obj: dict[str, Any]) -> Workflow:
    return parse(Workflow, obj)


def parse_job(obj: dict[str, Any]) -> Job:
    return parse(Job, obj)


def parse_certification(obj: dict[str, Any]) -> Certification:
    return parse(Certification, obj)


def parse_workload_run(obj: dict[str, Any]) -> WorkloadRun:
    return parse(WorkloadRun, obj)


__all__ = [
    "API_VERSION", "GROUP", "VERSION", "KINDS", "DEFAULT_QUEUE", "DEFAULT_QUEUE_LABEL_KEY", "DEFAULT_MEASUREMENT_TIMEOUT",
    "DEFAULT_SAMPLE_INTERVAL", "DEFAULT_SCHEDULING_STALL_GRACE_SECONDS", "DEFAULT_STARTUP_STALL_TIMEOUT_SECONDS",
    "BandwidthMeasurement", "CategoryOptions", "Certification", "CertificationSpec", "GangSchedulerSpec",
    "GoodputMeasurement", "Job", "JobSpec", "LogProfile", "Workflow", "WorkflowSpec",
    "WorkloadMetadata", "WorkloadRun", "WorkloadRunSpec", "dump", "field_path", "parse", "parse_certification",
    "parse_job", "parse_workflow", "parse_workload_run",
]
