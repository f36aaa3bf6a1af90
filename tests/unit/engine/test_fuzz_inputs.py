"""Property-based fuzzing of what users hand the engine: a Workflow to render, and a Certification's inputs to
validate and plan. Whatever the mutation, only InputError (bad input, with its field path) or WorkflowFailure
(NVCRE's own failure reasons) may come out; any other exception is a traceback a user would meet."""
from __future__ import annotations

import copy
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError, WorkflowFailure
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import mocknodes, render
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import certification_tier as tier

BASE_WORKFLOW = yaml.safe_load((Path(__file__).parent / "data" / "render" / "_workflow.yaml").read_text())
NODES = mocknodes.mock_nodes("aws", "h100", 4)
BASE_CERTIFICATION = {
    "name": "fuzz", "namespace": "default", "labels": {"team": "a"}, "gang_scheduler": None,
    "target": {"nodeSelector": {"pool": "h100"}, "taintSelectors": [{"key": "gpu", "effect": "NoSchedule"}]},
    "options": {"nodesPerJob": 2, "thresholds": {"busBandwidthGBps": "value >= 300"}, "timeoutPerJob": "30m"},
    "categories": ["communication/nccl-all-reduce",
                   {"domain": "training", "variant": "nemotron5-8b", "options": {"maxSteps": 10}}],
}
# Deterministic (CI must not flake) and nothing written into the checkout.
FUZZ = settings(max_examples=250, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow])

scalars = (st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False)
           | st.text(max_size=12) | st.sampled_from(["", "-1", "1Gi", "value >= 1", "h100", "Pinned", "0"]))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
    st.text(max_size=8), inner, max_size=3), max_leaves=8)


def paths(doc: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path into `doc` (dict keys and list indexes), the root included."""
    found = [prefix]
    if isinstance(doc, dict):
        for key, value in doc.items():
            found += paths(value, (*prefix, key))
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            found += paths(value, (*prefix, index))
    return found


@st.composite
def mutated(draw: st.DrawFn, base: dict[str, Any], min_depth: int) -> Any:
    """`base` with one to three of its values replaced, removed, or given an extra key."""
    doc = copy.deepcopy(base)
    for _change in range(draw(st.integers(1, 3))):
        candidates = [p for p in paths(doc) if len(p) >= min_depth]
        if not candidates:
            break
        path = draw(st.sampled_from(candidates))
        action = draw(st.sampled_from(["replace", "remove", "extra"]))
        if not path:
            doc = draw(values)
            continue
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        if action == "remove" and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == "extra" and isinstance(parent[path[-1]], dict):
            parent[path[-1]][draw(st.text(min_size=1, max_size=8))] = draw(values)
        else:
            parent[path[-1]] = draw(values)
    return doc


@FUZZ
@given(mutated(BASE_WORKFLOW, 0))
def test_rendering_any_workflow_fails_only_cleanly(workflow: Any) -> None:
    try:
        render.render(workflow, NODES)
    except (InputError, WorkflowFailure):
        pass


@FUZZ
@given(mutated(BASE_CERTIFICATION, 2))  # the top-level types are the module's argument spec's to check
def test_planning_any_certification_fails_only_cleanly(args: dict[str, Any]) -> None:
    try:
        cert = tier.desired_certification(args)
        tier.plan(tier.CertificationWorld(cert, nodes=NODES, now=datetime(2026, 1, 1, tzinfo=UTC)))
    except (InputError, WorkflowFailure):
        pass


def test_what_the_fuzzing_found_is_refused_with_its_path() -> None:
    """Schemaless parts the engine reads (a dependency's metadata, a runtime patch's pod spec) are checked as the
    API server checks embedded resources and the Trainer API types, with the field path."""
    labels = copy.deepcopy(BASE_WORKFLOW)
    labels["spec"]["dependencies"][0]["metadata"]["labels"] = ["x"]
    patched = copy.deepcopy(BASE_WORKFLOW)
    pod = {"spec": {"template": {"spec": {"tolerations": {}}}}}
    patched["spec"]["jobTemplate"]["spec"]["workload"]["trainJob"]["runtimePatches"] = [
        {"trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [{"name": "node", "template": pod}]}}}}]
    messages = []
    for workflow in (labels, patched):
        try:
            render.render(workflow, NODES)
        except InputError as exc:
            messages.append(str(exc))
    assert messages == [
        "spec.dependencies[0]: metadata.labels must map strings to strings",
        "spec.jobTemplate.spec.workload.trainJob.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0]"
        ".template.spec.template.spec.tolerations: must be a list"]
