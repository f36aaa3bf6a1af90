"""A run against a baseline (history/compare.py): verdicts per group, misses, refusals of unlike runs, rules."""
from __future__ import annotations

import copy

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.history import baseline, rules
from ansible_collections.cre.certification.plugins.module_utils.engine.history.compare import compare
from tests.unit.engine.history.reports import IMAGE, NCCL, PEAK, TRAINING, nccl, report, stored, training

AGAINST = {"kind": "certification", "name": "cert-a", "created": "2026-11-01T10:00:00Z", "source": "cert-a-report"}
FIRST = report("cert-a", nccl({"group-0": 400.0, "group-1": 400.0}), training({"group-0": (0.8, 500.0, 4.0)}))
REFERENCE = baseline.generate([("cert-a-report", FIRST)], "cert-a", "2026-11-01T10:00:00Z")


def slowed(bw: float = 360.0, step: float = 4.0, **nccl_args) -> dict:
    """The second certification: group-1 at `bw`, the training step at `step`."""
    return report("cert-b", nccl({"group-0": 400.0, "group-1": bw}, **nccl_args), training({"group-0": (0.8, 500.0, step)}))


def rows(result: dict) -> list[tuple]:
    return [(r["category"], r["group"], r["figure"], r["verdict"]) for r in result["figures"]]


def test_the_same_run_is_ok_everywhere():
    result = compare(FIRST, REFERENCE, AGAINST, {}, False)
    assert {r["verdict"] for r in result["figures"]} == {"ok"}
    assert result["regressions"] == [] and result["regressedNodes"] == [] and result["refused"] == []
    assert result["summary"] == {"compared": 6, "regressed": 0, "missing": 0, "refused": 0}


def test_a_slowed_group_is_a_regression_with_figure_baseline_variance_and_rule():
    result = compare(slowed(), REFERENCE, AGAINST, {}, True)
    assert result["against"] == AGAINST and result["enforced"] is True
    [regression] = result["regressions"]
    assert regression == {"category": NCCL, "group": "group-1", "nodes": ["group-1-n0", "group-1-n1"],
                          "figure": "groupBusBW", "value": 360.0, "baseline": 400.0, "variance": pytest.approx(-0.1),
                          "rule": "variance >= -0.05", "verdict": "regressed"}
    assert result["regressedNodes"] == [
        {"name": node, "category": NCCL, "group": "group-1", "figures": ["groupBusBW"],
         "message": "groupBusBW 360.00 is 10.0% below baseline 400.00 (rule variance >= -0.05)"}
        for node in ("group-1-n0", "group-1-n1")]
    # The combined table's peak fell by 5%, exactly at the rule's edge: still ok.
    assert [(r["figure"], r["verdict"]) for r in result["figures"] if r["group"] == ""] == [(f"busBW@{PEAK}", "ok")]
    assert result["summary"] == {"compared": 6, "regressed": 1, "missing": 0, "refused": 0}


def test_a_longer_step_time_regresses_because_lower_is_better():
    result = compare(slowed(bw=400.0, step=4.4), REFERENCE, AGAINST, {}, False)
    assert [(r["figure"], r["variance"]) for r in result["regressions"]] == [("stepTime", pytest.approx(0.1))]
    assert result["regressedNodes"][0]["message"] == "stepTime 4.40 is 10.0% above baseline 4.00 (rule variance <= 0.05)"
    # Faster steps are no regression.
    assert compare(slowed(bw=400.0, step=3.0), REFERENCE, AGAINST, {}, False)["regressions"] == []


def test_a_node_that_regressed_on_several_figures_is_named_once_with_each_figure():
    second = report("cert-b", training({"group-0": (0.6, 400.0, 4.0)}))
    [node, _other] = compare(second, REFERENCE, AGAINST, {}, False)["regressedNodes"]
    assert node["name"] == "group-0-n0" and node["figures"] == ["goodput", "tflops"]
    assert node["message"] == ("goodput 0.6000 is 25.0% below baseline 0.8000 (rule variance >= -0.05); "
                               "tflops 400.00 is 20.0% below baseline 500.00 (rule variance >= -0.05)")


def test_a_figure_the_baseline_has_but_the_run_lacks_is_a_miss():
    result = compare(slowed(bw=400.0, bandwidth={}), REFERENCE, AGAINST, {}, False)
    missing = {"category": NCCL, "group": "", "nodes": [], "figure": f"busBW@{PEAK}", "value": None,
               "baseline": 400.0, "variance": None, "rule": rules.PER_SIZE_DEFAULT, "verdict": "missing"}
    assert missing in result["figures"] and result["regressions"] == [missing]
    assert result["summary"] == {"compared": 5, "regressed": 0, "missing": 1, "refused": 0}


def test_a_group_that_lost_its_figure_leaves_a_miss_when_no_group_has_it():
    run = slowed()
    for entry in run["categories"][0]["groupBandwidth"]:
        entry.update(busBW=0.0, failed=True)
    result = compare(run, REFERENCE, AGAINST, {}, False)
    assert [(r["figure"], r["verdict"]) for r in result["regressions"]] == [("groupBusBW", "missing")]
    assert result["regressedNodes"] == []


