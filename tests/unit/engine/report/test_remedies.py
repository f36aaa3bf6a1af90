"""remedies: every failure reason the engine can emit has a severity and an action. The reasons are found in the
source (api/vocabulary.py's reason sections, and every reason argument of the calls and records that write one),
so a new reason without a remedy (or a classification as never a failure) fails here."""
from __future__ import annotations

import ast
import copy
import json
from pathlib import Path

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.api import vocabulary
from ansible_collections.cre.certification.plugins.module_utils.engine.report import remedies

PLUGINS = Path(remedies.__file__).resolve().parents[2]
ENGINE = PLUGINS / "engine"
DATA = Path(__file__).parents[1] / "data" / "report"
# Validation messages of the models and the report's own writing are no reasons the engine emits.
SKIPPED = {"report", "models"}
CONDITION_TYPES = {vocabulary.FAILED, vocabulary.HARDWARE_FAILED, vocabulary.VALIDATION_FAILED}
# callee -> (argument index of the condition type, or None; argument index of the reason)
POSITIONS = {"set_exclusive": (1, 2), "set_condition": (1, 3), "status_write": (2, 3), "fail": (None, 1),
             "failed": (None, 0), "failed_entries": (None, 1), "WorkflowFailure": (None, 0), "write": (0, 1),
             "verdict": (0, 1)}


def _sources() -> list[tuple[Path, ast.Module]]:
    paths = [*ENGINE.rglob("*.py"), *(PLUGINS / "driver").rglob("*.py")]
    return [(p, ast.parse(p.read_text())) for p in sorted(paths) if not SKIPPED & set(p.relative_to(PLUGINS).parts)]


