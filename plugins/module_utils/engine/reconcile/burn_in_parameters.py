"""The GEMM burn-in's parameters for one node: the harness flags its Job runs with (gemm_verdict.parameters_of),
with what the flags leave unset filled from the node the pod ran on.

The catalog entry renders one spec for every node of a category, and a template knows the GPU architecture, not
the product (H100 SXM, PCIe and NVL are all `h100`), so the Job's words say `--product unknown --floor-tflops 0
--power-default-w 0` unless a user's entry set them. The node's `nvidia.com/gpu.product` label names the product,
and the catalog's GPU defaults (catalog/gpu_floors) give its floor for the dtype and its default power limit. A
floor the run sets (certification_run's `gemm_floors`, carried on the Job as ANNOTATION_GEMM_FLOORS) wins, then one
the words set (a user's entry: `floorTflops`); neither is provisional. The Job tier and the report resolve alike,
so both judge a node by the same numbers.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Optional

from ..api.objects import meta
from ..api.vocabulary import ANNOTATION_GEMM_FLOORS
from ..catalog.gpu_floors import default_power_w, floor_for, overrides_of
from ..evidence.gemm_verdict import GemmParameters, parameters_of
from ..evidence.sources import trainer_words
from ..plan.detect import GPU_PRODUCT

UNKNOWN = ("", "unknown")

Obj = dict[str, Any]


def product_of(node: Optional[Obj]) -> str:  # noqa: UP045 - ansible-test's pylint reads module_utils as older Python
    """The node's GPU product label ("" when unknown)."""
    return str((meta(node or {}).get("labels") or {}).get(GPU_PRODUCT) or "")


def of_job(job: Obj, node: Optional[Obj]) -> GemmParameters:  # noqa: UP045 - as above
    """A burn-in Job's parameters for the node it ran on, with the run's own floors (ANNOTATION_GEMM_FLOORS)."""
    floors = overrides_of((meta(job).get("annotations") or {}).get(ANNOTATION_GEMM_FLOORS))
    return resolved(trainer_words(job), node, floors)


def resolved(words: list[str], node: Optional[Obj],  # noqa: UP045 - as above
             floors: Optional[dict[str, Any]] = None) -> GemmParameters:  # noqa: UP045 - as above
    """The parameters `words` give, the product, floor and default power limit filled from `node` where unset;
    `floors`: the run's own (gpu_floors.floor_for's overrides), which win over the words' and the catalog's.
    GemmParametersError (from parameters_of) for a flag without a readable value."""
    given = parameters_of(words)
    product = given.product if given.product not in UNKNOWN else product_of(node)
    own = floor_for(product, given.dtype, overrides=floors) if floors else (None, False)
    floor, provisional = (own if own[0] is not None
                          else (given.floor_tflops, given.floor_provisional) if given.floor_tflops is not None
                          else floor_for(product, given.dtype))
    power = given.power_default_w if given.power_default_w is not None else default_power_w(product)
    return replace(given, product=product, floor_tflops=floor, floor_provisional=provisional, power_default_w=power)
