"""The GEMM burn-in's verdict per GPU (issue 41, docs/gemm-burn-in-verdict.md), over the harness's rows (gemm_burn_in.py).

Pure: the Job's trainer words (`parameters_of`: the harness flags) and its log are all it needs. Each rule names
its numbers in the failure's detail, the rule's name first:
- warm-up: windows starting before `warmup_s` are dropped from the figures; the judged figure is the median of the
  rest (the steady windows). Faults count in every window: a wrong result or a throttle during warm-up is a fault;
- `wrong-result` (check=wrong), `xid` (any XID), `throttle` (hw_slowdown, hw_thermal, hw_power_brake; a software
  power cap alone is no fault): fail;
- `power-limit`: an enforced limit more than POWER_TOLERANCE_W below the SKU's default (`--power-default-w`; 0 is
  unknown, not judged): fail;
- `floor`: the median below the floor for the product and dtype (`--floor-tflops`; 0 is none): fail, a warning
  when the floor is provisional (`--floor-provisional`);
- `node-median`: more than 5% below the node's median in 3 consecutive steady windows fails, from 3% warns;
- `degradation`: the last steady window more than 5% below the first: fail.
A GPU with no steady window lacks evidence (warn, or fail with skip_is_failure); one expected but absent is
missing. A partial read (refused lines, no end record) is the reader's reason, kept, and the node's outcome is at
least what lacking evidence gives: the windows that were not read are never passed.
"""
from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from statistics import median
from typing import Any, Optional

from .dcgm_results import UnreadableOutput
from .gemm_burn_in import FAULTS, MARKER, TEST, GemmReader, lines_of
from .rows import RANK, Row, sorted_rows, worst

SCRIPT = "gemm_burn_in.py"
POWER_TOLERANCE_W = 1.0     # NVML reports limits in milliwatts; a limit 1 W under the default is rounding, not a cap
NODE_FAIL_PCT = 5.0         # below the node's median by more than this, in RUN windows in a row: fail
NODE_WARN_PCT = 3.0         # ... by this or more: a warning
RUN = 3
DEGRADATION_PCT = 5.0       # the last steady window below the first by more than this: fail
RULES = ("wrong-result", "xid", "throttle", "power-limit", "floor", "node-median", "degradation")


class GemmParametersError(ValueError):
    """A harness flag in the trainer's words has no value, or not a value of its kind."""


@dataclass(frozen=True)
class GemmParameters:
    """The harness flags (the issue-41 contract). `floor_tflops` and `power_default_w` None: the words gave 0 (no
    floor, an unknown default: not judged)."""

    duration_s: float = 600.0
    warmup_s: float = 60.0
    window_s: float = 30.0
    dtype: str = "bf16"
    size: int = 8192
    product: str = ""
    floor_tflops: Optional[float] = None  # noqa: UP045 - ansible-test's pylint reads module_utils as older Python
    floor_provisional: bool = False
    power_default_w: Optional[float] = None  # noqa: UP045 - as above


# flag -> (field, kind); kind: float, int, str, or bool (a flag without a value).
_FLAGS: dict[str, tuple[str, Any]] = {
    "--duration-s": ("duration_s", float), "--warmup-s": ("warmup_s", float), "--window-s": ("window_s", float),
    "--dtype": ("dtype", str), "--size": ("size", int), "--product": ("product", str),
    "--floor-tflops": ("floor_tflops", float), "--floor-provisional": ("floor_provisional", bool),
    "--power-default-w": ("power_default_w", float),
}
_ZERO_IS_NONE = ("floor_tflops", "power_default_w")


def is_harness(words: list[str]) -> bool:
    """Whether the trainer's words run the harness (`gemm_burn_in.py`, also inside a shell's `-c` string)."""
    return any(posixpath.basename(token) == SCRIPT for w in words for token in w.split())


def parameters_of(words: list[str]) -> GemmParameters:
    """The harness flags in the trainer's words (command, then args; a shell's `-c` string is split), each a word
    followed by its value; a flag left out keeps its default. GemmParametersError for a flag without a readable
    value."""
    tokens = [t for w in words for t in w.split()]
    values: dict[str, Any] = {}
    for i, token in enumerate(tokens):
        flag, equals, inline = token.partition("=")
        if flag not in _FLAGS:
            continue
        name, kind = _FLAGS[flag]
        if kind is bool:
            values[name] = True
            continue
        value = inline if equals else (tokens[i + 1] if i + 1 < len(tokens) else "")
        try:
            number = kind(value) if value else None
        except ValueError:
            number = None
        if number is None or (kind is not str and number < 0):
            raise GemmParametersError(f"the harness flag {flag} needs a {'non-negative number' if kind is not str else 'value'}, "
                                      f"not {value!r}: fix the entry's trainer args")
        values[name] = None if name in _ZERO_IS_NONE and number == 0 else number
    return GemmParameters(**values)


