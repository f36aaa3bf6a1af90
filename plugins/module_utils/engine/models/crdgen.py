"""CRDs generated from the pydantic models (pure: models in, CRD dicts and YAML text out).

The walk is generic: it turns each model's JSON schema into a Kubernetes structural schema. Optional
fields lose their `null` branch, `$ref`s are inlined (field-level CEL rules merge with type-level ones),
`const` becomes a one-value enum, int-or-string unions take the Kubernetes form, and Kubernetes extensions
attached to the models (`x-kubernetes-*`) pass through.
"""
from __future__ import annotations

from typing import Any, NamedTuple

try:
    import yaml
except ImportError:  # requirements.py: no face runs without it
    from ...requirements import ABSENT as yaml  # type: ignore[no-redef]

from . import GROUP, KINDS, VERSION
from .pydantic_api import BaseModel

# Keys of JSON schema we drop: pydantic bookkeeping with no Kubernetes meaning.
_DROP = {"title", "$defs"}
_VALIDATIONS = "x-kubernetes-validations"
_STATUS = '.status.conditions[?(@.status=="True")]'
_AGE = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}

_COMPLETE = '.status.conditions[?(@.type=="Complete")]'


class KindInfo(NamedTuple):
    """How a kind is served: its plural, the printer columns a user wants in `kubectl get`, its scope, and
    whether status is a subresource (a LogProfile is plain cluster-wide data with no status)."""

    plural: str
    columns: list[dict[str, Any]]
    scope: str = "Namespaced"
    status: bool = True


_MEASUREMENT_COLUMNS: list[dict[str, Any]] = [
    {"name": "Job", "type": "string", "jsonPath": ".spec.jobRef.name"},
    {"name": "Profile", "type": "string", "jsonPath": ".spec.logProfileRef", "priority": 1},
    {"name": "Complete", "type": "string", "jsonPath": f"{_COMPLETE}.status"},
    {"name": "Reason", "type": "string", "jsonPath": f"{_COMPLETE}.reason"},
]

KIND_INFO: dict[str, KindInfo] = {
    "Workflow": KindInfo("workflows", [
        {"name": "Status", "type": "string", "jsonPath": f"{_STATUS}.type"},
        {"name": "Reason", "type": "string", "jsonPath": f"{_STATUS}.reason", "priority": 1},
        {"name": "Placement", "type": "string", "jsonPath": ".status.orchestration.placement"},
        {"name": "Platform", "type": "string", "jsonPath": ".status.orchestration.detectedPlatform"},
        {"name": "GPU", "type": "string", "jsonPath": ".status.orchestration.detectedGPUArchitecture"},
        {"name": "Nodes", "type": "integer", "jsonPath": ".status.orchestration.totalNodes"},
        {"name": "Groups", "type": "integer", "jsonPath": ".status.orchestration.totalGroups"},
        {"name": "Iteration", "type": "integer", "jsonPath": ".status.orchestration.currentIteration"},
        _AGE]),
    "Job": KindInfo("jobs", [
        {"name": "Status", "type": "string", "jsonPath": f"{_STATUS}.type"},
        {"name": "Reason", "type": "string", "jsonPath": f"{_STATUS}.reason"},
        {"name": "Workload", "type": "string", "jsonPath": ".status.workloadRef.name", "priority": 1},
        {"name": "Restarts", "type": "integer", "jsonPath": ".status.restartCount"},
        _AGE]),
    "Certification": KindInfo("certifications", [
        {"name": "Status", "type": "string", "jsonPath": f"{_STATUS}.type"},
        {"name": "Reason", "type": "string", "jsonPath": f"{_STATUS}.reason"},
        _AGE]),
    "LogProfile": KindInfo("logprofiles", [
        {"name": "Workers", "type": "string", "jsonPath": ".spec.workerStrategy.type"},
        {"name": "Layout", "type": "string", "jsonPath": ".spec.timestamp.layout", "priority": 1},
        _AGE], scope="Cluster", status=False),
    "BandwidthMeasurement": KindInfo("bandwidthmeasurements", [*_MEASUREMENT_COLUMNS, _AGE]),
    "GoodputMeasurement": KindInfo("goodputmeasurements", [
        *_MEASUREMENT_COLUMNS,
        {"name": "Goodput", "type": "string", "jsonPath": ".status.result"},
        {"name": "Step", "type": "integer", "jsonPath": ".status.currentStep"},
        _AGE]),
    "WorkloadRun": KindInfo("workloadruns", [
        {"name": "Status", "type": "string", "jsonPath": f"{_STATUS}.type"},
        {"name": "Reason", "type": "string", "jsonPath": f"{_STATUS}.reason"},
        {"name": "Workflow", "type": "string", "jsonPath": ".status.workflowRef.name", "priority": 1},
        {"name": "Platform", "type": "string", "jsonPath": ".status.detectedPlatform"},
        {"name": "GPU", "type": "string", "jsonPath": ".status.detectedGPUArchitecture"},
        _AGE]),
}


