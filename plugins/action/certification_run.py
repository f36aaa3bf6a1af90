"""certification_run: the Certification tier (surroundings.md §3.2) driven from the controller, category after
category; the rules are the engine's (engine/reconcile/certification_tier.py), the loop the driver's."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.driver.certification import run_certification
from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Ref
from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.kube.client import api_client
from ansible_collections.cre.certification.plugins.module_utils.kube.errors import ApiError
from ansible_collections.cre.certification.plugins.module_utils.kube.rest import Kube
from ansible_collections.cre.certification.plugins.modules.certification_run import SPEC
from ansible_collections.cre.certification.plugins.plugin_utils import inputs
from ansible_collections.cre.certification.plugins.plugin_utils.engine_action import EngineAction

# The Certification's name labels every object of its run, so it must also be a label value.
NAME_LIMIT = 63


class ActionModule(EngineAction):
    SPEC = SPEC
    _supports_check_mode = True

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        inputs.check_name("name", args["name"], NAME_LIMIT)
        inputs.check_namespace("namespace", args["namespace"])
        inputs.check_labels("labels", args["labels"])
        inputs.check_target(args["target"])
        self.local_dirs(args, "catalog_dirs")
        dirs = inputs.check_catalog_dirs(args)
        inputs.check_categories(args["categories"], dirs=dirs)
        warnings = inputs.catalog_warnings(dirs, inputs.category_names(args["categories"]))
        try:
            result = run_certification(lambda: self._connect(args), args, self.run_options(args), self._track)
        except InputError as err:
            raise inputs.certification_paths(err) from None
        return {**result, "warnings": warnings} if warnings else result

    def _connect(self, args: dict[str, Any]) -> Kube:
        """The client, once the input is valid; the namespace is created here (not before the input is checked)."""
        kube = Kube(api_client(args))
        if args["create_namespace"] and not self._task.check_mode:
            namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": args["namespace"]}}
            if kube.get(Ref.of(namespace)) is None:
                try:
                    kube.create(namespace)
                except ApiError as exc:
                    if exc.status != 409:  # made meanwhile by someone else: as good
                        raise
        return kube

    def _track(self, run: Any) -> None:
        self.progress_of = run
