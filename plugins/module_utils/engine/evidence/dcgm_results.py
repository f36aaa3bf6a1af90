"""What a reader of `dcgmi diag` output hands the verdict: the results as DCGM reported them, whatever the layout.

Both readers (dcgm_json, dcgm_text) fill a DiagReading; dcgm_verdict turns it into rows and verdicts. Keeping the
reading apart from the judging lets the text table and the two JSON layouts be judged by one set of rules.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..api.errors import EngineError

# DCGM's result words (dcgmi/Diag.cpp HelperDisplayDiagResult) and our outcomes. "Not Run" is printed in the 4.x
# table's per-GPU rows (its JSON leaves such results out): nothing was tested, as with Skip.
STATUSES = {"Pass": "pass", "Fail": "fail", "Warn": "warn", "Skip": "skip", "Not Run": "skip"}
# DCGM's category of node checks (PluginStrings.h PLUGIN_CATEGORY_DEPLOYMENT): libraries, permissions, persistence
# mode. They say the node is set up, not that a GPU works, so they are never a GPU's evidence.
DEPLOYMENT = "Deployment"


class UnreadableOutput(EngineError):
    """The output is not what the named format prints: the message names the first line or field not read."""


@dataclass(frozen=True)
class DiagResult:
    """One result DCGM printed: a test on one GPU (`gpu`), or on the node (`gpu` None, a 3.x deployment check)."""

    category: str | None
    test: str
    gpu: int | None
    status: str
    messages: tuple[str, ...] = ()
    info: tuple[str, ...] = ()
    sample: int = 0


@dataclass
class DiagReading:
    """One `dcgmi diag` output read. `gpus`: the GPUs the output says were in the run (4.x `entity_groups`, the
    3.x device ids, the 4.x table's per-GPU rows), which may be more than have a result of their own."""

    layout: str
    dcgm_version: str | None = None
    driver_version: str | None = None
    gpus: list[int] = field(default_factory=list)
    results: list[DiagResult] = field(default_factory=list)
    runtime_error: str | None = None


def outcome_of(status: str, where: str) -> str:
    """Our outcome for DCGM's result word; UnreadableOutput naming `where` for a word DCGM does not print."""
    try:
        return STATUSES[status]
    except KeyError:
        raise UnreadableOutput(f"{where}: {status!r} is not a DCGM result (Pass, Fail, Warn, Skip, Not Run)") from None


def with_code(message: str, error_id: object) -> str:
    """DCGM's message with its error code (dcgm_errors.h), as the detail of a row carries both."""
    return f"{message} (DCGM error {error_id})" if error_id is not None else message
