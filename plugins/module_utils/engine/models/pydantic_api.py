"""pydantic's names as the models use them, importable where pydantic is not installed (requirements.py): the
faces refuse to run without it, so the stand-ins only let the models' modules import."""
from __future__ import annotations

try:
    from pydantic import (
        AfterValidator,
        BaseModel,
        ConfigDict,
        Field,
        PlainValidator,
        SerializerFunctionWrapHandler,
        StringConstraints,
        ValidationError,
        WithJsonSchema,
        model_serializer,
        model_validator,
    )
    from pydantic.alias_generators import to_camel
    from pydantic.config import JsonDict, JsonValue
    from pydantic_core import PydanticCustomError
except ImportError:
    from ...requirements import ABSENT

    class ValidationError(Exception):  # type: ignore[no-redef]
        """Never raised: named in except clauses."""

    AfterValidator = BaseModel = ConfigDict = Field = PlainValidator = ABSENT  # type: ignore[misc]
    SerializerFunctionWrapHandler = StringConstraints = WithJsonSchema = ABSENT  # type: ignore[misc]
    model_serializer = model_validator = to_camel = JsonDict = JsonValue = PydanticCustomError = ABSENT  # type: ignore[misc]

__all__ = ["AfterValidator", "BaseModel", "ConfigDict", "Field", "JsonDict", "JsonValue", "PlainValidator",
           "PydanticCustomError", "SerializerFunctionWrapHandler", "StringConstraints", "ValidationError",
           "WithJsonSchema", "model_serializer", "model_validator", "to_camel"]
