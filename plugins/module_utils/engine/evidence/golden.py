"""A node's snapshot judged against the golden profile: one finding per field judged, and the node's output judged in
dcgm_verdict.judge's shape for the Job tier (docs/golden-configuration.md).

The rules: GPU count = the product's gpusPerNode (and every GPU nvidia-smi says is attached is in its output); per
GPU ECC enabled, current and pending; no row remap pending, no remap failure, no volatile uncorrectable ECC error,
no retired page pending; persistence mode on; power limit at the SKU default (the profile's, else the default the GPU
reports); the product's active NVLinks; PCIe at the best generation and width both ends support (the lesser of the
device's and the host's maximum: a link its host limits is no GPU fault; drift.py names it where the fleet runs
faster), a generation below it not judged while the GPU idles (an idle GPU drops its link speed); no active throttle
reason but idle. Per node the driver and CUDA at or above the product's minimum and the pinned values (golden_generate)
held. Per NIC port: the platform's count, every port ACTIVE/LinkUp, an active port at the platform's rate (else at its
fastest peer's of the same link layer on the node), its PCIe link as a GPU's. A value the output does not hold is not
judged: missing is never a pass or a zero.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Optional

from . import node_snapshot
from .dcgm_verdict import Options
from .golden_profile import Profile, version_key
from .rows import RANK, Row, sorted_rows, worst

TEST = "configuration"
IDLE_PSTATES = ("P8", "P10", "P12", "P15")
POWER_TOLERANCE_W = 1.0
EMPTY = Profile({}, {}, {}, {})
_DEFAULT_SEVERITY = {"persistence": "warn", "throttle": "warn", "pinned": "warn", "drift": "warn"}
_REMEDY = {
    "ecc_current": "enable ECC: `nvidia-smi -i {i} -e 1` and reboot",
    "ecc_pending": "ECC turns off at the next reboot: `nvidia-smi -i {i} -e 1` to keep it on",
    "remap_pending": "drain the node and reset the GPU (`nvidia-smi -i {i} -r`, or reboot) to apply the pending row "
                     "remap",
    "remap_failure": "the GPU has no spare rows left: drain the node and replace the GPU",
    "volatile_uncorrectable": "drain the node, reset the GPU and run `dcgmi diag -r 3`; replace the GPU if the errors "
                              "return",
    "retired_pending": "reboot (or reset the GPU) to retire the pending pages",
    "persistence": "enable persistence mode: run nvidia-persistenced (or `nvidia-smi -i {i} -pm 1`)",
    "power_limit_w": "restore the default power limit: `nvidia-smi -i {i} -pl {expected_n}`",
    "nvlinks_active": "bring the NVLinks up: `nvidia-smi nvlink -s` names the down links; reset the GPU, check the "
                      "fabric manager on NVSwitch systems, reseat the GPU baseboard",
    "pcie_gen": "the link trained below its best: reseat the device or its riser, check the slot's BIOS link speed "
                "(`lspci -vvv` LnkSta)",
    "pcie_width": "the link trained narrower than both ends support: reseat the device or its riser (`lspci -vvv` "
                  "LnkSta)",
    "throttle": "find why the clocks are held down: check cooling, the power supply and the power-brake signal "
                "(`nvidia-smi -q -d PERFORMANCE`)",
    "gpu_count": "find the missing GPU: `nvidia-smi -L`, `lspci | grep -i nvidia`, Xid 79 in the kernel log; reseat "
                 "or replace it",
    "driver": "upgrade the NVIDIA driver to {expected_n} or later",
    "cuda": "upgrade the NVIDIA driver to one that supports CUDA {expected_n} or later",
    "nic.count": "find the missing NIC ports: `ibstat`, `lspci | grep -i mellanox`, the NIC driver's log",
    "nic.state": "bring the port up: check the cable, transceiver and switch port (`ibstat`, `mlxlink -d {name}`)",
    "nic.phys_state": "the port has no physical link: check the cable, transceiver and switch port (`mlxlink -d {name}`)",
    "nic.rate": "the port trained below its rate: check the cable and transceiver (`mlxlink -d {name} -m`)",
    "vbios": "flash the fleet's VBIOS {expected_n} (nvflash, or the OEM's firmware bundle)",
    "nic.fw": "flash the fleet's NIC firmware {expected_n} (`mlxfwmanager`)",
    "kernel": "boot the fleet's kernel {expected_n}",
}


class _Blank(dict):
    def __missing__(self, key: str) -> str:
        return "?"


def remedy_of(rule: str, values: dict[str, Any]) -> str:
    """The remedy line of a rule (a NIC's PCIe rules share the GPU's), its placeholders filled from `values`."""
    text = _REMEDY.get(rule) or _REMEDY.get(rule.replace("nic.", "", 1), "")
    return text.format_map(_Blank(values))


@dataclass(frozen=True)
class GoldenParameters:
    """What the node is judged against: its GPU product label (nvidia.com/gpu.product; empty: the product its GPUs
    name), its platform (for the NIC count and the GPU count's platform override), and the profile (None: no product
    rules; catalog/golden_defaults gives the shipped one)."""

    product: str = ""
    platform: str = ""
    profile: Optional[Profile] = None  # noqa: UP045 - ansible-test's pylint reads module_utils as older Python


@dataclass(frozen=True)
class GoldenOptions:
    node: str = ""
    expected_gpus: Optional[int] = None  # noqa: UP045 - as above
    skip_is_failure: bool = False
    parameters: GoldenParameters = field(default_factory=GoldenParameters)

    @staticmethod
    def of(options: Options, parameters: GoldenParameters) -> GoldenOptions:
        return GoldenOptions(options.node, options.expected_gpus, options.skip_is_failure, parameters)


def product_of(snapshot: dict[str, Any], label: str = "") -> Optional[str]:  # noqa: UP045 - as above
    """The node's product: the label given, else the name most of its GPUs print."""
    names = Counter(g["product"] for g in snapshot.get("gpus") or [] if g.get("product"))
    return label or (names.most_common(1)[0][0] if names else None)


