"""Validate Kubernetes-JSON objects against the models, and dump models back to Kubernetes JSON."""
from __future__ import annotations

import re
from typing import Any, TypeVar

from ..api.errors import InputError
from .pydantic_api import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# The loc segment pydantic adds after a map key that failed validation; not part of the object path.
_KEY_MARK = "[key]"
_RULES = {"extra_forbidden": "unknown field", "missing": "Required value"}


def field_path(loc: tuple[int | str, ...], prefix: str = "") -> str:
    """Kubernetes-style path: `a.b[2].c["kai.scheduler/queue"]`."""
    path = prefix
    for seg in loc:
        if isinstance(seg, int):
            path += f"[{seg}]"
        elif seg == _KEY_MARK:
            continue
        elif _IDENT.match(seg):
            path += f".{seg}" if path else seg
        else:
            path += f'["{seg}"]'
    return path


def input_error(err: ValidationError, prefix: str = "") -> InputError:
    """One InputError naming the path and rule of every problem (the first one is `path`/`rule`)."""
    problems = [(field_path(e["loc"], prefix), _RULES.get(e["type"], e["msg"])) for e in err.errors()]
    (path, rule), rest = problems[0], problems[1:]
    return InputError(path, "; ".join([rule] + [f"{p}: {r}" if p else r for p, r in rest]))


def parse(model: type[M], obj: Any, prefix: str = "") -> M:
    """Validate `obj` (a Kubernetes JSON dict) as `model`; bad input raises InputError."""
    if not isinstance(obj, dict):
        raise InputError(prefix, f"expected an object, got {type(obj).__name__}")
    try:
        return model.model_validate(obj)
    except ValidationError as err:
        raise input_error(err, prefix) from None


def dump(model: BaseModel) -> dict[str, Any]:
    """The camelCase Kubernetes JSON: absent fields stay absent, CRD defaults appear (as the API server returns)."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)
