"""workloadrun_render: build a WorkloadRun's Workflow over mock or given nodes and render it, offline."""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.engine.plan import mocknodes
from ansible_collections.cre.certification.plugins.module_utils.engine.plan.render import render
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import workloadrun_tier as tier
from ansible_collections.cre.certification.plugins.modules.workloadrun_render import SPEC
from ansible_collections.cre.certification.plugins.plugin_utils.engine_action import EngineAction


def render_face(args: dict[str, Any]) -> dict[str, Any]:
    """The task result for validated arguments; bad input raises InputError, a failed build WorkflowFailure."""
    run = tier.desired_workload_run({**args, "labels": {}})
    if args["platform"] is not None:
        nodes, source = mocknodes.mock_nodes(args["platform"], args["gpu_architecture"], args["node_count"]), "platform"
    else:
        nodes, source = args["nodes"], "nodes"
    built, resolved, _platform = tier.build(tier.WorkloadRunWorld(run, nodes=nodes, now=datetime.now(UTC)))
    rendered = render(built, nodes, source, "spec")
    # NVCRE's render prints the GPUArchitectureDefaults message the controller would emit as a Warning event.
    warnings = [resolved.defaults_warning] if resolved.defaults_warning else []
    if rendered.failure is not None:
        # Refused at once by the Workflow controller: the reason instead of a Workflow that cannot run.
        return {"changed": False, "plan": rendered.plan, "failed": True, "reason": rendered.failure.reason,
                "msg": rendered.failure.message, "warnings": warnings}
    return {"changed": False, "workflow": rendered.workflow, "plan": rendered.plan,
            "warnings": warnings + rendered.warnings}


class ActionModule(EngineAction):
    SPEC = SPEC
    _supports_check_mode = True

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        return render_face(args)
