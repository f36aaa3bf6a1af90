"""status/: the read-only status reads, and the layer they hold: status/ imports only api/, and report/ reads the
status through it, never through reconcile/."""
from __future__ import annotations

from pathlib import Path

from ansible_collections.cre.certification.plugins.module_utils.engine.status.workflow import (
    all_groups,
    job_name,
    workflow_phase,
)
from tests.unit.plugin_imports import PLUGINS, imports

ENGINE = PLUGINS / "module_utils" / "engine"


def _relative_imports(folder: Path) -> set[tuple[str, int, str]]:
    """(file, level, module) of every relative import in the folder's files."""
    return {(path.name, found.level, found.written.lstrip(".")) for path in sorted(folder.glob("*.py"))
            for found in imports(path) if found.level}


def test_status_imports_only_api_and_itself() -> None:
    for name, level, module in _relative_imports(ENGINE / "status"):
        assert level == 2 and module.split(".")[0] == "api", (name, "." * level + module)


def test_report_does_not_import_reconcile() -> None:
    for name, level, module in _relative_imports(ENGINE / "report"):
        assert not (level == 2 and module.split(".")[0] == "reconcile"), (name, "." * level + module)


def _workflow(*conditions: str) -> dict:
    return {"status": {"conditions": [{"type": kind, "status": "True"} for kind in conditions]}}


def test_workflow_phase() -> None:
    assert workflow_phase(None) == "Pending"
    assert workflow_phase(_workflow()) == "InProgress"
    assert workflow_phase(_workflow("Succeeded")) == "Succeeded"
    assert workflow_phase(_workflow("Failed")) == "Failed"


def test_all_groups_history_then_current_iteration() -> None:
    orchestration = {"iterationHistory": [{"iteration": 1, "groups": [{"name": "g0"}]}],
                     "currentIteration": 2, "groups": [{"name": "g0"}, {"name": "g1"}]}
    assert [(at, g["name"]) for at, g in all_groups(orchestration)] == [(1, "g0"), (2, "g0"), (2, "g1")]
    assert [at for at, _g in all_groups({"groups": [{"name": "g0"}]})] == [1]  # no currentIteration yet: the first


def test_job_name_from_job_name_then_job_ref() -> None:
    assert job_name({"jobName": "a", "jobRef": {"name": "b"}}) == "a"
    assert job_name({"jobRef": {"name": "b"}}) == "b"
    assert job_name({}) == ""
