"""`ibv_devinfo` (rdma-core) read into the snapshot's NIC ports, plain or with `-v`.

Its layout: `hca_id:<tab><name>`, the device's `key:<tabs>value` lines (fw_ver, ...), then per port
`port:<tab><n>` and its lines (state `PORT_ACTIVE (4)`, link_layer; with `-v` also phys_state `LINK_UP (5)`,
active_width `4X (2)` and active_speed `100.0 Gbps (128)`, whose product is the rate). Plain `ibv_devinfo` prints
no rate and no physical state: they stay None, never guessed. States and physical states are kept as sysfs spells
them (`ACTIVE`, `LinkUp`).

Strict: a file that does not open with `hca_id:` is refused at its first line (`No IB devices found` included), and
so is a line that is not `key: value` (the flag names `-v` lists under a capability line excepted), or a state,
width or speed that does not read.
"""
from __future__ import annotations

import re
from typing import Any, Optional

from .config_snapshot import available, nic
from .dcgm_results import UnreadableOutput

FORMAT = "ibv_devinfo"
_FIELD = re.compile(r"([A-Za-z_][\w\[\] ]*?):\s*(.*)")
_FLAG = re.compile(r"[A-Z][A-Z0-9_]*")
_STATE = re.compile(r"PORT_([A-Z_]+) \(\d+\)")
_PHYS = {"SLEEP": "Sleep", "POLLING": "Polling", "DISABLED": "Disabled", "PORT_CONFIGURATION_TRAINING":
         "PortConfigurationTraining", "LINK_UP": "LinkUp", "LINK_ERROR_RECOVERY": "LinkErrorRecovery",
         "PHY_TEST": "PhyTest"}
_WIDTH = re.compile(r"(\d+)X \(\d+\)")
_SPEED = re.compile(r"(\d+(?:\.\d+)?) Gbps \(\d+\)")


def read(text: str) -> dict[str, Any]:
    """{"nics": [port]} in file order."""
    nics: list[dict[str, Any]] = []
    fw: Optional[str] = None  # noqa: UP045 - ansible-test's pylint reads module_utils as older Python
    name = ""
    width: dict[int, int] = {}
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        field = _FIELD.fullmatch(stripped)
        if not stripped or (_FLAG.fullmatch(stripped) and name):
            continue
        if not field or (not name and field.group(1) != "hca_id"):
            raise UnreadableOutput(f"line {number}: cannot read {stripped[:120]!r} as an ibv_devinfo line"
                                   + ("" if name else " (it opens with hca_id:)"))
        key, value = field.group(1), field.group(2).strip()
        where = f"line {number} ({key})"
        if key == "hca_id":
            name, fw = value, None
        elif key == "fw_ver":
            fw = available(value)
        elif key == "port":
            if not value.isdigit():
                raise UnreadableOutput(f"{where}: cannot read {value!r} as a port number")
            nics.append(nic(name, int(value), fw=fw))
        elif nics and nics[-1]["device"] == name:
            _port_field(nics[-1], key, value, where, width)
    if not nics:
        raise UnreadableOutput("no port in the ibv_devinfo output: no hca_id with a port")
    return {"nics": nics}


def _port_field(port: dict[str, Any], key: str, value: str, where: str, width: dict[int, int]) -> None:
    if key == "state":
        found = _STATE.fullmatch(value)
        if not found:
            raise UnreadableOutput(f"{where}: cannot read {value!r} as a port state (PORT_ACTIVE (4), ...)")
        port["state"] = found.group(1)
    elif key == "phys_state":
        phys = value.split(" (")[0]
        if phys not in _PHYS:
            raise UnreadableOutput(f"{where}: cannot read {value!r} as a physical state (LINK_UP (5), ...)")
        port["phys_state"] = _PHYS[phys]
    elif key == "link_layer":
        port["link_layer"] = available(value)
    elif key == "active_width":
        found = _WIDTH.fullmatch(value)
        if not found:
            raise UnreadableOutput(f"{where}: cannot read {value!r} as a link width (4X (2), ...)")
        width[id(port)] = int(found.group(1))
    elif key == "active_speed":
        found = _SPEED.fullmatch(value)
        if not found:
            raise UnreadableOutput(f"{where}: cannot read {value!r} as a lane speed (25.0 Gbps (32), ...)")
        if id(port) in width:
            port["rate_gbps"] = width[id(port)] * float(found.group(1))
