"""catalog_info: list the catalog's categories, or build one category's WorkflowSpec, on the controller."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.engine.catalog import entries, registry, user
from ansible_collections.cre.certification.plugins.modules.catalog_info import SPEC
from ansible_collections.cre.certification.plugins.plugin_utils import inputs
from ansible_collections.cre.certification.plugins.plugin_utils.engine_action import EngineAction


class ActionModule(EngineAction):
    SPEC = SPEC
    _supports_check_mode = True  # reads only the collection's own files

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        self.local_dirs(args, "catalog_dirs")
        dirs = inputs.check_catalog_dirs(args)
        catalog = user.load(dirs)
        if args["domain"] is None:
            problems = [{"file": p.file, "path": p.path, "message": p.message, "error": str(p)}
                        for p in catalog.all_problems()]
            return {"changed": False, "categories": registry.list_categories(catalog), "problems": problems,
                    **({"warnings": [f"user catalog entry refused: {p['error']}" for p in problems]}
                       if problems else {})}
        name = f"{args['domain']}/{args['variant']}"
        inputs.check_category("variant", name, dirs)
        result = {"changed": False, "spec": entries.build_spec(args["domain"], args["variant"], args["options"], catalog)}
        warnings = inputs.catalog_warnings(dirs, [name])
        return {**result, "warnings": warnings} if warnings else result
