"""What a node-drift node is judged against: its GPU product (the node's `nvidia.com/gpu.product` label), its
platform (from the node, as discovery reads it) and the golden profile: the run's own (certification_run's
`golden_profile`, carried on the Job as ANNOTATION_GOLDEN_PROFILE) or the shipped one. The Job tier and the report
resolve alike, so both judge a node by the same profile.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Optional

from ..api.objects import meta
from ..api.vocabulary import ANNOTATION_GOLDEN_PROFILE
from ..catalog import golden_defaults
from ..evidence.golden import GoldenParameters
from ..evidence.golden_profile import Profile
from ..plan import detect
from .burn_in_parameters import product_of

RUN_PROFILE = "the run's golden profile (annotation cre.certification/golden-profile)"

Obj = dict[str, Any]


@lru_cache(maxsize=1)
def shipped() -> Profile:
    """The shipped profile, read once per process."""
    return golden_defaults.defaults()


@lru_cache(maxsize=8)
def _run_profile(text: str) -> Profile:
    return golden_defaults.load_text(text, RUN_PROFILE)


def profile_of(job: Obj) -> Profile:
    """The profile a node-drift Job judges with. InputError when the run's own does not read."""
    text = (meta(job).get("annotations") or {}).get(ANNOTATION_GOLDEN_PROFILE)
    return _run_profile(text) if text else shipped()


def of_job(job: Obj, node: Optional[Obj]) -> GoldenParameters:  # noqa: UP045 - ansible-test's pylint reads module_utils as older Python
    """A node-drift Job's parameters for the node it ran on."""
    return GoldenParameters(product_of(node), detect.node_platform(node) if node else "", profile_of(job))
