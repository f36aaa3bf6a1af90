"""awx/credential-type.yml: valid AWX credential types whose injected K8S_AUTH_* environment is what kubernetes.core
and this collection's client resolve (the token, host and CA; the kubeconfig file and its contexts)."""
from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml
from ansible_collections.kubernetes.core.plugins.module_utils.args_common import AUTH_ARG_MAP
from jinja2 import meta
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ansible_collections.cre.certification.plugins.module_utils.kube.client import api_client
from tests.awx_credentials import BEARER_TOKEN, CREDENTIAL_TYPES, KUBECONFIG, inject

# What AWX accepts in a custom credential type (awx/main/fields.py: CredentialTypeInputField,
# CredentialTypeInjectorField) and the variables it refuses to inject (awx/main/constants.py ENV_BLOCKLIST).
FIELD_KEYS = {"id", "label", "type", "secret", "multiline", "help_text", "default", "choices", "format", "ask_at_runtime"}
ENV_BLOCKLIST = {"VIRTUAL_ENV", "PATH", "PYTHONPATH", "JOB_ID", "INVENTORY_ID", "INVENTORY_SOURCE_ID",
                 "INVENTORY_UPDATE_ID", "AD_HOC_COMMAND_ID", "REST_API_URL", "REST_API_TOKEN", "MAX_EVENT_RES",
                 "CALLBACK_QUEUE", "CALLBACK_CONNECTION", "CACHE", "JOB_CALLBACK_DEBUG", "INVENTORY_HOSTVARS",
                 "AWX_HOST", "PROJECT_REVISION", "SUPERVISOR_CONFIG_PATH"}
CA_PEM = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n"


def awx_errors(ctype: dict[str, Any]) -> list[str]:
    """What AWX would refuse when the credential type is created."""
    name = ctype.get("name", "?")
    errors = [f"{name}: missing {key}" for key in ("name", "kind", "inputs", "injectors") if key not in ctype]
    if ctype.get("kind") not in ("cloud", "net"):
        errors.append(f"{name}: a custom credential type is of kind cloud or net")
    fields = ctype["inputs"]["fields"]
    ids = [f.get("id") for f in fields]
    for field in fields:
        errors += [f"{name}: field {field.get('id')}: unknown key {k}" for k in set(field) - FIELD_KEYS]
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(field.get("id"))) or not field.get("label"):
            errors.append(f"{name}: field {field.get('id')}: needs an identifier id and a label")
        if field.get("type") not in ("string", "boolean"):
            errors.append(f"{name}: field {field.get('id')}: type must be string or boolean")
    errors += [f"{name}: required {r} is no field" for r in ctype["inputs"].get("required", []) if r not in ids]
    injectors = ctype["injectors"]
    errors += [f"{name}: unknown injector {k}" for k in set(injectors) - {"file", "env", "extra_vars"}]
    for label in injectors.get("file", {}):
        if label != "template" and not re.fullmatch(r"template\.[A-Za-z_][A-Za-z0-9_]*", label):
            errors.append(f"{name}: file injector {label} must be template or template.<name>")
    for var in injectors.get("env", {}):
        if var.startswith("ANSIBLE_") or var in ENV_BLOCKLIST:
            errors.append(f"{name}: AWX does not inject {var}")
    sandbox = ImmutableSandboxedEnvironment()
    for kind in ("file", "env", "extra_vars"):
        for key, template in injectors.get(kind, {}).items():
            unknown = meta.find_undeclared_variables(sandbox.parse(template)) - set(ids) - {"tower", "awx"}
            errors += [f"{name}: {kind}.{key} uses {v}, which is no input" for v in sorted(unknown)]
    return errors


@pytest.mark.parametrize("ctype", CREDENTIAL_TYPES, ids=lambda t: t["name"])
def test_credential_type_is_valid_for_awx(ctype: dict[str, Any]) -> None:
    assert awx_errors(ctype) == []