def test_an_image_change_refuses_the_category_with_one_line_per_figure():
    result = compare(slowed(image="nvcr.io/nvidia/pytorch:25.03-py3"), REFERENCE, AGAINST, {}, False)
    assert result["refused"] == [
        {"category": NCCL, "figure": figure, "key": "image", "run": "nvcr.io/nvidia/pytorch:25.03-py3",
         "baseline": IMAGE, "message": f"{NCCL} {figure}: not compared: image differs "
                                       f"(run nvcr.io/nvidia/pytorch:25.03-py3, baseline {IMAGE})"}
        for figure in (f"busBW@{PEAK}", "groupBusBW")]
    assert {r["category"] for r in result["figures"]} == {TRAINING}
    assert result["summary"]["refused"] == 2 and result["regressions"] == []


@pytest.mark.parametrize("change, field", [
    ({"gpuProduct": "NVIDIA-B200", "image": "other"}, "gpuProduct"),  # the first differing key is named
    ({"platform": "eks", "nodesPerJob": 4}, "platform"),
    ({"nodesPerJob": 4, "image": "other"}, "nodesPerJob"),
])
def test_the_refusal_names_the_first_differing_key(change, field):
    run = copy.deepcopy(FIRST)
    run.update({k: v for k, v in change.items() if k in ("gpuProduct", "platform")})
    for category in run["categories"]:
        category.update({k: v for k, v in change.items() if k in ("nodesPerJob", "image")})
    refused = compare(run, REFERENCE, AGAINST, {}, False)["refused"]
    assert {line["key"] for line in refused} == {field} and len(refused) == 5
    assert all(f": not compared: {field} differs (run {change[field]}, " in line["message"] for line in refused)


def test_the_refusal_takes_the_closest_entry_of_the_category():
    reference = baseline.generate([("x", report("x", nccl({"group-0": 400.0}, nodes_per_job=4))),
                                   ("y", report("y", nccl({"group-0": 400.0}, image="older")))], "b", "")
    refused = compare(slowed(), reference, AGAINST, {}, False)["refused"]
    # nodesPerJob (4th) differs from x, only image (5th) from y: y is the closer.
    assert {(line["figure"], line["key"], line["baseline"]) for line in refused} == {
        ("groupBusBW", "image", "older"), (f"busBW@{PEAK}", "image", "older")}


def test_an_old_report_without_an_image_is_refused_against_a_baseline_with_one():
    result = compare(stored("measured"), REFERENCE, AGAINST, {}, False)
    assert result["figures"] == []
    # The old report's key has the gpu (gb200), not the product: that is the first difference.
    assert result["refused"][0]["message"] == (f"{NCCL} busBW@{PEAK}: not compared: gpuProduct differs "
                                               "(run gb200, baseline NVIDIA-H100-80GB-HBM3)")
    old = baseline.generate([("old", stored("measured"))], "old", "")
    new = stored("measured")
    new["categories"][0]["image"] = IMAGE
    assert compare(new, old, AGAINST, {}, False)["refused"][0]["message"].endswith(
        f"image differs (run {IMAGE}, baseline none)")


def test_a_category_the_baseline_lacks_is_neither_compared_nor_refused():
    result = compare(report("cert-b", training({"group-0": (0.8, 500.0, 4.0)})),
                     baseline.generate([("a", report("a", nccl({"group-0": 400.0})))], "b", ""), AGAINST, {}, False)
    assert result["figures"] == [] and result["refused"] == []
    assert result["summary"] == {"compared": 0, "regressed": 0, "missing": 0, "refused": 0}


def test_user_rules_and_the_busbw_shorthand_are_used_and_listed():
    reference = baseline.generate([("a", report("a", nccl({"group-0": 400.0}, bandwidth={8: 1.0, 1024: 10.0, PEAK: 400.0})))],
                                  "b", "")
    run = report("b", nccl({"group-0": 370.0}, bandwidth={8: 0.8, 1024: 9.0, PEAK: 370.0}))
    result = compare(run, reference, AGAINST, {"busBW": "variance >= -0.15", "groupBusBW": "variance >= -0.1"}, False)
    assert result["rules"] == {"busBW@8": "variance >= -0.15", "busBW@1024": "variance >= -0.15",
                               f"busBW@{PEAK}": "variance >= -0.15", "groupBusBW": "variance >= -0.1"}
    assert [(r["figure"], r["verdict"]) for r in result["regressions"]] == [("busBW@8", "regressed")]


@pytest.mark.parametrize("user, path", [({"groupBusBW": "variance >="}, "rules.groupBusBW"),
                                        ({"bandwidth": "variance >= 0.0"}, "rules.bandwidth")])
def test_bad_rules_are_refused_before_anything_is_compared(user, path):
    with pytest.raises(InputError) as err:
        compare(FIRST, REFERENCE, AGAINST, user, False)
    assert err.value.path == path


def test_output_is_sorted_naturally_and_the_same_for_the_same_input():
    groups = {f"group-{i}": 400.0 for i in (10, 2, 1)}
    reference = baseline.generate([("a", report("a", nccl(groups)))], "b", "")
    run = report("b", nccl({name: 300.0 for name in groups}))
    result = compare(run, reference, AGAINST, {}, False)
    assert [r["group"] for r in result["figures"]] == ["", "group-1", "group-2", "group-10"]
    assert [n["name"] for n in result["regressedNodes"]][:3] == ["group-1-n0", "group-1-n1", "group-2-n0"]
    assert compare(copy.deepcopy(run), copy.deepcopy(reference), AGAINST, {}, False) == result
    assert rows(result)[0] == (NCCL, "", f"busBW@{PEAK}", "regressed")
