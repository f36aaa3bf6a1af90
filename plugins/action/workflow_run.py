"""workflow_run: one process drives the whole Workflow; progress lines reach ansible-playbook and AWX."""
from __future__ import annotations

from typing import Any

from ansible.utils.display import Display

from ansible_collections.cre.certification.plugins.module_utils.driver.execute import Abandoned
from ansible_collections.cre.certification.plugins.module_utils.driver.workflow import DriverError, run_workflow
from ansible_collections.cre.certification.plugins.module_utils.kube.client import api_client
from ansible_collections.cre.certification.plugins.module_utils.kube.rest import Kube
from ansible_collections.cre.certification.plugins.modules.workflow_run import SPEC
from ansible_collections.cre.certification.plugins.plugin_utils.engine_action import EngineAction, caller_alive

display = Display()


class ActionModule(EngineAction):
    SPEC = SPEC
    _supports_check_mode = True

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        try:
            return run_workflow(
                Kube(api_client(args)), args["namespace"], args["name"], timeout=args["timeout"],
                until_iteration=args["until_iteration"], poll_interval=args["poll_interval"],
                check_mode=self._task.check_mode, progress=display.display, trace=display.v,
                alive=caller_alive())
        except (DriverError, Abandoned) as exc:
            return {"failed": True, "msg": str(exc)}
