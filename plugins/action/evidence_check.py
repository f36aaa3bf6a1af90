"""evidence_check: read a saved tool output into per-GPU evidence on the controller (evidence/evidence_check.py)."""
from __future__ import annotations

from typing import Any, Optional

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.golden_defaults import (
    defaults,
    load_file,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.gpu_floors import (
    default_power_w,
    floor_for,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.catalog.logprofiles import (
    builtin_profile,
    builtin_profiles,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.config_check import (
    CONFIG_FORMATS,
    check_config_evidence,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_results import UnreadableOutput
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_verdict import Options
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.evidence_check import (
    GEMM_FORMATS,
    LOG_FORMATS,
    check_evidence,
    check_gemm_evidence,
    check_log_evidence,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.gemm_verdict import (
    GemmParameters,
    begin_dtype,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.golden import (
    GoldenOptions,
    GoldenParameters,
)
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.golden_profile import Profile
from ansible_collections.cre.certification.plugins.module_utils.engine.logs.profile_match import step_matches
from ansible_collections.cre.certification.plugins.modules.evidence_check import SPEC
from ansible_collections.cre.certification.plugins.plugin_utils.engine_action import EngineAction


def check_face(args: dict[str, Any]) -> dict[str, Any]:
    """The task result for validated arguments (the path already resolved)."""
    if args["gpus"] is not None and args["gpus"] < 1:
        raise InputError("gpus", f"{args['gpus']} is not a GPU count: give at least 1, or leave it out")
    try:
        with open(args["path"], encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError as err:
        raise InputError("path", f"cannot read {args['path']}: {err.strerror}") from None
    if args["format"] in LOG_FORMATS:
        return {"changed": False, **check_log_evidence(text, args["format"], args["node"], _profile(args, text),
                                                       args["test_type"])}
    for name in ("floor_tflops", "power_default_w"):
        if args[name] is not None and args[name] <= 0:
            raise InputError(name, f"{args[name]} is not a figure: give a positive number, or leave it out")
    options = Options(node=args["node"], expected_gpus=args["gpus"], skip_is_failure=args["skip_is_failure"])
    try:
        if args["format"] in CONFIG_FORMATS:
            profile = _golden_profile(args["profile"])
            parameters = GoldenParameters(args["product"], args["platform"], profile)
            out = check_config_evidence(text, args["format"], GoldenOptions.of(options, parameters))
        elif args["format"] in GEMM_FORMATS:
            out = check_gemm_evidence(text, args["format"], options, _gemm_parameters(args, text))
        else:
            out = check_evidence(text, args["format"], options)
    except UnreadableOutput as err:
        raise InputError("path", f"{args['path']} is not {args['format']} output: {err}") from None
    return {"changed": False, **out}


def _golden_profile(path: Optional[str]) -> Profile:  # noqa: UP045 - as the module_utils
    """The shipped golden profile, or the user's file over it (its errors named under `profile`)."""
    if path is None:
        return defaults()
    try:
        return load_file(path)
    except InputError as err:
        raise InputError("profile", str(err)) from None


def _gemm_parameters(args: dict[str, Any], text: str) -> GemmParameters:
    """The burn-in's parameters for a saved harness log: the floor and default power limit of `product` from the
    catalog (for the dtype the log's begin record names), each replaced by the one given."""
    product = args["product"] or ""
    dtype = begin_dtype(text) or "bf16"
    floor, provisional = floor_for(product, dtype) if product else (None, False)
    if args["floor_tflops"] is not None:
        floor, provisional = args["floor_tflops"], False
    power = args["power_default_w"] if args["power_default_w"] is not None else default_power_w(product)
    return GemmParameters(dtype=dtype, product=product, floor_tflops=floor, floor_provisional=provisional,
                          power_default_w=power)


# The pattern a profile needs for each log format.
_PATTERN = {"nccl-tests": "bandwidthResult", "training": "trainingStep"}


def _profile(args: dict[str, Any], text: str) -> dict[str, Any]:
    """The built-in LogProfile named, else nccl-bandwidth for nccl-tests and, for training, the training profile
    whose step pattern reads the most of the log's lines (the first by name on a tie)."""
    pattern = _PATTERN[args["format"]]
    usable = [p for p in builtin_profiles() if pattern in p["spec"]["patterns"]]
    names = ", ".join(p["metadata"]["name"] for p in usable)
    if args["profile"] is not None:
        found = builtin_profile(args["profile"])
        if found is None or pattern not in found["spec"]["patterns"]:
            raise InputError("profile", f"no built-in LogProfile named {args['profile']!r} reads {args['format']} "
                                        f"logs (those that do: {names})")
        return found
    if args["format"] == "nccl-tests":
        return builtin_profile("nccl-bandwidth") or usable[0]
    counts = step_matches(text, usable)
    return max(usable, key=lambda p: counts[p["metadata"]["name"]])


class ActionModule(EngineAction):
    SPEC = SPEC
    _supports_check_mode = True  # reads local files only

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        self.local_paths(args, "path")
        if args["format"] in CONFIG_FORMATS and args["profile"] is not None:
            self.local_paths(args, "profile")  # for these formats, a golden profile's file
        return check_face(args)
