"""The user docs name only categories the catalog has, and the compatibility page keeps its promises."""
from __future__ import annotations

import re
from pathlib import Path

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog import registry as catalog

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# `domain/variant` anywhere, and backticked bare variants of the catalog's families (NCCL, DCGM, Nemotron); the
# formats evidence_check reads (`dcgm-diag-json`, `dcgm-diag-text`) are not categories.
PAIR = re.compile(r"\b(communication|diagnostics|training)/([a-z0-9][a-z0-9-]*[a-z0-9])")
BARE = re.compile(r"`((?:nccl-(?:all|loop)|dcgm-(?!diag-(?:json|text)`)|nemotron)[a-z0-9-]*)`")


def test_every_category_the_docs_name_is_in_the_catalog():
    registry = catalog.builtin_registry()
    variants = {variant for _domain, variant in registry}
    named, unknown = set(), []
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        for domain, variant in PAIR.findall(text):
            named.add((domain, variant))
            if (domain, variant) not in registry:
                unknown.append(f"{path.relative_to(ROOT)}: {domain}/{variant}")
        for variant in BARE.findall(text):
            named.add(variant)
            if variant not in variants:
                unknown.append(f"{path.relative_to(ROOT)}: {variant}")
    assert named, "the docs name no category at all"
    assert unknown == []


def test_the_compatibility_page_lists_the_chosen_sources_and_the_differences():
    text = (ROOT / "docs" / "nvcre-compatibility.md").read_text(encoding="utf-8")
    assert "`AllWorkflowsSucceeded`" in text and "`AllCategoriesSucceeded`" in text
    assert "No finalizers" in text
    assert "docs/nvcre-compatibility.md" in (ROOT / "README.md").read_text(encoding="utf-8")
