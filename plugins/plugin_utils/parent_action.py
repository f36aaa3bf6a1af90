"""What the two faces that drive a parent run share (certification_run, workloadrun_run): the checks of the
run's name, namespace and labels, the namespace created once the input is valid, and the run tracked so that a
failure reports whether it wrote."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.driver.parent import ParentLoop, created
from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Ref
from ansible_collections.cre.certification.plugins.module_utils.kube.client import api_client
from ansible_collections.cre.certification.plugins.module_utils.kube.rest import Kube
from ansible_collections.cre.certification.plugins.plugin_utils import inputs
from ansible_collections.cre.certification.plugins.plugin_utils.engine_action import EngineAction

# The run's name labels every object of its run (and names a WorkloadRun's Workflow), so it must also be a label value.
NAME_LIMIT = 63


class ParentAction(EngineAction):
    """A face that drives a Certification or a WorkloadRun through its driver (driver/parent.py)."""

    _supports_check_mode = True

    @staticmethod
    def check_run(args: dict[str, Any]) -> None:
        """The run's name, namespace and labels, refused before anything is read or written."""
        inputs.check_name("name", args["name"], NAME_LIMIT)
        inputs.check_namespace("namespace", args["namespace"])
        inputs.check_labels("labels", args["labels"])

    def _connect(self, args: dict[str, Any]) -> Kube:
        """The client, once the input is valid; the namespace is created here (not before the input is checked)."""
        kube = Kube(api_client(args))
        if args["create_namespace"] and not self._task.check_mode:
            namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": args["namespace"]}}
            if kube.get(Ref.of(namespace)) is None:
                created(kube, namespace)  # None when made meanwhile by someone else: as good
        return kube

    def _track(self, run: ParentLoop) -> None:
        self.progress_of = run
