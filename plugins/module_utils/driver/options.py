"""The options every long run shares: how long, how often to look, check mode, and where progress goes."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..engine.api.errors import InputError

# The argument spec of those options, the same in every face that drives a run (doc fragment: run_options).
RUN_OPTIONS_SPEC = {
    "timeout": {"type": "float", "default": 86400},
    "poll_interval": {"type": "float", "default": 2.0},
    "heartbeat": {"type": "float", "default": 300},
}


def _quiet(line: str) -> None:
    """Progress goes nowhere unless the caller says where."""


@dataclass(frozen=True)
class RunOptions:
    timeout: float
    poll_interval: float = 2.0
    heartbeat: float = 300  # seconds without a progress line before a heartbeat line
    check_mode: bool = False
    diff: bool = False  # Ansible's --diff: the result carries the objects' before and after
    progress: Callable[[str], None] = _quiet
    trace: Callable[[str], None] | None = None
    alive: Callable[[], bool] | None = None  # asked before every write; False stops the run (the caller is gone)
    warn: Callable[[str], None] = _quiet
    skip_is_failure: bool = False  # a GPU whose every DCGM test was skipped fails its node (else a warning)

    def __post_init__(self) -> None:
        if self.timeout <= 0:
            raise InputError("timeout", "must be greater than 0")
        if self.poll_interval <= 0:
            raise InputError("poll_interval", "must be greater than 0")
        if self.heartbeat <= 0:
            raise InputError("heartbeat", "must be greater than 0")
