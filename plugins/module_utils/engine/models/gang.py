"""GangSchedulerSpec: the resolved gang-scheduling intent, immutable on Workflow and Certification."""
from __future__ import annotations

from typing import Annotated

from .common import (
    LABEL_MANAGED_BY,
    QUALIFIED_NAME,
    RESERVED_LABEL_PREFIX,
    VALIDATIONS,
    K8sModel,
    NonEmpty,
    cel,
    fail,
    reserved_key,
)
from .pydantic_api import AfterValidator, Field, StringConstraints

# Applied in code when the field is absent (not CRD defaults).
DEFAULT_QUEUE = "default-queue"
DEFAULT_QUEUE_LABEL_KEY = "kai.scheduler/queue"

QUEUE_KEY_RESERVED_MESSAGE = f"queueLabelKey must not be {LABEL_MANAGED_BY} or a key under {RESERVED_LABEL_PREFIX}"
QUEUE_KEY_PREFIX_MESSAGE = "queueLabelKey prefix must be no more than 253 characters"


def _check_queue_label_key(key: str) -> str:
    if reserved_key(key):
        raise fail("reserved_label_key", QUEUE_KEY_RESERVED_MESSAGE)
    if key.find("/") > 253:
        raise fail("label_key", QUEUE_KEY_PREFIX_MESSAGE)
    return key


class GangSchedulerSpec(K8sModel):
    """Which gang scheduler runs the workload pods, and the queue they go to."""

    scheduler_name: NonEmpty
    """Scheduler of the workload pods (e.g. kai-scheduler)."""
    queue: Annotated[str, StringConstraints(max_length=63,
                                            pattern=r"^$|^[a-zA-Z0-9]([a-zA-Z0-9._-]*[a-zA-Z0-9])?$")] | None = None
    """Queue name (a label value); `default-queue` when absent."""
    queue_label_key: Annotated[str, StringConstraints(max_length=317, pattern=QUALIFIED_NAME),
                               AfterValidator(_check_queue_label_key),
                               Field(json_schema_extra={VALIDATIONS: [
                                   cel("self.indexOf('/') <= 253", QUEUE_KEY_PREFIX_MESSAGE),
                                   cel(f"self != '{LABEL_MANAGED_BY}' && !self.startsWith('{RESERVED_LABEL_PREFIX}')",
                                       QUEUE_KEY_RESERVED_MESSAGE)]})] | None = None
    """Label key carrying the queue; `kai.scheduler/queue` when absent (`runai/queue` for Run:ai)."""
