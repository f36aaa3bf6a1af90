"""Offline render (like `nvcrectl workflow render`), table-driven from data/render/cases.yaml."""
from pathlib import Path

import jsonpatch
import jsonpointer
import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.plan import mocknodes, render

DATA = Path(__file__).parents[1] / "data" / "render"
BASE = yaml.safe_load((DATA / "_workflow.yaml").read_text())
CASES = yaml.safe_load((DATA / "cases.yaml").read_text())
ABSENT = object()


def run(case):
    workflow = jsonpatch.apply_patch(BASE, case.get("patch") or [])
    if "node_list" in case:
        nodes = case["node_list"]
    else:
        spec = case["nodes"]
        nodes = mocknodes.mock_nodes(spec["platform"], spec["gpu_architecture"], spec["count"])
    return workflow, render.render(workflow, nodes)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_render(case):
    workflow, out = run(case)
    expect = case["expect"]
    if "failure" in expect:
        assert out.failure is not None, "expected the Workflow to fail"
        assert out.failure.reason == expect["failure"]["reason"]
        if "message" in expect["failure"]:
            assert out.failure.message == expect["failure"]["message"]
        assert out.plan["jobs"] == [] and out.plan["dependencies"] == []
    else:
        assert out.failure is None, out.failure and out.failure.message
    if "jobs" in expect:
        assert [j["name"] for j in out.plan["jobs"]] == expect["jobs"]
    for key, value in (expect.get("plan") or {}).items():
        assert out.plan[key] == value, key
    doc = {"workflow": out.workflow, "plan": out.plan}
    for pointer, value in (expect.get("paths") or {}).items():
        found = jsonpointer.resolve_pointer(doc, pointer, ABSENT)
        assert (None if found is ABSENT else found) == value, pointer
    assert jsonpatch.apply_patch(BASE, case.get("patch") or []) == workflow  # input untouched


def test_jobs_carry_group_iteration_and_manifest():
    out = run({"nodes": {"platform": "aws", "gpu_architecture": "h100", "count": 4}})[1]
    assert [(j["group"], j["iteration"], j["manifest"]["kind"]) for j in out.plan["jobs"]] == [
        ("group-0", 1, "Job"), ("group-1", 1, "Job")]