class _Judge:
    def __init__(self, snapshot: dict[str, Any], profile: Profile, product: Optional[str],  # noqa: UP045
                 passes: bool) -> None:
        self.node, self.profile, self.product, self.passes = snapshot.get("node") or "", profile, product, passes
        self.out: list[dict[str, Any]] = []

    def severity(self, rule: str) -> str:
        return self.profile.severity.get(rule, _DEFAULT_SEVERITY.get(rule, "fail"))

    def add(self, where: dict[str, Any], rule: str, expected: Any, observed: Any, ok: bool,
            outcome: str = "", **remedy: Any) -> None:
        if ok and not self.passes:
            return
        metric = rule if where["component"] != "nic" or rule.startswith("nic.") else f"nic.{rule}"
        self.out.append({"node": self.node, **where, "field": metric, "expected": str(expected),
                         "observed": str(observed), "outcome": "pass" if ok else outcome or self.severity(metric),
                         "remedy": "" if ok else remedy_of(metric, remedy), "drift": None})


def _gpu_where(g: dict[str, Any]) -> dict[str, Any]:
    return {"component": "gpu", "index": g["index"], "uuid": g.get("uuid"), "name": None}


def _nic_name(n: dict[str, Any]) -> str:
    return f"{n['device']}/{n['port']}" if n.get("port") is not None else str(n["device"])


NODE = {"component": "node", "index": None, "uuid": None, "name": None}
_WORDS = {"ecc_current": ("Enabled", "Disabled"), "ecc_pending": ("Enabled", "Disabled"),
          "persistence": ("Enabled", "Disabled"), "remap_pending": ("No", "Yes"), "remap_failure": ("No", "Yes"),
          "retired_pending": ("No", "Yes")}
_WANT = {"ecc_current": True, "ecc_pending": True, "persistence": True, "remap_pending": False,
         "remap_failure": False, "retired_pending": False}


# What a source holds whole: a count is judged only where the output lists every GPU (nvidia-smi) or NIC port.
HOLDS_ALL = ("gpus", "nics")


