"""The action group: one `module_defaults` block with kubernetes.core's auth options serves every module of
the collection (the offline ones accept and ignore them) and the kubernetes.core.k8s modules it extends."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import yaml

from ansible_collections.cre.certification.plugins.module_utils.kube.client import auth_argument_spec
from ansible_collections.cre.certification.plugins.modules import catalog_info, workflow_render
from tests.ansible_run import ENV, ROOT

WORKFLOW_FILE = ROOT / "tests" / "unit" / "engine" / "data" / "render" / "_workflow.yaml"
AUTH_DEFAULTS = {"kubeconfig": "/nonexistent/kubeconfig", "context": "lab-admin", "host": "https://127.0.0.1:1",
                 "api_key": "not-a-token", "validate_certs": False}


def play(group: str) -> list[dict]:
    return [{
        "name": "Offline modules under the group's auth defaults",
        "hosts": "localhost", "connection": "local", "gather_facts": False,
        "module_defaults": {group: AUTH_DEFAULTS},
        "tasks": [
            {"name": "List the categories", "cre.certification.catalog_info": {}, "register": "listed"},
            {"name": "Render a Workflow for mock nodes",
             "cre.certification.workflow_render": {"src": str(WORKFLOW_FILE), "platform": "aws",
                                                   "gpu_architecture": "h100", "node_count": 4},
             "register": "rendered"},
            {"name": "The defaults reach kubernetes.core's modules too (extend_group)",
             "kubernetes.core.k8s_info": {"kind": "Node"}, "register": "nodes", "ignore_errors": True},
            {"name": "Both ran, and k8s_info got the kubeconfig", "ansible.builtin.assert": {
                "that": ["listed.categories | length == 13", "rendered.plan.jobs | length == 2",
                         "nodes is failed", "'/nonexistent/kubeconfig' in nodes.msg"]}},
        ],
    }]


def run_play(tmp_path: Path, group: str) -> subprocess.CompletedProcess:
    playbook = tmp_path / "group.yml"
    playbook.write_text(yaml.safe_dump(play(group), sort_keys=False))
    env = {**os.environ, **ENV, "ANSIBLE_STDOUT_CALLBACK": "ansible.builtin.default"}
    return subprocess.run([str(ROOT / ".venv/bin/ansible-playbook"), str(playbook)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=180, check=False)


def test_group_auth_defaults_do_not_break_offline_modules(tmp_path):
    proc = run_play(tmp_path, "group/cre.certification.certification")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Unsupported parameters" not in proc.stdout
    assert "ok=4" in proc.stdout and "failed=0" in proc.stdout and "ignored=1" in proc.stdout


def test_offline_modules_take_the_auth_options():
    auth = auth_argument_spec()
    for stub in (catalog_info, workflow_render):
        spec = stub.SPEC["argument_spec"]
        assert {name: spec[name] for name in auth} == auth, stub.__name__
        doc = yaml.safe_load(stub.DOCUMENTATION)
        assert "kubernetes.core.k8s_auth_options" in doc["extends_documentation_fragment"]
        assert any("ignores them" in line for line in doc["description"]), stub.__name__


def test_group_extends_kubernetes_core():
    runtime = yaml.safe_load((ROOT / "meta" / "runtime.yml").read_text())
    group = runtime["action_groups"]["certification"]
    assert {"metadata": {"extend_group": ["kubernetes.core.k8s"]}} in group
    modules = {p.stem for p in (ROOT / "plugins" / "modules").glob("*.py") if p.stem != "__init__"}
    assert modules == {name for name in group if isinstance(name, str)}
