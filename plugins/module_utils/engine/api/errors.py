"""Errors the engine raises on purpose. Faces turn them into failed results, never tracebacks."""
from __future__ import annotations


class EngineError(Exception):
    """Base of every deliberate engine error."""


class InputError(EngineError):
    """Bad input: the message names the field path (or input) and the rule it breaks."""

    def __init__(self, path: str, rule: str) -> None:
        self.path = path
        self.rule = rule
        super().__init__(f"{path}: {rule}" if path else rule)


class WorkflowFailure(EngineError):
    """Where NVCRE would mark the Workflow Failed: the condition reason and its exact message."""

    def __init__(self, reason: str, message: str) -> None:
        self.reason = reason
        self.message = message
        super().__init__(message)
