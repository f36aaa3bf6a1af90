"""Certification build (surroundings.md §3.2–§3.3), table-driven from data/certification/*.yaml."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError, WorkflowFailure
from ansible_collections.cre.certification.plugins.module_utils.engine.catalog import entries
from ansible_collections.cre.certification.plugins.module_utils.engine.models import parse_workflow
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import category_build
from tests.unit.engine.helpers import at

DATA = Path(__file__).parents[1] / "data" / "certification"
CATEGORIES = [{"domain": "communication", "variant": "nccl-all-reduce"},
              {"domain": "training", "variant": "nemotron5-8b"}]


def load(name: str) -> list[dict]:
    return yaml.safe_load((DATA / name).read_text())


@pytest.mark.parametrize("case", load("names.yaml"), ids=lambda c: c["expect"])
def test_workflow_name(case):
    name = category_build.workflow_name(case["certification"], case["category"])
    assert name == case["expect"]
    assert len(name) <= 31


@pytest.mark.parametrize("case", load("options.yaml"), ids=lambda c: c["name"])
def test_resolve_options(case):
    assert category_build.resolve_options(case["spec"], case["category"]) == case["expect"]


@pytest.mark.parametrize("case", load("gang.yaml"), ids=str)
def test_resolved_gang_scheduler(case):
    assert category_build.resolved_gang_scheduler(case["spec"]) == case["expect"]


LABELS = load("labels.yaml")


def labels_spec(case: dict) -> dict:
    """A jobTemplate with the catalog's workload labels of `case`, if any."""
    spec: dict = {"jobTemplate": {"spec": {}}}
    if case.get("catalog"):
        spec["jobTemplate"]["spec"]["workloadMetadata"] = {"labels": case["catalog"]}
    return spec


@pytest.mark.parametrize("case", [c for c in LABELS if "error" not in c], ids=lambda c: c["name"])
def test_workload_labels(case):
    spec = labels_spec(case)
    category_build.apply_workload_labels(spec, case.get("user"), case.get("gang"))
    assert at(spec, "jobTemplate.spec.workloadMetadata.labels") == case["expect"]


@pytest.mark.parametrize("case", [c for c in LABELS if "error" in c], ids=lambda c: c["name"])
def test_bad_workload_labels_are_refused(case):
    with pytest.raises(InputError) as err:
        category_build.apply_workload_labels(labels_spec(case), case.get("user"), case.get("gang"))
    assert str(err.value) == case["error"]


def test_unknown_category_fails_the_certification():
    spec = {"categories": [CATEGORIES[0], {"domain": "training", "variant": "nemotron4-15b"}]}
    with pytest.raises(WorkflowFailure) as err:
        category_build.check_categories(spec)
    assert (err.value.reason, err.value.message) == ("CategoryNotFound",
                                                     "Unknown certification category: training/nemotron4-15b")
    category_build.check_categories({"categories": CATEGORIES})  # known ones pass


BUILDS = load("builds.yaml")


def build(case: dict, monkeypatch: pytest.MonkeyPatch) -> dict:
    """The Workflow `case` builds (its `extraOverride` appended to the catalog entry's overrides)."""
    if "extraOverride" in case:
        build_spec = entries.build_spec
        monkeypatch.setattr(entries, "build_spec", lambda *a: {
            **build_spec(*a), "overrides": build_spec(*a).get("overrides", []) + [copy.deepcopy(case["extraOverride"])]})
    cert = case["certification"]
    return category_build.build_workflow(
        cert, cert["spec"]["categories"][case["category"]], platform=case["platform"],
        gpu_architecture=case["gpuArchitecture"], available_nodes=case["availableNodes"])


@pytest.mark.parametrize("case", [c for c in BUILDS if "error" in c], ids=lambda c: c["name"])
def test_build_workflow_refuses(case, monkeypatch):
    with pytest.raises(InputError) as err:
        build(case, monkeypatch)
    assert str(err.value) == case["error"]


@pytest.mark.parametrize("case", [c for c in BUILDS if "error" not in c], ids=lambda c: c["name"])
def test_build_workflow(case, monkeypatch):
    workflow = build(case, monkeypatch)
    parse_workflow(workflow)
    for path, expected in case["expect"].items():
        assert at(workflow, path) == expected, path
