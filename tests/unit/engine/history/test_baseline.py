"""Baselines (history/baseline.py): generated from reports with the iterative trim, loaded and dumped with checks."""
from __future__ import annotations

import copy
import json
from statistics import pstdev

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.history import baseline
from tests.unit.engine.history.reports import GPU_PRODUCT, IMAGE, NCCL, PEAK, TRAINING, nccl, report, stored, training

CREATED = "2026-12-01T00:00:00Z"


def fleet(values: list[float]) -> list[tuple[str, dict]]:
    """One report per value, each cluster's single group measuring it."""
    return [(f"cre-reports/c{i}/report.json", report(f"cert-c{i}", nccl({"group-0": value}), created=f"2026-11-0{i + 1}"))
            for i, value in enumerate(values)]


def group_figure(generated: dict) -> dict:
    return generated["entries"][0]["figures"]["groupBusBW"]


def test_an_outlier_over_several_reports_is_trimmed_and_the_spread_kept():
    generated = baseline.generate(fleet([400.0, 402.0, 398.0, 401.0, 300.0]), "h100-fleet", CREATED)
    figure = group_figure(generated)
    assert figure["value"] == 400.25 and figure["samples"] == 4 and figure["trimmed"] == 1
    assert figure["spread"] == {"min": 398.0, "max": 402.0, "stddev": round(pstdev([400.0, 402.0, 398.0, 401.0]), 6)}
    # Only the reports that contributed a kept sample are sources.
    assert [source["certification"] for source in figure["sources"]] == ["cert-c0", "cert-c1", "cert-c2", "cert-c3"]
    assert figure["sources"][0] == {"report": "cre-reports/c0/report.json", "certification": "cert-c0",
                                    "created": "2026-11-01"}


def test_the_trim_repeats_until_nothing_is_dropped():
    # Mean 93.8 drops 50; the new mean 98.7 then drops 88 (-10.8%); the mean of the rest, 100, drops nothing.
    figure = group_figure(baseline.generate(fleet([100.0] * 8 + [88.0, 50.0]), "b", CREATED))
    assert (figure["value"], figure["samples"], figure["trimmed"]) == (100.0, 8, 2)
    assert baseline.trim([100.0] * 8 + [88.0, 50.0]) == list(range(8))


def test_the_trim_never_drops_every_sample():
    # Both are 50% from their mean of 200: a pass that would drop all drops none.
    figure = group_figure(baseline.generate(fleet([100.0, 300.0]), "b", CREATED))
    assert (figure["value"], figure["samples"], figure["trimmed"]) == (200.0, 2, 0)
    assert figure["spread"] == {"min": 100.0, "max": 300.0, "stddev": 100.0}


def test_a_trim_rule_of_the_users_own():
    figure = group_figure(baseline.generate(fleet([400.0, 402.0, 398.0, 401.0, 300.0]), "b", CREATED,
                                            trim_rule="variance >= -0.5"))
    assert (figure["samples"], figure["trimmed"]) == (5, 0)


def test_a_bad_trim_rule_is_refused_at_its_path():
    with pytest.raises(InputError) as err:
        baseline.generate(fleet([400.0]), "b", CREATED, trim_rule="variance >=")
    assert err.value.path == "trim_rule" and err.value.rule.startswith("compile CEL expression:")


def test_every_group_of_a_report_is_a_sample_and_unlike_keys_are_separate_entries():
    reports = [("a", report("cert-a", nccl({"group-0": 400.0, "group-1": 410.0}), training({"group-0": (0.9, 500.0, 2.0)}))),
               ("b", report("cert-b", nccl({"group-0": 390.0}, image="other:1")))]
    generated = baseline.generate(reports, "b", CREATED)
    assert generated["apiVersion"] == "cre.certification/v1" and generated["kind"] == "Baseline"
    assert generated["metadata"] == {"name": "b", "created": CREATED}
    assert [(e["key"]["category"], e["key"]["image"]) for e in generated["entries"]] == [
        (NCCL, IMAGE), (NCCL, "other:1"), (TRAINING, IMAGE)]
    first = generated["entries"][0]
    assert first["key"] == {"gpuProduct": GPU_PRODUCT, "platform": "onprem", "category": NCCL, "nodesPerJob": 2,
                            "image": IMAGE}
    assert list(first["figures"]) == [f"busBW@{PEAK}", "groupBusBW"]
    assert (first["figures"]["groupBusBW"]["value"], first["figures"]["groupBusBW"]["samples"]) == (405.0, 2)
    assert list(generated["entries"][2]["figures"]) == ["goodput", "stepTime", "tflops"]


def test_an_old_report_generates_under_its_gpu_and_no_image():
    generated = baseline.generate([("old", stored("measured"))], "old", CREATED)
    assert {(e["key"]["gpuProduct"], e["key"]["image"]) for e in generated["entries"]} == {("gb200", "")}
    assert group_figure(generated)["sources"] == [{"report": "old", "certification": "cert-m", "created": ""}]


def test_dump_and_load_round_trip_in_a_stable_order():
    generated = baseline.generate(fleet([400.0, 402.0, 300.0]), "b", CREATED)
    text = baseline.dump(generated)
    assert baseline.load(text, "b.yaml") == generated
    assert baseline.dump(baseline.load(text, "b.yaml")) == text
    assert text.startswith("apiVersion: cre.certification/v1\nkind: Baseline\nmetadata:\n  name: b\n")
    assert baseline.load(json.dumps(generated), "b.json") == generated


