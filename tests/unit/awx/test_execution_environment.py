"""awx/execution-environment.yml through ansible-builder: `ansible-builder create` makes the build context (no image
build) with this collection's tarball, its requirements and kubernetes.core, and builder's own introspection, run
on the collection installed from that tarball, finds the requirements through meta/execution-environment.yml."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.ansible_run import ROOT

BIN = ROOT / ".venv" / "bin"
VERSION = yaml.safe_load((ROOT / "galaxy.yml").read_text())["version"]
TARBALL = f"cre-certification-{VERSION}.tar.gz"


def requirement_lines(path: Path) -> list[str]:
    return [line.split("#")[0].strip() for line in path.read_text().splitlines() if line.split("#")[0].strip()]


@pytest.fixture(scope="module")
def context(tmp_path_factory) -> Path:
    """The build context of the EE definition as docs/awx.md builds it: the collection built into dist/ beside
    awx/, then `ansible-builder create`. The definition's relative paths keep the checkout's layout."""
    tree = tmp_path_factory.mktemp("ee")
    (tree / "awx").mkdir()
    for name in ("awx/execution-environment.yml", "requirements.txt", "bindep.txt"):
        shutil.copy2(ROOT / name, tree / name)
    subprocess.run([str(BIN / "ansible-galaxy"), "collection", "build", "--output-path", str(tree / "dist"), str(ROOT)],
                   capture_output=True, check=True, timeout=120)
    proc = subprocess.run([str(BIN / "ansible-builder"), "create", "-f", str(tree / "awx/execution-environment.yml"),
                           "--context", str(tree / "context"), "--output-filename", "Containerfile"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "outdated base image" not in proc.stdout + proc.stderr   # builder's default base is not used
    return tree / "context"


def test_build_context_holds_the_collection_and_its_requirements(context: Path) -> None:
    build = context / "_build"
    assert (build / "collections" / TARBALL).is_file()
    galaxy = yaml.safe_load((build / "requirements.yml").read_text())["collections"]
    assert {"name": f"/build/collections/{TARBALL}", "type": "file"} in galaxy  # where the galaxy stage copies _build
    assert [c["name"] for c in galaxy if c.get("type") != "file"] == ["kubernetes.core"]
    assert requirement_lines(build / "requirements.txt") == requirement_lines(ROOT / "requirements.txt")
    assert requirement_lines(build / "bindep.txt") == requirement_lines(ROOT / "bindep.txt")
    containerfile = (context / "Containerfile").read_text()
    assert "ansible-galaxy collection install $ANSIBLE_GALAXY_CLI_COLLECTION_OPTS -r requirements.yml" in containerfile
    assert 'ANSIBLE_INSTALL_REFS="ansible-core>=2.19.0,<2.20 ansible-runner>=2.4,<3"' in containerfile
    assert 'ARG EE_BASE_IMAGE="quay.io/centos/centos:stream9"' in containerfile   # a maintained EL9 base


def test_runtime_requirement_matches_the_ee_ansible_core() -> None:
    """The EE installs the ansible-core that meta/runtime.yml says is tested."""
    runtime = yaml.safe_load((ROOT / "meta/runtime.yml").read_text())["requires_ansible"]
    ee = yaml.safe_load((ROOT / "awx/execution-environment.yml").read_text())
    assert ee["dependencies"]["ansible_core"]["package_pip"] == f"ansible-core{runtime}"


def test_builder_introspection_reads_the_installed_collection(context: Path, tmp_path: Path) -> None:
    """The builder stage's introspect.py over the collection as the galaxy stage installs it (from the tarball in
    the context): the Python and system requirements come from meta/execution-environment.yml."""
    collections = tmp_path / "collections"
    subprocess.run([str(BIN / "ansible-galaxy"), "collection", "install", "--no-deps", "--force", "-p",
                    str(collections), str(context / "_build" / "collections" / TARBALL)],
                   capture_output=True, check=True, timeout=120)
    installed = collections / "ansible_collections" / "cre" / "certification"
    assert yaml.safe_load((installed / "meta/execution-environment.yml").read_text())["dependencies"] == \
        {"python": "requirements.txt", "system": "bindep.txt"}
    subprocess.run([str(BIN / "python"), str(context / "_build/scripts/introspect.py"), "introspect", str(collections),
                    "--write-pip", str(tmp_path / "pip.txt"), "--write-bindep", str(tmp_path / "bindep.txt")],
                   capture_output=True, check=True, timeout=60)
    found = (tmp_path / "pip.txt").read_text().splitlines()
    # Builder drops what every EE has (PyYAML, ansible-core, ...); the rest comes from this collection.
    expected = [f"{line}  # from collection cre.certification" for line in requirement_lines(ROOT / "requirements.txt")
                if not line.lower().startswith("pyyaml")]
    assert found == expected
    assert (tmp_path / "bindep.txt").read_text().splitlines() == \
        [f"{line}  # from collection cre.certification" for line in requirement_lines(ROOT / "bindep.txt")]
