"""Regression rules: CEL over ``value``, ``baseline`` and ``variance`` (all doubles), one per figure.

``variance`` is ``(value - baseline) / baseline``. The defaults allow 5% in the worse direction of the figure's
kind (and, per message size, one printed hundredth of a GB/s). User rules are ``{figure: expression}``;
``busBW`` (or ``busBW@*``) stands for the busBW of every message size, and an exact ``busBW@<size>`` wins over
it. Expressions compile through spec/cel.py, so a bad one is an ``InputError`` at ``rules.<figure>`` before
anything is compared. The same variables serve the baseline trim rule.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..api.errors import InputError
from ..spec import cel
from .figures import BUS_BW, FIGURE_NAMES, HIGHER, LOWER, is_figure, kind

DEFAULTS = {HIGHER: "variance >= -0.05", LOWER: "variance <= 0.05"}
# nccl-tests prints GB/s with two decimals: at small sizes one printed hundredth is more than 5% (0.17 against
# 0.18), so a per-size figure also passes within one printed unit (rounding on both sides: under 0.015).
PER_SIZE_DEFAULT = f"{DEFAULTS[HIGHER]} || baseline - value < 0.015"
EVERY_SIZE = (BUS_BW, f"{BUS_BW}@*")

_TRIAL = {"value": 0.0, "baseline": 0.0, "variance": 0.0}
# The operands are always doubles, so an operand type error is as static as a syntax error.
_TYPE_ERROR = "no matching overload"


def check(expression: object, path: str) -> None:
    """Refuse an expression that does not compile to a bool over the three doubles; errors that depend on the
    values (a division by zero) are left to evaluation."""
    if not isinstance(expression, str):
        raise InputError(path, f"expected a CEL expression string, got {type(expression).__name__}")
    try:
        cel.evaluate_bool(expression, _TRIAL, path)
    except InputError as err:
        if err.rule.startswith("eval CEL expression:") and _TYPE_ERROR not in err.rule:
            return
        raise


def validate(rules: Mapping[str, object], path: str = "rules") -> None:
    """Every user rule names a known figure and compiles; the first bad one (in sorted order) is refused."""
    if not isinstance(rules, Mapping):
        raise InputError(path, f"expected a mapping of figure name to CEL expression, got {type(rules).__name__}")
    for figure in sorted(rules, key=str):
        where = f"{path}.{figure}"
        if not isinstance(figure, str) or (figure not in EVERY_SIZE and not is_figure(figure)):
            raise InputError(where, f"unknown figure '{figure}'; known: {', '.join((BUS_BW, *FIGURE_NAMES))}")
        check(rules[figure], where)


def rule_for(figure: str, rules: Mapping[str, str]) -> str:
    """The effective rule of one figure: the user's exact one, the busBW shorthand, else its kind's default."""
    if figure in rules:
        return rules[figure]
    if figure.startswith(f"{BUS_BW}@"):
        return next((rules[shorthand] for shorthand in EVERY_SIZE if shorthand in rules), PER_SIZE_DEFAULT)
    return DEFAULTS[kind(figure)]


def effective(figures: Iterable[str], rules: Mapping[str, str]) -> dict[str, str]:
    """figure -> the rule used, for the given figure names (validate the user rules first)."""
    return {figure: rule_for(figure, rules) for figure in figures}


def holds(expression: str, value: float, baseline: float, path: str) -> bool:
    """Whether ``value`` passes the rule against ``baseline`` (> 0: figures and baselines are positive)."""
    variables = {"value": value, "baseline": baseline, "variance": variance(value, baseline)}
    return cel.evaluate_bool(expression, variables, path)


def variance(value: float, baseline: float) -> float:
    return (value - baseline) / baseline
