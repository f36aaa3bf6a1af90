"""Changelog fragments and the extra docs of the published collection docs."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import docutils.core
import docutils.utils
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCSITE = ROOT / "docs" / "docsite"


def test_changelog_fragments_lint():
    tool = shutil.which("antsibull-changelog", path=str(ROOT / ".venv" / "bin"))
    assert tool, "antsibull-changelog comes with requirements-dev.txt"
    proc = subprocess.run([tool, "lint"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout + proc.stderr
    assert list((ROOT / "changelogs" / "fragments").glob("*.yml"))
    config = yaml.safe_load((ROOT / "changelogs" / "config.yaml").read_text())
    assert config["output"] == [{"file": "CHANGELOG.md", "format": "md"}]


def test_extra_docs_pages_exist_and_parse():
    extra = yaml.safe_load((DOCSITE / "extra-docs.yml").read_text())
    pages = [name for section in extra["sections"] for name in section["toctree"]]
    assert pages
    for name in pages:
        text = (DOCSITE / "rst" / f"{name}.rst").read_text()
        assert text.startswith(f".. _ansible_collections.cre.certification.docsite.{name}:\n")
        docutils.core.publish_doctree(text, settings_overrides={"halt_level": docutils.utils.Reporter.WARNING_LEVEL,
                                                                "report_level": 5})


def test_guides_page_names_every_guide():
    text = (DOCSITE / "rst" / "guides.rst").read_text()
    for guide in (ROOT / "docs").rglob("*.md"):
        assert f"``{guide.relative_to(ROOT)}``" in text, guide
