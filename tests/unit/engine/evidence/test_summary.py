"""The report's evidence: each GPU's verdict streamed from stored rows (the same verdicts as dcgm_verdict gives the
output they came from), and the state of a category's rows from the seals."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import summary
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_verdict import Options
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.evidence_check import check_evidence
from tests.unit.engine.evidence.dcgm_docs import MEMORY_MESSAGE, V3_TESTS, V4_TESTS, all_tests, v3, v4

DATA = Path(__file__).resolve().parents[1] / "data" / "dcgm_diag"
Obj = dict[str, Any]


def _row(node: str, index: int | None, test: str | None, outcome: str, detail: str = "", metric: str = "result",
         sample: int = 0) -> Obj:
    return {"node": node, "component": "gpu", "index": index, "uuid": None, "test": test, "metric": metric,
            "value": None, "unit": None, "outcome": outcome, "detail": detail, "sample": sample}


def _checked(doc: Any, fmt: str = "dcgm-diag-json", gpus: int | None = None) -> Obj:
    text = doc if isinstance(doc, str) else json.dumps(doc)
    return check_evidence(text, fmt, Options(node="n1", expected_gpus=gpus))


def _same_verdicts(checked: Obj) -> None:
    """summary.gpus over the rows agrees with the verdicts drawn from the output, for every GPU a row names."""
    by_index = {g["index"]: g for g in checked["gpus"]}
    got = summary.gpus(iter(checked["rows"]))
    assert got, "no GPU read"
    for gpu in got:
        want = by_index[gpu["index"]]
        assert (gpu["outcome"], gpu["lackingEvidence"], gpu["missing"], gpu["failures"]) == \
            (want["outcome"], want["lacking_evidence"], want["missing"], want["failures"]), gpu["index"]


@pytest.mark.parametrize("doc", [
    v4(all_tests(V4_TESTS, "Pass", range(8), {("memory", 3): ("Fail", [(MEMORY_MESSAGE, 12)])}), list(range(8))),
    v4(all_tests(V4_TESTS, "Skip", range(2)), [0, 1]),
    v3(all_tests(V3_TESTS, "Pass", range(4)), device_ids=4),
    v3(all_tests(V3_TESTS, "Skip", range(4)), device_ids=4),
], ids=["4x-one-failing", "4x-all-skip", "3x-pass", "3x-all-skip"])
def test_the_verdicts_from_stored_rows_are_those_of_the_output(doc: Obj) -> None:
    _same_verdicts(_checked(doc))


def test_the_real_samples_give_the_same_verdicts_from_their_rows() -> None:
    for path in sorted(DATA.glob("*.txt")):
        checked = _checked(path.read_text(), "dcgm-diag-text")
        if any(r["index"] is not None for r in checked["rows"]):
            _same_verdicts(checked)


def test_a_missing_gpu_is_missing_and_failing() -> None:
    checked = _checked(v4(all_tests(V4_TESTS, "Pass", range(7)), list(range(7))), gpus=8)
    gpu = summary.gpus(iter(checked["rows"]))[7]
    assert (gpu["index"], gpu["missing"], gpu["outcome"]) == (7, True, "fail")


def test_gpus_sort_by_node_in_natural_order_then_index_and_node_rows_are_no_gpu() -> None:
    rows = [_row("node-10", 1, "memory", "pass"), _row("node-2", 3, "memory", "pass"),
            _row("node-2", 0, "memory", "pass"), _row("node-2", None, "Denylist", "fail", "node-wide")]
    assert [(g["node"], g["index"]) for g in summary.gpus(iter(rows))] == [("node-2", 0), ("node-2", 3), ("node-10", 1)]


def test_the_same_failure_in_every_sample_is_one_entry_and_skip_is_failure_fails_lacking_gpus() -> None:
    rows = [_row("n", 0, "memory", "fail", "bad", sample=s) for s in range(1000)]
    rows += [_row("n", 1, "memory", "skip"), _row("n", 1, "software", "pass")]
    gpus = summary.gpus(iter(rows), skip_is_failure=True)
    assert gpus[0]["failures"] == [{"test": "memory", "outcome": "fail", "detail": "bad"}]
    assert (gpus[1]["lackingEvidence"], gpus[1]["outcome"]) == (True, "fail")


def test_gpus_reads_its_rows_once() -> None:
    def once() -> Iterator[Obj]:
        yield _row("n", 0, "memory", "pass")
    assert summary.gpus(once())[0]["outcome"] == "pass"


SEAL = {"attempt": 1, "rows": 24, "shards": 1, "sha256": ["ab"]}


def test_final_when_the_workflow_says_so_and_no_read_lost_rows() -> None:
    got = summary.category_evidence({"rows": 48, "final": True}, {"j-1": SEAL, "j-2": {**SEAL, "truncated": [{}]}},
                                    [])
    assert got == {"state": "final", "rows": 48, "shards": 2, "truncated": 1, "partial": [], "gpus": []}


def test_partial_names_the_reads_that_lost_rows_and_a_workflow_not_final() -> None:
    lost = summary.category_evidence({"final": True}, {"j-1": {**SEAL, "partial": "pod log unreadable"}}, [])
    assert (lost["state"], lost["partial"]) == ("partial", ["j-1: pod log unreadable"])
    running = summary.category_evidence({"rows": 24}, {"j-1": SEAL}, [])
    assert running["state"] == "partial" and running["partial"][-1].startswith("not final")


def test_missing_when_nothing_is_sealed_and_zero_rows_is_final() -> None:
    assert summary.category_evidence(None, {}, [])["state"] == "missing"
    zero = summary.category_evidence({"rows": 0, "final": True}, {"j-1": {**SEAL, "rows": 0, "shards": 0}}, [])
    assert (zero["state"], zero["rows"]) == ("final", 0)
