"""workloadrun_run: the WorkloadRun tier (surroundings.md §3.4) driven from the controller; the rules are the
engine's (engine/reconcile/workloadrun_tier.py), the loop the driver's."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.driver.workloadrun import run_workload_run
from ansible_collections.cre.certification.plugins.modules.workloadrun_run import SPEC
from ansible_collections.cre.certification.plugins.plugin_utils.parent_action import ParentAction


class ActionModule(ParentAction):
    SPEC = SPEC

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        self.check_run(args)
        return run_workload_run(lambda: self._connect(args), args, self.run_options(args), self._track)
