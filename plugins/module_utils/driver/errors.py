"""Why a run stops before its end, besides the engine's own errors (InputError, WorkflowFailure)."""
from __future__ import annotations


class DriverError(Exception):
    """The run cannot proceed (not found, a resident controller): a clear message, nothing written."""


class Abandoned(Exception):
    """The process that started the run is gone: stop before the next write, leave the rest to a rerun."""
