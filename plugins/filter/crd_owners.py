# Copyright: (c) 2026, cre.certification developers
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""crd_owners: which of the given live CRDs another manager (a Helm release, NVCRE's own installer) owns."""
from __future__ import annotations

from typing import Any

OURS = "cre-certification"
HELM_RELEASE = "meta.helm.sh/release-name"
HELM_NAMESPACE = "meta.helm.sh/release-namespace"
MANAGED_BY = "app.kubernetes.io/managed-by"
# Field managers that mean another installer keeps these CRDs (Helm, nvcrectl setup init, NVCRE's manager).
FOREIGN_MANAGERS = ("helm", "nvcre")


def owner(crd: dict[str, Any]) -> str:
    """Who else manages this CRD, in words, or "" when nothing but us (or a plain kubectl apply) does."""
    meta = crd.get("metadata") or {}
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    if HELM_RELEASE in annotations or labels.get(MANAGED_BY) == "Helm":
        release = annotations.get(HELM_RELEASE, "?")
        return f"Helm release {annotations.get(HELM_NAMESPACE, '?')}/{release}"
    for entry in meta.get("managedFields") or []:
        manager = str(entry.get("manager") or "")
        if manager != OURS and any(name in manager.lower() for name in FOREIGN_MANAGERS):
            return f"field manager {manager}"
    return ""


def crd_owners(crds: list[dict[str, Any]]) -> list[str]:
    """`<crd name> (<owner>)` for every CRD that another manager owns."""
    return [f"{(crd.get('metadata') or {}).get('name')} ({found})" for crd in crds if (found := owner(crd))]


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {"crd_owners": crd_owners}