def findings(snapshot: dict[str, Any], profile: Optional[Profile] = None, product: str = "",  # noqa: UP045 - as above
             platform: str = "", expected_gpus: Optional[int] = None,  # noqa: UP045 - as above
             passes: bool = False, holds: tuple[str, ...] = HOLDS_ALL) -> list[dict[str, Any]]:
    """The findings of one node's snapshot (the failing and warning ones; every field judged with `passes`).
    `holds`: which lists the source holds whole (their counts are judged)."""
    profile = profile or EMPTY
    label = product_of(snapshot, product)
    judge = _Judge(snapshot, profile, label, passes)
    _node(judge, snapshot, platform, expected_gpus if "gpus" in holds else None, "gpus" in holds)
    for g in snapshot.get("gpus") or []:
        _gpu(judge, g)
    _nics(judge, snapshot.get("nics") or [], profile.nics.get(platform), "nics" in holds)
    return judge.out


def _node(judge: _Judge, snapshot: dict[str, Any], platform: str, expected_gpus: Optional[int],  # noqa: UP045
          counted: bool) -> None:
    gpus, attached = len(snapshot.get("gpus") or []), snapshot.get("attached_gpus")
    want = expected_gpus if expected_gpus is not None else judge.profile.expected_gpus(judge.product, platform)
    if counted and (want is not None or (attached is not None and attached != gpus)):
        observed = f"{gpus}" + (f" ({attached} attached)" if attached is not None and attached != gpus else "")
        judge.add(NODE, "gpu_count", want if want is not None else attached, observed,
                  (want is None or gpus == want) and (attached is None or attached == gpus))
    rule = judge.profile.product(judge.product)
    for name, minimum in (("driver", rule.min_driver if rule else None), ("cuda", rule.min_cuda if rule else None)):
        value = snapshot.get(name)
        if minimum and value:
            judge.add(NODE, name, f">= {minimum}", value, _at_least(value, minimum), expected_n=minimum)
    for name in ("driver", "kernel"):
        _pinned(judge, NODE, name, snapshot.get(name))


def _at_least(value: str, minimum: str) -> bool:
    try:
        return version_key(value) >= version_key(minimum)
    except ValueError:
        return False


def _pinned(judge: _Judge, where: dict[str, Any], name: str, value: Optional[str]) -> None:  # noqa: UP045
    pins = judge.profile.pins(judge.product, name)
    if not pins or value is None:
        return
    if name == "nic.fw":  # one pin per firmware line: the pin of this port's line, if any
        pins = [p for p in pins if p.value.split(".")[0] == value.split(".")[0]] or pins
    ok = value in [p.value for p in pins]
    pin = pins[0]
    held = f" (pinned: {pin.nodes} of {pin.of} nodes)" if pin.nodes is not None and pin.of is not None else " (pinned)"
    judge.add(where, name, " or ".join(p.value for p in pins) + held, value, ok, judge.severity("pinned"),
              expected_n=pin.value, name=where.get("name"))


def _gpu(judge: _Judge, g: dict[str, Any]) -> None:
    where, i = _gpu_where(g), g["index"]
    for name, want in _WANT.items():
        if g.get(name) is not None:
            words = _WORDS[name]
            judge.add(where, name, words[0], words[0] if g[name] == want else words[1], g[name] == want, i=i)
    if g.get("volatile_uncorrectable") is not None:
        judge.add(where, "volatile_uncorrectable", 0, g["volatile_uncorrectable"], g["volatile_uncorrectable"] == 0)
    _power(judge, where, g)
    rule = judge.profile.product(judge.product)
    if rule is not None and rule.nvlinks is not None and g.get("nvlinks_active") is not None:
        total = f" of {g['nvlinks_total']}" if g.get("nvlinks_total") is not None else ""
        judge.add(where, "nvlinks_active", rule.nvlinks, f"{g['nvlinks_active']}{total}",
                  g["nvlinks_active"] >= rule.nvlinks)
    idle = g.get("pstate") in IDLE_PSTATES or "gpu_idle" in (g.get("throttle") or [])
    _pcie(judge, where, g, idle)
    if g.get("throttle") is not None:
        active = [r for r in g["throttle"] if r != "gpu_idle"]
        # A hardware slowdown (thermal, power brake) is the board protecting itself: worse than a software cap.
        hw = any(r.startswith("hw_") for r in active)
        judge.add(where, "throttle", "none but gpu_idle", ", ".join(active) or "none", not active,
                  judge.severity("throttle.hw" if hw else "throttle"))
    _pinned(judge, where, "vbios", g.get("vbios"))


