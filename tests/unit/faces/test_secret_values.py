"""No face result quotes a no_log option's value (EngineAction scrubs them as AnsibleModule does for a module)."""
from pathlib import Path

import yaml

from ansible_collections.cre.certification.plugins.plugin_utils.engine_action import secret_values

BASE = yaml.safe_load((Path(__file__).parents[1] / "engine" / "data" / "render" / "_workflow.yaml").read_text())


def test_a_message_that_would_quote_a_password_shows_it_masked(run_action, tmp_path):
    missing = str(tmp_path / "hunter2-nodes.yaml")
    result = run_action("workflow_render", {"definition": BASE, "nodes_file": missing, "password": "hunter2"})
    assert result["failed"] is True
    assert "hunter2" not in str(result)
    assert result["msg"].startswith("nodes_file: cannot read ") and "********-nodes.yaml" in result["msg"]


def test_of_a_kubeconfig_only_the_credentials_are_secret():
    kubeconfig = {"apiVersion": "v1", "current-context": "ctx",
                  "clusters": [{"name": "lab", "cluster": {"server": "https://10.0.0.1:6443"}}],
                  "users": [{"name": "me", "user": {"token": "tok-123", "client-key-data": "a2V5"}}]}
    no_log = {"v1", "ctx", "lab", "https://10.0.0.1:6443", "me", "tok-123", "a2V5", "pw"}
    assert secret_values(no_log, kubeconfig) == {"tok-123", "a2V5", "pw"}
    assert secret_values({"/home/me/.kube/config", "pw"}, "/home/me/.kube/config") == {"pw"}
