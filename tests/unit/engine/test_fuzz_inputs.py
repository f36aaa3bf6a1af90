"""Property-based fuzzing of what users hand the engine: a Workflow to render, and a Certification's inputs to
validate and plan. Whatever the mutation, only InputError (bad input, with its field path) or WorkflowFailure
(NVCRE's own failure reasons) may come out; any other exception is a traceback a user would meet. A refusal must
point at what was fuzzed: the InputError's path at a fuzzed field (or inside it, or around it), the WorkflowFailure's
reason at a field known to cause it."""
from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from contextlib import contextmanager
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
def mutated(draw: st.DrawFn, base: dict[str, Any], min_depth: int) -> tuple[Any, list[tuple]]:
    """`base` with one to three of its values replaced, removed, or given an extra key, and the path of each change
    (an extra key's path ends with the key; the root's path is empty)."""
    doc = copy.deepcopy(base)
    fuzzed: list[tuple] = []
    for _change in range(draw(st.integers(1, 3))):
        candidates = [p for p in paths(doc) if len(p) >= min_depth]
        if not candidates:
            break
        path = draw(st.sampled_from(candidates))
        action = draw(st.sampled_from(["replace", "remove", "extra"]))
        if not path:
            doc = draw(values)
            fuzzed.append(path)
            continue
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        if action == "remove" and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == "extra" and isinstance(parent[path[-1]], dict):
            key = draw(st.text(min_size=1, max_size=8))
            parent[path[-1]][key] = draw(values)
            path = (*path, key)
        else:
            parent[path[-1]] = draw(values)
        fuzzed.append(path)
    return doc, fuzzed


# One step of an error's field path: `["any key"]`, `[2]`, or `.name` (the first without its dot).
STEP = re.compile(r'\["(.*?)"\](?=$|[.\[])|\[(\d+)\]|\.?([^.\[]+)', re.DOTALL)


def steps(field_path: str) -> tuple:
    """`a.b[2]["c.d"]` as ("a", "b", 2, "c.d"), comparable with the paths `mutated` returns."""
    return tuple(int(index) if index else key or name for key, index, name in STEP.findall(field_path))


def related(one: tuple, other: tuple) -> bool:
    """One path leads to the other: the same field, a field inside it, or the object around it."""
    shorter = min(len(one), len(other))
    return one[:shorter] == other[:shorter]


@contextmanager
def refused_at_fuzzed(fuzzed: list[tuple], failure_fields: dict[str, tuple]) -> Iterator[None]:
    """Accept the input, or refuse it at what was fuzzed: an InputError whose path leads to a fuzzed path, or a
    WorkflowFailure whose reason `failure_fields` ties to a fuzzed field. Any other exception fails the test."""
    try:
        yield
    except InputError as exc:
        assert exc.path, f"{exc!r} names no field; fuzzed {fuzzed}"
        assert any(related(steps(exc.path), path) for path in fuzzed), f"{exc} names none of the fuzzed {fuzzed}"
    except WorkflowFailure as exc:
        assert exc.reason in failure_fields, f"unexpected WorkflowFailure {exc.reason}: {exc}; fuzzed {fuzzed}"
        field = failure_fields[exc.reason]
        assert any(related(field, path) for path in fuzzed), f"{exc.reason} without fuzzing {field}: {fuzzed}"


# Where desired_certification puts each argument in the Certification it validates (refusals name that path).
CERTIFICATION_PATHS = {"labels": ("metadata", "labels"), "options": ("spec",), "target": ("spec", "target"),
                       "categories": ("spec", "categories")}


@FUZZ
@given(mutated(BASE_WORKFLOW, 0))
def test_rendering_any_workflow_fails_only_cleanly(case: tuple[Any, list[tuple]]) -> None:
    workflow, fuzzed = case
    with refused_at_fuzzed(fuzzed, failure_fields={}):
        render.render(workflow, NODES)


@FUZZ
@given(mutated(BASE_CERTIFICATION, 2))  # the top-level types are the module's argument spec's to check
def test_planning_any_certification_fails_only_cleanly(case: tuple[dict[str, Any], list[tuple]]) -> None:
    args, fuzzed = case
    in_crd = [(*CERTIFICATION_PATHS[path[0]], *path[1:]) for path in fuzzed if path[0] in CERTIFICATION_PATHS]
    # A fuzzed domain or variant names no catalog entry (met by other seeds than the derandomized one).
    with refused_at_fuzzed(fuzzed + in_crd, failure_fields={"CategoryNotFound": ("categories",)}):
        cert = tier.desired_certification(args)
        tier.plan(tier.CertificationWorld(cert, nodes=NODES, now=datetime(2026, 1, 1, tzinfo=UTC)))


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