def _power(judge: _Judge, where: dict[str, Any], g: dict[str, Any]) -> None:
    limit = g.get("power_limit_w")
    # The profile's own powerLimitW, else the default the board reports (an OEM's 500 W A100 is its SKU), else the
    # catalog's SKU default.
    rule = judge.profile.product(judge.product)
    want = (rule.power_limit_w if rule is not None else None) or g.get("default_power_limit_w") or \
        judge.profile.power_limit_w(judge.product)
    if limit is None or want is None:
        return
    # Below the default starves the GPU (a fault); above it is an operator's choice, worth a look.
    low, high = limit < want - POWER_TOLERANCE_W, limit > want + POWER_TOLERANCE_W
    judge.add(where, "power_limit_w", f"{want:g} W", f"{limit:g} W", not (low or high),
              "" if low else "warn", i=g["index"], expected_n=f"{want:g}")


def best(device: Optional[int], host: Optional[int]) -> Optional[int]:  # noqa: UP045 - as above
    """The best a link can train at: the lesser of both ends' maximum (the device's alone when the host's is not
    known)."""
    known = [v for v in (device, host) if v is not None]
    return min(known) if known else None


def _pcie(judge: _Judge, where: dict[str, Any], d: dict[str, Any], idle: bool) -> None:
    gen, width = best(d.get("pcie_max_gen"), d.get("host_max_gen")), best(d.get("pcie_max_width"), d.get("host_max_width"))
    host = " (host limit)" if d.get("host_max_gen") is not None and d.get("pcie_max_gen") is not None and \
        d["host_max_gen"] < d["pcie_max_gen"] else ""
    if gen is not None and d.get("pcie_gen") is not None and not (idle and d["pcie_gen"] < gen):
        judge.add(where, "pcie_gen", f"Gen{gen}{host}", f"Gen{d['pcie_gen']}", d["pcie_gen"] >= gen, name=where["name"])
    if width is not None and d.get("pcie_width") is not None:
        judge.add(where, "pcie_width", f"x{width}", f"x{d['pcie_width']}", d["pcie_width"] >= width,
                  name=where["name"])


def _nics(judge: _Judge, nics: list[dict[str, Any]], rule: Any, whole: bool) -> None:
    layer = rule.link_layer if rule is not None else None
    counted = [n for n in nics if layer is None or n.get("link_layer") == layer]
    if whole and rule is not None and rule.count is not None:
        judge.add(NODE, "nic.count", f"{rule.count}{' ' + layer if layer else ''} ports", len(counted),
                  len(counted) >= rule.count)
    fastest: dict[Any, float] = {}
    for n in nics:
        if n.get("state") == "ACTIVE" and n.get("rate_gbps") is not None:
            fastest[n.get("link_layer")] = max(fastest.get(n.get("link_layer"), 0.0), n["rate_gbps"])
    for n in nics:
        name = _nic_name(n)
        where = {"component": "nic", "index": n.get("port"), "uuid": None, "name": name}
        if n.get("state") is not None:
            observed = n["state"] + (f"/{n['phys_state']}" if n.get("phys_state") else "")
            judge.add(where, "nic.state", "ACTIVE/LinkUp", observed,
                      n["state"] == "ACTIVE" and n.get("phys_state") in (None, "LinkUp"), name=n["device"])
        elif n.get("phys_state") is not None:
            judge.add(where, "nic.phys_state", "LinkUp", n["phys_state"], n["phys_state"] == "LinkUp", name=n["device"])
        platform_rate = rule is not None and rule.rate_gbps and (layer is None or n.get("link_layer") == layer)
        want = rule.rate_gbps if platform_rate else fastest.get(n.get("link_layer"))
        if n.get("state") == "ACTIVE" and n.get("rate_gbps") is not None and want:
            judge.add(where, "nic.rate", f"{want:g} Gb/s", f"{n['rate_gbps']:g} Gb/s", n["rate_gbps"] >= want,
                      name=n["device"])
        _pcie(judge, where, n, False)
        _pinned(judge, where, "nic.fw", n.get("fw"))


