"""golden_generate: a golden profile from the snapshots of a run the user trusts (driver/golden_files.py)."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.driver.golden_files import generate_file
from ansible_collections.cre.certification.plugins.modules.golden_generate import SPEC
from ansible_collections.cre.certification.plugins.plugin_utils.engine_action import EngineAction


class ActionModule(EngineAction):
    SPEC = SPEC
    _supports_check_mode = True  # reads and writes only the controller's files

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        self.local_dirs(args, "src")
        return generate_file(args, bool(self._task.check_mode))
