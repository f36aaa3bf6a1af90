"""Without the collection's requirements.txt every plugin still imports (ansible-test's import sanity test, ansible-doc)
and a face ends in one line naming what to install, as missing_required_lib words it, before it uses any of them."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ansible_collections.cre.certification.plugins.module_utils import requirements

ROOT = Path(__file__).resolve().parents[2]
COLLECTION = "ansible_collections.cre.certification"
PLUGINS = sorted(f"{COLLECTION}.{'.'.join(p.relative_to(ROOT).with_suffix('').parts)}"
                 for p in (ROOT / "plugins").rglob("*.py") if p.name != "__init__.py")

# Each module imported with every requirement blocked (None in sys.modules makes an import fail), then a face run.
SCRIPT = """
import importlib, json, sys
for name in {blocked!r}:
    sys.modules[name] = None
failed = {{}}
for module in {modules!r}:
    try:
        importlib.import_module(module)
    except Exception as exc:
        failed[module] = repr(exc)
from ansible_collections.cre.certification.plugins.module_utils import requirements
print(json.dumps({{"failed": failed, "missing": requirements.missing()}}))
"""


def imported_without(blocked: list[str], modules: list[str]) -> dict:
    proc = subprocess.run([sys.executable, "-c", SCRIPT.format(blocked=blocked, modules=modules)],
                          cwd=ROOT / ".collections", capture_output=True, text=True, timeout=120, check=True)
    return json.loads(proc.stdout.splitlines()[-1])


def test_every_plugin_imports_without_the_requirements_and_the_faces_say_what_to_install() -> None:
    # Controller plugins import Ansible, which brings PyYAML; modules and module_utils are imported without it
    # too, as ansible-test's import test imports them.
    controller = imported_without([m for m in [*requirements.REQUIRED, "pydantic_core"] if m != "yaml"], PLUGINS)
    assert len(PLUGINS) > 100 and controller["failed"] == {}
    assert controller["missing"] == ["pydantic", "kubernetes", "cel-python", "jsonpatch", "jsonpointer", "durationpy",
                                     "urllib3"]
    module_side = [m for m in PLUGINS if ".module_utils." in m or ".modules." in m]
    assert imported_without([*requirements.REQUIRED, "pydantic_core"], module_side)["failed"] == {}


def test_a_controller_with_the_requirements_misses_nothing() -> None:
    assert requirements.missing() == []


def test_a_face_on_a_controller_without_pydantic_names_what_to_install(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text("import sys\nsys.modules['pydantic'] = None\n")
    proc = subprocess.run([str(ROOT / ".venv/bin/ansible"), "localhost", "-m", "cre.certification.catalog_info"],
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": str(tmp_path), "ANSIBLE_LOCALHOST_WARNING": "0",
                                         "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0", "ANSIBLE_NOCOLOR": "1"},
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode != 0 and "Traceback" not in proc.stdout + proc.stderr
    assert "Failed to import the required Python library (pydantic) on " in proc.stdout, proc.stdout
    assert "This is required by cre.certification.catalog_info, which runs on the controller (install the " \
           "collection's requirements.txt: " in proc.stdout
