"""CEL evaluation (cel-python) for override ``when.expression``, and later node-health monitors and thresholds.

Programs are compiled once per expression text and cached. Every failure is an ``InputError(path, rule)``
whose ``rule`` is NVCRE's own wording (workflow.md §3.1):

- ``compile CEL expression: <detail>`` — syntax errors and references to undeclared variables (cel-go finds
  the latter while type-checking at compile time; cel-python only at evaluation, so we report them the same way);
- ``eval CEL expression: <detail>`` — a runtime error (division by zero, no such key, no matching overload);
- ``CEL expression must return bool, got <type>``.

Callers decide what the error becomes: the override pass turns it into ``OverrideError`` (as NVCRE does at
reconcile time); faces that validate before writing anything report the InputError itself.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, cast

try:
    import celpy
    from celpy import celtypes
except ImportError:  # requirements.py: no face runs without it
    from ...requirements import ABSENT as celpy  # type: ignore[no-redef]
    from ...requirements import ABSENT as celtypes  # type: ignore[no-redef]

from ..api.errors import InputError

# Variables a ``when.expression`` sees (workflow.md §3.1): strings, and domainCount an int.
WHEN_VARIABLES: dict[str, Any] = {
    "platform": "",
    "gpuArchitecture": "",
    "workloadKind": "",
    "topologyMode": "",
    "domainCount": 0,
}

_ENV = celpy.Environment()
_PROGRAMS: dict[str, celpy.Runner] = {}
_UNDECLARED = re.compile(r"undeclared reference to '([^']*)'")
_TOKEN = re.compile(r"Token\('RULE', '(\w+)'\)")
_CLASS = re.compile(r"<class 'celpy\.celtypes\.(\w+?)(?:Type)?'>")

_TYPE_NAMES = {
    celtypes.BoolType: "bool",
    celtypes.IntType: "int",
    celtypes.UintType: "uint",
    celtypes.DoubleType: "double",
    celtypes.StringType: "string",
    celtypes.BytesType: "bytes",
    celtypes.ListType: "list",
    celtypes.MapType: "map",
    celtypes.TimestampType: "google.protobuf.Timestamp",
    celtypes.DurationType: "google.protobuf.Duration",
    type(None): "null_type",
    # Some operators hand back plain Python values.
    bool: "bool",
    int: "int",
    float: "double",
    str: "string",
    list: "list",
    dict: "map",
}


def type_name(value: Any) -> str:
    """The CEL name of a result's type (``string``, ``int``, …) for error messages."""
    for cls, name in _TYPE_NAMES.items():
        if isinstance(value, cls):
            return name
    return type(value).__name__


def is_bool(value: Any) -> bool:
    """Whether a CEL result is a bool (cel-python returns BoolType or, from some operators, a plain bool)."""
    return isinstance(value, (celtypes.BoolType, bool))


def compile_expression(expr: str, path: str) -> celpy.Runner:
    """Compile ``expr`` (cached by its text); ``InputError(path, 'compile CEL expression: …')`` on a syntax error."""
    program = _PROGRAMS.get(expr)
    if program is None:
        try:
            program = _ENV.program(_ENV.compile(expr))
        except celpy.CELParseError as err:
            # cel-python's message only echoes the source with a caret; line:column says the same, on one line.
            where = f"{getattr(err, 'line', None) or 1}:{getattr(err, 'column', None) or 1}"
            raise InputError(path, f"compile CEL expression: syntax error at {where}") from None
        _PROGRAMS[expr] = program
    return program


def _eval_detail(err: celpy.CELEvalError) -> str:
    # cel-python messages embed Python reprs; keep the readable part, in CEL's terms.
    text = str(err.args[0]) if err.args else str(err)
    text = _TOKEN.sub(lambda m: f"'{m.group(1)}'", text)
    return _CLASS.sub(lambda m: m.group(1).lower(), text)


def evaluate(expr: str, variables: Mapping[str, Any], path: str) -> Any:
    """Evaluate ``expr`` over JSON-like ``variables``; returns the CEL value (a celtypes instance)."""
    program = compile_expression(expr, path)
    try:
        # A JSON object converts to a MapType: the activation evaluate() takes (json_to_cel is typed for any JSON).
        return program.evaluate(cast("celpy.Context", celpy.json_to_cel(dict(variables))))
    except celpy.CELEvalError as err:
        undeclared = _UNDECLARED.search(str(err.args[0]) if err.args else "")
        if undeclared:
            raise InputError(path, f"compile CEL expression: undeclared reference to '{undeclared.group(1)}'") from None
        raise InputError(path, f"eval CEL expression: {_eval_detail(err)}") from None
    except (TypeError, ValueError, ZeroDivisionError, KeyError) as err:
        raise InputError(path, f"eval CEL expression: {err}") from None


def evaluate_bool(expr: str, variables: Mapping[str, Any], path: str) -> bool:
    """Evaluate ``expr`` and require a bool result (``CEL expression must return bool, got <type>``)."""
    value = evaluate(expr, variables, path)
    if not is_bool(value):
        raise InputError(path, f"CEL expression must return bool, got {type_name(value)}")
    return bool(value)


def check_expression(expr: str, variables: Mapping[str, Any], path: str) -> None:
    """Static check before anything runs: compiles, refers only to ``variables``, and yields a bool.

    Trial-evaluates with the given (zero) values; a runtime error there may depend on the values
    (``1 / domainCount``), so only undeclared names and non-bool results are reported.
    """
    try:
        evaluate_bool(expr, variables, path)
    except InputError as err:
        if not err.rule.startswith("eval CEL expression:"):
            raise