def rows(findings_: list[dict[str, Any]]) -> list[Row]:
    """Findings as evidence rows (test `configuration`, metric the field, value the observed, detail the expected
    and the remedy): a GPU's under its index, a NIC port's as a `link` (index the port, the NIC named first), the
    node's under GPU index None."""
    out = []
    for f in findings_:
        detail = f"expected {f['expected']}" + (f"; {f['remedy']}" if f["remedy"] else "")
        if f.get("drift"):
            d = f["drift"]
            detail += f"; drift: majority {d['majority']} on {d['holders']}/{d['of']} nodes"
        component = "link" if f["component"] == "nic" else "gpu"
        if f["component"] == "nic":
            detail = f"{f['name']}: {detail}"
        out.append(Row(f["node"], component, f["index"], f["uuid"], TEST, f["field"], f["observed"], None,
                       f["outcome"], detail))
    return sorted_rows(out)


def judge_snapshot(snapshot: dict[str, Any], options: GoldenOptions, holds: tuple[str, ...] = HOLDS_ALL,
                   passes: bool = False) -> dict[str, Any]:
    """One node's snapshot judged: rows (every field judged, passes included), per-GPU verdicts, the node's outcome
    (dcgm_verdict.judge's shape), with the snapshot and its findings (the failing and warning ones; every field
    judged with `passes`)."""
    params = options.parameters
    snapshot = {**snapshot, "node": options.node or snapshot.get("node") or ""}
    judged = findings(snapshot, params.profile, params.product, params.platform, options.expected_gpus, True, holds)
    row_list = rows(judged)
    present = {g["index"]: g.get("uuid") for g in snapshot.get("gpus") or []}
    want = options.expected_gpus if "gpus" in holds else 0
    if want is None and params.profile is not None:
        want = params.profile.expected_gpus(product_of(snapshot, params.product), params.platform)
    missing = [i for i in range(want or 0) if i not in present]
    lacking_outcome = "fail" if options.skip_is_failure else "warn"
    gpus = []
    for index in sorted({*present, *missing}):
        own = [r for r in row_list if r.component == "gpu" and r.index == index]
        lacking = index not in missing and not own
        outcomes = [r.outcome for r in own] + (["fail"] if index in missing else []) + \
            ([lacking_outcome] if lacking else [])
        gpus.append({"index": index, "uuid": present.get(index), "outcome": worst(outcomes) or "pass",
                     "lacking_evidence": lacking, "missing": index in missing,
                     "failures": [{"test": TEST, "outcome": r.outcome, "detail": f"{r.metric} {r.value}: {r.detail}"}
                                  for r in own if RANK[r.outcome] >= RANK["warn"]]})
    others = [r.outcome for r in row_list if not (r.component == "gpu" and r.index is not None)]
    return {"rows": [r.to_dict() for r in row_list], "gpus": gpus,
            "outcome": worst([g["outcome"] for g in gpus] + others) or lacking_outcome,
            "lacking_evidence": [g["index"] for g in gpus if g["lacking_evidence"]], "missing": missing,
            "runtime_error": None, "product": product_of(snapshot, params.product), "snapshot": snapshot,
            "findings": [f for f in judged if passes or f["outcome"] != "pass"]}


def judge_text(log: str, options: GoldenOptions) -> dict[str, Any]:
    """A node-drift collector's output (node-drift/1) judged as judge_snapshot does. UnreadableOutput names the first
    record, file or line that does not read."""
    return judge_snapshot(node_snapshot.read(log), options)
