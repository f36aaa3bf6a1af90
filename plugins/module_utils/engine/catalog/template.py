"""The small declarative template language of the catalog's YAML files (our stand-in for NVCRE's text/template).

Entries stay valid YAML. A string may hold `{{name}}` placeholders: a string that is exactly one
placeholder keeps the value's type (`"{{gpusPerNode}}"` renders as the int 8), `{{name|str}}` forces
text, and placeholders inside longer text are formatted (booleans as `true`/`false`). Mappings whose
keys start with `$` are directives:

- `$if: {var: test, ...}` / `$unless: {...}` on any mapping or list item: when the condition fails the
  node disappears from its parent (a mapping key or a list item). A test is a scalar (equality), a
  list (membership), or `{in: [...]}`, `{notIn: [...]}`, `{gt: n}`, `{set: bool}` (truthiness).
- `$lib: path` renders `catalog/_lib/<path>` here (a missing file is an error); `$with: {var: value}`
  adds variables for that fragment. In a list, a fragment that renders to a list is spliced in.
- `$items: [...]` splices a (conditional) group of items into the enclosing list.
- `$value: node` stands for a (conditional) scalar or object.
- `$mpiArgs: env-list` becomes the mpirun pairs `-x`, `NAME=value` (spliced into the list).
- `$file: path` is the raw text of a `_lib` file; `$template: path` the same with placeholders filled.
- `$json: node` / `$yaml: node` serialise a rendered node; `$join: list` with `$sep` joins strings;
  `$repeat: value` with `$count: n` splices n copies.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

try:
    import yaml
except ImportError:  # requirements.py: no face runs without it
    from ...requirements import ABSENT as yaml  # type: ignore[no-redef]

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\|\s*str\s*)?\}\}")


class TemplateError(Exception):
    """A defect in the catalog data itself (never caused by user input)."""


class _Absent:
    """Marks a node whose condition failed; the parent drops it."""


ABSENT = _Absent()

# Reads a `_lib` file by relative path; raises TemplateError when it does not exist.
LibReader = Callable[[str], str]
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@cache
def parsed_yaml(text: str) -> Any:
    """Fragments are parsed once per process; rendering never mutates the parsed tree."""
    return yaml.load(text, Loader=_LOADER)


class Renderer:
    """Renders one template tree against a variable scope; `_lib` fragments are read through `read_lib`."""

    def __init__(self, variables: Mapping[str, Any], read_lib: LibReader) -> None:
        self.vars = dict(variables)
        self.read_lib = read_lib

    def render(self, node: Any) -> Any:
        if isinstance(node, str):
            return self.text(node)
        if isinstance(node, list):
            return self._list(node)
        if isinstance(node, dict):
            return self._mapping(node)
        return node

    def text(self, value: str) -> Any:
        whole = PLACEHOLDER.fullmatch(value.strip()) if value.strip().startswith("{{") else None
        if whole and not whole.group(2):
            return self._lookup(whole.group(1))
        return PLACEHOLDER.sub(lambda m: _format(self._lookup(m.group(1))), value)

    def _lookup(self, name: str) -> Any:
        if name not in self.vars:
            raise TemplateError(f"unknown template variable {name!r}")
        return self.vars[name]

    def _holds(self, node: dict) -> bool:
        if "$if" in node and not self._condition(node["$if"]):
            return False
        return not ("$unless" in node and self._condition(node["$unless"]))

    def _condition(self, tests: Mapping[str, Any]) -> bool:
        # A variable a fragment's caller did not pass counts as unset in conditions.
        return all(_test(self.vars.get(name), self.render(test)) for name, test in tests.items())

    def _list(self, items: list) -> list:
        out: list = []
        for item in items:
            if isinstance(item, dict) and _directive(item) in ("$items", "$mpiArgs", "$repeat", "$lib"):
                if not self._holds(item):
                    continue
                value = self._directive_value(item)
                if isinstance(value, list):
                    out.extend(value)
                elif value is not ABSENT:
                    out.append(value)
                continue
            value = self.render(item)
            if value is not ABSENT:
                out.append(value)
        return out

    def _mapping(self, node: dict) -> Any:
        if not self._holds(node):
            return ABSENT
        if _directive(node):
            return self._directive_value(node)
        out = {}
        for key, value in node.items():
            if key in ("$if", "$unless"):
                continue
            rendered = self.render(value)
            if rendered is not ABSENT:
                out[self.text(key) if "{{" in key else key] = rendered
        return out

    def _directive_value(self, node: dict) -> Any:
        kind = _directive(node)
        if kind == "$lib":
            scope = Renderer({**self.vars, **self.render(node.get("$with", {}))}, self.read_lib)
            return scope.render(parsed_yaml(self.read_lib(self.text(node["$lib"]))))
        if kind in ("$items", "$value"):
            return self.render(node[kind])
        if kind == "$mpiArgs":
            return [part for env in self.render(node[kind]) for part in ("-x", f"{env['name']}={env['value']}")]
        if kind == "$file":
            return self.read_lib(self.text(node[kind]))
        if kind == "$template":
            return self.text(self.read_lib(self.text(node[kind])))
        if kind == "$json":
            return json.dumps(self.render(node[kind]), separators=(",", ":"))
        if kind == "$yaml":
            return yaml.safe_dump(self.render(node[kind]), default_flow_style=False, sort_keys=False)
        if kind == "$join":
            return node.get("$sep", ",").join(str(v) for v in self.render(node[kind]))
        if kind == "$repeat":
            return [self.render(node[kind]) for _copy in range(int(self.render(node["$count"])))]
        raise TemplateError(f"unknown directive {kind}")


_DIRECTIVES = ("$lib", "$items", "$value", "$mpiArgs", "$file", "$template", "$json", "$yaml", "$join", "$repeat")


def _directive(node: dict) -> str | None:
    found = [key for key in _DIRECTIVES if key in node]
    if len(found) > 1:
        raise TemplateError(f"one directive per node, got {found}")
    return found[0] if found else None


def _format(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


def _test(value: Any, test: Any) -> bool:
    if isinstance(test, list):
        return value in test
    if isinstance(test, dict):
        checks = {
            "in": lambda arg: value in arg,
            "notIn": lambda arg: value not in arg,
            "gt": lambda arg: value is not None and value > arg,
            "set": lambda arg: bool(value) == arg,
        }
        unknown = set(test) - set(checks)
        if unknown:
            raise TemplateError(f"unknown condition {sorted(unknown)}")
        return all(checks[op](arg) for op, arg in test.items())
    return value == test
