"""certification_results: read a Certification's (or one Workflow's) results and write the report files."""
from __future__ import annotations

import json
import os
from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Ref
from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import category_build
from ansible_collections.cre.certification.plugins.module_utils.engine.reconcile import node_results
from ansible_collections.cre.certification.plugins.module_utils.engine.report import certreport
from ansible_collections.cre.certification.plugins.module_utils.kube.client import api_client
from ansible_collections.cre.certification.plugins.module_utils.kube.rest import Kube
from ansible_collections.cre.certification.plugins.modules.certification_results import SPEC
from ansible_collections.cre.certification.plugins.plugin_utils.engine_action import EngineAction

GROUP = "nvcre.nvidia.com/v1alpha1"
WORKFLOW_LABEL = "nvcre.nvidia.com/workflow"
FILES = ("certreport.json", "junit.xml", "certreport.md")


def category_data(kube: Kube, namespace: str, category: dict[str, Any], workflow: dict[str, Any] | None) -> dict:
    """What certreport.build_report needs for one category: the Workflow, its decoded node results, its Jobs."""
    data: dict[str, Any] = {"domain": category["domain"], "variant": category["variant"], "workflow": workflow,
                            "succeeded": [], "failed": [], "jobs": {}}
    if workflow is None:
        return data
    status = workflow.get("status") or {}
    for key, ref, read in (("succeeded", "succeededNodesRef", node_results.read_succeeded),
                           ("failed", "failedNodesRef", node_results.read_failed)):
        name = (status.get(ref) or {}).get("name")
        if name:
            data[key] = read(kube.get(Ref("v1", "ConfigMap", namespace, name)))
    name = workflow["metadata"]["name"]
    data["jobs"] = {j["metadata"]["name"]: j for j in kube.list(GROUP, "Job", namespace, f"{WORKFLOW_LABEL}={name}")}
    return data


def certification_data(kube: Kube, cert: dict[str, Any]) -> list[dict]:
    """Every category of a Certification in order, with its Workflow (the recorded ref, else the derived name)."""
    meta, spec = cert["metadata"], cert.get("spec") or {}
    namespace = meta.get("namespace") or "default"
    recorded = (cert.get("status") or {}).get("categoryStatuses") or []
    out = []
    for index, category in enumerate(spec.get("categories") or []):
        ref = (recorded[index].get("workflowRef") or {}) if index < len(recorded) else {}
        name = ref.get("name") or category_build.workflow_name(meta["name"], category)
        workflow = kube.get(Ref(GROUP, "Workflow", namespace, name))
        out.append(category_data(kube, namespace, category, workflow))
    return out


def render_files(built: dict) -> dict[str, str]:
    return {"certreport.json": json.dumps(built, indent=2, sort_keys=True) + "\n",
            "junit.xml": certreport.junit_xml(built), "certreport.md": certreport.markdown(built)}


def write_files(dest: str, contents: dict[str, str], check_mode: bool) -> bool:
    """Write the files whose content differs; True if any did (or would, in check mode)."""
    changed = False
    for name, text in contents.items():
        path = os.path.join(dest, name)
        try:
            with open(path, encoding="utf-8") as handle:
                if handle.read() == text:
                    continue
        except FileNotFoundError:
            pass
        changed = True
        if not check_mode:
            os.makedirs(dest, exist_ok=True)
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(text)
    return changed


def results(kube: Kube, args: dict[str, Any], check_mode: bool) -> dict[str, Any]:
    namespace = args["namespace"]
    if args["certification"]:
        cert = kube.get(Ref(GROUP, "Certification", namespace, args["certification"]))
        if cert is None:
            raise InputError("certification", f'Certification "{args["certification"]}" not found in namespace '
                                              f'"{namespace}"')
        built = certreport.build_report(args["certification"], certification_data(kube, cert))
    else:
        workflow = kube.get(Ref(GROUP, "Workflow", namespace, args["workflow"]))
        if workflow is None:
            raise InputError("workflow", f'Workflow "{args["workflow"]}" not found in namespace "{namespace}"')
        labels = workflow["metadata"].get("labels") or {}
        # A Workflow outside a Certification is its own category: `workflow/<name>`.
        category = {"domain": labels.get(category_build.LABEL_DOMAIN, "workflow"),
                    "variant": labels.get(category_build.LABEL_VARIANT, args["workflow"])}
        built = certreport.build_report(args["workflow"], [category_data(kube, namespace, category, workflow)])
    out: dict[str, Any] = {"changed": False, "result": built["result"], "report": built,
                           "summary": certreport.summary(built)}
    if args["dest"]:
        out["changed"] = write_files(args["dest"], render_files(built), check_mode)
        out["files"] = [os.path.join(args["dest"], name) for name in FILES]
    return out


class ActionModule(EngineAction):
    SPEC = SPEC
    _supports_check_mode = True

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        return results(Kube(api_client(args)), args, bool(self._task.check_mode))
