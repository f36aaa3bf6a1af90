"""Generated CRDs: committed files are current, schemas are structural, and the CEL rules are where they belong."""
from __future__ import annotations

import re
from pathlib import Path

import celpy
import pytest
import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.models import crdgen

ROOT = Path(__file__).resolve().parents[4]
DATA = Path(__file__).parents[1] / "data" / "models"
GENERATED = crdgen.crds()
RULES = yaml.safe_load((DATA / "crd_rules.yaml").read_text())
# Keys a structural schema may not carry (pydantic leftovers or JSON Schema features Kubernetes lacks).
CEL_ESCAPES = set("\\'\"`?abfnrtvxuU01234567")
FORBIDDEN = {"$ref", "$defs", "title", "const", "oneOf", "allOf", "not", "propertyNames", "prefixItems"}


def schema(kind: str) -> dict:
    crd = next(c for c in GENERATED.values() if c["spec"]["names"]["kind"] == kind)
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def nodes(node: dict, path: str = ""):
    """Every schema node with its path."""
    yield path, node
    for name, sub in node.get("properties", {}).items():
        yield from nodes(sub, f"{path}.{name}" if path else name)
    if "items" in node:
        yield from nodes(node["items"], f"{path}.[]")
    if isinstance(node.get("additionalProperties"), dict):
        yield from nodes(node["additionalProperties"], f"{path}.{{}}")


def at(kind: str, path: str) -> dict:
    return dict(nodes(schema(kind)))[path]


ALL_NODES = [(kind, path, node) for kind in crdgen.KINDS for path, node in nodes(schema(kind))]
WITH_STATUS = [kind for kind, info in crdgen.KIND_INFO.items() if info.status]


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_committed_crds_are_current(name):
    committed = (ROOT / "crds" / name).read_text()
    assert committed == crdgen.render(GENERATED[name]), "crds/ is stale: run .venv/bin/python -m tools.crds"


def test_structural():
    for kind, path, node in ALL_NODES:
        where = f"{kind} {path or '<root>'}"
        assert not FORBIDDEN & node.keys(), where
        if node.get("x-kubernetes-int-or-string"):
            assert node["anyOf"] == [{"type": "integer"}, {"type": "string"}], where
            continue
        assert "anyOf" not in node, where
        if not node.get("x-kubernetes-preserve-unknown-fields"):
            assert node.get("type") in {"object", "array", "string", "integer", "boolean", "number"}, where
        if node.get("type") == "object" and "properties" not in node and "additionalProperties" not in node:
            assert node.get("x-kubernetes-preserve-unknown-fields") or path == "metadata", where
        if node.get("type") == "array":
            assert "items" in node, where
        for field in node.get("required", []):
            assert field in node["properties"], where


def test_defaults_are_crd_defaults_only():
    defaults = {f"{kind} {path}": node["default"] for kind, path, node in ALL_NODES if "default" in node}
    assert defaults == {
        "Workflow spec.jobTemplate.spec.goodputMeasurement.sampleInterval": "60s",
        "Workflow spec.jobTemplate.spec.bandwidthMeasurement.sampleInterval": "60s",
        "Workflow spec.jobTemplate.spec.checkpoint.maxRestarts": 0,
        "Workflow spec.orchestration.diagnose.minGroupSize": 2,
        "Workflow spec.orchestration.execution.maxConcurrent": 0,
        "Workflow spec.orchestration.execution.retryFailedGroups": 0,
        "Workflow spec.orchestration.iterations": 1,
        "Workflow spec.overrides.[].orchestration.execution.maxConcurrent": 0,
        "Workflow spec.overrides.[].orchestration.execution.retryFailedGroups": 0,
        "Workflow spec.validation.performance.enabled": False,
        "Workflow spec.validation.performance.tracking.perNode": False,
        "Workflow spec.validation.performance.tracking.perDomain": False,
        "Job spec.goodputMeasurement.sampleInterval": "60s",
        "Job spec.bandwidthMeasurement.sampleInterval": "60s",
        "Job spec.checkpoint.maxRestarts": 0,
        "LogProfile spec.workerStrategy.lifecyclePod": "first",
        "LogProfile spec.workerStrategy.trainingStepPod": "first",
        "LogProfile spec.workerStrategy.replicatedJobName": "trainer",
        "WorkloadRun spec.bandwidthMeasurement.sampleInterval": "60s",
        "WorkloadRun spec.goodputMeasurement.sampleInterval": "60s",
        "WorkloadRun spec.framework.mpi.mpiImplementation": "OpenMPI",
        "WorkloadRun spec.overrides.[].orchestration.execution.maxConcurrent": 0,
        "WorkloadRun spec.overrides.[].orchestration.execution.retryFailedGroups": 0,
    }


