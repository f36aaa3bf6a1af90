"""What a Workflow pass works from (workflow spec §2 steps 6-10): its spec resolved once, as a frozen value.

Every pass resolves the stored spec with the early override pass (`partition.early_spec`); the first pass also
runs discovery, whose authoritative spec creates the workflow-scoped dependencies. Everything a pass reads from
the spec (dependency scopes, execution policy, iterations, placement, diagnose) is derived here, in one place.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..api.objects import orchestration_of
from ..plan import mnnvl, placement
from ..plan.dependencies import DependencyPlan, strip_when

Obj = dict[str, Any]


@dataclass(frozen=True)
class ResolvedPlan:
    spec: Obj                      # the resolved spec (overrides applied)
    workflow: Obj                  # the Workflow carrying it: what Jobs and dependencies are rendered from
    dependencies: DependencyPlan   # their scopes and creation order
    execution: Obj                 # maxConcurrent, timeoutPerJob, retryFailedGroups
    iterations: int
    unpinned: bool                 # §8.5: one Job whose nodes the scheduler picks
    diagnose: Obj | None           # §9: orchestration.diagnose; None when this is no diagnose run

    @classmethod
    def of(cls, workflow: Obj, spec: Obj, namespaced: dict[tuple[str, str], bool]) -> ResolvedPlan:
        orchestration = orchestration_of(spec)
        dependencies = DependencyPlan([strip_when(d) for d in spec.get("dependencies") or []], job_spec(spec),
                                      spec.get("gangScheduler"), namespaced)
        return cls(spec, {**workflow, "spec": spec}, dependencies, orchestration.get("execution") or {},
                   max(int(orchestration.get("iterations") or 1), 1), placement.is_unpinned(orchestration),
                   orchestration.get("diagnose"))

    @property
    def mnnvl(self) -> bool:
        """The Job template turns MNNVL on (diagnose runs some groups with it forced off)."""
        return mnnvl.enabled(job_spec(self.spec))


def job_spec(spec: Obj) -> Obj:
    return (spec.get("jobTemplate") or {}).get("spec") or {}
