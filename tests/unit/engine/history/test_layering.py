"""history/ stays pure and in its layer: it imports only api/ and spec/ of the engine, no Ansible, no I/O, no clock."""
from __future__ import annotations

from tests.unit.plugin_imports import PLUGINS, imports

HISTORY = PLUGINS / "module_utils" / "engine" / "history"
# The standard modules it needs; anything else (os, time, datetime, subprocess, socket, ansible, ...) is refused.
ALLOWED = {"__future__", "collections", "math", "re", "statistics", "typing", "yaml", "celpy"}


def test_history_imports_only_api_spec_and_itself():
    modules = sorted(HISTORY.glob("*.py"))
    assert {path.stem for path in modules} >= {"figures", "baseline", "rules", "compare", "offenders", "trend"}
    own = {path.stem for path in modules}
    for path in modules:
        for found in imports(path):
            level, module = found.level, found.written.lstrip(".")
            top = module.split(".")[0]
            where = (path.name, "." * level + module)
            if level == 0:
                assert top in ALLOWED, where
            elif level == 1:
                assert top in own or module == "", where  # `from . import rules`
            elif level == 2:
                assert top in ("api", "spec"), where
            else:
                assert (level, module) == (3, "requirements"), where  # ABSENT, for a missing library
