"""Ansible's `--diff` for the runs: the Certification and the Workflows before the run and after it (in check mode:
as the run would write them), shown as kubernetes.core.k8s shows an object, without the server's bookkeeping."""
from __future__ import annotations

import copy
from typing import Any

Obj = dict[str, Any]

# Metadata the API server keeps for itself: every write changes it, none of it is the user's.
BOOKKEEPING = ("managedFields", "resourceVersion", "generation", "uid", "creationTimestamp", "selfLink")


def key(obj: Obj) -> str:
    """`Kind namespace/name`: the header of an object's diff."""
    meta = obj.get("metadata") or {}
    return f"{obj.get('kind', '')} {meta.get('namespace', '')}/{meta.get('name', '')}"


def view(obj: Obj | None) -> Obj:
    """The object as the diff shows it ({} when it does not exist)."""
    if obj is None:
        return {}
    shown = copy.deepcopy(obj)
    for field in BOOKKEEPING:
        (shown.get("metadata") or {}).pop(field, None)
    return shown


def entries(before: dict[str, Obj | None], after: dict[str, Obj | None]) -> list[Obj]:
    """One Ansible diff per object that differs, in the order first seen; an object that did not (or will not)
    exist is `{}` on its side, as a created or deleted one is in kubernetes.core.k8s."""
    out = []
    for name in [*before, *(k for k in after if k not in before)]:
        old, new = view(before.get(name)), view(after.get(name))
        if old != new:
            out.append({"before_header": name if old else f"{name} (absent)", "before": old,
                        "after_header": name if new else f"{name} (absent)", "after": new})
    return out
