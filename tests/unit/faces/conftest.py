"""Run the collection's action plugins in-process (as ansible would on the controller), for fast face tests; and
`api_server`, a kubeconfig pointing at a Listener, for the tests that prove no request was made."""
from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader

from tests.unit.faces.listener import Listener


def run_action(name: str, args: dict[str, Any], check_mode: bool = False) -> dict[str, Any]:
    """The task result of `cre.certification.<name>` with `args` (paths should be absolute)."""
    module = importlib.import_module(f"ansible_collections.cre.certification.plugins.action.{name}")
    task = SimpleNamespace(args=dict(args), async_val=0, check_mode=check_mode, diff=False, action=f"cre.certification.{name}")
    connection = SimpleNamespace(_shell=SimpleNamespace(tmpdir="/nonexistent"))  # no remote tmp dir needed
    action = module.ActionModule(task, connection, play_context=None, loader=DataLoader(), templar=None,
                                 shared_loader_obj=None)
    return action.run(task_vars={})


@pytest.fixture(name="run_action")
def run_action_fixture():
    return run_action


@pytest.fixture
def api_server(tmp_path: Path) -> Iterator[tuple[Listener, Path]]:
    """The listener and a kubeconfig that points at it."""
    listener = Listener()
    kubeconfig = tmp_path / "kubeconfig.yaml"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": f"https://127.0.0.1:{listener.port}",
                                               "insecure-skip-tls-verify": True}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
        "users": [{"name": "u", "user": {"token": "t"}}]}))
    yield listener, kubeconfig
    listener.sock.close()
