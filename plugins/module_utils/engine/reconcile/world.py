"""What the driver observed, handed to the pure reconcile functions (see docs/dev/driver.md)."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..api.actions import Ref

Obj = dict[str, Any]


@dataclass
class WorkflowWorld:
    workflow: Obj
    jobs: dict[str, Obj] = field(default_factory=dict)
    nodes: list[Obj] = field(default_factory=list)
    pods: dict[str, list[Obj]] = field(default_factory=dict)
    configmaps: dict[str, Obj] = field(default_factory=dict)
    dependencies: dict[Ref, Obj] = field(default_factory=dict)
    now: datetime = field(kw_only=True)   # the pass's time, timezone-aware UTC (the engine reads no clock)
    # gpu.nvidia.com ResourceSlices, listed only before discovery when a GPU node lacks its product label.
    resource_slices: list[Obj] | None = None
    # (apiVersion, kind) -> namespaced, from API discovery, for the dependency kinds the spec names; kinds
    # missing here fall back to the static list in plan/dependencies.py.
    namespaced: dict[tuple[str, str], bool] = field(default_factory=dict)
    # The Workflow's Bandwidth/GoodputMeasurements (diagnose's bandwidth gate reads them).
    measurements: list[Obj] = field(default_factory=list)
    # Job name -> the failureLog read for a Job that timed out (Step.wants_logs asked for it).
    timeout_logs: dict[str, Obj] = field(default_factory=dict)
    # PersistentVolumes by name: those bound to, or claimed by, the Workflow's PVC dependencies (§7.2, §7.3).
    volumes: dict[str, Obj] = field(default_factory=dict)


@dataclass
class JobWorld:
    job: Obj
    workload: Obj | None = None
    pods: list[Obj] = field(default_factory=list)
    nodes: dict[str, Obj] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)
    now: datetime = field(kw_only=True)   # the pass's time, timezone-aware UTC (the engine reads no clock)
    # The Bandwidth/GoodputMeasurements whose jobRef names this Job (thresholds read them).
    measurements: list[Obj] = field(default_factory=list)
    # The run's memory of node-health verdicts, (expression, node) -> (the node's resourceVersion, flagged),
    # shared by its Jobs: a verdict changes only with the node. None: evaluate every time.
    health: dict[tuple[str, str], tuple[str, bool]] | None = None
    # Evidence (issue 40, evidence_ledger): "<pod>/<container>" -> the whole log (None: it could not be read), read
    # only for the targets `evidence_ledger.needs_log` names; the Job's shard ConfigMaps by name, metadata only; the
    # GPUs each node's pod runs on (None: unknown); whether lacking evidence fails the node (skip_is_failure).
    evidence_logs: dict[str, str | None] = field(default_factory=dict)
    shards: dict[str, Obj] = field(default_factory=dict)
    gpus_per_node: int | None = None
    skip_is_failure: bool = False
    # A measured Job's evidence (evidence_measured): every pod of its workload, the MPI launcher too (`pods` holds
    # only the Job-labelled workers), and the LogProfile each of its measurements names, as the driver resolved it
    # (driver/measurements.Profiles): name -> (the profile, or None and why it could not be read).
    workload_pods: list[Obj] = field(default_factory=list)
    log_profiles: dict[str, tuple[Obj | None, str]] = field(default_factory=dict)
