"""The shape every face of the collection shares: validate args against the documented spec, call the
engine or a driver on the controller, and turn every deliberate error into a failed result (never a traceback)."""
from __future__ import annotations

import os
import sys
import warnings
from abc import abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ansible.errors import AnsibleActionFail, AnsibleError
from ansible.module_utils.basic import missing_required_lib
from ansible.module_utils.common.parameters import remove_values
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.cre.certification.plugins.module_utils import requirements
from ansible_collections.cre.certification.plugins.module_utils.driver.errors import Abandoned, DriverError
from ansible_collections.cre.certification.plugins.module_utils.driver.execute import status_message
from ansible_collections.cre.certification.plugins.module_utils.driver.options import RunOptions
from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError, WorkflowFailure
from ansible_collections.cre.certification.plugins.module_utils.kube.client import BadKubeconfig, MissingLibrary
from ansible_collections.cre.certification.plugins.module_utils.kube.errors import ApiError, NotServed, Unreachable
from ansible_collections.cre.certification.plugins.module_utils.kube.rest import ApiException
from ansible_collections.cre.certification.plugins.plugin_utils.inputs import renamed, unknown_option, with_suggestion

try:
    from kubernetes.config.config_exception import ConfigException
except ImportError:  # api_client reports the missing library
    ConfigException = None  # type: ignore[assignment,misc]

display = Display()


def caller_alive() -> Callable[[], bool]:
    """Ansible runs a task in a worker of its own session: if ansible-playbook is killed the worker lives on.
    A long run asks this before every write and stops once its parent is gone, so a rerun never races it."""
    parent = os.getppid()
    return lambda: os.getppid() == parent


def failure(exc: Exception) -> dict[str, Any] | None:
    """The failed result for a deliberate error, None for anything else (which stays a bug to see)."""
    if isinstance(exc, (ApiError, NotServed, Unreachable)):
        return {"failed": True, "msg": exc.line()}
    if isinstance(exc, WorkflowFailure):
        return {"failed": True, "reason": exc.reason, "msg": exc.message}
    if isinstance(exc, (InputError, DriverError, Abandoned, MissingLibrary, BadKubeconfig)):
        return {"failed": True, "msg": str(exc)}
    if ConfigException is not None and isinstance(exc, ConfigException):
        return {"failed": True, "msg": f"connecting to the cluster: {exc}; set kubeconfig/context (or the "
                                       "K8S_AUTH_* variables) to a cluster this controller can reach"}
    if ApiException is not None and isinstance(exc, ApiException):
        return {"failed": True, "msg": f"API error {exc.status} {exc.reason}: {status_message(exc)}"}
    return None


def secret_values(no_log_values: set[str], kubeconfig: Any) -> set[str]:
    """What no result may quote, as AnsibleModule censors a module's: the values of no_log options (api_key,
    password, proxy credentials). Of a kubeconfig only the credentials: its path, or the server and names of one
    given as a dict, are no secret, and masking them would make messages unreadable."""
    values = set(no_log_values)
    if isinstance(kubeconfig, str):
        values.discard(kubeconfig)
    elif isinstance(kubeconfig, dict):
        values -= set(_strings(kubeconfig))
        values |= {v for user in kubeconfig.get("users") or [] if isinstance(user, dict)
                   for v in _strings(user.get("user") or {})}
    return {v for v in values if v}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, str):
        yield value


@contextmanager
def warnings_to_display() -> Iterator[None]:
    """Python warnings raised while a face runs (urllib3's InsecureRequestWarning on every request to a server
    whose certificate is not checked) reach Ansible's display, each text once, instead of raw stderr."""
    seen: set[str] = set()

    def show(message: Warning | str, category: type[Warning], *_args: Any, **_kwargs: Any) -> None:
        text = f"{category.__name__}: {str(message).split(' See: ', maxsplit=1)[0]}"
        if text not in seen:
            seen.add(text)
            display.warning(text)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