_BEGIN_DTYPE = re.compile(rf"{MARKER} begin gpus=\d+ dtype=([a-z0-9]+) ")


def begin_dtype(log: str) -> Optional[str]:  # noqa: UP045 - as above
    """The dtype the log's begin record names (to look its floor up before judging), None without one."""
    found = _BEGIN_DTYPE.search(log)
    return found[1] if found else None


@dataclass(frozen=True)
class GemmOptions:
    """How one node's log is judged: dcgm_verdict.Options' first fields, and the harness's parameters."""

    node: str = ""
    expected_gpus: Optional[int] = None  # noqa: UP045 - as above
    skip_is_failure: bool = False
    parameters: GemmParameters = field(default_factory=GemmParameters)

    @classmethod
    def of(cls, options: Any, parameters: GemmParameters) -> GemmOptions:
        """From dcgm_verdict.Options (what sources.READERS are given) and the Job's parameters_of."""
        return cls(options.node, options.expected_gpus, options.skip_is_failure, parameters)


@dataclass(frozen=True)
class Finding:
    rule: str
    outcome: str  # fail or warn
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "outcome": self.outcome, "message": self.message}


@dataclass
class _Window:
    window: int
    tflops: float
    fields: dict[str, str]


def judge_text(log: str, options: GemmOptions) -> dict[str, Any]:
    """One node's harness log judged (dcgm_verdict.judge's shape, with `partial`). UnreadableOutput when the log
    holds no harness record at all."""
    reader = GemmReader(options.node)
    read = reader.read_all(lines_of(log))
    partial = reader.finish()
    if not read and not reader.begun and reader.ended is None:
        why = f" ({reader.first_refused})" if reader.refused else ""
        raise UnreadableOutput(f"no {MARKER} record in the log{why}: the harness did not run, or printed nothing")
    begin = reader.begin
    timing = (float(begin["window_s"]), float(begin["warmup_s"])) if begin else None
    expected = options.expected_gpus if options.expected_gpus is not None else reader.gpus
    return judge_rows(read, options, partial, timing=timing, expected_gpus=expected)


def judge_rows(rows: Iterable[Row], options: GemmOptions, partial: Optional[str] = None,  # noqa: UP045 - as above
               *, timing: Optional[tuple[float, float]] = None,  # noqa: UP045 - as above
               expected_gpus: Optional[int] = None) -> dict[str, Any]:  # noqa: UP045 - as above
    """The verdict over one node's window rows (test gemm, metric tflops; other rows are left out). `timing`:
    (window_s, warmup_s) as the log's begin record printed them, else the parameters'."""
    params = options.parameters
    window_s, warmup_s = timing or (params.window_s, params.warmup_s)
    windows = [r for r in rows if r.test == TEST and r.metric == "tflops" and r.index is not None]
    series: dict[int, list[_Window]] = {}
    uuids: dict[int, str | None] = {}
    for row in sorted_rows(windows):
        gpu = int(row.index or 0)   # the window rows all name their GPU (filtered above)
        series.setdefault(gpu, []).append(_Window(row.sample, float(row.value or 0), _fields(row.detail)))
        uuids.setdefault(gpu, row.uuid)
    steady = {gpu: [w for w in ws if w.window * window_s >= warmup_s] for gpu, ws in series.items()}
    node_medians = _node_medians(steady)
    expected = expected_gpus if expected_gpus is not None else options.expected_gpus
    known = range(expected) if expected is not None else ()
    # A GPU absent while others printed windows is missing; with no window at all the log was cut before the
    # first one (a partial read), and every GPU lacks evidence.
    missing = [g for g in known if g not in series] if series else []
    lacking_outcome = "fail" if options.skip_is_failure else "warn"
    out_rows = list(windows)
    gpus = []
    for gpu in sorted({*series, *known}):
        verdict, extra = _gpu(gpu, uuids.get(gpu), series.get(gpu, []), steady.get(gpu, []), node_medians,
                              params, options, lacking_outcome, gpu in missing)
        gpus.append(verdict)
        out_rows += extra
    outcomes = [g["outcome"] for g in gpus] + ([lacking_outcome] if partial else [])
    return {
        "format_version": MARKER,
        "rows": [row.to_dict() for row in sorted_rows(out_rows)],
        "gpus": gpus,
        "outcome": worst(outcomes) or lacking_outcome,
        "lacking_evidence": [g["index"] for g in gpus if g["lacking_evidence"]],
        "missing": missing,
        "runtime_error": None,
        "partial": partial,
        "window_s": window_s,
        "warmup_s": warmup_s,
    }


