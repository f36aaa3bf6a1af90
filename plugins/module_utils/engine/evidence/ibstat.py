"""`ibstat` (infiniband-diags) read into the snapshot's NIC ports.

Its layout: `CA '<name>'`, the CA's `Label: value` lines one tab in (CA type, Firmware version, ...), then per
port `Port <n>:` and its `Label: value` lines two tabs in (State, Physical state, Rate, Link layer). A port's
state is kept as sysfs spells it (`Active` -> `ACTIVE`, `Initializing` -> `INIT`), so every reader's ports compare
alike; the rate a down port prints (`40`) is no link speed, and the rules judge a rate only on an active port.

Strict: a file that does not open with `CA '<name>'` is refused at its first line, and so is a line that is none of
the three forms, or a state or rate that does not read.
"""
from __future__ import annotations

import re
from typing import Any

from .config_snapshot import available, nic, rate_gbps
from .dcgm_results import UnreadableOutput

FORMAT = "ibstat"
_CA = re.compile(r"CA '([^']+)'")
_PORT = re.compile(r"Port (\d+):")
_FIELD = re.compile(r"([A-Za-z][A-Za-z ]*?):\s*(.*)")
# ibstat's port states (infiniband-diags ibstat.c) as sysfs spells them.
STATES = {"Down": "DOWN", "Initializing": "INIT", "Armed": "ARMED", "Active": "ACTIVE"}


def read(text: str) -> dict[str, Any]:
    """{"nics": [port]} in file order."""
    nics: list[dict[str, Any]] = []
    ca: dict[str, str] = {}
    name = ""
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped:
            continue
        opened, port, field = _CA.fullmatch(stripped), _PORT.fullmatch(stripped), _FIELD.fullmatch(stripped)
        if opened and not line[0].isspace():
            name, ca = opened.group(1), {}
        elif not name:
            raise UnreadableOutput(f"line {number}: cannot read {stripped[:120]!r}: ibstat opens with CA '<name>'")
        elif port and line[0].isspace():
            nics.append(nic(name, int(port.group(1)), fw=available(ca.get("Firmware version"))))
        elif field and line[0].isspace() and nics and nics[-1]["device"] == name and _depth(line) > 1:
            _port_field(nics[-1], field.group(1), field.group(2), number)
        elif field and line[0].isspace():
            ca[field.group(1)] = field.group(2)
        else:
            raise UnreadableOutput(f"line {number}: cannot read {stripped[:120]!r} as an ibstat line")
    if not nics:
        raise UnreadableOutput("no port in the ibstat output: ibstat printed no CA with a port")
    return {"nics": nics}


def _depth(line: str) -> int:
    """How deep a line is indented: tabs, or eight spaces a level (ibstat indents with tabs)."""
    indent = line[:len(line) - len(line.lstrip())]
    return indent.count("\t") + indent.count(" ") // 8


def _port_field(port: dict[str, Any], label: str, value: str, number: int) -> None:
    where = f"line {number} ({label})"
    if label == "State":
        if value.strip() not in STATES:
            raise UnreadableOutput(f"{where}: cannot read {value.strip()!r} as a port state ({', '.join(STATES)})")
        port["state"] = STATES[value.strip()]
    elif label == "Physical state":
        port["phys_state"] = available(value)
    elif label == "Rate":
        port["rate_gbps"] = rate_gbps(value, where)
    elif label == "Link layer":
        port["link_layer"] = available(value)
