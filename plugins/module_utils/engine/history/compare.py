"""A run against a baseline: per figure and group the variance and the rule's verdict, and unlike runs refused.

Only a baseline entry with the run category's full key is compared. When the baseline has the category under
another key (another image, nodes per job or GPU product), every figure it holds for the category is refused
with one line naming the first key that differs: a comparison of unlike runs would be a wrong verdict. A figure
the matching entry has but the run lacks is ``missing``, which counts against the run like a regression.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..api.naming import natural
from . import rules as rules_
from .figures import KEY_FIELDS, Figure, category_name, figures, key

OK, REGRESSED, MISSING = "ok", "regressed", "missing"

Row = dict[str, Any]


def _first_difference(run: Mapping[str, Any], reference: Mapping[str, Any]) -> str:
    return next(field for field in KEY_FIELDS if run[field] != reference[field])


def _closest(run: Mapping[str, Any], entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The entry that agrees with the run on the most leading key fields (the first such on a tie)."""
    return max(entries, key=lambda entry: KEY_FIELDS.index(_first_difference(run, entry["key"])))


def _shown(value: Any) -> str:
    return str(value) if value != "" else "none"


def _refusals(category: str, run: Mapping[str, Any], entry: dict[str, Any]) -> list[Row]:
    field = _first_difference(run, entry["key"])
    theirs, ours = entry["key"][field], run[field]
    return [{"category": category, "figure": figure, "key": field, "run": ours, "baseline": theirs,
             "message": f"{category} {figure}: not compared: {field} differs (run {_shown(ours)}, "
                        f"baseline {_shown(theirs)})"}
            for figure in entry["figures"]]


def _row(category: str, figure: str, reference: float, rule: str, measured: Figure | None) -> Row:
    if measured is None:
        return {"category": category, "group": "", "nodes": [], "figure": figure, "value": None,
                "baseline": reference, "variance": None, "rule": rule, "verdict": MISSING}
    value = measured["value"]
    verdict = OK if rules_.holds(rule, value, reference, f"rules.{figure}") else REGRESSED
    return {"category": category, "group": measured["group"], "nodes": list(measured["nodes"]), "figure": figure,
            "value": value, "baseline": reference, "variance": rules_.variance(value, reference), "rule": rule,
            "verdict": verdict}


def _rows(category: str, entry: dict[str, Any], measured: list[Figure], rules: Mapping[str, str]) -> list[Row]:
    rows = []
    for figure, reference in entry["figures"].items():
        rule = rules_.rule_for(figure, rules)
        samples: list[Figure | None] = [item for item in measured if item["figure"] == figure]
        samples = samples or [None]
        rows += [_row(category, figure, reference["value"], rule, sample) for sample in samples]
    return rows


def _number(value: float) -> str:
    # Ratios (goodput) need more than two decimals to show a few percent.
    return f"{value:.2f}" if abs(value) >= 1 else f"{value:.4f}"


def describe(row: Row) -> str:
    """One regressed figure in words: ``groupBusBW 360.00 is 10.0% below baseline 400.00 (rule …)``."""
    if row["verdict"] == MISSING:
        return f"{row['figure']} missing (baseline {_number(row['baseline'])}, rule {row['rule']})"
    direction = "below" if row["variance"] < 0 else "above"
    return (f"{row['figure']} {_number(row['value'])} is {abs(row['variance']) * 100:.1f}% {direction} baseline "
            f"{_number(row['baseline'])} (rule {row['rule']})")


def _regressed_nodes(regressions: list[Row]) -> list[dict[str, Any]]:
    """A node per category it regressed in, with every figure that regressed there (group-level figures only)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for row in regressions:
        for node in row["nodes"]:
            entry = found.setdefault((node, row["category"]), {"name": node, "category": row["category"],
                                                               "group": row["group"], "figures": [], "message": []})
            entry["figures"].append(row["figure"])
            entry["message"].append(describe(row))
    return [{**entry, "message": "; ".join(entry["message"])}
            for _at, entry in sorted(found.items(), key=lambda item: (natural(item[0][0]), natural(item[0][1])))]


def compare(report: Mapping[str, Any], baseline: Mapping[str, Any], against: Mapping[str, Any],
            rules: Mapping[str, str], enforced: bool) -> dict[str, Any]:
    """The comparison of ``report`` with a checked ``baseline`` (baseline.load/generate) under the user ``rules``
    (refused at ``rules.<figure>`` if bad); ``against`` says what the baseline is and is returned as given."""
    rules_.validate(rules)
    reference: dict[str, list[dict[str, Any]]] = {}
    for entry in baseline.get("entries") or []:
        reference.setdefault(entry["key"]["category"], []).append(entry)
    measured = figures(report)
    rows: list[Row] = []
    refused: list[Row] = []
    for category in report.get("categories") or []:
        name, run = category_name(category), key(report, category)
        entries = reference.get(name) or []
        entry = next((entry for entry in entries if entry["key"] == run), None)
        if entry is not None:
            rows += _rows(name, entry, [item for item in measured if item["key"] == run], rules)
        elif entries:
            refused += _refusals(name, run, _closest(run, entries))
    rows.sort(key=lambda row: (natural(row["category"]), natural(row["group"]), natural(row["figure"])))
    refused.sort(key=lambda row: (natural(row["category"]), natural(row["figure"])))
    regressions = [row for row in rows if row["verdict"] != OK]
    missing = sum(row["verdict"] == MISSING for row in rows)
    return {"against": dict(against), "rules": {row["figure"]: row["rule"] for row in rows}, "enforced": bool(enforced),
            "figures": rows, "refused": refused, "regressions": regressions,
            "regressedNodes": _regressed_nodes(regressions),
            "summary": {"compared": len(rows) - missing, "regressed": len(regressions) - missing, "missing": missing,
                        "refused": len(refused)}}
