"""workflow_render: read the Workflow and node inputs on the controller and render them with the engine."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.engine.plan import mocknodes
from ansible_collections.cre.certification.plugins.module_utils.engine.plan.render import render
from ansible_collections.cre.certification.plugins.modules.workflow_render import SPEC
from ansible_collections.cre.certification.plugins.plugin_utils.documents import load_nodes, load_workflow
from ansible_collections.cre.certification.plugins.plugin_utils.engine_action import EngineAction
from ansible_collections.cre.certification.plugins.plugin_utils.memory import cyclic_gc_paused


def render_face(args: dict[str, Any]) -> dict[str, Any]:
    """The task result for validated arguments (paths already resolved). Engine errors propagate to the caller."""
    workflow, workflow_source = ((load_workflow(args["src"]), "src") if args["src"] is not None
                                 else (args["definition"], "definition"))
    if args["platform"] is not None:
        nodes, source = mocknodes.mock_nodes(args["platform"], args["gpu_architecture"], args["node_count"]), "platform"
    elif args["nodes_file"] is not None:
        nodes, source = load_nodes(args["nodes_file"]), "nodes_file"
    else:
        nodes, source = args["nodes"], "nodes"
    with cyclic_gc_paused():
        rendered = render(workflow, nodes, source, workflow_source)
    result: dict[str, Any] = {"changed": False, "workflow": rendered.workflow, "plan": rendered.plan,
                              "warnings": rendered.warnings}
    if rendered.failure is not None:
        result.update(failed=True, reason=rendered.failure.reason, msg=rendered.failure.message)
    return result


class ActionModule(EngineAction):
    SPEC = SPEC
    _supports_check_mode = True

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        self.local_paths(args, "src", "nodes_file")
        return render_face(args)
