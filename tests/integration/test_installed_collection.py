"""The collection as a user installs it: the built tarball in a fresh virtualenv that has only ansible-core,
requirements.txt and kubernetes.core, `ansible-playbook cre.certification.certify` from the installed collection
against a simulated cluster, the report under the directory the play runs in."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.ansible_run import ROOT
from tests.collection_build import build

pytestmark = pytest.mark.clusters(("aws-h100", 2))

CORE = "ansible-core>=2.19,<2.20"  # what meta/runtime.yml's requires_ansible states


def sh(*cmd: str | Path, timeout: float = 600, **kwargs) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout, check=False,
                          **kwargs)
    assert proc.returncode == 0, f"{cmd}: {proc.stdout[-3000:]}{proc.stderr[-3000:]}"
    return proc


def kubernetes_core() -> Path:
    """kubernetes.core as the dev environment has it (the PyPI ansible bundle): a collection directory with its
    MANIFEST.json, which ansible-galaxy installs like a downloaded one."""
    import ansible_collections
    return next(path for path in (Path(p) / "kubernetes" / "core" for p in ansible_collections.__path__)
                if (path / "MANIFEST.json").is_file())


def test_certify_runs_from_the_installed_collection(shared, tmp_path: Path) -> None:
    venv, collections, work = tmp_path / "venv", tmp_path / "collections", tmp_path / "work"
    sh(getattr(sys, "_base_executable", sys.executable), "-m", "venv", venv)
    sh(venv / "bin/pip", "install", "--quiet", CORE, "-r", ROOT / "requirements.txt", timeout=900)
    tarball = build(tmp_path / "build")
    # Outside the checkout (its ansible.cfg points at the dev tree) and blind to any other installed copy.
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ANSIBLE_", "VIRTUAL_ENV"))}
    env.update(ANSIBLE_COLLECTIONS_PATH=str(collections), ANSIBLE_NOCOLOR="1",
               PATH=f"{venv / 'bin'}:{env.get('PATH', '')}")
    sh(venv / "bin/ansible-galaxy", "collection", "install", "-p", collections, tarball, kubernetes_core(),
       cwd=tmp_path, env=env)
    installed = collections / "ansible_collections" / "cre" / "certification"
    assert (installed / "playbooks" / "certify.yml").is_file()

    sim = shared("aws-h100", 2, pod_ms={"nvcre": 300})
    work.mkdir()
    inventory = {"clusters": {"vars": {"ansible_connection": "local",
                                       "ansible_python_interpreter": str(venv / "bin/python")},
                              "hosts": {"lab": {
                                  "k8s_kubeconfig": str(sim.kubeconfig), "certify_certification_name": "installed",
                                  "certify_namespace": "nvcre", "certify_poll_interval": 0.5, "certify_timeout": 600,
                                  "certify_categories": [{"domain": "communication", "variant": "nccl-all-reduce",
                                                          "options": {"testScale": "intra-node"}}]}}}}
    (work / "inventory.yml").write_text(yaml.safe_dump(inventory))
    proc = subprocess.run([str(venv / "bin/ansible-playbook"), "-i", "inventory.yml", "cre.certification.certify"],
                          cwd=work, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    report = json.loads((work / "cre-reports" / "lab" / "report.json").read_text())
    assert report["result"] == "PASSED"
    assert sorted(n["name"] for n in report["nodeResults"]) == ["gpu-node-000", "gpu-node-001"]
    assert not list(installed.rglob("report.json")), "a report landed inside the installed collection"
