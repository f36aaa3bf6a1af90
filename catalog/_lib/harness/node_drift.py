"""The collector of `configuration/node-drift` (issue 42), run in the catalog's PyTorch image on one node with all
its GPUs allocated.

It puts every GPU to work for a few seconds (a bf16 matmul loop per GPU: an idle GPU drops its PCIe link to Gen1,
so a link read at rest says nothing about the link the node trains), and while they work takes `nvidia-smi -q -x`
and `nvidia-smi nvlink -s` (the XML has no NVLink state). Then it reads, read-only, from sysfs: every RDMA port
(`/sys/class/infiniband/<dev>/ports/<n>/`: state, phys_state, rate, link_layer; the device's fw_ver, its netdev
and its PCI function's current and maximum link speed and width), and for every GPU and NIC PCI function the
upstream port's maximum link speed and width (`/sys/bus/pci/devices/<addr>` resolves to its parent port), so the
best link both ends support is known. The kernel release is the host's (`uname`: containers share its kernel).

It prints the files in the `node-drift/1` format (docs/node-drift.md): a begin line, then per file a `file` line
giving its line count followed by exactly those lines, then an end line with the number of files. Nothing else goes
to stdout; why something could not be collected goes to stderr in one line.

Exit codes: 0 every file collected; 1 some file could not be collected (the others are printed); 2 it could not run
(no torch, no GPU, bad arguments). The pure parts (the format, the sysfs reading, the JSON) import without torch, so
they are tested anywhere.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

MARKER = "node-drift/1"
XML_FILE = "nvidia-smi-q.xml"
NVLINK_FILE = "nvidia-smi-nvlink.txt"
NICS_FILE = "nics.json"
HOST_PCIE_FILE = "host-pcie.json"
VERSIONS_FILE = "versions.json"
PCI_ADDRESS = re.compile(r"^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
COMMAND_TIMEOUT_S = 120
MATMUL_SIZE = 4096


class UsageError(Exception):
    """The collector cannot run here: one line saying why (exit 2)."""


def positive(text: str) -> float:
    value = float(text)
    if not 0 < value < float("inf"):  # NaN is not above 0 either
        raise argparse.ArgumentTypeError(f"must be a number above 0, got {text!r}")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="node_drift.py", description="Collect a node's GPU, NIC and PCIe configuration "
                                "while its GPUs work, printing the node-drift/1 format.")
    p.add_argument("--node", default=os.environ.get("NODE_NAME", ""),
                   help="the node's name (default: $NODE_NAME, the pod's spec.nodeName)")
    p.add_argument("--load-s", type=positive, default=8.0, help="seconds the GPUs work (the XML is taken mid-way)")
    p.add_argument("--sysfs", default="/sys", help="where sysfs is mounted (tests point it at a fake tree)")
    return p


def stamp(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def render(node: str, when: float, files: list[tuple[str, str]]) -> list[str]:
    """The node-drift/1 lines of `files` [(name, text)]: each file's lines exactly as collected."""
    lines = [f"{MARKER} begin node={node} time={stamp(when)}"]
    for name, text in files:
        body = text.splitlines()
        lines.append(f"{MARKER} file name={name} lines={len(body)}")
        lines.extend(body)
    lines.append(f"{MARKER} end files={len(files)}")
    return lines


def _read(path: Path) -> str | None:
    """A sysfs attribute's text without its newline, None when absent or unreadable."""
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _state(text: str | None) -> str | None:
    """`4: ACTIVE` -> `ACTIVE` (sysfs prefixes the enum's number)."""
    return text.split(":", 1)[1].strip() if text and ":" in text else text


def pci_link(device: Path) -> dict[str, str | None]:
    """A PCI function's current and maximum link speed and width, as sysfs spells them."""
    return {key: _read(device / key) for key in
            ("current_link_speed", "current_link_width", "max_link_speed", "max_link_width")}


def _netdev(device: Path, port: int) -> str | None:
    """The netdev of port `port` of an RDMA device: the one whose dev_port is port - 1 (sysfs counts from 0), or
    the only one; None when the pod's network namespace shows none."""
    try:
        names = sorted(p.name for p in (device / "device" / "net").iterdir())
    except OSError:
        return None
    for name in names:
        if _read(device / "device" / "net" / name / "dev_port") == str(port - 1):
            return name
    return names[0] if len(names) == 1 else None


def nics(sysfs: Path) -> list[dict[str, Any]]:
    """One entry per port of every RDMA device (InfiniBand, RoCE, EFA), in device then port order."""
    out: list[dict[str, Any]] = []
    root = sysfs / "class" / "infiniband"
    devices = sorted(root.iterdir(), key=lambda p: p.name) if root.is_dir() else []
    for device in devices:
        pci = device / "device"
        address = pci.resolve().name if pci.exists() else None
        ports = sorted((p for p in (device / "ports").iterdir() if p.name.isdigit()), key=lambda p: int(p.name)) \
            if (device / "ports").is_dir() else []
        for port in ports:
            number = int(port.name)
            out.append({
                "device": device.name, "port": number, "state": _state(_read(port / "state")),
                "phys_state": _state(_read(port / "phys_state")), "rate": _read(port / "rate"),
                "fw_ver": _read(device / "fw_ver"), "netdev": _netdev(device, number),
                "link_layer": _read(port / "link_layer"),
                "pci": {"address": address, **pci_link(pci)} if address and PCI_ADDRESS.match(address) else None})
    return out


