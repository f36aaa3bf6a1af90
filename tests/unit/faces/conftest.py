"""Run the collection's action plugins in-process (as ansible would on the controller), for fast face tests."""
from __future__ import annotations

import importlib
from types import SimpleNamespace
from typing import Any

import pytest
from ansible.parsing.dataloader import DataLoader


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
