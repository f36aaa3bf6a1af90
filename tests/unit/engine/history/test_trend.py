"""Trends (history/trend.py): each category's figures over the certifications, oldest first, from any version."""
from __future__ import annotations

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.history.trend import trend
from tests.unit.engine.history.reports import NCCL, TRAINING, nccl, report, stored, training


def test_points_run_oldest_first_with_the_mean_over_groups():
    previous = [report("cert-2", nccl({"group-0": 390.0, "group-1": 370.0}), created="2026-11-15T00:00:00Z"),
                report("cert-1", nccl({"group-0": 400.0, "group-1": 410.0}), created="2026-11-01T00:00:00Z")]
    current = report("cert-3", nccl({"group-0": 300.0}), training({"group-0": (0.8, 500.0, 4.0)}),
                     created="2026-12-01T00:00:00Z")
    lines = trend(current, previous)
    assert [(line["category"], line["figure"]) for line in lines] == [
        (NCCL, "groupBusBW"), (TRAINING, "goodput"), (TRAINING, "tflops"), (TRAINING, "stepTime")]
    assert lines[0]["points"] == [{"certification": "cert-1", "created": "2026-11-01T00:00:00Z", "value": 405.0},
                                  {"certification": "cert-2", "created": "2026-11-15T00:00:00Z", "value": 380.0},
                                  {"certification": "cert-3", "created": "2026-12-01T00:00:00Z", "value": 300.0}]
    assert lines[3]["points"] == [{"certification": "cert-3", "created": "2026-12-01T00:00:00Z", "value": 4.0}]


def test_reports_of_older_versions_give_points_where_they_measured():
    # passed.json measured no bandwidth figure and has no created; measured.json has groupBusBW and training.
    lines = trend(report("cert-new", nccl({"group-0": 800.0})), [stored("measured"), stored("passed")])
    bus = next(line for line in lines if line["figure"] == "groupBusBW")
    assert bus["points"] == [{"certification": "cert-m", "created": "", "value": pytest.approx((847.12 + 400.0) / 2)},
                             {"certification": "cert-new", "created": "2026-11-01T10:00:00Z", "value": 800.0}]
    assert [p["certification"] for line in lines if line["figure"] == "goodput" for p in line["points"]] == ["cert-m"]


def test_a_run_without_figures_has_no_trend():
    assert trend({"name": "empty"}, [{"name": "older", "categories": []}]) == []