def sysfs_address(bus_id: str) -> str:
    """nvidia-smi's `00000000:1A:00.0` as sysfs names it: `0000:1a:00.0`."""
    domain, rest = bus_id.strip().lower().split(":", 1)
    return f"{int(domain, 16):04x}:{rest}"


def gpu_addresses(xml_text: str) -> list[str]:
    """The PCI addresses of the GPUs in `nvidia-smi -q -x` (empty when it is not XML)."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError:
        return []
    return [sysfs_address(g.get("id") or "") for g in root.findall("gpu") if ":" in (g.get("id") or "")]


def host_pcie(sysfs: Path, addresses: list[str]) -> dict[str, dict[str, str | None]]:
    """For each PCI function, its upstream port's maximum link speed and width (the link's other end). A function
    on a root bus (no upstream port, as in many VMs) or not in sysfs is left out: unknown, not zero."""
    out: dict[str, dict[str, str | None]] = {}
    for address in addresses:
        device = sysfs / "bus" / "pci" / "devices" / address
        if not device.exists():
            continue
        parent = device.resolve().parent
        if not PCI_ADDRESS.match(parent.name):
            continue
        link = pci_link(parent)
        out[address] = {"max_link_speed": link["max_link_speed"], "max_link_width": link["max_link_width"]}
    return out


def versions(xml_text: str, kernel: str) -> dict[str, str | None]:
    """Driver and CUDA as nvidia-smi reports them, the host's kernel release."""
    try:
        root = ET.fromstring(xml_text)
    except ET.ParseError:
        root = None
    return {"driver": root.findtext("driver_version") if root is not None else None,
            "cuda": root.findtext("cuda_version") if root is not None else None, "kernel": kernel or None}


def to_json(value: Any) -> str:
    return json.dumps(value, indent=2)


def _command(argv: list[str]) -> tuple[str | None, str]:
    """(stdout, '') when the command ran and exited 0, else (None, why)."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"`{' '.join(argv)}` did not run: {exc}"
    if done.returncode:
        last = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return None, f"`{' '.join(argv)}` exited {done.returncode}: {last[0]}"
    return done.stdout, ""


class Load:
    """A bf16 matmul loop on every visible GPU until stopped, so their PCIe links run at their trained speed."""

    def __init__(self) -> None:
        try:
            import torch  # noqa: PLC0415 - the pure parts run without torch
        except ImportError as exc:
            raise UsageError(f"torch is not in the image ({exc}): nothing can load the GPUs") from None
        if not torch.cuda.is_available() or torch.cuda.device_count() == 0:
            raise UsageError("no GPU is visible to CUDA: the pod must request the node's GPUs")
        self.torch, self.stop, self.errors = torch, threading.Event(), []
        self.threads = [threading.Thread(target=self._work, args=(i,), daemon=True)
                        for i in range(torch.cuda.device_count())]

    def _work(self, index: int) -> None:
        torch = self.torch
        try:
            with torch.cuda.device(index):
                a = torch.randn(MATMUL_SIZE, MATMUL_SIZE, device=f"cuda:{index}", dtype=torch.bfloat16)
                while not self.stop.is_set():
                    for _step in range(8):
                        a = torch.nn.functional.normalize(a @ a, dim=1)
                    torch.cuda.synchronize(index)
        except RuntimeError as exc:
            self.errors.append(f"GPU {index}: {exc}")

    def __enter__(self) -> Load:
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=30)


def collect(args: argparse.Namespace) -> tuple[list[tuple[str, str]], list[str]]:
    """The files collected and why any could not be."""
    problems: list[str] = []
    with Load() as load:
        time.sleep(args.load_s / 2)   # the links train up to speed under load
        xml_text, why_xml = _command(["nvidia-smi", "-q", "-x"])
        nvlink_text, why_nvlink = _command(["nvidia-smi", "nvlink", "-s"])
        time.sleep(args.load_s / 2)
    problems += [why for why in (why_xml, why_nvlink, *load.errors) if why]
    sysfs = Path(args.sysfs)
    files: list[tuple[str, str]] = []
    if xml_text is not None:
        files.append((XML_FILE, xml_text))
    ports = nics(sysfs)
    files.append((NICS_FILE, to_json(ports)))
    addresses = gpu_addresses(xml_text or "") + sorted({p["pci"]["address"] for p in ports if p["pci"]})
    files.append((HOST_PCIE_FILE, to_json(host_pcie(sysfs, addresses))))
    files.append((VERSIONS_FILE, to_json(versions(xml_text or "", os.uname().release))))
    if nvlink_text is not None:
        files.append((NVLINK_FILE, nvlink_text))
    return files, problems


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(sys.argv[1:] if argv is None else argv)
    if not args.node:
        print("node-drift: no node name: pass --node or set NODE_NAME (the pod's spec.nodeName)", file=sys.stderr)
        return 2
    started = time.time()
    try:
        files, problems = collect(args)
    except UsageError as exc:
        print(f"node-drift: {exc}", file=sys.stderr, flush=True)
        return 2
    print("\n".join(render(args.node, started, files)), flush=True)
    for problem in problems:
        print(f"node-drift: {problem}", file=sys.stderr, flush=True)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
