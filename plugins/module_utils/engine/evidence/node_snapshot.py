"""The node-drift collector's output (`node-drift/1`, the configuration/node-drift Job's pod log) read into the node's
snapshot (config_snapshot).

The format: `node-drift/1 begin node=<node> time=<RFC 3339>`, then per file `node-drift/1 file name=<name>
lines=<n>` followed by exactly n lines of the file as collected, then `node-drift/1 end files=<k>`. The files:
`nvidia-smi-q.xml` (read by nvsmi_xml), `nics.json` (each RDMA port from sysfs, its strings as sysfs prints them),
`host-pcie.json` (each GPU's and NIC's upstream port maximum: the best link both ends support), `versions.json`
(driver, CUDA, kernel); and, optionally, `nvidia-smi-nvlink.txt` (`nvidia-smi nvlink -s`, read by nvlink_status:
nvidia-smi -q prints no NVLink state).

Lines before the begin record and after the end record are the container's, and left alone. Strict: everything
between them must be a record or a file's line; a file is read by its own reader, and what it cannot read is refused
with the file's name and its line; a required file absent, a file cut short or an output without its end record
is refused (the collector did not finish).
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Optional

from . import nvlink_status, nvsmi_xml
from .config_snapshot import available, gen_of_speed, integer, nic, node, rate_gbps
from .dcgm_results import UnreadableOutput

MARKER = "node-drift/1"
_BEGIN = re.compile(rf"{re.escape(MARKER)} begin node=(\S+) time=(\S+)")
_FILE = re.compile(rf"{re.escape(MARKER)} file name=(\S+) lines=(\d+)")
_END = re.compile(rf"{re.escape(MARKER)} end files=(\d+)")
REQUIRED = ("nvidia-smi-q.xml", "nics.json", "host-pcie.json", "versions.json")
OPTIONAL = ("nvidia-smi-nvlink.txt",)


def is_collector_output(text: str) -> bool:
    """Whether `text` holds a node-drift/1 begin record (a collector output rather than a snapshot's JSON)."""
    return any(_BEGIN.fullmatch(line.strip()) for line in text.splitlines())


def read(text: str) -> dict[str, Any]:
    """The node's snapshot, with its collection `time`. UnreadableOutput names the first record, file or line that
    does not read."""
    name, time, files = _files(text)
    missing = [f for f in REQUIRED if f not in files]
    if missing:
        raise UnreadableOutput(f"no {', '.join(missing)} in the {MARKER} output of {name}: the collector did not "
                               "collect it (its own log says why)")
    gpus = _in_file("nvidia-smi-q.xml", files, nvsmi_xml.read)
    nics = _in_file("nics.json", files, lambda t: _nics(_json(t, list)))
    hosts = _in_file("host-pcie.json", files, lambda t: _json(t, dict))
    versions = _in_file("versions.json", files, lambda t: _json(t, dict))
    links = _in_file("nvidia-smi-nvlink.txt", files, nvlink_status.read) if "nvidia-smi-nvlink.txt" in files else {}
    for gpu in gpus["gpus"]:
        # nvidia-smi prints the host's maximum itself from R535: host-pcie.json adds it where it does not.
        gpu.update({k: v for k, v in _host(hosts, gpu["pci"], "host-pcie.json").items() if v is not None})
        found = links.get(gpu["index"]) or {}
        gpu["nvlinks_active"], gpu["nvlinks_total"] = found.get("nvlinks_active"), found.get("nvlinks_total")
    for port in nics:
        port.update(_host(hosts, port.pop("_pci", None), "host-pcie.json"))
    snapshot = node(name, gpus["gpus"], nics, driver=_text(versions, "driver") or gpus["driver"],
                    cuda=_text(versions, "cuda") or gpus["cuda"], kernel=_text(versions, "kernel"),
                    attached_gpus=gpus["attached_gpus"])
    return {**snapshot, "time": time}


def _files(text: str) -> tuple[str, str, dict[str, str]]:
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if _BEGIN.fullmatch(line.strip())), None)
    if start is None:
        raise UnreadableOutput(f"no {MARKER} begin record: the collector did not run, or printed nothing")
    begin = _BEGIN.fullmatch(lines[start].strip())
    name, time = begin.group(1), begin.group(2)  # type: ignore[union-attr]  # matched above
    files: dict[str, str] = {}
    i = start + 1
    while i < len(lines):
        line = lines[i].strip()
        opened, ended = _FILE.fullmatch(line), _END.fullmatch(line)
        if ended:
            if int(ended.group(1)) != len(files):
                raise UnreadableOutput(f"line {i + 1}: the end record counts {ended.group(1)} files, the output "
                                       f"holds {len(files)}")
            return name, time, files
        if not opened:
            raise UnreadableOutput(f"line {i + 1}: cannot read {line[:120]!r} as a {MARKER} record")
        fname, count = opened.group(1), int(opened.group(2))
        if fname not in (*REQUIRED, *OPTIONAL):
            raise UnreadableOutput(f"line {i + 1}: {fname!r} is not a {MARKER} file "
                                   f"({', '.join((*REQUIRED, *OPTIONAL))})")
        if i + 1 + count > len(lines):
            raise UnreadableOutput(f"line {i + 1}: {fname} declares {count} lines, the output ends after "
                                   f"{len(lines) - i - 1}: the collector was cut short")
        files[fname] = "\n".join(lines[i + 1:i + 1 + count])
        i += 1 + count
    raise UnreadableOutput(f"no {MARKER} end record: the output of {name} ends early (the collector was cut short)")


