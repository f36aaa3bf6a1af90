"""playbooks/inventory.example.yml is input the run accepts: every host's Certification validates, diagnose
host included (what the docs tell users to copy must not be refused)."""
from __future__ import annotations

from pathlib import Path

import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import certification_tier

EXAMPLE = Path(__file__).parents[2] / "playbooks" / "inventory.example.yml"
DEFAULTS = yaml.safe_load((Path(__file__).parents[2] / "roles" / "certify" / "defaults" / "main.yml").read_text())


def _hosts() -> dict[str, dict]:
    group = yaml.safe_load(EXAMPLE.read_text())["clusters"]
    return {name: {**DEFAULTS, **group["vars"], **(host or {})} for name, host in group["hosts"].items()}


def test_every_example_host_is_a_valid_certification() -> None:
    for name, host in _hosts().items():
        cert = certification_tier.desired_certification({
            "name": host["certify_certification_name"], "namespace": host["certify_namespace"],
            "categories": host["certify_categories"], "target": {}, "gang_scheduler": {},
            "options": host["certify_options"], "labels": host["certify_labels"]})
        assert cert["spec"]["categories"], name


def test_the_diagnose_example_runs_diagnose_with_a_bandwidth_floor_then_another_category() -> None:
    host = _hosts()["gb200-suspect"]
    diagnose, after = certification_tier.desired_certification({
        "name": host["certify_certification_name"], "namespace": host["certify_namespace"],
        "categories": host["certify_categories"], "target": {}, "gang_scheduler": {}, "options": {},
        "labels": {}})["spec"]["categories"]
    assert diagnose["options"]["testScale"] == "diagnose"
    assert "busBandwidthGBps" in diagnose["options"]["thresholds"]
    assert (after["domain"], after["variant"]) == ("diagnostics", "dcgm-level2")