def _fields(detail: str) -> dict[str, str]:
    return dict(word.partition("=")[::2] for word in detail.split(" ") if "=" in word)


def _node_medians(steady: dict[int, list[_Window]]) -> dict[int, float]:
    """Per steady window, the median of the node's GPUs' figures in it."""
    figures: dict[int, list[float]] = {}
    for ws in steady.values():
        for w in ws:
            figures.setdefault(w.window, []).append(w.tflops)
    return {window: median(values) for window, values in figures.items()}


def _gpu(gpu: int, uuid: Optional[str], windows: list[_Window], steady: list[_Window],  # noqa: UP045 - as above
         node_medians: dict[int, float], params: GemmParameters, options: GemmOptions, lacking_outcome: str,
         missing: bool) -> tuple[dict[str, Any], list[Row]]:
    """One GPU's verdict, and the rows that carry it (one per finding, one for its judged figure)."""
    findings = _faults(windows) + _power(windows, params)
    figure = median(w.tflops for w in steady) if steady else None
    if figure is not None:
        findings += _floor(figure, params) + _node_median(steady, node_medians) + _degradation(steady)
    node = options.node
    rows = [Row(node, "gpu", gpu, uuid, TEST, f.rule, None, None, f.outcome, f"{f.rule}: {f.message}")
            for f in findings]
    lacking = not missing and figure is None and not any(f.outcome == "fail" for f in findings)
    if missing:
        expected = options.expected_gpus
        rows.append(Row(node, "gpu", gpu, None, None, "presence", None, None, "fail",
                        f"GPU {gpu} is missing from the {MARKER} output: {expected} GPUs expected"))
    elif figure is not None:
        rows.append(Row(node, "gpu", gpu, uuid, TEST, "median", round(figure, 3), "TFLOPS", "pass",
                        f"median of the steady windows {_span([w.window for w in steady])}"))
    else:
        rows.append(Row(node, "gpu", gpu, uuid, TEST, "median", None, "TFLOPS", lacking_outcome,
                        f"no steady window: every window read starts before the {_num(options.parameters.warmup_s)} s "
                        "warm-up ends" if windows else "no window read"))
    outcomes = [f.outcome for f in findings] + (["fail"] if missing else []) + ([lacking_outcome] if lacking else [])
    verdict = {
        "index": gpu, "uuid": uuid, "outcome": worst(outcomes) or "pass", "lacking_evidence": lacking,
        "missing": missing,
        "failures": [{"test": TEST, "outcome": r.outcome, "detail": r.detail} for r in rows
                     if RANK[r.outcome] >= RANK["warn"]],
        "median": None if figure is None else round(figure, 3),
        "series": [[w.window, w.tflops] for w in windows],
        "findings": [f.to_dict() for f in findings],
    }
    return verdict, rows


def _num(value: float) -> str:
    return f"{value:.1f}" if value != int(value) else str(int(value))


def _span(windows: list[int]) -> str:
    """`3-5, 8, 10-11`: the windows, runs of consecutive numbers joined."""
    runs: list[list[int]] = []
    for w in sorted(windows):
        if runs and w == runs[-1][-1] + 1:
            runs[-1].append(w)
        else:
            runs.append([w])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


