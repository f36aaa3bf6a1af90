"""The shape the house keeps (docs/dev/architecture.md): no face imports another face, no import circle in plugins/,
no file in plugins/ over 500 lines (doc fragments aside), no clock and no I/O-bound catalog scan in the engine."""
from __future__ import annotations

import re

import pytest

from tests.unit.plugin_imports import PLUGINS, circles, graph, imports, modules

MAX_LINES = 500


def test_the_graph_sees_what_it_must() -> None:
    edges = graph()
    # A broken reader would find no edge and pass everything below.
    assert "module_utils.engine.api.errors" in edges["module_utils.engine.plan.render"]
    assert "modules.certification_run" in edges["action.certification_run"]
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_face_imports_another_face() -> None:
    """A face is a module's action plugin and its stub (`action.x`, `modules.x`): the action may read its own stub's
    argument spec, nothing of another face."""
    crossed = []
    for name, targets in graph().items():
        kind, face = name.split(".", 1)
        if kind not in ("action", "modules"):
            continue
        for target in targets:
            other_kind, other = (target.split(".", 1) + [""])[:2]
            if other_kind in ("action", "modules") and other != face:
                crossed.append((name, target))
    assert crossed == []


def test_no_import_circle_in_plugins() -> None:
    assert circles(graph()) == []


def test_no_import_dodges_a_circle_inside_a_function() -> None:
    """A function-level import of our own code is the sign of a circle dodged; the standard library's lazy imports
    (and the requirements guard) are fine."""
    known = modules()
    found = [(f.source, f.written, f.line) for path in known.values() for f in imports(path, known)
             if f.ours and f.in_function]
    assert found == []


@pytest.mark.parametrize("path", sorted(p for p in PLUGINS.rglob("*.py") if p.parent.name != "doc_fragments"),
                         ids=lambda p: str(p.relative_to(PLUGINS)))
def test_no_file_in_plugins_is_over_500_lines(path) -> None:
    assert len(path.read_text().splitlines()) <= MAX_LINES


def test_the_engine_reads_no_clock() -> None:
    engine = PLUGINS / "module_utils" / "engine"
    found = [(str(p.relative_to(engine)), n) for p in sorted(engine.rglob("*.py"))
             for n, line in enumerate(p.read_text().splitlines(), 1)
             if re.search(r"\b(datetime\.now|datetime\.utcnow|time\.time|time\.monotonic)\(", line)]
    assert found == []