class _Walker:
    def __init__(self, defs: dict[str, Any]) -> None:
        self.defs = defs

    def convert(self, node: dict[str, Any]) -> dict[str, Any]:
        node = dict(node)
        if "$ref" in node:
            target = self.convert(self.defs[node.pop("$ref").rsplit("/", 1)[1]])
            return _merge(target, self.convert(node))
        if "anyOf" in node:
            members = [m for m in node.pop("anyOf") if m != {"type": "null"}]
            if len(members) == 1:
                return _merge(self.convert(members[0]), self.convert(node))
            return _merge(self._union(members), self.convert(node))
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROP or (key == "default" and value is None):
                continue
            if key == "const":
                out["enum"] = [value]
            elif key == "properties":
                out[key] = {name: self.convert(sub) for name, sub in value.items()}
            elif key == "items":
                out[key] = self.convert(value)
            elif key == "additionalProperties":
                if isinstance(value, dict):
                    out[key] = self.convert(value)
                elif value and not node.get("x-kubernetes-preserve-unknown-fields"):
                    raise ValueError(f"open object without x-kubernetes-preserve-unknown-fields: {node}")
            else:
                out[key] = value
        return out

    def _union(self, members: list[dict[str, Any]]) -> dict[str, Any]:
        """Only int-or-string unions exist in the API; constraints of the string side move up (pattern)."""
        converted = [self.convert(m) for m in members]
        member_types: list[Any] = [m.get("type") for m in converted]
        if sorted(member_types) != ["integer", "string"]:
            raise ValueError(f"unsupported union: {members}")
        out: dict[str, Any] = {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
        for m in converted:
            out.update({k: v for k, v in m.items() if k != "type"})
        return out


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """`extra` (the field's own keys) over `base` (the type's schema); CEL rules of both apply."""
    out = {**base, **extra}
    if _VALIDATIONS in base and _VALIDATIONS in extra:
        out[_VALIDATIONS] = base[_VALIDATIONS] + extra[_VALIDATIONS]
    return out


def open_api_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The structural openAPIV3Schema of a top-level kind."""
    raw = model.model_json_schema(by_alias=True, mode="validation")
    # The API server owns the root metadata schema; apiVersion and kind are plain strings there.
    del raw["properties"]["metadata"]
    schema = _Walker(raw.get("$defs", {})).convert(raw)
    props = schema["properties"]
    props["apiVersion"] = {"type": "string", "description": "APIVersion of this representation of the object."}
    props["kind"] = {"type": "string", "description": "Kind of the object."}
    props["metadata"] = {"type": "object"}
    schema["required"] = ["spec"]
    return schema


def crd(kind: str) -> dict[str, Any]:
    info = KIND_INFO[kind]
    version: dict[str, Any] = {"name": VERSION, "served": True, "storage": True}
    if info.status:
        version["subresources"] = {"status": {}}
    version["additionalPrinterColumns"] = info.columns
    version["schema"] = {"openAPIV3Schema": open_api_schema(KINDS[kind])}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{info.plural}.{GROUP}", "labels": {"app.kubernetes.io/part-of": "cre.certification"}},
        "spec": {
            "group": GROUP,
            "names": {"kind": kind, "listKind": f"{kind}List", "plural": info.plural, "singular": kind.lower(),
                      "categories": ["nvcre"]},
            "scope": info.scope,
            "versions": [version],
        },
    }


def crds() -> dict[str, dict[str, Any]]:
    """File name under crds/ -> CRD."""
    return {f"{GROUP}_{KIND_INFO[kind].plural}.yaml": crd(kind) for kind in KINDS}


def render(obj: dict[str, Any]) -> str:
    """Stable YAML text (the committed form)."""
    return "---\n" + yaml.safe_dump(obj, sort_keys=False, width=120, allow_unicode=True)