def _faults(windows: list[_Window]) -> list[Finding]:
    """wrong-result, xid, throttle: in any window, warm-up included (a fault while warming up is still a fault)."""
    out = []
    wrong = [w.window for w in windows if w.fields.get("check") == "wrong"]
    if wrong:
        out.append(Finding("wrong-result", "fail", f"the result differed from the reference in window(s) "
                                                   f"{_span(wrong)} (fail on any)"))
    xids: dict[str, list[int]] = {}
    for w in windows:
        for xid in w.fields.get("xid", "none").split(","):
            if xid != "none":
                xids.setdefault(xid, []).append(w.window)
    if xids:
        out.append(Finding("xid", "fail", "; ".join(f"XID {xid} in window(s) {_span(ws)}" for xid, ws in
                                                    sorted(xids.items(), key=lambda i: int(i[0])))
                           + " (fail on any)"))
    reasons: dict[str, list[int]] = {}
    for w in windows:
        for reason in w.fields.get("throttle", "none").split(","):
            if reason in FAULTS:
                reasons.setdefault(reason, []).append(w.window)
    if reasons:
        out.append(Finding("throttle", "fail", "; ".join(f"{reason} in window(s) {_span(ws)}" for reason, ws in
                                                         sorted(reasons.items()))
                           + " (a hardware slowdown, power brake or thermal throttle fails; sw_power_cap alone "
                             "does not)"))
    return out


def _power(windows: list[_Window], params: GemmParameters) -> list[Finding]:
    default = params.power_default_w
    if default is None:
        return []
    low = [w for w in windows if float(w.fields.get("power_limit_w", default)) < default - POWER_TOLERANCE_W]
    if not low:
        return []
    limit = min(float(w.fields["power_limit_w"]) for w in low)
    product = f" of {params.product}" if params.product else ""
    return [Finding("power-limit", "fail", f"the enforced power limit {_num(limit)} W is below the default "
                                           f"{_num(default)} W{product} in window(s) {_span([w.window for w in low])} "
                                           f"(fail more than {_num(POWER_TOLERANCE_W)} W below)")]


def _floor(figure: float, params: GemmParameters) -> list[Finding]:
    floor = params.floor_tflops
    if floor is None or figure >= floor:
        return []
    what = f" for {params.product} {params.dtype}" if params.product else f" for {params.dtype}"
    pct = (1 - figure / floor) * 100
    if params.floor_provisional:
        return [Finding("floor", "warn", f"median {figure:.1f} TFLOPS is {pct:.1f}% below the provisional floor "
                                         f"{_num(floor)}{what} (a provisional floor warns, never fails)")]
    return [Finding("floor", "fail", f"median {figure:.1f} TFLOPS is {pct:.1f}% below the floor {_num(floor)}{what} "
                                     "(fail below)")]


def _node_median(steady: list[_Window], node_medians: dict[int, float]) -> list[Finding]:
    """The longest run of RUN or more consecutive steady windows below the node's median by NODE_FAIL_PCT (fail),
    else by NODE_WARN_PCT (warn)."""
    for outcome, pct in (("fail", NODE_FAIL_PCT), ("warn", NODE_WARN_PCT)):
        run = _longest_run(steady, node_medians, pct, strict=outcome == "fail")
        if len(run) >= RUN:
            mine = median(w.tflops for w in run)
            node = median(node_medians[w.window] for w in run)
            limit = f"fail above {_num(NODE_FAIL_PCT)}%" if outcome == "fail" else \
                f"warn from {_num(NODE_WARN_PCT)}%, fail above {_num(NODE_FAIL_PCT)}%"
            return [Finding("node-median", outcome,
                            f"median {mine:.1f} TFLOPS is {(1 - mine / node) * 100:.1f}% below the node median "
                            f"{node:.1f} in windows {run[0].window}-{run[-1].window} ({limit})")]
    return []


def _longest_run(steady: list[_Window], node_medians: dict[int, float], pct: float, strict: bool) -> list[_Window]:
    best: list[_Window] = []
    current: list[_Window] = []
    for w in steady:
        below = (1 - w.tflops / node_medians[w.window]) * 100 if node_medians[w.window] else 0.0
        consecutive = current and w.window == current[-1].window + 1
        if below > pct or (not strict and below >= pct):
            current = [*current, w] if consecutive else [w]
        else:
            current = []
        best = current if len(current) > len(best) else best
    return best


def _degradation(steady: list[_Window]) -> list[Finding]:
    if len(steady) < 2:
        return []
    first, last = steady[0], steady[-1]
    if not first.tflops or (1 - last.tflops / first.tflops) * 100 <= DEGRADATION_PCT:
        return []
    return [Finding("degradation", "fail",
                    f"the last window ({last.window}) {last.tflops:.1f} TFLOPS is "
                    f"{(1 - last.tflops / first.tflops) * 100:.1f}% below the first steady window ({first.window}) "
                    f"{first.tflops:.1f} (fail above {_num(DEGRADATION_PCT)}%)")]
