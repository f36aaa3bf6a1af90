"""Overrides (workflow.md §3), table-driven from data/overrides/*.yaml."""
from __future__ import annotations

import copy
from pathlib import Path

import jsonpatch
import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError, WorkflowFailure
from ansible_collections.cre.certification.plugins.module_utils.engine.spec import overrides

DATA = Path(__file__).parents[1] / "data" / "overrides"
BASE = yaml.safe_load((DATA / "_base.yaml").read_text())


def load(name: str) -> list[dict]:
    return yaml.safe_load((DATA / name).read_text())


def context(ctx: dict) -> overrides.OverrideContext:
    return overrides.OverrideContext(
        platform=ctx.get("platform", ""),
        gpu_architecture=ctx.get("gpuArchitecture", ""),
        workload_kind=ctx.get("workloadKind", ""),
        topology_mode=ctx.get("topologyMode", "simple"),
        domain_count=ctx.get("domainCount", 0),
        config=ctx.get("config"),
    )


MATCH = load("match.yaml")


def matches(case: dict) -> bool:
    return overrides.matches_when(case["when"], context(case["ctx"]), "spec.overrides[0].when")


@pytest.mark.parametrize("case", [c for c in MATCH if "error" not in c], ids=lambda c: c["id"])
def test_matches_when(case):
    assert matches(case) is case["matches"]


@pytest.mark.parametrize("case", [c for c in MATCH if "error" in c], ids=lambda c: c["id"])
def test_matches_when_refuses(case):
    with pytest.raises(InputError) as err:
        matches(case)
    assert str(err.value) == case["error"]


APPLY = load("apply.yaml")


@pytest.mark.parametrize("case", [c for c in APPLY if "failure" not in c], ids=lambda c: c["id"])
def test_apply_overrides(case):
    spec = {**copy.deepcopy(BASE), "overrides": case["overrides"]}
    stored = copy.deepcopy(spec)
    result = overrides.apply_overrides(spec, context(case["ctx"]))
    assert result.spec == jsonpatch.apply_patch(stored, case["diff"])
    assert result.applied_overrides() == case["applied"]
    assert spec == stored  # the input spec is never mutated


@pytest.mark.parametrize("case", [c for c in APPLY if "failure" in c], ids=lambda c: c["id"])
def test_apply_overrides_fails(case):
    spec = {**copy.deepcopy(BASE), "overrides": case["overrides"]}
    stored = copy.deepcopy(spec)
    with pytest.raises(WorkflowFailure) as err:
        overrides.apply_overrides(spec, context(case["ctx"]))
    assert (err.value.reason, err.value.message) == ("OverrideError", case["failure"])
    assert spec == stored  # the input spec is never mutated


def test_result_shares_nothing_with_input():
    spec = {**copy.deepcopy(BASE), "overrides": [
        {"when": {}, "jobTemplatePatch": [{"op": "add", "path": "/metadata/labels/obj", "value": {"k": "v"}}],
         "dependencies": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "n"}, "data": {"x": "y"}}]},
    ]}
    stored = copy.deepcopy(spec)
    result = overrides.apply_overrides(spec, overrides.OverrideContext())
    result.spec["jobTemplate"]["metadata"]["labels"]["obj"]["k"] = "changed"
    result.spec["dependencies"][-1]["data"]["x"] = "changed"
    result.spec["orchestration"]["target"]["nodeSelector"]["pool"] = "changed"
    assert spec == stored


@pytest.mark.parametrize("case", load("context.yaml"), ids=lambda c: c["id"])
def test_context_for_spec(case):
    nodes = [{"metadata": {"name": f"n{i}", "labels": labels}} for i, labels in enumerate(case.get("nodeLabels", []))]
    ctx = overrides.OverrideContext.for_spec(case["spec"], platform="aws", gpu_architecture="h100",
                                             nodes=nodes if "nodeLabels" in case else None)
    assert ctx.cel_variables() == case["variables"]


def test_events_of_authoritative_pass():
    spec = {**copy.deepcopy(BASE), "overrides": [
        {"when": {"platform": {"equals": "aws"}}, "orchestration": {"iterations": 2}},
        {"when": {"gpuArchitecture": {"equals": "h100"}, "platform": {"equals": "aws"}}},
        {"when": {"platform": {"equals": "gcp"}}},
    ]}
    ctx = overrides.OverrideContext(platform="aws", gpu_architecture="h100")
    events = overrides.override_events(overrides.apply_overrides(spec, ctx), 3, ctx)
    assert events == [
        {"type": "Normal", "reason": "OverrideApplied",
         "message": "Override[0] matched (platform=aws), patching orchestration"},
        {"type": "Warning", "reason": "OverrideNoOp",
         "message": "Override[1] matched (gpuArchitecture=h100, platform=aws) but produced no changes — check field paths"},
    ]
    none = overrides.OverrideContext(platform="oci", gpu_architecture="a100")
    assert overrides.override_events(overrides.apply_overrides(spec, none), 3, none) == [
        {"type": "Normal", "reason": "NoOverridesMatched",
         "message": "0 of 3 overrides matched (platform=oci, gpuArchitecture=a100)"},
    ]
    assert overrides.override_events(overrides.apply_overrides(BASE, none), 0, none) == []


VALIDATE = load("validate.yaml")


@pytest.mark.parametrize("case", [c for c in VALIDATE if "error" not in c], ids=lambda c: c["id"])
def test_validate_overrides_accepts(case):
    assert overrides.validate_overrides({**copy.deepcopy(BASE), "overrides": case["overrides"]}) is None


@pytest.mark.parametrize("case", [c for c in VALIDATE if "error" in c], ids=lambda c: c["id"])
def test_validate_overrides_refuses(case):
    with pytest.raises(InputError) as err:
        overrides.validate_overrides({**copy.deepcopy(BASE), "overrides": case["overrides"]})
    assert str(err.value) == case["error"]