def _in_file(name: str, files: dict[str, str], read: Callable[[str], Any]) -> Any:
    try:
        return read(files[name])
    except UnreadableOutput as err:
        raise UnreadableOutput(f"{name}: {err}") from None


def _json(text: str, kind: type) -> Any:
    try:
        found = json.loads(text)
    except ValueError as err:
        raise UnreadableOutput(f"line {getattr(err, 'lineno', 1)}: cannot read it as JSON ({err})") from None
    if not isinstance(found, kind):
        raise UnreadableOutput(f"a JSON {'list' if kind is list else 'object'} was expected, not {type(found).__name__}")
    return found


def _text(values: dict[str, Any], key: str) -> Optional[str]:  # noqa: UP045 - ansible-test's pylint reads module_utils as older Python
    value = values.get(key)
    return available(str(value)) if value is not None else None


def _state(value: Any, where: str) -> Optional[str]:  # noqa: UP045 - as above
    """sysfs's `4: ACTIVE` (or `ACTIVE`) as `ACTIVE`; `5: LinkUp` as `LinkUp`."""
    if value is None:
        return None
    found = re.fullmatch(r"(?:\d+:\s*)?([A-Za-z_]+)", str(value).strip())
    if not found:
        raise UnreadableOutput(f"{where}: cannot read {value!r} as a port state")
    return found.group(1)


def _nics(entries: list[Any]) -> list[dict[str, Any]]:
    out = []
    for i, entry in enumerate(entries):
        where = f"[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("device"), str) or \
                isinstance(entry.get("port"), bool) or not isinstance(entry.get("port"), int):
            raise UnreadableOutput(f"{where}: give device (a string) and port (an integer) for each NIC port")
        pci: dict[str, Any] = entry["pci"] if isinstance(entry.get("pci"), dict) else {}
        out.append({**nic(entry["device"], entry["port"], state=_state(entry.get("state"), f"{where}.state"),
                          phys_state=_state(entry.get("phys_state"), f"{where}.phys_state"),
                          rate_gbps=rate_gbps(entry.get("rate"), f"{where}.rate"), fw=_text(entry, "fw_ver"),
                          link_layer=_text(entry, "link_layer"),
                          pcie_gen=gen_of_speed(pci.get("current_link_speed"), f"{where}.pci.current_link_speed"),
                          pcie_width=integer(pci.get("current_link_width"), f"{where}.pci.current_link_width"),
                          pcie_max_gen=gen_of_speed(pci.get("max_link_speed"), f"{where}.pci.max_link_speed"),
                          pcie_max_width=integer(pci.get("max_link_width"), f"{where}.pci.max_link_width")),
                    "_pci": pci.get("address")})
    return out


def pci_key(address: Optional[str]) -> Optional[str]:  # noqa: UP045 - as above
    """`00000000:1A:00.0` (nvidia-smi) and `0000:1a:00.0` (sysfs) are the same device."""
    found = re.fullmatch(r"(?:[0-9a-fA-F]*?([0-9a-fA-F]{1,4}):)?([0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])",
                         (address or "").strip())
    return f"{int(found.group(1) or '0', 16):04x}:{found.group(2).lower()}" if found else None


def _host(hosts: dict[str, Any], address: Optional[str], where: str) -> dict[str, Any]:  # noqa: UP045 - as above
    """The upstream port's maximum speed and width for a device (None, None when host-pcie.json has none)."""
    key = pci_key(address)
    found = next((v for k, v in hosts.items() if pci_key(k) == key), None) if key else None
    if not isinstance(found, dict):
        return {"host_max_gen": None, "host_max_width": None}
    at = f"{where} {address}"
    return {"host_max_gen": gen_of_speed(found.get("max_link_speed"), f"{at}.max_link_speed"),
            "host_max_width": integer(found.get("max_link_width"), f"{at}.max_link_width")}
