"""evidence_check: read a saved tool output into per-GPU evidence on the controller (evidence/evidence_check.py)."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_results import UnreadableOutput
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.dcgm_verdict import Options
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.evidence_check import check_evidence
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
    options = Options(node=args["node"], expected_gpus=args["gpus"], skip_is_failure=args["skip_is_failure"])
    try:
        out = check_evidence(text, args["format"], options)
    except UnreadableOutput as err:
        raise InputError("path", f"{args['path']} is not {args['format']} output: {err}") from None
    return {"changed": False, **out}


class ActionModule(EngineAction):
    SPEC = SPEC
    _supports_check_mode = True  # reads local files only

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        self.local_paths(args, "path")
        return check_face(args)
