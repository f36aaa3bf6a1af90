"""Catalog build (surroundings.md §1), table-driven from data/catalog/*.yaml."""
from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.catalog import entries, registry
from ansible_collections.cre.certification.plugins.module_utils.engine.models import parse_workflow
from tests.unit.engine.helpers import at

DATA = Path(__file__).parents[1] / "data" / "catalog"
EXPECTED_CATEGORIES = [
    ("communication", "nccl-all-gather"), ("communication", "nccl-all-reduce"), ("communication", "nccl-alltoall"),
    ("communication", "nccl-loopback"), ("communication", "nccl-loopback-nvswitch"), ("compute", "gemm-burn-in"),
    ("configuration", "node-drift"),
    ("diagnostics", "dcgm-level1"), ("diagnostics", "dcgm-level2"), ("diagnostics", "dcgm-level3"),
    ("diagnostics", "dcgm-level4"), ("training", "nemotron5-56b"), ("training", "nemotron5-8b"),
]
PLATFORMS = ["aws", "gcp", "azure", "oci", "onprem", "nscale", "togetherai", "mistral", "forge"]
ARCHITECTURES = ["h100", "gb200", "gb300", "a100", "l40s", "b200", "rtxpro6000"]
OPTION_SETS = [{}, {"testScale": "intra-rack", "enableCheckpoint": True, "imagePullSecrets": ["regcred"],
                    "rdmaDeviceAccess": "hostPath", "enableMNNVL": True}]


def load(name: str) -> list[dict]:
    return yaml.safe_load((DATA / name).read_text())


def test_list_categories_sorted_and_complete():
    rows = registry.list_categories()
    assert [(r["domain"], r["variant"]) for r in rows] == EXPECTED_CATEGORIES
    by_key = {(r["domain"], r["variant"]): r for r in rows}
    assert by_key[("training", "nemotron5-56b")]["minGPUs"] == 32
    assert by_key[("diagnostics", "dcgm-level4")]["timeoutPerJob"] == "2h"
    assert by_key[("communication", "nccl-loopback")]["perNode"] is True
    assert all(r["description"] and r["iterations"] == 1 for r in rows)


@pytest.mark.parametrize(("domain", "variant"), EXPECTED_CATEGORIES)
def test_every_category_builds_everywhere_and_parses(domain, variant):
    """Each entry renders for every platform × architecture and option set, and is a valid Workflow spec."""
    for index, (platform, arch) in enumerate(itertools.product(PLATFORMS, ARCHITECTURES)):
        options = {"gpuArchitecture": arch, "platform": platform, "nodesPerJob": 8, **OPTION_SETS[index % 2]}
        spec = entries.build_spec(domain, variant, options)
        assert spec["jobTemplate"]["spec"]["workload"]["trainJob"]["runtimeRef"]["name"] == f"{variant}-runtime"
        assert any(d["kind"] == "TrainingRuntime" for d in spec["dependencies"])
        parse_workflow({"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Workflow",
                        "metadata": {"name": "w"}, "spec": spec})


def test_env_names_unique_in_every_override():
    """trainer.env is keyed by name: a duplicate would get the Workflow rejected."""
    for (domain, variant), arch in itertools.product(EXPECTED_CATEGORIES, ARCHITECTURES):
        spec = entries.build_spec(domain, variant, {"gpuArchitecture": arch, "nodesPerJob": 8})
        trainers = [spec["jobTemplate"]] + [o.get("jobTemplate") for o in spec.get("overrides", [])]
        for template in filter(None, trainers):
            env = at(template, "spec.workload.trainJob.trainer.env") or []
            names = [e["name"] for e in env]
            assert len(names) == len(set(names)), (domain, variant, arch, names)


@pytest.mark.parametrize("case", load("build-cases.yaml"), ids=lambda c: c["name"])
def test_build(case):
    spec = entries.build_spec(case["domain"], case["variant"], case["options"])
    for path, expected in case["expect"].items():
        assert at(spec, path) == expected, path


@pytest.mark.parametrize("case", load("build-errors.yaml"), ids=lambda c: c["name"])
def test_build_errors(case):
    with pytest.raises(InputError) as err:
        entries.build_spec(case["domain"], case["variant"], case["options"])
    assert str(err.value) == case["error"]


@pytest.mark.parametrize("row", load("gpu-defaults.yaml"), ids=lambda r: f"{r[0]}-{r[1] or 'any'}")
def test_gpu_defaults(row):
    arch, platform, gpus, mlnx = row
    assert entries.gpu_defaults(arch, platform) == (gpus, mlnx)


@pytest.mark.parametrize("row", load("architectures.yaml"), ids=lambda r: r[0])
def test_normalize_gpu_architecture(row):
    assert entries.normalize_gpu_architecture(row[0]) == row[1]


@pytest.mark.parametrize("row", load("max-valid-nodes.yaml"), ids=lambda r: f"{r[1]}-{r[2]}x{r[3]}-{r[4]}")
def test_max_valid_nodes(row):
    domain, variant, available, gpus, arch, expected = row
    assert registry.lookup(domain, variant).max_valid_nodes(available, gpus, arch) == expected


def test_registry_is_cached():
    assert registry.builtin_registry() is registry.builtin_registry()