def test_validation_refuses_what_awx_refuses() -> None:
    broken = yaml.safe_load(yaml.safe_dump(CREDENTIAL_TYPES[0]))
    broken["injectors"]["env"]["ANSIBLE_CONFIG"] = "{{ tokn }}"
    broken["inputs"]["fields"][0]["type"] = "dict"
    assert awx_errors(broken) == [
        f"{BEARER_TOKEN}: field host: type must be string or boolean",
        f"{BEARER_TOKEN}: AWX does not inject ANSIBLE_CONFIG",
        f"{BEARER_TOKEN}: env.ANSIBLE_CONFIG uses tokn, which is no input"]


@pytest.mark.parametrize("ctype", CREDENTIAL_TYPES, ids=lambda t: t["name"])
def test_injected_variables_are_ones_kubernetes_core_reads(ctype: dict[str, Any]) -> None:
    # _create_auth_spec reads K8S_AUTH_<option> or K8S_AUTH_<client name> for each AUTH_ARG_MAP entry.
    readable = {f"K8S_AUTH_{name.upper()}" for pair in AUTH_ARG_MAP.items() for name in pair}
    assert set(ctype["injectors"]["env"]) <= readable


def configuration(monkeypatch: pytest.MonkeyPatch, env: dict[str, str], **params: Any) -> Any:
    """The client configuration this collection's modules build under the job's environment."""
    for name in [n for n in os.environ if n.startswith("K8S_AUTH_")]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("KUBECONFIG", "/nonexistent")  # nothing but the credential may be read
    return api_client(params).configuration


def test_bearer_token_reaches_the_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = inject(BEARER_TOKEN, {"host": "https://gpu-east:6443/", "bearer_token": "sa-token", "verify_ssl": True,
                                "ssl_ca_cert": CA_PEM}, tmp_path)
    ca = Path(env["K8S_AUTH_SSL_CA_CERT"])
    assert ca.parent == tmp_path / "env" and ca.read_text() == CA_PEM
    assert stat.S_IMODE(ca.stat().st_mode) == 0o600
    config = configuration(monkeypatch, env)
    assert (config.host, config.api_key, config.verify_ssl, config.ssl_ca_cert) == \
        ("https://gpu-east:6443", {"authorization": "Bearer sa-token"}, True, str(ca))


def test_bearer_token_without_ca_uses_the_system_cas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No CA and no verify_ssl input: AWX injects an empty CA path and False (a boolean the credential omits)."""
    env = inject(BEARER_TOKEN, {"host": "https://gpu-east:6443", "bearer_token": "sa-token"}, tmp_path)
    assert env["K8S_AUTH_SSL_CA_CERT"] == "" and env["K8S_AUTH_VERIFY_SSL"] == "False"
    config = configuration(monkeypatch, env)
    # The empty CA path counts as none: the client then takes the system's CAs (certifi).
    assert config.verify_ssl is False and not config.ssl_ca_cert


def kubeconfig(*servers: str) -> str:
    names = [f"gpu-{i}" for i in range(len(servers))]
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": names[0],
        "clusters": [{"name": n, "cluster": {"server": s, "insecure-skip-tls-verify": True}} for n, s in zip(names, servers)],
        "users": [{"name": n, "user": {"token": f"token-{n}"}} for n in names],
        "contexts": [{"name": n, "context": {"cluster": n, "user": n}} for n in names]})


def test_multi_context_kubeconfig_serves_each_host_its_context(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The credential's file and K8S_AUTH_KUBECONFIG; a host's k8s_context (the play's `context` default) picks
    its cluster, a host without one gets the current-context."""
    content = kubeconfig("https://10.0.0.1:6443", "https://10.0.0.2:6443")
    env = inject(KUBECONFIG, {"kubeconfig": content}, tmp_path)
    assert Path(env["K8S_AUTH_KUBECONFIG"]).read_text() == content
    assert configuration(monkeypatch, env).host == "https://10.0.0.1:6443"
    config = configuration(monkeypatch, env, context="gpu-1")
    assert (config.host, config.api_key) == ("https://10.0.0.2:6443", {"BearerToken": "Bearer token-gpu-1"})