def test_a_hand_written_figure_needs_only_its_value():
    loaded = baseline.load(yaml.safe_dump(hand_written()), "b.yaml")
    assert loaded["entries"][0]["figures"]["groupBusBW"] == {
        "value": 400.0, "samples": 1, "spread": {"min": 400.0, "max": 400.0, "stddev": 0.0}, "trimmed": 0, "sources": []}
    assert loaded["metadata"] == {"name": "hand", "created": ""}


def hand_written() -> dict:
    return {"apiVersion": "cre.certification/v1", "kind": "Baseline", "metadata": {"name": "hand"},
            "entries": [{"key": {"gpuProduct": GPU_PRODUCT, "platform": "onprem", "category": NCCL, "nodesPerJob": 2,
                                 "image": IMAGE},
                         "figures": {"groupBusBW": {"value": 400}}}]}


def changed(path: str, value: object) -> dict:
    """hand_written() with the field at a dotted path (list indexes as numbers) set, or removed for `...`."""
    document = copy.deepcopy(hand_written())
    *parents, last = path.split(".")
    parent = document
    for part in parents:
        parent = parent[int(part)] if part.isdigit() else parent[part]
    if value is ...:
        del parent[last]
    else:
        parent[last] = value
    return document


G = "entries.0.figures.groupBusBW"


@pytest.mark.parametrize("path, value, field, rule", [
    (f"{G}.value", "fast", "entries[0].figures.groupBusBW.value", "must be a number, got string"),
    (f"{G}.value", ..., "entries[0].figures.groupBusBW.value", "missing value"),
    (f"{G}.value", 0, "entries[0].figures.groupBusBW.value", "must be greater than 0, got 0"),
    (f"{G}.value", True, "entries[0].figures.groupBusBW.value", "must be a number, got bool"),
    (f"{G}.samples", 0, "entries[0].figures.groupBusBW.samples", "must be at least 1, got 0"),
    (f"{G}.trimmed", 1.5, "entries[0].figures.groupBusBW.trimmed", "must be an integer, got number"),
    (f"{G}.spread", {"min": 1.0, "max": 2.0}, "entries[0].figures.groupBusBW.spread.stddev", "missing value"),
    (f"{G}.sources", ["a"], "entries[0].figures.groupBusBW.sources[0]", "must be a mapping, got string"),
    (f"{G}.valeu", 1.0, "entries[0].figures.groupBusBW.valeu",
     "unknown field; known: value, samples, spread, trimmed, sources"),
    ("entries.0.figures.busBandwidth", {"value": 1.0}, "entries[0].figures.busBandwidth",
     "unknown figure; known: groupBusBW, busBW@<sizeBytes>, goodput, tflops, stepTime"),
    ("entries.0.figures", {}, "entries[0].figures", "must name at least one figure"),
    ("entries.0.key.nodesPerJob", "2", "entries[0].key.nodesPerJob", "must be an integer, got string"),
    ("entries.0.key.nodesPerJob", 0, "entries[0].key.nodesPerJob", "must be at least 1, got 0"),
    ("entries.0.key.image", ..., "entries[0].key.image", "missing value"),
    ("entries.0.key.gpu", "h100", "entries[0].key.gpu",
     "unknown field; known: gpuProduct, platform, category, nodesPerJob, image"),
    ("entries", {"a": 1}, "entries", "must be a list, got mapping"),
    ("entries", [3], "entries[0]", "must be a mapping, got integer"),
    ("apiVersion", "cre.certification/v2", "apiVersion",
     "unknown apiVersion 'cre.certification/v2'; this collection reads cre.certification/v1"),
    ("apiVersion", ..., "apiVersion", "missing value"),
    ("kind", "Report", "kind", "must be Baseline, got 'Report'"),
    ("metadata.name", ..., "metadata.name", "missing value"),
    ("metadata.name", "", "metadata.name", "must not be empty"),
    ("spec", {}, "spec", "unknown field; known: apiVersion, kind, metadata, entries"),
])
def test_load_refuses_a_bad_field_with_its_path(path, value, field, rule):
    with pytest.raises(InputError) as err:
        baseline.load(yaml.safe_dump(changed(path, value)), "baseline.yaml")
    assert (err.value.path, err.value.rule) == (field, f"{rule} (in baseline.yaml)")


def test_load_refuses_a_second_entry_with_the_same_key():
    document = hand_written()
    document["entries"].append(copy.deepcopy(document["entries"][0]))
    with pytest.raises(InputError) as err:
        baseline.load(json.dumps(document), "b.json")
    assert (err.value.path, err.value.rule) == ("entries[1].key", "the same key as entries[0] (in b.json)")


@pytest.mark.parametrize("text, rule", [
    ("", "must be a mapping, got nothing (in b.yaml)"),
    ("- 1\n", "must be a mapping, got list (in b.yaml)"),
    ("apiVersion: [\n", "invalid YAML in b.yaml at line 2, column 1: expected the node content, but found '<stream end>'"),
])
def test_load_refuses_what_is_no_baseline_document(text, rule):
    with pytest.raises(InputError) as err:
        baseline.load(text, "b.yaml")
    assert (err.value.path, err.value.rule) == ("", rule)


def test_dump_refuses_what_load_would_refuse():
    with pytest.raises(InputError) as err:
        baseline.dump(baseline.generate(fleet([400.0]), "", CREATED))
    assert err.value.path == "metadata.name"
