"""Performance thresholds (measurements.md §4.1): metric key -> CEL expression over `value` (a double).

NVCRE compiles each expression with cel-go's type checker, which finds type errors (a non-bool result, a
comparison with a string) before anything runs. cel-python has no checker, so an expression is tried once on
`value = 0.0`: syntax errors, undeclared names and operand type errors then fail as compile errors, and the
type of the result stands in for the checked output type. Runtime errors that depend on the value are left to
evaluation, as in NVCRE.
"""
from __future__ import annotations

from ..api.errors import InputError
from ..api.vocabulary import INVALID_THRESHOLD_EXPRESSION, THRESHOLD_VIOLATED
from . import cel

# The registry, in its order (also the order the unknown-key message lists them).
KEYS = ("busBandwidthGBps", "algBandwidthGBps", "goodputRatio", "avgTFLOPsPerGPU", "avgStepTimeSec")

_COMPILE = "compile CEL expression: "
# cel-python reports at evaluation what cel-go's checker rejects: the operand types are fixed, so this is static.
_TYPE_ERROR = "found no matching overload"


def _unknown(thresholds: dict[str, str]) -> list[str]:
    return sorted(key for key in thresholds if key not in KEYS)


def unknown_keys_message(thresholds: dict[str, str]) -> str | None:
    """NVCRE's text for keys outside the registry (sorted), or None when every key is known."""
    unknown = _unknown(thresholds)
    if not unknown:
        return None
    return f"unknown threshold key(s) [{', '.join(unknown)}]; valid keys: [{', '.join(KEYS)}]"


def _detail(err: InputError) -> str:
    """The part of a cel.py rule after its `<stage> CEL expression: ` lead."""
    return err.rule.split(": ", 1)[1] if ": " in err.rule else err.rule


def compile_error(expression: str) -> str | None:
    """Why `expression` does not compile to a bool over a double `value`, in NVCRE's words; None when it does."""
    lead = f'compile threshold expression "{expression}"'
    try:
        result = cel.evaluate(expression, {"value": 0.0}, "")
    except InputError as err:
        if err.rule.startswith(_COMPILE) or _TYPE_ERROR in err.rule:
            return f"{lead}: compile: {_detail(err)}"
        return None
    if not cel.is_bool(result):
        return f"{lead}: expression must return bool, got {cel.type_name(result)}"
    return None


def _check(key: str, expression: str, value: float) -> tuple[str, str] | None:
    """One threshold on its measured value: None when it holds, else (reason, message)."""
    error = compile_error(expression)
    if error is None:
        try:
            result = cel.evaluate(expression, {"value": value}, "")
        except InputError as err:
            error = f'evaluate threshold expression "{expression}" with value={value:f}: {_detail(err)}'
        else:
            if not cel.is_bool(result):
                error = f'threshold expression "{expression}" returned {cel.type_name(result)}, expected bool'
            elif not result:
                return THRESHOLD_VIOLATED, f'Threshold "{key}" violated: measured {value:.4f}, expression: {expression}'
    return (INVALID_THRESHOLD_EXPRESSION, f'Threshold "{key}": {error}') if error else None


def evaluate_all(thresholds: dict[str, str], measured: dict[str, float]) -> tuple[str, str] | None:
    """The first problem in sorted key order as (reason, message), or None when every measured threshold holds.

    Keys without a measured value are skipped (the caller decides whether to wait for them).
    """
    for key in sorted(thresholds):
        if key in measured:
            problem = _check(key, thresholds[key], float(measured[key]))
            if problem:
                return problem
    return None


def validate(thresholds: dict[str, str], path: str) -> None:
    """Reject bad thresholds before anything is written: InputError(`<path>["<key>"]`, why) for an unknown key
    (the registry text), a non-string, or an expression that does not compile to a bool."""
    unknown = _unknown(thresholds)
    if unknown:
        raise InputError(f'{path}["{unknown[0]}"]', unknown_keys_message(thresholds) or "")
    for key in sorted(thresholds):
        expression = thresholds[key]
        if not isinstance(expression, str):
            raise InputError(f'{path}["{key}"]', f"expected a CEL expression string, got {type(expression).__name__}")
        error = compile_error(expression)
        if error:
            raise InputError(f'{path}["{key}"]', error)
