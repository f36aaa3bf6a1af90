"""A saved configuration output read offline and judged against the golden profile (the evidence_check module's
configuration formats): `nvidia-smi -q -x`, `nvidia-smi -q`, `ibstat`, `ibv_devinfo`, `lspci -vvv`, and the
node-drift collector's own output.

Each format fills the snapshot as far as it goes; the counts are judged only where the output lists every GPU
(nvidia-smi, the collector) or every NIC port (ibstat, ibv_devinfo, the collector): lspci's links are judged one by
one. The result is the Job tier's shape (golden.judge_snapshot) with every field judged in `findings`, passes
included, so a user sees each field's observed and expected value.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import ibstat, ibv_devinfo, lspci, node_snapshot, nvsmi_text, nvsmi_xml
from .config_snapshot import node
from .golden import GoldenOptions, judge_snapshot


def _nvidia_smi(read: Callable[[str], dict[str, Any]]) -> Callable[[str], dict[str, Any]]:
    def snapshot(text: str) -> dict[str, Any]:
        found = read(text)
        return node("", found["gpus"], [], driver=found["driver"], cuda=found["cuda"],
                    attached_gpus=found["attached_gpus"])
    return snapshot


def _ports(read: Callable[[str], dict[str, Any]]) -> Callable[[str], dict[str, Any]]:
    def snapshot(text: str) -> dict[str, Any]:
        found = read(text)
        return node("", found.get("gpus") or [], found["nics"])
    return snapshot


# format -> (the output read into a snapshot, the lists it holds whole)
CONFIG_FORMATS: dict[str, tuple[Callable[[str], dict[str, Any]], tuple[str, ...]]] = {
    nvsmi_xml.FORMAT: (_nvidia_smi(nvsmi_xml.read), ("gpus",)),
    nvsmi_text.FORMAT: (_nvidia_smi(nvsmi_text.read), ("gpus",)),
    ibstat.FORMAT: (_ports(ibstat.read), ("nics",)),
    ibv_devinfo.FORMAT: (_ports(ibv_devinfo.read), ("nics",)),
    lspci.FORMAT: (_ports(lspci.read), ()),
    "node-drift": (node_snapshot.read, ("gpus", "nics")),
}


def check_config_evidence(text: str, fmt: str, options: GoldenOptions) -> dict[str, Any]:
    """The output in `fmt` (a key of CONFIG_FORMATS) judged with `options`. UnreadableOutput names the first line,
    element or file that the format does not print."""
    read, holds = CONFIG_FORMATS[fmt]
    return {"format": fmt, **judge_snapshot(read(text), options, holds, passes=True), "partial": None}