def test_every_kind_has_a_crd():
    assert sorted(c["spec"]["names"]["kind"] for c in GENERATED.values()) == sorted(crdgen.KINDS)
    assert sorted(GENERATED) == sorted(f"nvcre.nvidia.com_{kind.lower()}s.yaml" for kind in crdgen.KINDS)


def test_scope_and_status_subresource():
    """A LogProfile is cluster-wide data without status; every other kind is namespaced with a status subresource."""
    served = {c["spec"]["names"]["kind"]: (c["spec"]["scope"], c["spec"]["versions"][0].get("subresources"))
              for c in GENERATED.values()}
    assert served.pop("LogProfile") == ("Cluster", None)
    assert "status" not in schema("LogProfile")["properties"]
    assert all(value == ("Namespaced", {"status": {}}) for value in served.values()), served


def test_placement_enum_without_default():
    placement = at("Workflow", "spec.orchestration.placement")
    assert placement == {"type": "string", "enum": ["Pinned", "Unpinned"], "description": "No default: empty means Pinned."}


def test_conditions_are_a_map_keyed_by_type():
    for kind in WITH_STATUS:
        conditions = at(kind, "status.conditions")
        assert conditions["x-kubernetes-list-type"] == "map"
        assert conditions["x-kubernetes-list-map-keys"] == ["type"]
        assert set(conditions["items"]["required"]) == {"type", "status", "lastTransitionTime", "reason", "message"}


def test_schemaless_parts_are_preserved():
    for kind, path in [("Workflow", "spec.dependencies.[]"), ("Workflow", "spec.overrides.[].jobTemplate"),
                       ("Workflow", "spec.overrides.[].jobTemplatePatch"), ("Workflow", "spec.overrides.[].when.config"),
                       ("Job", "spec.workload.trainJob"), ("Job", "spec.workload.trainJob.runtimePatches.[]")]:
        assert at(kind, path)["x-kubernetes-preserve-unknown-fields"] is True, f"{kind} {path}"
    assert at("Workflow", "spec.dependencies.[]")["x-kubernetes-embedded-resource"] is True


def test_measurement_fields_keep_nvcre_spelling():
    assert set(at("BandwidthMeasurement", "status.results.[]")["properties"]) == {"sizeBytes", "algBW", "busBW", "samples"}
    assert at("BandwidthMeasurement", "status.transport")["x-kubernetes-list-type"] == "set"
    assert at("GoodputMeasurement", "status.avgTFLOPSPerGPU")["type"] == "string"
    assert at("GoodputMeasurement", "status.warmupBaseStep")["type"] == "integer"
    for kind in ("BandwidthMeasurement", "GoodputMeasurement"):
        assert set(at(kind, "spec")["required"]) == {"jobRef", "logProfileRef"}
    assert set(at("LogProfile", "spec")["required"]) == {"timestamp", "patterns"}
    assert at("LogProfile", "spec.workerStrategy.type")["enum"] == ["Single", "Multi"]


def test_labels_are_bounded():
    labels = at("Job", "spec.workloadMetadata.labels")
    assert labels["maxProperties"] == 32
    assert labels["additionalProperties"]["maxLength"] == 63


@pytest.mark.parametrize("case", RULES, ids=[f"{r['kind']} {r['at']}: {r['message'][:40]}" for r in RULES])
def test_cel_rule_placed(case):
    assert {"rule": case["rule"], "message": case["message"]} in at(case["kind"], case["at"]).get(
        "x-kubernetes-validations", [])


def test_every_cel_rule_compiles():
    env = celpy.Environment()
    rules = [(kind, path, v["rule"]) for kind, path, node in ALL_NODES for v in node.get("x-kubernetes-validations", [])]
    assert len(rules) >= 30
    for kind, path, rule in rules:
        env.compile(rule)  # raises CELParseError on bad syntax
        # celpy accepts escapes CEL does not (a regex's bare "\." is rejected by the API server).
        assert all(c in CEL_ESCAPES for c in re.findall(r"\\(.)", rule)), f"{kind} {path}: {rule}"


def test_printer_columns_point_at_fields():
    for crd in GENERATED.values():
        kind = crd["spec"]["names"]["kind"]
        paths = dict(nodes(schema(kind)))
        for column in crd["spec"]["versions"][0]["additionalPrinterColumns"]:
            field = column["jsonPath"].lstrip(".").split("[")[0]
            if field != "metadata.creationTimestamp":
                assert field in paths, f"{kind} column {column['name']}: {field}"
