"""Read the YAML/JSON input files a face is given (on the controller), with errors that name the option."""
from __future__ import annotations

from typing import Any

import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError

_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C loader reads a 10,000-node file in a second

# YAML nodes that aliases may add to a file once expanded: anchors for a few repeated blocks fit, an alias bomb
# ("billion laughs": each level aliasing the one before many times) does not. PyYAML shares an aliased object
# instead of copying it, so the bomb costs nothing to load, but everything that walks or serializes the result
# (the engine, Ansible's result) would expand it.
ALIAS_BUDGET = 10_000


class _BoundedLoader(_BASE):  # type: ignore[misc,valid-type]
    """A safe loader that counts the nodes each alias stands for and refuses a file whose aliases add more than
    ALIAS_BUDGET; the composer (C) is untouched, only an alias's second construction is counted."""

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self.alias_nodes = 0

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        if node in self.constructed_objects:  # an alias: the object is shared, its expansion is what we count
            self.alias_nodes += _size(node, ALIAS_BUDGET - self.alias_nodes + 1)
            if self.alias_nodes > ALIAS_BUDGET:
                raise yaml.constructor.ConstructorError(
                    None, None, f"its aliases expand to more than {ALIAS_BUDGET} YAML nodes (an alias bomb?); write "
                    "the values out instead of aliasing them", node.start_mark)
        return super().construct_object(node, deep)


def _size(node: yaml.Node, cap: int) -> int:
    """The nodes under `node` (itself included) counted as if aliases were copies, stopping at `cap`."""
    count, stack = 0, [node]
    while stack and count < cap:
        current = stack.pop()
        count += 1
        if isinstance(current, yaml.SequenceNode):
            stack.extend(current.value)
        elif isinstance(current, yaml.MappingNode):
            stack.extend(child for pair in current.value for child in pair)
    return count


def load_documents(path: str, option: str) -> list[Any]:
    """The YAML/JSON documents of a file (empty ones dropped); errors name the option and the position."""
    try:
        with open(path, encoding="utf-8") as handle:
            return [doc for doc in yaml.load_all(handle, Loader=_BoundedLoader) if doc is not None]
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