class EngineAction(ActionBase):
    """Subclasses set SPEC (the stub module's `SPEC` dict: argument_spec plus its constraints) and execute().
    A face that drives a long run sets `self.progress_of` to the run, whose `changed` a failure reports.
    A face with an `input_names` option names the failing option as the caller asks (a role: its variables)."""

    TRANSFERS_FILES = False
    SPEC: dict[str, Any] = {}
    progress_of: Any = None
    host = ""  # the inventory host the task runs for: progress lines name it (several clusters run at once)

    @abstractmethod
    def execute(self, args: dict[str, Any], task_vars: dict[str, Any]) -> dict[str, Any]:
        """The face's work on validated `args`; engine errors raised here become failed results."""

    def local_paths(self, args: dict[str, Any], *options: str) -> None:
        """Resolve the relative paths of `options` as the copy/template actions find them (role/playbook
        `files/`), else keep them as given."""
        for option in options:
            if args[option] is not None and not os.path.isabs(args[option]):
                try:
                    args[option] = self._find_needle("files", args[option])
                except AnsibleError:
                    pass

    def local_dirs(self, args: dict[str, Any], option: str) -> None:
        """The relative paths of the list `option` resolved against the playbook's directory (absolute ones kept)."""
        args[option] = [value if not isinstance(value, str) or os.path.isabs(value) else self._loader.path_dwim(value)
                        for value in args.get(option) or []]

    def run(self, tmp: Any = None, task_vars: dict[str, Any] | None = None) -> dict[str, Any]:
        result = super().run(tmp, task_vars)
        self.host = str((task_vars or {}).get("inventory_hostname", ""))
        if absent := requirements.missing():
            # The controller runs the engine: its Python needs the collection's requirements.txt.
            return {**result, "failed": True, "msg": missing_required_lib(
                ", ".join(absent), reason=f"by {self._task.action}, which runs on the controller (install the "
                                          f"collection's requirements.txt: {sys.executable} -m pip install -r "
                                          "requirements.txt)")}
        try:
            validation, args = self.validate_argument_spec(**self.SPEC)
        except AnsibleActionFail as exc:
            return {**result, **exc.result, **self._unknown_options()}
        secrets = secret_values(validation._no_log_values, args.get("kubeconfig"))
        out = self._run(result, args, task_vars)
        return remove_values(out, secrets) if secrets else out

    def _run(self, result: dict[str, Any], args: dict[str, Any], task_vars: dict[str, Any] | None) -> dict[str, Any]:
        try:
            with warnings_to_display():
                result.update(self.execute(args, task_vars or {}))
        except Exception as exc:  # noqa: BLE001 - only deliberate errors are mapped; the rest re-raise
            if isinstance(exc, InputError):
                exc = renamed(with_suggestion(exc), args.get("input_names") or {})
            failed = failure(exc)
            if failed is None:
                raise
            result.update(failed, changed=bool(getattr(self.progress_of, "changed", False)))
        return result

    def _unknown_options(self) -> dict[str, Any]:
        """The message for options the face does not know, each with its closest known name; {} if none."""
        spec = self.SPEC["argument_spec"]
        supported = set(spec) | {alias for option in spec.values() for alias in option.get("aliases", [])}
        unknown = sorted(set(self._task.args) - supported)
        return {"msg": unknown_option(self._task.action, unknown, spec)} if unknown else {}

    def show(self, line: str) -> None:
        """A progress line, prefixed with the inventory host."""
        display.display(f"[{self.host}] {line}" if self.host else line)

    def run_options(self, args: dict[str, Any]) -> RunOptions:
        """The shared run options (timeout, poll_interval, heartbeat; skip_is_failure where the face has it) with this
        task's check and diff modes and Ansible's display."""
        return RunOptions(timeout=args["timeout"], poll_interval=args["poll_interval"], heartbeat=args["heartbeat"],
                          check_mode=bool(self._task.check_mode), diff=bool(self._task.diff), progress=self.show,
                          trace=display.v,
                          alive=caller_alive(), warn=display.warning,
                          skip_is_failure=bool(args.get("skip_is_failure", False)))
