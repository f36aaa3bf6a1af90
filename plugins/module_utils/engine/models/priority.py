"""spec.priorityClassName of Certification and WorkloadRun: the PriorityClass of every pod the run creates."""
from __future__ import annotations

from typing import Annotated

from .pydantic_api import StringConstraints

# A PriorityClass is named by a DNS subdomain (k8s.io/apimachinery IsDNS1123Subdomain), at most 253 characters.
DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
PriorityClassName = Annotated[str, StringConstraints(min_length=1, max_length=253, pattern=DNS_SUBDOMAIN)]
