"""bundle_read: check a results bundle against its manifest and read its rows on the controller
(driver/bundle_read.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.driver.bundle_read import read_bundle
from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.modules.bundle_read import SPEC
from ansible_collections.cre.certification.plugins.plugin_utils.engine_action import EngineAction


def read_face(args: dict[str, Any]) -> dict[str, Any]:
    """The task result for validated arguments (the path already resolved)."""
    if args["limit"] < 0:
        raise InputError("limit", f"{args['limit']} is not a row count: give 0 (every row) or more")
    return {"changed": False, **read_bundle(Path(args["path"]), node=args["node"], component=args["component"],
                                            outcome=args["outcome"], limit=args["limit"])}


class ActionModule(EngineAction):
    SPEC = SPEC
    _supports_check_mode = True  # reads local files only

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        self.local_paths(args, "path")
        return read_face(args)
