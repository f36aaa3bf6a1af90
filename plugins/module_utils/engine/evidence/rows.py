"""The evidence row: one component's result in one sample, as every reader of a tool's output writes it.

A row is the unit a verdict rests on and a user can check later (issue 40): which node, which GPU (or link,
group, step), which test, what the tool measured or said, and the outcome. Three states stay apart: a value the
tool did not print is None (never 0), a component missing from the output is a row of its own whose detail says
so, and a partial read is the reader's to record, never a row of zeros.
"""
from __future__ import annotations

from collections.abc import Iterable
from operator import itemgetter
from typing import Any, NamedTuple

COMPONENTS = ("gpu", "link", "group", "step")
OUTCOMES = ("pass", "warn", "skip", "fail")
# How bad an outcome is, for "the worst". A skip outranks a pass only where nothing else ran: the verdicts leave
# skips out when anything passed, warned or failed (dcgm_verdict: a lone skipped EUD test is no failure).
RANK = {"pass": 0, "skip": 1, "warn": 2, "fail": 3}


class Row(NamedTuple):
    """One evidence row. `index` None: a result of the node as a whole (DCGM's deployment checks are not per GPU
    in DCGM 3.x), or of the run (a runtime error). `test` None: the row is not a test's (a missing GPU, a run that
    did not run). workflow/iteration/job/attempt are None offline; the cluster path fills them.

    A named tuple, not a dataclass: a fleet's burn-in makes millions of rows (bench/evidence.py), and a tuple is
    made six times faster than a frozen dataclass, is immutable all the same, and hands its fields to the shard
    encoder in the schema's order without a dict."""

    node: str
    component: str
    index: int | None  # type: ignore[assignment]  # the schema's name; it shadows tuple.index, which nothing calls
    uuid: str | None
    test: str | None
    metric: str
    value: float | int | str | None
    unit: str | None
    outcome: str
    detail: str
    sample: int = 0
    time: str | None = None
    workflow: str | None = None
    iteration: int | None = None
    job: str | None = None
    attempt: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The row as JSON-ready data, in the field order of the schema."""
        return dict(zip(FIELDS, self))


FIELDS: tuple[str, ...] = Row._fields


def sort_key(row: Row) -> tuple[Any, ...]:
    """The fixed order rows are written in (node, component, index, test, metric, sample), so equal inputs give
    equal bytes. None sorts before any value: the node-wide row of a test comes before its GPUs."""
    index, test = row.index, row.test
    # Flat, each nullable field as (present, value): a fleet's burn-in sorts millions of rows (bench/evidence.py).
    return (row.node, _RANK_OF[row.component], index is not None, index or 0, test is not None, test or "",
            row.metric, row.sample)


_RANK_OF = {component: rank for rank, component in enumerate(COMPONENTS)}


def sorted_rows(rows: Iterable[Row]) -> list[Row]:
    """`rows` in the fixed order: what `sorted(rows, key=sort_key)` gives, faster on a tool's output, whose rows
    come sample after sample: put in runs by everything but the sample (a run's rows already in sample order, most
    often), the runs ordered, each run sorted by sample alone (stable, so equal keys keep their order)."""
    runs: dict[tuple[Any, ...], list[Row]] = {}
    for row in rows:
        key = (row[0], row[1], row[2], row[4], row[5])   # node, component, index, test, metric: not uuid
        run = runs.get(key)
        if run is None:
            runs[key] = [row]
        else:
            run.append(row)
    out: list[Row] = []
    for run in sorted(runs.values(), key=lambda run: sort_key(run[0])):
        run.sort(key=_SAMPLE)
        out += run
    return out


_SAMPLE = itemgetter(FIELDS.index("sample"))


def worst(outcomes: list[str]) -> str | None:
    """The worst of `outcomes` by RANK; None for none (no evidence is not a pass)."""
    return max(outcomes, key=RANK.__getitem__) if outcomes else None


def _nullable_type(kind: str | list[str]) -> dict[str, Any]:
    kinds = [kind] if isinstance(kind, str) else kind
    return {"type": [*kinds, "null"]}


def row_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of one row, as a results bundle writes it to `schema/`."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://github.com/cre-certification/schema/evidence-row.json",
        "title": "Evidence row",
        "type": "object",
        "additionalProperties": False,
        "required": list(FIELDS),
        "properties": {
            "node": {"type": "string", "minLength": 1},
            "component": {"enum": list(COMPONENTS)},
            "index": {**_nullable_type("integer"), "minimum": 0},
            "uuid": _nullable_type("string"),
            "test": _nullable_type("string"),
            "metric": {"type": "string", "minLength": 1},
            "value": _nullable_type(["number", "string"]),
            "unit": _nullable_type("string"),
            "outcome": {"enum": list(OUTCOMES)},
            "detail": {"type": "string"},
            "sample": {"type": "integer", "minimum": 0},
            "time": _nullable_type("string"),
            "workflow": _nullable_type("string"),
            "iteration": {**_nullable_type("integer"), "minimum": 0},
            "job": _nullable_type("string"),
            "attempt": {**_nullable_type("integer"), "minimum": 0},
        },
    }
