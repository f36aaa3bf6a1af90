"""The import graph of plugins/, read from the source (ast), for the tests that hold the tree's shape: layers, faces,
circles. Modules are named by their path under plugins/ (`module_utils.engine.api.errors`)."""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PLUGINS = ROOT / "plugins"
ABSOLUTE = "ansible_collections.cre.certification.plugins."


@dataclass(frozen=True)
class Import:
    source: str      # the importing module
    target: str      # the imported module of plugins/ (a package's `__init__` is its package name), or a foreign name
    level: int       # 0 absolute, else how many dots
    written: str     # as written: `..api.errors`, `yaml`
    line: int
    in_function: bool
    type_checking: bool  # under `if TYPE_CHECKING:` (never run)

    @property
    def ours(self) -> bool:
        return self.level > 0 or self.written.startswith(ABSOLUTE)


def module_name(path: Path) -> str:
    parts = path.relative_to(PLUGINS).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PLUGINS.rglob("*.py"))}


def _package(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _resolve(known: dict[str, Path], base: str, alias: str | None) -> str:
    """`base` (a module or package of ours), or its submodule `alias` where one by that name exists."""
    if alias and f"{base}.{alias}" in known:
        return f"{base}.{alias}"
    return base


def imports(path: Path, known: dict[str, Path] | None = None) -> list[Import]:
    """Every import in the file, `from x import a, b` once per submodule it names."""
    known = known if known is not None else modules()
    name = module_name(path)
    tree = ast.parse(path.read_text())
    parents: dict[ast.AST, ast.AST] = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Import | ast.ImportFrom):
            continue
        in_function, type_checking, up = False, False, parents.get(node)
        while up is not None:
            in_function |= isinstance(up, ast.FunctionDef | ast.AsyncFunctionDef)
            type_checking |= isinstance(up, ast.If) and "TYPE_CHECKING" in ast.unparse(up.test)
            up = parents.get(up)
        if isinstance(node, ast.Import):
            targets = [(alias.name, alias.name.removeprefix(ABSOLUTE), None) for alias in node.names]
            level = 0
        else:
            level, written = node.level, node.module or ""
            if level:
                base = _package(name, path).split(".")
                base = base[:len(base) - (level - 1)] if level > 1 else base
                absolute = ".".join(base + ([written] if written else []))
                written = "." * level + written
            else:
                absolute = written.removeprefix(ABSOLUTE)
            targets = [(written, absolute, alias.name) for alias in node.names]
        for written, absolute, alias in targets:
            target = _resolve(known, absolute, alias) if level or written.startswith(ABSOLUTE) else absolute
            found.append(Import(name, target, level, written, node.lineno, in_function, type_checking))
    return found


def graph(*, with_functions: bool = True) -> dict[str, set[str]]:
    """Module -> the modules of ours it imports when it runs (TYPE_CHECKING imports left out)."""
    known = modules()
    out: dict[str, set[str]] = {name: set() for name in known}
    for name, path in known.items():
        for found in imports(path, known):
            if found.ours and not found.type_checking and (with_functions or not found.in_function):
                out[name].add(found.target)
    return out


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(edges.get(node, ())):
            if nxt not in edges:
                continue
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found
