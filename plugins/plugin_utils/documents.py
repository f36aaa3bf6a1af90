"""Read the YAML/JSON input files a face is given (on the controller), with errors that name the option."""
from __future__ import annotations

from typing import Any

import yaml

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError

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
