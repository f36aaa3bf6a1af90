"""certification_run: the Certification tier (surroundings.md §3.2) driven from the controller, category after
category; the rules are the engine's (engine/reconcile/certification_tier.py), the loop the driver's."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.driver.certification import run_certification
from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.modules.certification_run import SPEC
from ansible_collections.cre.certification.plugins.plugin_utils import inputs
from ansible_collections.cre.certification.plugins.plugin_utils.parent_action import ParentAction


class ActionModule(ParentAction):
    SPEC = SPEC

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        self.check_run(args)
        inputs.check_target(args["target"])
        self.local_dirs(args, "catalog_dirs")
        dirs = inputs.check_catalog_dirs(args)
        inputs.check_categories(args["categories"], dirs=dirs)
        warnings = inputs.catalog_warnings(dirs, inputs.category_names(args["categories"]))
        try:
            result = run_certification(lambda: self._connect(args), args, self.run_options(args), self._track)
        except InputError as err:
            raise inputs.certification_paths(err) from None
        return {**result, "warnings": warnings} if warnings else result
