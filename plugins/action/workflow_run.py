"""workflow_run: one process drives the whole Workflow; progress lines reach ansible-playbook and AWX."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.driver.workflow import run_workflow
from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.kube.client import api_client
from ansible_collections.cre.certification.plugins.module_utils.kube.rest import Kube
from ansible_collections.cre.certification.plugins.modules.workflow_run import SPEC
from ansible_collections.cre.certification.plugins.plugin_utils import inputs
from ansible_collections.cre.certification.plugins.plugin_utils.engine_action import EngineAction


class ActionModule(EngineAction):
    SPEC = SPEC
    _supports_check_mode = True

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        inputs.check_name("name", args["name"])
        inputs.check_namespace("namespace", args["namespace"])
        if args["until_iteration"] is not None and args["until_iteration"] < 1:
            raise InputError("until_iteration", f"must be at least 1 (iterations count from 1), got {args['until_iteration']}")
        options = self.run_options(args)
        return run_workflow(Kube(api_client(args)), args["namespace"], args["name"], options, args["until_iteration"])
