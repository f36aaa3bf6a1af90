"""Before a run drives a Workflow: is NVCRE itself running in this cluster? Two controllers on one object lose data.

The check beside the API and permission preflight (driver/preflight.py): that one asks what the run may do, this
one whether another controller already does it. A resident controller shows by the finalizer it puts on the
Workflow, or by its leader-election lease, renewed within a minute.
"""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from ..engine.api.objects import parse_time
from ..engine.api.vocabulary import FINALIZER_WORKFLOW
from ..kube.rest import ApiException, Kube
from .errors import DriverError

# A resident controller's leader-election lease: a name like these, renewed within this window.
LEASE_HINTS = ("nvcre", "cluster-readiness-engine")
LEASE_FRESH = timedelta(seconds=60)
RESIDENT_NAMESPACE = "nvcre"  # where NVCRE's chart (and nvcrectl setup init) runs the controller


def refuse_resident_controller(kube: Kube, workflow: dict[str, Any], now: datetime, warn: Callable[[str], None]
                               ) -> None:
    """Stop if NVCRE itself is running in this cluster. Its leader lease sits where its chart installs it (`nvcre`)
    or beside the Workflow; no cluster-wide list is needed, and where even that is forbidden the run goes on with
    a warning."""
    meta = workflow.get("metadata") or {}
    if FINALIZER_WORKFLOW in (meta.get("finalizers") or []):
        raise DriverError(
            f"refusing to drive Workflow {meta.get('namespace')}/{meta.get('name')}: it carries the finalizer "
            f"{FINALIZER_WORKFLOW}, so a resident NVCRE controller manages it")
    for namespace in sorted({RESIDENT_NAMESPACE, meta.get("namespace") or RESIDENT_NAMESPACE}):
        try:
            leases = kube.list("coordination.k8s.io/v1", "Lease", namespace)
        except ApiException as exc:
            if exc.status != 403:
                raise
            warn(f"could not check for a resident NVCRE controller in namespace {namespace}: listing Leases there "
                 f"is forbidden; grant it (rbac/40-role-run.yaml) or make sure NVCRE does not run in this cluster")
            continue
        for lease in leases:
            name = lease["metadata"]["name"]
            renew = (lease.get("spec") or {}).get("renewTime")
            renewed = parse_time(renew)
            if any(h in name for h in LEASE_HINTS) and renewed and now - renewed < LEASE_FRESH:
                raise DriverError(
                    f"refusing to drive Workflow {meta.get('namespace')}/{meta.get('name')}: a resident NVCRE "
                    f"controller holds the leader lease {namespace}/{name} (renewed {renew})")
