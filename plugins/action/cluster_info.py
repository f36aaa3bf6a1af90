"""cluster_info: list the nodes once and summarize them with the engine."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.engine.models.common import TargetSpec
from ansible_collections.cre.certification.plugins.module_utils.engine.models.parse import parse
from ansible_collections.cre.certification.plugins.module_utils.engine.plan.cluster_summary import summarize
from ansible_collections.cre.certification.plugins.module_utils.kube.client import api_client
from ansible_collections.cre.certification.plugins.module_utils.kube.rest import Kube
from ansible_collections.cre.certification.plugins.modules.cluster_info import SPEC
from ansible_collections.cre.certification.plugins.plugin_utils import inputs
from ansible_collections.cre.certification.plugins.plugin_utils.engine_action import EngineAction


class ActionModule(EngineAction):
    SPEC = SPEC
    _supports_check_mode = True

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        parse(TargetSpec, args["target"], "target")  # bad input is refused before the cluster is reached
        inputs.check_target(args["target"])
        if args["topology_key"]:
            inputs.check_label_key("topology_key", args["topology_key"])
        nodes = Kube(api_client(args)).list("v1", "Node")
        return {"changed": False, **summarize(nodes, args["target"], args["topology_key"] or "")}
