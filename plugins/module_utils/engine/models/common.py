"""Building blocks shared by the nvcre.nvidia.com/v1alpha1 models.

The models are the single source of truth for the API: `crdgen` turns their JSON schema into the CRDs, so
every Kubernetes-only schema detail (CEL rules, list types, preserve-unknown) is attached here as
`json_schema_extra`. Convention: a field default other than None is a CRD default (the API server applies
it); defaults the controller applies in code stay None here and are exported as constants.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union

from ..api.vocabulary import LABEL_MANAGED_BY, RESERVED_LABEL_PREFIX
from .pydantic_api import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    JsonDict,
    PlainValidator,
    PydanticCustomError,
    SerializerFunctionWrapHandler,
    StringConstraints,
    WithJsonSchema,
    model_serializer,
    to_camel,
)

# The models' `apiVersion` type. Spelled out because a type checker accepts only a literal inside Literal[...];
# a unit test holds it equal to the vocabulary's API_VERSION.
ApiVersion = Literal["nvcre.nvidia.com/v1alpha1"]

# Schema extension keys understood by crdgen.
VALIDATIONS = "x-kubernetes-validations"
PRESERVE = "x-kubernetes-preserve-unknown-fields"


def cel(rule: str, message: str) -> JsonDict:
    """One x-kubernetes-validations entry."""
    return {"rule": rule, "message": message}


def cel_string(text: str) -> str:
    """A CEL string literal (CEL rejects unknown escapes such as a regex's `\\.`)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def immutable(field: str) -> dict[str, Any]:
    """Field-level value rule `<field> is immutable` (evaluated only when old and new both have it)."""
    return {VALIDATIONS: [cel("self == oldSelf", f"{field} is immutable")]}


def fixed_presence(*fields: str) -> dict[str, Any]:
    """Struct-level rules: the optional fields cannot be added or removed after creation."""
    return {VALIDATIONS: [cel(f"has(self.{f}) == has(oldSelf.{f})", f"{f} cannot be added or removed after creation")
                          for f in fields]}


def fail(code: str, message: str) -> PydanticCustomError:
    """A validation error whose text is the rule itself (no 'Value error,' prefix)."""
    return PydanticCustomError(code, message)


class K8sModel(BaseModel):
    """A Kubernetes API struct: camelCase JSON, unknown fields rejected, no type coercion (as the API server)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", strict=True,
                              use_attribute_docstrings=True)


class Schemaless(K8sModel):
    """A struct that keeps fields it does not name (x-kubernetes-preserve-unknown-fields)."""

    model_config = ConfigDict(extra="allow", json_schema_extra={PRESERVE: True})

    @model_serializer(mode="wrap")
    def _keep_null_extras(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # dump() drops unset (None) fields, but a null among the kept fields is data (it deletes in a merge).
        data = handler(self)
        data.update({k: None for k, v in (self.__pydantic_extra__ or {}).items() if v is None})
        return data


# Any JSON value, kept as is (schemaless `*apiextensionsv1.JSON`).
AnyJSON = Annotated[Any, Field(json_schema_extra={PRESERVE: True})]
# A JSON object kept as is.
AnyObject = Annotated[dict[str, Any], Field(json_schema_extra={PRESERVE: True})]
Timestamp = Annotated[str, Field(json_schema_extra={"format": "date-time"})]
# metav1.Duration is a Go duration string ("90s", "1h30m").
Duration = Annotated[str, StringConstraints(pattern=r"^0$|^([0-9]+(\.[0-9]+)?(ns|us|µs|ms|s|m|h))+$")]
NonEmpty = Annotated[str, StringConstraints(min_length=1)]
QUANTITY_PATTERN = (r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|"
                    r"([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$")


def int_or_string(pattern: str | None = None, max_length: int | None = None) -> Any:
    """intstr.IntOrString (with a pattern on the string form): one clear error instead of one per union member."""
    compiled = re.compile(pattern) if pattern else None

    def check(value: Any) -> int | str:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise fail("int_or_string", "Input should be an integer or a string")
        if isinstance(value, str) and compiled and not compiled.match(value):
            raise fail("int_or_string", f"String should match pattern '{pattern}'")
        if isinstance(value, str) and max_length is not None and len(value) > max_length:
            raise fail("int_or_string", f"String should have at most {max_length} characters")
        return value

    schema: dict[str, Any] = {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
    if pattern:
        schema["pattern"] = pattern
    if max_length is not None:
        schema["maxLength"] = max_length
    return Annotated[int | str, PlainValidator(check), WithJsonSchema(schema)]


if TYPE_CHECKING:
    Quantity = Union[int, str]  # noqa: UP007 - ansible-test's pylint reads module_utils as older Python
    IntOrString = Union[int, str]  # noqa: UP007
else:
    # resource.Quantity: an integer or a quantity string.
    Quantity = int_or_string(QUANTITY_PATTERN, max_length=64)  # bounded: CEL's quantity() cost grows with length
    IntOrString = int_or_string()


def list_map(*keys: str) -> dict[str, Any]:
    return {"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": list(keys)}


# ---- labels (workloadMetadata.labels and gangScheduler.queueLabelKey) ----

QUALIFIED_NAME = (r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                  r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
LABEL_VALUE = r"^$|^[a-zA-Z0-9]([-a-zA-Z0-9_.]{0,61}[a-zA-Z0-9])?$"
MAX_LABELS = 32
RESERVED_KEY_MESSAGE = (f'label key is reserved for the controller: "{LABEL_MANAGED_BY}" and any key under '
                        f'"{RESERVED_LABEL_PREFIX}" identify workload ownership')
INVALID_KEY_MESSAGE = ("invalid label key: must be a qualified name: an optional DNS subdomain prefix of at most "
                       "253 characters and '/', then a name of at most 63 alphanumeric characters, '-', '_' or '.', "
                       "starting and ending with an alphanumeric character")
PREFIX_MESSAGE = "invalid label key: prefix must be no more than 253 characters"
_QUALIFIED = re.compile(QUALIFIED_NAME)


def reserved_key(key: str) -> bool:
    return key == LABEL_MANAGED_BY or key.startswith(RESERVED_LABEL_PREFIX)


def _check_label_key(key: str) -> str:
    if reserved_key(key):
        raise fail("reserved_label_key", RESERVED_KEY_MESSAGE)
    if not _QUALIFIED.match(key):
        raise fail("label_key", INVALID_KEY_MESSAGE)
    if key.find("/") > 253:
        raise fail("label_key", PREFIX_MESSAGE)
    return key


LabelKey = Annotated[str, AfterValidator(_check_label_key)]
LabelValue = Annotated[str, StringConstraints(max_length=63, pattern=LABEL_VALUE)]

# The same rules for the API server; keys of a map cannot carry a pattern, so CEL checks them.
LABEL_RULES = [
    cel(f"self.all(k, k != '{LABEL_MANAGED_BY}' && !k.startsWith('{RESERVED_LABEL_PREFIX}'))", RESERVED_KEY_MESSAGE),
    cel(f"self.all(k, k.matches({cel_string(QUALIFIED_NAME)}))", INVALID_KEY_MESSAGE),
    cel("self.all(k, k.indexOf('/') <= 253)", PREFIX_MESSAGE),
]


class WorkloadMetadata(K8sModel):
    """Metadata applied to the workload object (the TrainJob), never to pods."""

    labels: Annotated[dict[LabelKey, LabelValue], Field(max_length=MAX_LABELS, json_schema_extra={
        VALIDATIONS: LABEL_RULES})] | None = None
    """Labels of the workload object (at most 32 after merging)."""


# ---- object metadata ----

class OwnerReference(K8sModel):
    model_config = ConfigDict(json_schema_extra={"x-kubernetes-map-type": "atomic"})

    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool | None = None
    block_owner_deletion: bool | None = None


class ObjectMeta(K8sModel):
    """The ObjectMeta fields we read; any other metadata key is kept untouched."""

    model_config = ConfigDict(extra="allow")

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    finalizers: list[str] | None = None


class TemplateMeta(K8sModel):
    """metadata of an embedded template (jobTemplate.metadata): labels and annotations."""

    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None


# ---- status building blocks ----

class Condition(K8sModel):
    """metav1.Condition."""

    type: Annotated[str, StringConstraints(max_length=316, pattern=(
        r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
        r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"))]
    status: Literal["True", "False", "Unknown"]
    observed_generation: Annotated[int, Field(ge=0)] | None = None
    last_transition_time: Timestamp
    reason: Annotated[str, StringConstraints(min_length=1, max_length=1024,
                                             pattern=r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")]
    message: Annotated[str, StringConstraints(max_length=32768)]


Conditions = Annotated[list[Condition], Field(json_schema_extra=list_map("type"))]


class LocalObjectRef(K8sModel):
    """corev1.TypedLocalObjectReference (a Workflow's ConfigMaps, a measurement's Job)."""

    model_config = ConfigDict(json_schema_extra={"x-kubernetes-map-type": "atomic"})

    api_group: str | None = None
    kind: str
    name: str


class WorkloadReference(K8sModel):
    """A reference to a child object (a Job, or a Job's workload)."""

    api_version: str | None = None
    kind: str
    name: str
    namespace: str | None = None
    uid: str | None = None


# ---- node targeting (Workflow orchestration and Certification) ----

class NodeSelectorRequirement(K8sModel):
    key: str
    """Node label key."""
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist"]
    """How the label's value is compared with values."""
    values: list[str] | None = None
    """Values for In and NotIn; empty for Exists and DoesNotExist."""


class TaintSelector(K8sModel):
    key: NonEmpty
    """Taint key."""
    value: str | None = None
    """Empty matches any value."""
    effect: str | None = None
    """Empty matches any effect."""


class TargetSpec(K8sModel):
    """Which nodes to certify; every clause ANDs. Unset selects all nodes."""

    node_selector: dict[str, str] | None = None
    """Labels every target node carries."""
    match_expressions: list[NodeSelectorRequirement] | None = None
    """Node selector requirements every target node meets."""
    node_names: list[str] | None = None
    """Only these nodes."""
    taint_selectors: list[TaintSelector] | None = None
    """Tainted nodes to include (untainted nodes always qualify); listing node.kubernetes.io/unschedulable opts
    cordoned nodes in and turns the health monitor off.
    """
