"""The shape every face of the collection shares: validate args against the documented spec, call the
engine on the controller, and turn its deliberate errors into failed results (never tracebacks)."""
from __future__ import annotations

import os
from abc import abstractmethod
from collections.abc import Callable
from typing import Any

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase

from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError, WorkflowFailure


def caller_alive() -> Callable[[], bool]:
    """Ansible runs a task in a worker of its own session: if ansible-playbook is killed the worker lives on.
    A long run asks this before every write and stops once its parent is gone, so a rerun never races it."""
    parent = os.getppid()
    return lambda: os.getppid() == parent


class EngineAction(ActionBase):
    """Subclasses set SPEC (the stub module's `SPEC` dict: argument_spec plus its constraints) and execute()."""

    TRANSFERS_FILES = False
    SPEC: dict[str, Any] = {}

    @abstractmethod
    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        """The face's work on validated `args`; engine errors raised here become failed results."""

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        spec = dict(self.SPEC)
        validation = ArgumentSpecValidator(spec.pop("argument_spec"), **spec).validate(self._task.args)
        if validation.error_messages:
            return {**result, "failed": True, "msg": "; ".join(validation.error_messages)}
        try:
            result.update(self.execute(validation.validated_parameters, task_vars or {}))
        except WorkflowFailure as exc:
            result.update(failed=True, reason=exc.reason, msg=exc.message)
        except InputError as exc:
            result.update(failed=True, msg=str(exc))
        return result
