"""certification_results: read a Certification's (or one Workflow's) results and write the report files."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.driver.results import results
from ansible_collections.cre.certification.plugins.module_utils.engine.report.textbox import summary_box
from ansible_collections.cre.certification.plugins.module_utils.kube.client import api_client
from ansible_collections.cre.certification.plugins.module_utils.kube.rest import Kube
from ansible_collections.cre.certification.plugins.modules.certification_results import SPEC
from ansible_collections.cre.certification.plugins.plugin_utils import inputs
from ansible_collections.cre.certification.plugins.plugin_utils.engine_action import EngineAction, display


class ActionModule(EngineAction):
    SPEC = SPEC
    _supports_check_mode = True

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        for option in ("certification", "workflow", "workload_run"):
            if args[option] is not None:
                inputs.check_name(option, args[option])
        inputs.check_namespace("namespace", args["namespace"])
        out = results(Kube(api_client(args)), args, bool(self._task.check_mode))
        display.display(summary_box(out["report"], self.host))  # one call: boxes of parallel hosts never interleave
        return out
