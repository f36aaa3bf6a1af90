"""The figures of a report and their keys (history/figures.py), from reports of this and older versions."""
from __future__ import annotations

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.history import figures
from tests.unit.engine.history.reports import GPU_PRODUCT, NCCL, PEAK, nccl, report, stored, training


def names(found: list[dict]) -> list[tuple[str, str, float]]:
    return [(f["figure"], f["group"], f["value"]) for f in found]


def test_an_old_report_without_the_new_fields_gives_its_figures_under_the_gpu_and_no_image():
    found = figures.figures(stored("measured"))
    assert {tuple(f["key"].items()) for f in found} == {
        (("gpuProduct", "gb200"), ("platform", "onprem"), ("category", category), ("nodesPerJob", 2), ("image", ""))
        for category in (NCCL, "training/nemotron5-8b")}
    # busBW@8 is 0.00 in the table: nothing was measured there, so it is no figure.
    assert names(found) == [("groupBusBW", "group-0", 847.12), ("groupBusBW", "group-1", 400.0),
                            ("busBW@1048576", "", 27.24), ("busBW@8589934592", "", 622.62),
                            ("goodput", "group-0", 0.68), ("tflops", "group-0", 581.7), ("stepTime", "group-0", 4.2112)]


def test_a_domains_entry_takes_its_nodes_from_the_category_verdicts():
    goodput = [f for f in figures.figures(stored("measured")) if f["figure"] == "goodput"]
    assert goodput[0]["nodes"] == ["node-0", "node-1"]


def test_a_new_report_keys_by_gpu_product_and_image():
    found = figures.figures(report("a", nccl({"group-0": 400.0}, image="img:2", nodes_per_job=4)))
    assert found[0]["key"] == {"gpuProduct": GPU_PRODUCT, "platform": "onprem", "category": NCCL, "nodesPerJob": 4,
                               "image": "img:2"}
    assert found[0]["nodes"] == ["group-0-n0", "group-0-n1"]


def test_an_empty_gpu_product_falls_back_to_the_gpu():
    assert figures.figures(report("a", nccl({"group-0": 400.0}), gpu_product=""))[0]["key"]["gpuProduct"] == "h100"


@pytest.mark.parametrize("value", [0.0, None, "400", True, float("nan"), -1.0])
def test_a_group_without_a_positive_figure_gives_none(value):
    category = nccl({"group-0": 400.0, "group-1": 1.0}, bandwidth={})
    category["groupBandwidth"][1].update(busBW=value, failed=True)
    assert names(figures.figures(report("a", category))) == [("groupBusBW", "group-0", 400.0)]


def test_domain_figures_are_per_group():
    found = figures.figures(report("a", training({"group-0": (0.9, 500.0, 2.0), "group-1": (0.8, 450.0, 2.5)})))
    assert names(found) == [("goodput", "group-0", 0.9), ("tflops", "group-0", 500.0), ("stepTime", "group-0", 2.0),
                            ("goodput", "group-1", 0.8), ("tflops", "group-1", 450.0), ("stepTime", "group-1", 2.5)]


def test_a_report_or_category_missing_everything_gives_no_figures():
    assert figures.figures({}) == []
    assert figures.figures({"categories": [{"domain": "communication"}]}) == []


def test_names_and_kinds():
    assert figures.bus_bw_at(PEAK) == "busBW@8589934592"
    assert [figures.is_figure(name) for name in ("groupBusBW", "busBW@8", "goodput", "tflops", "stepTime")] == [True] * 5
    assert [figures.is_figure(name) for name in ("busBW", "busBW@", "busBW@8x", "algBW@8", "goodPut")] == [False] * 5
    assert figures.kind("stepTime") == figures.LOWER
    assert {figures.kind(name) for name in ("groupBusBW", "busBW@8", "goodput", "tflops")} == {figures.HIGHER}


def test_the_key_of_a_category_without_nodes_per_job_or_image():
    assert figures.key({"gpu": "b200"}, {"domain": "d", "variant": "v"}) == {
        "gpuProduct": "b200", "platform": "", "category": "d/v", "nodesPerJob": 0, "image": ""}
