"""Repeat offenders (history/offenders.py): k failures in the last n certifications, the current one included."""
from __future__ import annotations

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.history.offenders import repeat_offenders
from tests.unit.engine.history.reports import report, stored


def run(name: str, *failed: str) -> dict:
    return report(name, failed=failed)


def test_a_node_failed_in_two_of_three_is_named_even_when_it_passes_now():
    current = run("cert-3", "node-1")
    previous = [run("cert-2", "node-3"), run("cert-1", "node-3", "node-1")]
    assert repeat_offenders(current, previous) == [
        {"name": "node-1", "failed": 2, "of": 3, "certifications": ["cert-3", "cert-1"], "reasons": ["ThresholdViolation"]},
        {"name": "node-3", "failed": 2, "of": 3, "certifications": ["cert-2", "cert-1"], "reasons": ["ThresholdViolation"]}]


def test_the_current_run_counts_and_older_runs_beyond_n_do_not():
    current = run("cert-4", "node-5")
    previous = [run("cert-3"), run("cert-2"), run("cert-1", "node-5")]
    assert repeat_offenders(current, previous) == []
    assert [(o["name"], o["failed"], o["of"]) for o in repeat_offenders(current, previous, n=4)] == [("node-5", 2, 4)]
    assert [o["name"] for o in repeat_offenders(current, previous, k=1, n=1)] == ["node-5"]


def test_a_failed_node_result_without_a_record_counts_and_reasons_are_merged():
    current = run("cert-2")
    current["nodeResults"] = [{"name": "node-2", "status": "Failed"}, {"name": "node-4", "status": "Passed"}]
    previous = run("cert-1", "node-2")
    previous["failedNodes"].append({"name": "node-2", "reason": "HardwareFailureDetected", "message": "xid"})
    assert repeat_offenders(current, [previous]) == [
        {"name": "node-2", "failed": 2, "of": 2, "certifications": ["cert-2", "cert-1"],
         "reasons": ["HardwareFailureDetected", "ThresholdViolation"]}]


def test_most_failures_first_then_natural_names():
    reports = [run("c3", "node-10", "node-2", "node-9"), run("c2", "node-10", "node-2"), run("c1", "node-9", "node-2")]
    assert [(o["name"], o["failed"]) for o in repeat_offenders(reports[0], reports[1:])] == [
        ("node-2", 3), ("node-9", 2), ("node-10", 2)]


def test_old_reports_and_reports_lacking_the_lists_still_count():
    # measured.json: node-2 and node-3 failed (records and Failed results, counted once each).
    found = repeat_offenders(stored("measured"), [{"name": "cert-old"}, stored("measured")])
    assert [(o["name"], o["failed"], o["of"], o["certifications"]) for o in found] == [
        ("node-2", 2, 3, ["cert-m", "cert-m"]), ("node-3", 2, 3, ["cert-m", "cert-m"])]


def test_fewer_certifications_than_k_name_nobody():
    assert repeat_offenders(run("only", "node-1"), []) == []


@pytest.mark.parametrize("k, n", [(0, 3), (4, 3)])
def test_k_must_lie_between_one_and_n(k, n):
    with pytest.raises(InputError) as err:
        repeat_offenders(run("c"), [], k=k, n=n)
    assert err.value.path == "repeat_offenders" and f"k={k}, n={n}" in err.value.rule
