"""What the collection ships and declares: the tarball `ansible-galaxy collection build` makes, requirements.txt
and meta/runtime.yml."""
from __future__ import annotations

import ast
import re
import sys
import tarfile
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from tests.collection_build import build

ROOT = Path(__file__).resolve().parents[2]
# Reports, caches and working files a checkout accumulates; none may reach the tarball.
JUNK = [".venv/pyvenv.cfg", ".collections/ansible_collections/x", ".ansible/collections/x", ".pytest_cache/x",
        ".ruff_cache/x", ".mypy_cache/x", "tests/output/junit/x.xml", "out/lab/report.json",
        "cre-reports/lab/report.json", "plugins/modules/__pycache__/x.pyc", ".kwok/x"]
FORBIDDEN = ("out/", "cre-reports/", ".venv", ".collections", ".ansible/", "tests/output", ".ruff_cache",
             ".mypy_cache", ".pytest_cache", "bench/", ".ci/", "__pycache__", ".kwok")
REQUIRED = ("plugins/", "roles/", "catalog/", "crds/", "logprofiles/", "meta/runtime.yml", "playbooks/certify.yml",
            "requirements.txt")
# Import name -> distribution name, for the third-party imports of plugins/.
DISTRIBUTIONS = {"kubernetes": "kubernetes", "pydantic": "pydantic", "pydantic_core": "pydantic",
                 "jsonpatch": "jsonpatch", "jsonpointer": "jsonpointer", "yaml": "pyyaml", "celpy": "cel-python",
                 "durationpy": "durationpy", "urllib3": "urllib3"}
# Imported by plugins/ but brought by ansible-core (the HTML report's templates): never in requirements.txt.
CORE_DEPENDENCIES = {"jinja2": "jinja2", "markupsafe": "markupsafe"}


def requirements() -> dict[str, Requirement]:
    lines = [line.split("#")[0].strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    return {(r := Requirement(line)).name.lower(): r for line in lines if line}


@pytest.fixture(scope="module")
def tarball(tmp_path_factory) -> list[str]:
    """The member names of the tarball built from a copy of the tracked files plus a checkout's usual junk."""
    tarball = build(tmp_path_factory.mktemp("build"), JUNK)
    with tarfile.open(tarball) as tar:
        return [m.name + ("/" if m.isdir() else "") for m in tar.getmembers()]


def test_tarball_leaves_out_reports_caches_and_dev_files(tarball):
    leaked = [name for name in tarball if any(part in name for part in FORBIDDEN)]
    assert leaked == []


def test_tarball_holds_the_collection(tarball):
    for required in REQUIRED:
        assert any(name.startswith(required) for name in tarball), required
    assert "catalog/communication/" in tarball and "crds/nvcre.nvidia.com_workflows.yaml" in tarball
    # The HTML report's templates ship beside the module that renders them.
    templates = ROOT / "plugins" / "module_utils" / "engine" / "report" / "templates"
    assert sorted(p.name for p in templates.glob("*.j2"))
    for path in templates.glob("*.j2"):
        assert f"plugins/module_utils/engine/report/templates/{path.name}" in tarball, path.name


def test_requirements_are_what_plugins_import():
    imported = set()
    for path in (ROOT / "plugins").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module.split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"ansible", "ansible_collections"} - set(CORE_DEPENDENCIES)
    assert third_party <= set(DISTRIBUTIONS), third_party - set(DISTRIBUTIONS)
    assert {DISTRIBUTIONS[name] for name in third_party} == set(requirements())


def test_what_ansible_core_brings_is_imported_and_required_by_it():
    """jinja2 and markupsafe come with ansible-core (the controller's own); the HTML report imports them."""
    imported = {name for path in (ROOT / "plugins").rglob("*.py") for node in ast.walk(ast.parse(path.read_text()))
                if isinstance(node, (ast.Import, ast.ImportFrom))
                for name in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""])}
    assert {"jinja2", "markupsafe"} <= imported
    core = {Requirement(r).name.lower() for r in metadata.requires("ansible-core") or []}
    assert set(CORE_DEPENDENCIES.values()) <= core | {"markupsafe"} and "jinja2" in core
    jinja = {Requirement(r).name.lower() for r in metadata.requires("jinja2") or []}
    assert "markupsafe" in jinja
    assert not set(CORE_DEPENDENCIES.values()) & set(requirements())


def test_requirements_leave_ansible_to_the_dev_requirements():
    assert not {"ansible", "ansible-core"} & set(requirements())
    dev = (ROOT / "requirements-dev.txt").read_text()
    assert re.search(r"^ansible>=", dev, re.M) and re.search(r"^-r requirements.txt$", dev, re.M)


def test_installed_versions_meet_requirements():
    """The versions the tests run with satisfy requirements.txt, and the kubernetes floor is the client whose
    ApiClient.param_serialize kube/rest.py calls (first in 37.0.0)."""
    for name, req in requirements().items():
        assert req.specifier.contains(metadata.version(name), prereleases=True), (name, metadata.version(name))
    assert not requirements()["kubernetes"].specifier.contains("36.0.3")
    from kubernetes.client import ApiClient
    assert hasattr(ApiClient, "param_serialize")


def test_requires_ansible_is_the_tested_core():
    from ansible.release import __version__ as core
    from packaging.specifiers import SpecifierSet
    spec = SpecifierSet(yaml.safe_load((ROOT / "meta" / "runtime.yml").read_text())["requires_ansible"])
    assert spec.contains(core) and core.startswith("2.19.")
    assert not spec.contains("2.18.9") and not spec.contains("2.20.0")
