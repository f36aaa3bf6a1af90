"""A status write the installed CRD pruned: a field this collection's CRDs declare and the installed ones do not.

With `crds_install: false` a run may meet NVCRE's own CRDs, or an older version of this collection's, whose status
schema lacks `status.evidence` (issue 40). The API server then drops the field from the status write without a
word, and every later pass, seeing no seal, would write it again until the run's timeout. The server's answer to the
write is the object as stored, after pruning, so it tells at no cost and with no permission more: the field was
written and the answer lacks it.
"""
from __future__ import annotations

from typing import Any, Optional

from ..engine.api.vocabulary import API_VERSION, GROUP, JOB, WORKFLOW
from .errors import DriverError

Obj = dict[str, Any]
# (apiVersion, kind) -> (the CRD's plural, the status field only this collection's CRDs declare, what it holds).
OURS = {
    (API_VERSION, JOB): ("jobs", "evidence", "the evidence seal"),
    (API_VERSION, WORKFLOW): ("workflows", "evidence", "the evidence totals"),
}
REMEDY = ("install this collection's CRDs (the cre.certification.crds role, with crds_install: true, and "
          "crds_take_over: true if another installer owns them) or upgrade them, then run again")


def pruned(written: Obj, answer: Obj) -> Optional[str]:  # noqa: UP045 - module_utils
    """The line that says what the server pruned of `written` (a status update) in `answer` (its reply); None
    when it kept every field this collection's CRDs add, or the object is not of one of them."""
    ours = OURS.get((written.get("apiVersion", ""), written.get("kind", "")))
    if ours is None:
        return None
    plural, field, holds = ours
    if (written.get("status") or {}).get(field) is None or (answer.get("status") or {}).get(field) is not None:
        return None
    meta = written.get("metadata") or {}
    kind = written["kind"]
    return (f"writing {holds} of {kind} {meta.get('namespace', '')}/{meta.get('name', '')}: the installed {kind} CRD "
            f"({plural}.{GROUP}) prunes status.{field}, so it is not this collection's schema (NVCRE's own or an "
            f"older version); {REMEDY}")


def refuse_pruned(written: Obj, answer: Any) -> None:
    """Stop the run (DriverError) when the server pruned a field of ours from the status write `written`."""
    line = pruned(written, answer) if isinstance(answer, dict) else None
    if line:
        raise DriverError(line)
