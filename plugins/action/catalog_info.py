"""catalog_info: list the catalog's categories, or build one category's WorkflowSpec, on the controller."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog import entries
from ansible_collections.cre.certification.plugins.modules.catalog_info import SPEC
from ansible_collections.cre.certification.plugins.plugin_utils import inputs
from ansible_collections.cre.certification.plugins.plugin_utils.engine_action import EngineAction


class ActionModule(EngineAction):
    SPEC = SPEC
    _supports_check_mode = True  # reads only the collection's own files

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        if args["domain"] is None:
            return {"changed": False, "categories": entries.list_categories()}
        inputs.check_category("variant", f"{args['domain']}/{args['variant']}")
        return {"changed": False, "spec": entries.build_spec(args["domain"], args["variant"], args["options"])}
