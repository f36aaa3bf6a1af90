"""catalog_info through real `ansible localhost -m cre.certification.catalog_info` runs from the repo root."""
from __future__ import annotations

from pathlib import Path

from ansible_collections.cre.certification.plugins.modules import catalog_info as stub
from tests.ansible_run import ansible_module
from tests.unit.faces.module_stub import documented_spec

ROOT = Path(__file__).resolve().parents[3]


def ansible(args: dict, *flags: str) -> tuple[int, dict]:
    return ansible_module("catalog_info", args, *flags)


def test_documentation_matches_argument_spec():
    documented_spec(stub, ("type", "elements", "default"))


def test_lists_categories_in_check_mode():
    rc, result = ansible({}, "--check")
    assert rc == 0, result
    assert result["changed"] is False
    keys = [(c["domain"], c["variant"]) for c in result["categories"]]
    assert keys == sorted(keys) and len(keys) == 13
    assert ("diagnostics", "dcgm-level4") in keys and ("training", "nemotron5-56b") in keys


def test_builds_one_category():
    rc, result = ansible({"domain": "communication", "variant": "nccl-all-reduce",
                          "options": {"gpuArchitecture": "NVIDIA-GB200", "nodesPerJob": 2, "enableMNNVL": True}})
    assert rc == 0, result
    trainer = result["spec"]["jobTemplate"]["spec"]["workload"]["trainJob"]["trainer"]
    assert trainer["numNodes"] == 2 and trainer["numProcPerNode"] == 4
    assert "NCCL_MNNVL_ENABLE=1" in trainer["args"]
    assert result["spec"]["dependencies"][0]["metadata"]["name"] == "nccl-all-reduce-runtime"


def test_unknown_category_fails_with_the_closest_and_the_valid_ones():
    rc, result = ansible({"domain": "communication", "variant": "nccl-bogus"})
    assert rc != 0
    assert result["msg"].startswith("variant: unknown category 'communication/nccl-bogus'; did you mean "
                                    "'communication/nccl-loopback'? valid: communication/nccl-all-gather, ")
    rc, result = ansible({"domain": "communication", "variant": "nccl-all-reduc"})
    assert "unknown category 'communication/nccl-all-reduc'; did you mean 'communication/nccl-all-reduce'? " \
        "valid: " in result["msg"]
    assert "Traceback" not in result.get("exception", "")


def test_build_rule_violation_is_a_clean_failure():
    rc, result = ansible({"domain": "training", "variant": "nemotron5-56b",
                          "options": {"gpuArchitecture": "h100", "nodesPerJob": 3}})
    assert rc != 0
    assert result["msg"] == ("training/nemotron5-56b: requires at least 32 GPUs (4 nodes × 8 GPUs/node), "
                             "got 24 GPUs (3 nodes); set nodesPerJob to 4 or higher")


def test_domain_without_variant_is_rejected():
    rc, result = ansible({"domain": "training"})
    assert rc != 0
    assert "parameters are required together: domain, variant" in result["msg"]
