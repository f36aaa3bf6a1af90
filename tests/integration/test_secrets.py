"""Credentials are written nowhere: a certify playbook run at -vvv over three clusters' worth of credentials (a
kubeconfig with a bearer token, one with an embedded client certificate and key, one with a basic-auth password
the API server refuses), then the modules' own `api_key` and `password` options at -vvv. The secrets are looked
for in every output line, every file the run wrote (report.*, junit.xml, status.json, fleet.*), and in the
cluster: events, Certifications and Workflows with their status, ConfigMaps. test_api_failures.py has the same
check for a token given to workflow_run."""
from __future__ import annotations

import base64
import json
import os
import secrets
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client

from tests.ansible_run import ROOT, run_until

from .conftest import Sim
from .seed import NVCRE

pytestmark = pytest.mark.clusters(("aws-gb200", 2))

CATEGORY = {"domain": "communication", "variant": "nccl-all-reduce", "options": {"testScale": "intra-node"}}
HOSTS = {"bearer": "sec-bearer", "clientkey": "sec-clientkey", "basicauth": "sec-basicauth"}  # host -> namespace


@pytest.fixture(scope="module")
def sim(pooled: Callable[..., Sim]) -> Sim:
    return pooled("aws-gb200", 2, pod_ms={ns: 2000 for ns in ("sec-accounts", *HOSTS.values())})


def admin_token(sim: Sim) -> str:
    """A cluster-admin ServiceAccount's token (TokenRequest API)."""
    core = client.CoreV1Api(sim.api)
    core.create_namespace({"metadata": {"name": "sec-accounts"}})
    core.create_namespaced_service_account("sec-accounts", {"metadata": {"name": "runner"}})
    client.RbacAuthorizationV1Api(sim.api).create_cluster_role_binding({
        "metadata": {"name": "sec-accounts-runner"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": "runner", "namespace": "sec-accounts"}]})
    return core.create_namespaced_service_account_token("runner", "sec-accounts", {"spec": {}}).status.token


def kubeconfig_with(sim: Sim, user: dict[str, Any], path: Path) -> Path:
    config = yaml.safe_load(sim.kubeconfig.read_text())
    config["users"][0]["user"] = user
    path.write_text(yaml.safe_dump(config))
    return path


def pem_lines(pem: str) -> list[str]:
    """The base64 body lines of a PEM block, the ones that would show if the key leaked."""
    return [line for line in pem.splitlines() if line and not line.startswith("-----")]


def written_in_cluster(sim: Sim) -> str:
    """Everything the runs left in the cluster that a person or a tool reads: events, the NVCRE objects with
    their status, ConfigMaps."""
    core, custom = client.CoreV1Api(sim.api), client.CustomObjectsApi(sim.api)
    found: list[Any] = []
    for ns in HOSTS.values():
        found += [core.list_namespaced_event(ns), core.list_namespaced_config_map(ns)]
        for plural in ("certifications", "workflows", "jobs"):
            found.append(custom.list_namespaced_custom_object(*NVCRE, ns, plural))
    return json.dumps(client.ApiClient().sanitize_for_serialization(found))


def test_credentials_appear_in_no_output_report_event_or_status(sim: Sim, tmp_path: Path) -> None:
    token = admin_token(sim)
    password = f"pw-{secrets.token_hex(12)}"
    user = yaml.safe_load(sim.kubeconfig.read_text())["users"][0]["user"]
    key_pem, cert_pem = Path(user["client-key"]).read_text(), Path(user["client-certificate"]).read_text()
    key_data, cert_data = (base64.b64encode(pem.encode()).decode() for pem in (key_pem, cert_pem))
    kubeconfigs = {
        "bearer": kubeconfig_with(sim, {"token": token}, tmp_path / "bearer.yaml"),
        "clientkey": kubeconfig_with(sim, {"client-key-data": key_data, "client-certificate-data": cert_data},
                                     tmp_path / "clientkey.yaml"),
        "basicauth": kubeconfig_with(sim, {"username": "certifier", "password": password}, tmp_path / "basic.yaml"),
    }
    for host in ("clientkey", "basicauth"):  # the bearer host's run creates its own (certify_create_namespace)
        client.CoreV1Api(sim.api).create_namespace({"metadata": {"name": HOSTS[host]}})
    inventory = {"clusters": {"vars": {"ansible_connection": "local", "cre_report_dir": str(tmp_path / "reports"),
                                       "ansible_python_interpreter": str(ROOT / ".venv/bin/python")},
                              "hosts": {host: {"k8s_kubeconfig": str(kubeconfigs[host]), "certify_namespace": ns,
                                               "certify_certification_name": "secret-run", "crds_install": False,
                                               "certify_create_namespace": host == "bearer",
                                               "certify_categories": [CATEGORY],
                                               "certify_poll_interval": 0.5, "certify_timeout": 300}
                                        for host, ns in HOSTS.items()}}}
    (tmp_path / "inventory.yml").write_text(yaml.safe_dump(inventory))
    proc = subprocess.run([str(ROOT / ".venv/bin/ansible-playbook"), "-vvv", "-i", "inventory.yml", "--forks", "3",
                           str(ROOT / "playbooks/certify.yml")], cwd=tmp_path,
                          env={**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg")},
                          capture_output=True, text=True, timeout=900, check=False)
    output = proc.stdout + proc.stderr
    reports = tmp_path / "reports"
    for host in ("bearer", "clientkey"):  # the credentials were used: both runs passed
        assert json.loads((reports / host / "report.json").read_text())["result"] == "PASSED", output[-3000:]
    refused = json.loads((reports / "basicauth" / "status.json").read_text())
    assert refused["state"] == "error" and "so it accepted no credential" in refused["message"], refused

    server = yaml.safe_load(sim.kubeconfig.read_text())["clusters"][0]["cluster"]
    common = {"host": server["server"], "ca_cert": server["certificate-authority"]}
    lines = run_until("certification_run", {**common, "username": "certifier", "password": password,
                                            "name": "secret-opts", "namespace": "sec-basicauth",
                                            "categories": [CATEGORY], "timeout": 60}, None)
    assert any("so it accepted no credential" in line for line in lines), lines[-10:]
    lines += run_until("cluster_info", {**common, "api_key": token}, None)
    assert any('"total_nodes": 2' in line for line in lines), lines[-10:]  # the token was used

    files = {str(p.relative_to(reports)): p.read_text(errors="replace") for p in reports.rglob("*") if p.is_file()}
    assert {"bearer/report.json", "bearer/report.md", "bearer/report.html", "bearer/junit.xml",
            "basicauth/status.json", "fleet.json"} <= set(files), sorted(files)
    places = {"playbook output": output, "module output": "".join(lines), "cluster": written_in_cluster(sim),
              **files}
    looked_for = {"token": token, "token tail": token[-24:], "password": password, "client-key-data": key_data,
                  "client-key-data tail": key_data[-40:], "client-certificate-data": cert_data,
                  **{f"key line {i}": line for i, line in enumerate(pem_lines(key_pem))}}
    leaks = [(what, where) for what, secret in looked_for.items() for where, text in places.items() if secret in text]
    assert leaks == []
