"""awx/credential-type.yml applied as AWX applies a credential to a job (CredentialType.inject_credential): each
file injector rendered into a private file under <private_data_dir>/env, its path offered to the other injectors
as `tower.filename[.<name>]`, then the env injectors rendered, all in Jinja's immutable sandbox."""
from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import yaml
from jinja2.sandbox import ImmutableSandboxedEnvironment

from tests.ansible_run import ROOT

CREDENTIAL_TYPES: list[dict[str, Any]] = yaml.safe_load((ROOT / "awx" / "credential-type.yml").read_text())
BEARER_TOKEN = "Kubernetes bearer token (cre.certification)"
KUBECONFIG = "Kubeconfig, multi-context (cre.certification)"


class Namespace:
    """AWX's TowerNamespace: attributes set as the file injectors are rendered."""


def credential_type(name: str) -> dict[str, Any]:
    (found,) = [t for t in CREDENTIAL_TYPES if t["name"] == name]
    return found


def inject(type_name: str, inputs: dict[str, Any], private_data_dir: Path) -> dict[str, str]:
    """The environment a job gets from a credential of that type with these inputs; files land in env/."""
    ctype = credential_type(type_name)
    tower = Namespace()
    namespace: dict[str, Any] = {"tower": tower, "awx": tower, **inputs}
    for field in ctype["inputs"]["fields"]:
        if field["type"] == "boolean" and field["id"] not in inputs:
            namespace[field["id"]] = False  # AWX: a boolean the credential does not set is false
    sandbox = ImmutableSandboxedEnvironment()
    (private_data_dir / "env").mkdir(parents=True, exist_ok=True)
    for label, template in ctype["injectors"].get("file", {}).items():
        handle, path = tempfile.mkstemp(dir=private_data_dir / "env")
        with os.fdopen(handle, "w") as out:
            out.write(sandbox.from_string(template).render(**namespace))
        os.chmod(path, stat.S_IRUSR | stat.S_IWUSR)
        if "." not in label:
            tower.filename = path  # type: ignore[attr-defined]
        else:
            if not hasattr(tower, "filename"):
                tower.filename = Namespace()  # type: ignore[attr-defined]
            setattr(tower.filename, label.split(".", 1)[1], path)  # type: ignore[attr-defined]
    return {name: sandbox.from_string(template).render(**namespace)
            for name, template in ctype["injectors"].get("env", {}).items()}
