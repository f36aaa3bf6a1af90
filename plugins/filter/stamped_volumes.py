# Copyright: (c) 2026, cre.certification developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""stamped_volumes: which PersistentVolumes stamped with the given Workflow UIDs are still Bound, and which are to be
switched from Retain to Delete (NVCRE's reclaim, workflow spec §7.3), by the engine's own rule; claim_workflows: the
UIDs of the Workflows that still hold PVC dependencies (only their PVs can be left to reclaim)."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import volumes


def stamped_volumes(pvs: list[dict[str, Any]], uids: list[str]) -> dict[str, list[str]]:
    """`bound`: stamped PVs not released yet; `reclaim`: released stamped PVs still on Retain. Others are left out."""
    found: dict[str, list[str]] = {"bound": [], "reclaim": []}
    for pv in pvs:
        uid = next((u for u in uids if volumes.stamped(pv, u)), "")
        if not uid:
            continue
        step = volumes.reclaim(pv, uid)
        name = (pv.get("metadata") or {}).get("name", "")
        if not step.done:
            found["bound"].append(name)
        elif step.actions:
            found["reclaim"].append(name)
    return found


def claim_workflows(workflows: list[dict[str, Any]]) -> list[str]:
    """The UIDs of the Workflows whose `status.dependencyRefs` name a PersistentVolumeClaim."""
    return [(wf.get("metadata") or {}).get("uid", "") for wf in workflows
            if any((r.get("apiVersion"), r.get("kind")) == ("v1", volumes.PVC)
                   for r in (wf.get("status") or {}).get("dependencyRefs") or [])]


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {"stamped_volumes": stamped_volumes, "claim_workflows": claim_workflows}
