"""RFC 6902 JSON Patch with the error texts NVCRE's Go library (evanphx/json-patch) reports.

The ``jsonpatch`` package applies each operation; before it does, the target is resolved here so that a
missing path fails with evanphx's words (``add operation does not apply: doc is missing path: "/a/b": missing
value``) rather than Python's. Errors are ``JSONPatchError`` whose message starts with ``invalid JSON Patch:``
(the patch is not a list of objects) or ``apply JSON Patch:`` (an operation does not apply), as NVCRE wraps them.
"""
from __future__ import annotations

import copy
from typing import Any

try:
    import jsonpatch
    import jsonpointer
except ImportError:  # requirements.py: no face runs without them
    from ...requirements import ABSENT as jsonpatch  # type: ignore[no-redef]
    from ...requirements import ABSENT as jsonpointer  # type: ignore[no-redef]

OPERATIONS = ("add", "remove", "replace", "move", "copy", "test")


class JSONPatchError(ValueError):
    """A JSON Patch that is malformed or does not apply."""


def _tokens(path: str) -> list[str]:
    return [t.replace("~1", "/").replace("~0", "~") for t in path.split("/")[1:]]


def _index(container: list[Any], token: str, allow_end: bool) -> int | None:
    if token == "-" and allow_end:
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        return None
    idx = int(token)
    return idx if idx < len(container) + (1 if allow_end else 0) else None


def _container(doc: Any, path: str) -> tuple[Any, str] | None:
    """The object or array that holds ``path``'s last token, and that token; None when it does not exist."""
    if not path.startswith("/"):
        return None
    *parents, last = _tokens(path)
    cur = doc
    for token in parents:
        if isinstance(cur, dict) and token in cur:
            cur = cur[token]
        elif isinstance(cur, list) and _index(cur, token, allow_end=False) is not None:
            cur = cur[int(token)]
        else:
            return None
    return (cur, last) if isinstance(cur, (dict, list)) else None


def _has(container: Any, token: str) -> bool:
    if isinstance(container, dict):
        return token in container
    return _index(container, token, allow_end=False) is not None


def _check(doc: Any, op: dict[str, Any], kind: str) -> None:
    """Raise evanphx's error when ``op`` cannot apply to ``doc``."""
    path = op["path"]
    if path == "":
        return  # whole-document operations: left to the library
    found = _container(doc, path)
    if kind in ("move", "copy"):
        source = _container(doc, op["from"])
        if source is None or not _has(*source):
            raise JSONPatchError(f"{kind} operation does not apply: doc is missing from path: {op['from']}: missing value")
        if found is None:
            raise JSONPatchError(f"{kind} operation does not apply: doc is missing destination path: {path}: missing value")
        return
    if found is None:
        if kind == "test":
            raise JSONPatchError(f"test operation does not apply: is missing path: {path}: missing value")
        quoted = f'"{path}"' if kind in ("add", "remove") else path
        raise JSONPatchError(f"{kind} operation does not apply: doc is missing path: {quoted}: missing value")
    container, token = found
    if kind == "add" and isinstance(container, list) and _index(container, token, allow_end=True) is None:
        raise JSONPatchError(f"error in add for path: '{path}': Unable to access invalid index: {token}: "
                             "invalid index referenced")
    if kind == "remove" and not _has(container, token):
        detail = (f"Unable to remove nonexistent key: {token}: missing value" if isinstance(container, dict)
                  else f"Unable to access invalid index: {token}: invalid index referenced")
        raise JSONPatchError(f"error in remove for path: '{path}': {detail}")
    if kind == "replace" and not _has(container, token):
        raise JSONPatchError(f"replace operation does not apply: doc is missing key: {path}: missing value")
    if kind == "test" and not _has(container, token):
        raise JSONPatchError(f"testing value {path} failed: test failed")


def apply_json_patch(doc: Any, patch: Any) -> Any:
    """Apply RFC 6902 ``patch`` to a copy of ``doc`` and return it (``doc`` is not changed)."""
    if not isinstance(patch, list):
        kind = "object" if isinstance(patch, dict) else "string" if isinstance(patch, str) else "number"
        raise JSONPatchError(f"invalid JSON Patch: json: cannot unmarshal {kind} into Go value of type jsonpatch.Patch")
    for op in patch:
        if not isinstance(op, dict):
            raise JSONPatchError("invalid JSON Patch: json: cannot unmarshal "
                                 f"{'array' if isinstance(op, list) else 'string'} into Go value of type jsonpatch.Operation")
    result = copy.deepcopy(doc)
    for op in patch:
        kind = op.get("op") if isinstance(op.get("op"), str) else "unknown"
        try:
            if kind not in OPERATIONS:
                raise JSONPatchError(f"Unexpected kind: {kind}: unknown object type")
            if not isinstance(op.get("path"), str):
                raise JSONPatchError(f"{kind} operation failed to decode path: missing value")
            if kind in ("move", "copy") and not isinstance(op.get("from"), str):
                raise JSONPatchError(f"{kind} operation failed to decode from: missing value")
            _check(result, op, kind)
            # evanphx treats an absent "value" as null; the Python library insists on the member.
            step = {**op, "value": op.get("value")} if kind in ("add", "replace", "test") else op
            result = jsonpatch.apply_patch(result, [copy.deepcopy(step)], in_place=True)
        except jsonpatch.JsonPatchTestFailed:
            raise JSONPatchError(f"apply JSON Patch: testing value {op['path']} failed: test failed") from None
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as err:
            raise JSONPatchError(f"apply JSON Patch: {err}") from None
        except JSONPatchError as err:
            raise JSONPatchError(f"apply JSON Patch: {err}") from None
    return result
