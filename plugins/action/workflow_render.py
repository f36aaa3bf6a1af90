"""workflow_render: read the Workflow and node inputs on the controller and render them with the engine."""
from __future__ import annotations

import os
from typing import Any

import yaml
from ansible.errors import AnsibleError

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError
from ansible_collections.cre.certification.plugins.module_utils.engine.plan import mocknodes
from ansible_collections.cre.certification.plugins.module_utils.engine.plan.render import render
from ansible_collections.cre.certification.plugins.modules.workflow_render import SPEC
from ansible_collections.cre.certification.plugins.plugin_utils.engine_action import EngineAction

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader reads a 10,000-node file in a second


def load_documents(path: str, option: str) -> list[Any]:
    """The YAML/JSON documents of a file (empty ones dropped); errors name the option and the position."""
    try:
        with open(path, encoding="utf-8") as handle:
            return [doc for doc in yaml.load_all(handle, Loader=_LOADER) if doc is not None]
    except OSError as err:
        raise InputError(option, f"cannot read {path}: {err.strerror}") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(err, "problem", None) or str(err)
        raise InputError(option, f"invalid YAML in {path}{where}: {problem}") from None


def load_workflow(path: str) -> Any:
    docs = load_documents(path, "src")
    if len(docs) != 1:
        raise InputError("src", f"{path} must hold exactly one YAML document (the Workflow), found {len(docs)}")
    return docs[0]


def load_nodes(path: str) -> Any:
    """Nodes from a file: a list, a `v1 List`/`NodeList` with `items`, or one Node per document."""
    docs = load_documents(path, "nodes_file")
    if len(docs) == 1 and isinstance(docs[0], list):
        return docs[0]
    if len(docs) == 1 and isinstance(docs[0], dict) and docs[0].get("kind") in ("List", "NodeList"):
        items = docs[0].get("items")
        if not isinstance(items, list):
            raise InputError("nodes_file.items", "must be a list of Node objects")
        return items
    if docs and all(isinstance(d, dict) and d.get("kind") == "Node" for d in docs):
        return docs
    raise InputError("nodes_file", f"{path} must hold a list of Nodes, a v1 List of Nodes, or one Node per document")


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
    rendered = render(workflow, nodes, source, workflow_source)
    result: dict[str, Any] = {"changed": False, "workflow": rendered.workflow, "plan": rendered.plan}
    if rendered.failure is not None:
        result.update(failed=True, reason=rendered.failure.reason, msg=rendered.failure.message)
    return result


class ActionModule(EngineAction):
    SPEC = SPEC
    _supports_check_mode = True

    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        for option in ("src", "nodes_file"):
            if args[option] is not None and not os.path.isabs(args[option]):
                args[option] = self._find_file(args[option])
        return render_face(args)

    def _find_file(self, path: str) -> str:
        """Relative paths as the copy/template actions find them (role/playbook `files/`), else as given."""
        try:
            return self._find_needle("files", path)
        except AnsibleError:
            return path