def _values(node: ast.AST | None, names: dict[str, set[str]]) -> set[str]:
    """The strings an expression can be: a literal, a name bound to one, either branch of a conditional."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Name):
        return names.get(node.id, set())
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("v", "vocabulary"):
        return names.get(node.attr, set())
    if isinstance(node, ast.IfExp):
        return _values(node.body, names) | _values(node.orelse, names)
    if isinstance(node, ast.BoolOp):
        return set().union(*(_values(value, names) for value in node.values))
    return set()


def _names(trees: list[tuple[Path, ast.Module]]) -> dict[str, set[str]]:
    """Every name assigned a string anywhere (module constants and locals such as `blame = A if x else B`)."""
    pending = [(target.id, node.value) for _path, tree in trees for node in ast.walk(tree)
               if isinstance(node, ast.Assign) for target in node.targets if isinstance(target, ast.Name)]
    names: dict[str, set[str]] = {}
    for _round in range(3):
        for name, value in pending:
            names.setdefault(name, set()).update(_values(value, names))
    return names


def _kind_allows(node: ast.Call, kind_at: int | None, names: dict[str, set[str]]) -> bool:
    """A status write names a reason of a failure when its condition type is a failed one (or not known here)."""
    if kind_at is None or len(node.args) <= kind_at:
        return True
    kinds = _values(node.args[kind_at], names)
    return not kinds or bool(kinds & CONDITION_TYPES)


def _emitted(tree: ast.Module, names: dict[str, set[str]]) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            callee = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            found |= set().union(*(_values(k.value, names) for k in node.keywords if k.arg == "reason"))
            if callee in POSITIONS:
                kind_at, reason_at = POSITIONS[callee]
                if len(node.args) > reason_at and _kind_allows(node, kind_at, names):
                    found |= _values(node.args[reason_at], names)
        elif isinstance(node, ast.Dict):
            found |= set().union(*(_values(value, names) for key, value in zip(node.keys, node.values)
                                   if isinstance(key, ast.Constant) and key.value == "reason"))
        elif isinstance(node, ast.Tuple) and len(node.elts) == 3:
            head = node.elts[0]
            if _values(head, names) & CONDITION_TYPES or (isinstance(head, ast.Constant) and head.value is True):
                found |= _values(node.elts[1], names)
    return found - CONDITION_TYPES


def _vocabulary_reasons() -> set[str]:
    """The string constants of api/vocabulary.py from its `reasons` section on (reasons, measurement reasons,
    threshold reasons)."""
    source = Path(vocabulary.__file__).read_text()
    tail = source[source.index("# ---------------------------------------------------------------- reasons"):]
    return {node.value.value for node in ast.parse(tail).body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)}


def engine_reasons() -> set[str]:
    trees = _sources()
    names = _names(trees)
    return _vocabulary_reasons() | set().union(*(_emitted(tree, names) for _path, tree in trees))


def test_every_reason_the_engine_emits_has_a_remedy_or_is_never_a_failure() -> None:
    found = engine_reasons()
    # The finder itself sees the emitters it must (a broken finder would pass everything).
    assert {"HardwareFailureDetected", "TransportMismatch", "WorkloadStalled", "JobTimedOut", "PartitionError",
            "GangSchedulingConflict", "JobHardwareFailed", "IterationsFailed", "WorkflowFailed",
            "NodeDiscoveryError", "RegressionDetected", "WorkloadSchedulingBlocked"} <= found
    unclassified = found - set(remedies.REMEDIES) - remedies.NOT_FAILURES
    assert unclassified == set(), f"give these a remedy in report/remedies.py (or list them in NOT_FAILURES): {unclassified}"
    assert not set(remedies.REMEDIES) & remedies.NOT_FAILURES and set(remedies.GROUP_ACTIONS) <= set(remedies.REMEDIES)


def test_a_new_emitted_reason_without_a_remedy_is_found() -> None:
    tree = ast.parse('def f(world):\n    return fail(world, "BrandNewReason", "m")\n'
                     'X = {"name": "n", "reason": OTHER}\nOTHER = "AnotherNewReason"\n')
    names = _names([(Path("x.py"), tree)])
    assert {"BrandNewReason", "AnotherNewReason"} <= _emitted(tree, names)
    skipped = ast.parse('status_write(obj, status, IN_PROGRESS, "JobCreated", m, now)\nIN_PROGRESS = "InProgress"\n')
    assert _emitted(skipped, _names([(Path("y.py"), skipped)])) == set()


@pytest.mark.parametrize("reason", sorted(remedies.REMEDIES))
def test_each_remedy_is_a_severity_and_one_sentence(reason: str) -> None:
    severity, action = remedies.REMEDIES[reason]
    assert severity in remedies.SEVERITIES
    for text in (action, *([remedies.GROUP_ACTIONS[reason]] if reason in remedies.GROUP_ACTIONS else [])):
        assert text[0].isupper() and text.endswith(".") and text.replace("e.g. ", "").count(". ") == 0, text


def test_contract_examples() -> None:
    assert remedies.remedy("HardwareFailureDetected")["severity"] == "critical"
    assert "dcgmi diag -r 4" in remedies.remedy("HardwareFailureDetected")["action"]
    assert "NICs and links" in remedies.remedy("ThresholdViolation")["action"]
    assert "diagnose" in remedies.remedy("ThresholdViolation", nodes=4)["action"]
    assert "NCCL network plugin" in remedies.remedy("TransportMismatch")["action"]
    assert "capacity" in remedies.remedy("WorkloadSchedulingBlocked")["action"]
    assert remedies.remedy("SomethingNew") == {"severity": "medium", "action": remedies.UNKNOWN[1]}


def test_annotate_marks_failed_nodes_groups_verdicts_and_lists_remedies_worst_first() -> None:
    report = json.loads((DATA / "failed.json").read_text())
    for entry in report["failedNodes"]:
        del entry["severity"], entry["action"]
    del report["remedies"]
    got = remedies.annotate(copy.deepcopy(report))
    assert got["failedNodes"][0] == {**report["failedNodes"][0], **remedies.remedy("HardwareFailureDetected")}
    group = got["categories"][0]["failedGroups"][0]
    assert group["severity"] == "critical" and group["action"]
    assert got["categories"][0]["nodes"]["node-1"]["severity"] == "critical"
    assert "severity" not in got["categories"][0]["nodes"]["node-0"]  # no reason, no remedy
    assert [(r["reason"], r["severity"], r["nodes"]) for r in got["remedies"]] == [
        ("HardwareFailureDetected", "critical", ["node-1"]), ("JobHardwareFailed", "critical", [])]
    assert remedies.annotate({"categories": [], "failedNodes": []})["remedies"] == []
