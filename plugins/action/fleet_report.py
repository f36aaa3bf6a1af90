"""fleet_report: one report over the per-host report folders of a fleet run (or of several job slices)."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.driver.fleet import fleet_report
from ansible_collections.cre.certification.plugins.modules.fleet_report import SPEC
from ansible_collections.cre.certification.plugins.plugin_utils.engine_action import EngineAction


class ActionModule(EngineAction):
    SPEC = SPEC
    _supports_check_mode = True  # reads and writes only the controller's files

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        return fleet_report(args, bool(self._task.check_mode))
