"""Optional: stamp each certified node with its last certification, for schedulers and dashboards.

Annotations (ours, `cre.certification/`): `certification` (`<namespace>/<name>`), `certified-at` (the
Certification's creation time, so a rerun of the report writes nothing new), `verdict` (`Passed` or `Failed`)
and, on a passed node, `certified-until` (`certified-at` plus the validity in days). A failed node's
`certified-until` is removed. Needs `patch` on nodes: `rbac/optional/`, apart from the
rest because most runs never ask for it.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Any

from ..engine.api.actions import Ref
from ..engine.api.objects import parse_time
from ..engine.report.text import NODE_PASSED
from ..kube.rest import Kube

PREFIX = "cre.certification/"
CERTIFICATION, CERTIFIED_AT, VERDICT, CERTIFIED_UNTIL = (f"{PREFIX}{k}" for k in (
    "certification", "certified-at", "verdict", "certified-until"))

Obj = dict[str, Any]


def node_annotations(report: Obj, namespace: str, days: int) -> dict[str, dict[str, str | None]]:
    """node -> the annotations it should carry (None removes one); only nodes with a final verdict."""
    created = parse_time(report.get("created"))
    if created is None:
        return {}
    at = created.strftime("%Y-%m-%dT%H:%M:%SZ")
    until = (created + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")
    out: dict[str, dict[str, str | None]] = {}
    for entry in report.get("nodeResults") or []:
        passed = entry["status"] == NODE_PASSED
        out[entry["name"]] = {CERTIFICATION: f"{namespace}/{report['name']}", CERTIFIED_AT: at,
                              VERDICT: entry["status"], CERTIFIED_UNTIL: until if passed else None}
    return out


def annotate_nodes(kube: Kube, report: Obj, namespace: str, days: int, check_mode: bool) -> bool:
    """Patch the nodes whose annotations differ; True when one did (or would). A node gone since is skipped."""
    changed = False
    live = {n["metadata"]["name"]: n for n in kube.list("v1", "Node")}
    for name, wanted in sorted(node_annotations(report, namespace, days).items()):
        if name not in live:
            continue
        have = live[name]["metadata"].get("annotations") or {}
        if all(have.get(key) == value for key, value in wanted.items()):
            continue
        changed = True
        if not check_mode:
            kube.merge_patch(Ref("v1", "Node", "", name), {"metadata": {"annotations": wanted}})
    return changed
