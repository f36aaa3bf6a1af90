"""docs/dev/ matches the tree: every module of plugins/module_utils/ and plugins/plugin_utils/ is named in
architecture.md or driver.md, every folder with Python in plugins/module_utils/ and tools/sim/ in architecture.md,
and every page of docs/dev/ in its index (README.md). A file or folder added without a line in the docs fails here.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEV = ROOT / "docs" / "dev"
MODULE_UTILS = ROOT / "plugins" / "module_utils"
PLUGIN_UTILS = ROOT / "plugins" / "plugin_utils"
SIM = ROOT / "tools" / "sim"


def _modules() -> list[Path]:
    return sorted(p for top in (MODULE_UTILS, PLUGIN_UTILS) for p in top.rglob("*.py")
                  if p.name != "__init__.py" and "__pycache__" not in p.parts)


def _python_folders(top: Path) -> list[Path]:
    """`top` and its folders that hold Python: a data folder (templates, YAML) is described by its module."""
    return sorted(d for d in (top, *top.rglob("*"))
                  if d.is_dir() and d.name != "__pycache__" and any(d.glob("*.py")))


def _named(word: str, text: str) -> bool:
    """`word` as a name of its own, not inside a longer one (`job` is not named by `job_tier`)."""
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) is not None


def _read(page: str) -> str:
    return (DEV / page).read_text(encoding="utf-8")


def test_the_checks_see_the_tree() -> None:
    # A broken walk would find nothing and pass everything below.
    names = {p.stem for p in _modules()}
    assert {"parent", "watch", "workflow_plan", "parent_action", "requirements"} <= names
    assert MODULE_UTILS / "engine" / "logs" in _python_folders(MODULE_UTILS)
    assert MODULE_UTILS / "engine" / "report" / "templates" not in _python_folders(MODULE_UTILS)
    assert _named("job", "the job tier") and not _named("job", "job_tier") and not _named("tier", "job_tier")


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_is_named_in_the_developer_notes(path: Path) -> None:
    assert _named(path.stem, _read("architecture.md") + _read("driver.md")), \
        f"{path.relative_to(ROOT)}: say in docs/dev/architecture.md (or driver.md) what it holds"


@pytest.mark.parametrize("folder", _python_folders(MODULE_UTILS), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_utils_folder_is_named_in_the_architecture(folder: Path) -> None:
    # The box names each folder by its own name under its parent's (`engine/` holds `api/`).
    assert f"{folder.name}/" in _read("architecture.md"), f"{folder.relative_to(ROOT)}/ is not in architecture.md"


@pytest.mark.parametrize("folder", _python_folders(SIM), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_simulator_folder_is_named_in_the_architecture(folder: Path) -> None:
    # From tools/ on (`sim/`, `sim/<folder>/`): a bare folder name could be met in plugins/ instead.
    name = f"{folder.relative_to(SIM.parent).as_posix()}/"
    assert name in _read("architecture.md"), f"{folder.relative_to(ROOT)}/ is not in architecture.md"


def test_every_developer_page_is_in_the_index() -> None:
    index = _read("README.md")
    missing = [p.name for p in sorted(DEV.glob("*.md")) if p.name != "README.md" and f"({p.name})" not in index]
    assert missing == []
