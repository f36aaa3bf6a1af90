"""certification_run: the Certification tier (surroundings.md §3.2) driven from the controller, category after
category; the rules are the engine's (engine/reconcile/certification_tier.py), the loop the driver's."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.driver.certification import run_certification
from ansible_collections.cre.certification.plugins.module_utils.kube.client import api_client
from ansible_collections.cre.certification.plugins.module_utils.kube.rest import Kube
from ansible_collections.cre.certification.plugins.modules.certification_run import SPEC
from ansible_collections.cre.certification.plugins.plugin_utils.engine_action import EngineAction


class ActionModule(EngineAction):
    SPEC = SPEC
    _supports_check_mode = True

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        return run_certification(lambda: Kube(api_client(args)), args, self.run_options(args), self._track)

    def _track(self, run: Any) -> None:
        self.progress_of = run
