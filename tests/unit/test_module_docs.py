"""Module documentation: the structured options' suboptions come from the engine models (no drift), and every
documented return value has a description, a type and a sample."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tools import module_docs

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted((ROOT / "plugins" / "modules").glob("*.py"))


def returns(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    return yaml.safe_load(re.search(r'RETURN = r"""(.*?)"""', text, re.S).group(1)) or {}


def test_the_committed_fragment_is_generated_from_the_models():
    assert module_docs.FRAGMENT.read_text(encoding="utf-8") == module_docs.render(), \
        "plugins/doc_fragments/inputs.py is stale: run .venv/bin/python -m tools.module_docs"


def test_the_fragment_documents_every_field_of_the_models():
    fragment = module_docs.FRAGMENT.read_text(encoding="utf-8")
    options = yaml.safe_load(re.search(r'OPTIONS = r"""(.*?)"""', fragment, re.S).group(1))
    suboptions = options["options"]["options"]["suboptions"]
    fields = module_docs.CategoryOptions.model_json_schema(by_alias=True)["properties"]
    assert list(suboptions) == list(fields)
    assert suboptions["testScale"]["choices"] == ["intra-node", "intra-rack", "diagnose", "full-scale"]
    assert suboptions["resources"]["suboptions"]["limits"]["suboptions"]["memory"]["type"] == "raw"
    assert "At least 1." in suboptions["nodesPerJob"]["description"]


def test_a_field_without_a_description_is_refused(monkeypatch):
    schema = module_docs.Schema(module_docs.GangSchedulerSpec)
    del schema.root["properties"]["queue"]["description"]
    monkeypatch.setattr(module_docs, "Schema", lambda model: schema)
    with pytest.raises(SystemExit, match=r"gang_scheduler\.queue"):
        module_docs.render()


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.stem)
def test_every_return_value_is_described_typed_and_sampled(path):
    missing = [f"{key}: {part}" for key, doc in returns(path).items()
               for part in ("description", "returned", "type", "sample") if part not in doc]
    assert missing == []
