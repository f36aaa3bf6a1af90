"""The evidence row: its fixed order, the worst outcome, and its JSON Schema, which every row the readers write
validates against (and a row that breaks it does not)."""
from __future__ import annotations

import json
import random
from pathlib import Path

import jsonschema
import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_verdict import Options
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.evidence_check import check_evidence
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.rows import (
    Row,
    row_schema,
    sort_key,
    sorted_rows,
    worst,
)
from tests.unit.engine.evidence.dcgm_docs import V3_TESTS, V4_TESTS, all_tests, v3, v4

DATA = Path(__file__).resolve().parents[1] / "data" / "dcgm_diag"
ROW = Row("n1", "gpu", 3, None, "memory", "result", "Fail", None, "fail", "DCGM's message (DCGM error 12)")


def _outputs() -> list[dict]:
    """Every reading the unit data gives: the real samples and a failing, a missing and an erroring document."""
    outs = [check_evidence(p.read_text(), "dcgm-diag-json" if p.suffix == ".json" else "dcgm-diag-text",
                           Options(node="n1", expected_gpus=9))
            for p in sorted(DATA.iterdir()) if p.suffix in (".txt", ".json") and not p.name.endswith("expect.json")]
    failing = {("memory", 3): ("Fail", [("bad memory", 12)])}
    for doc in (v4(all_tests(V4_TESTS, "Pass", range(8), failing), list(range(8))),
                v3(all_tests(V3_TESTS, "Skip", range(4)), device_ids=4),
                {"DCGM Diagnostic": {"version": "4.2.3", "runtime_error": "boom"}}):
        outs.append(check_evidence(json.dumps(doc), "dcgm-diag-json", Options(node="n1", expected_gpus=9)))
    return outs


def test_every_row_the_readers_write_validates_against_the_schema() -> None:
    validator = jsonschema.Draft202012Validator(row_schema())
    jsonschema.Draft202012Validator.check_schema(row_schema())
    rows = [r for out in _outputs() for r in out["rows"]]
    assert len(rows) > 100 and {r["outcome"] for r in rows} == {"pass", "fail", "skip"}
    for r in rows:
        validator.validate(r)


@pytest.mark.parametrize("change", [{"outcome": "passed"}, {"component": "cpu"}, {"index": -1}, {"value": [1]},
                                    {"node": ""}, {"extra": 1}])
def test_the_schema_refuses_what_a_row_cannot_be(change: dict) -> None:
    assert not jsonschema.Draft202012Validator(row_schema()).is_valid({**ROW.to_dict(), **change})


def test_missing_field_is_refused_and_a_null_value_is_kept() -> None:
    data = ROW.to_dict()
    assert jsonschema.Draft202012Validator(row_schema()).is_valid({**data, "value": None})
    del data["sample"]
    assert not jsonschema.Draft202012Validator(row_schema()).is_valid(data)


def test_rows_sort_by_node_component_index_test_metric_sample() -> None:
    rows = [ROW._replace(sample=1), ROW._replace(index=None), ROW._replace(component="step"),
            ROW._replace(test="dcgm"), ROW._replace(node="a"), ROW, ROW._replace(index=10)]
    assert [(r.node, r.component, r.index, r.test, r.sample) for r in sorted_rows(rows)] == [
        ("a", "gpu", 3, "memory", 0), ("n1", "gpu", None, "memory", 0), ("n1", "gpu", 3, "dcgm", 0),
        ("n1", "gpu", 3, "memory", 0), ("n1", "gpu", 3, "memory", 1), ("n1", "gpu", 10, "memory", 0),
        ("n1", "step", 3, "memory", 0)]


def test_the_fast_order_is_the_sort_keys_with_ties_kept_in_their_order() -> None:
    # sorted_rows puts rows in runs before it orders them: the order must be sorted()'s by sort_key, stable, for
    # any mix of nulls, components, uuids (which are no part of the order) and samples out of order.
    rnd = random.Random(5)
    rows = [Row(rnd.choice(["a", "b"]), rnd.choice(["gpu", "link", "step"]), rnd.choice([None, 0, 1, 10]),
                rnd.choice([None, "GPU-1", "GPU-2"]), rnd.choice([None, "", "memory", "pcie"]), rnd.choice(["x", "y"]),
                n, None, "pass", "", sample=rnd.randrange(4)) for n in range(3000)]
    assert sorted_rows(rows) == sorted(rows, key=sort_key)
    assert [r.value for r in sorted_rows(rows)] == [r.value for r in sorted(rows, key=sort_key)]


def test_the_worst_outcome() -> None:
    assert worst(["pass", "warn", "skip"]) == "warn" and worst(["pass", "fail", "warn"]) == "fail"
    assert worst(["pass", "skip"]) == "skip" and worst([]) is None
