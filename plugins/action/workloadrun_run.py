"""workloadrun_run: the WorkloadRun tier (surroundings.md §3.4) driven from the controller; the rules are the
engine's (engine/reconcile/workloadrun_tier.py), the loop the driver's."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.action.certification_run import NAME_LIMIT
from ansible_collections.cre.certification.plugins.action.certification_run import ActionModule as CertificationRun
from ansible_collections.cre.certification.plugins.module_utils.driver.workloadrun import run_workload_run
from ansible_collections.cre.certification.plugins.modules.workloadrun_run import SPEC
from ansible_collections.cre.certification.plugins.plugin_utils import inputs


class ActionModule(CertificationRun):
    """The Certification face's namespace creation and progress tracking, for one WorkloadRun."""

    SPEC = SPEC

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        # The run's name is the Workflow's and labels its objects, so it must also be a label value.
        inputs.check_name("name", args["name"], NAME_LIMIT)
        inputs.check_namespace("namespace", args["namespace"])
        inputs.check_labels("labels", args["labels"])
        return run_workload_run(lambda: self._connect(args), args, self.run_options(args), self._track)
