"""The GEMM burn-in harness's output (docs/gemm-burn-in-output.md) read strictly: one row per GPU per window, every
line it cannot read refused and counted, every row lost a partial read."""
from __future__ import annotations

import random

import jsonschema
import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence import gemm_burn_in
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.gemm_burn_in import GemmReader, rows
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.rows import Row, row_schema, sorted_rows

BEGIN = "gemm-burn-in/1 begin gpus=2 dtype=bf16 m=8192 n=8192 k=8192 window_s=30 warmup_s=60"
NVML = "sm_mhz=1980 power_w=698.2 power_limit_w=700 temp_c=67 throttle={throttle} xid={xid} check={check}"
WINDOW = ("gemm-burn-in/1 window w={w} time=2026-03-02T10:0{w}:00Z gpu={gpu} uuid=GPU-{gpu}aa tflops={tflops} "
          + NVML)
END = "gemm-burn-in/1 end windows={n}"


def window(w: int, gpu: int, tflops: float = 612.4, throttle: str = "none", xid: str = "none",
           check: str = "ok") -> str:
    return WINDOW.format(w=w, gpu=gpu, tflops=tflops, throttle=throttle, xid=xid, check=check)


def run(windows: int = 2, gpus: int = 2) -> list[str]:
    return [BEGIN] + [window(w, g) for w in range(windows) for g in range(gpus)] + [END.format(n=windows)]


def read(lines: list[str]) -> tuple[list[Row], str | None]:
    return rows("\n".join(lines) + "\n", job={}, node="node-3", group="group-1")


def test_a_whole_run_is_one_row_per_gpu_per_window_in_the_fixed_order() -> None:
    out, partial = read(["CUDA Version 12.8", *(f"2026-03-02T10:00:00.5Z {line}" for line in run())])
    assert partial is None and out == sorted_rows(out)
    assert [(r.index, r.sample) for r in out] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert out[0] == Row("node-3", "gpu", 0, "GPU-0aa", "gemm", "tflops", 612.4, "TFLOPS", "pass",
                         NVML.format(throttle="none", xid="none", check="ok"), 0, "2026-03-02T10:00:00Z")
    for row in out:
        jsonschema.validate(row.to_dict(), row_schema())
        # to_dict: every field, in the schema's order
        assert list(row.to_dict().items()) == list(zip(row_schema()["required"], row))


@pytest.mark.parametrize(("fields", "outcome"), [
    ({"check": "wrong"}, "fail"),
    ({"xid": "79"}, "fail"),
    ({"throttle": "hw_slowdown"}, "fail"),
    ({"throttle": "hw_power_brake,sw_power_cap"}, "fail"),
    ({"throttle": "hw_thermal"}, "fail"),
    ({"throttle": "sw_power_cap"}, "pass"),      # a software power cap alone is no fault
    ({"tflops": 1.0}, "pass"),                   # slow is the series' verdict (issue 41), not one window's
])
def test_what_one_window_shows_alone_judges_its_row(fields: dict, outcome: str) -> None:
    lines = run(1, 1)
    lines[1] = window(0, 0, **fields)
    lines[0] = lines[0].replace("gpus=2", "gpus=1")
    out, partial = read(lines)
    assert partial is None and [r.outcome for r in out] == [outcome]


@pytest.mark.parametrize(("line", "why"), [
    (window(1, 0).replace(" check=ok", ""), "check is missing"),
    (window(1, 0) + " extra=1", "'extra=1' follows the last field"),
    (window(1, 0).replace("tflops=612.4", "tflops=n/a"), "tflops='n/a' is not \\d+(?:\\.\\d+)?"),
    (window(1, 0).replace("gpu=0", "GPU=0"), "'GPU=0' is not gpu=..."),
    (window(1, 0, throttle="hot"), "throttle='hot' names no NVML reason"),
    (window(1, 0, throttle="none,hw_slowdown"), "throttle='none,hw_slowdown' names no NVML reason"),
    ("gemm-burn-in/1 windw w=1", "'windw' is no record (begin, window, end)"),
    (window(0, 0), "GPU 0 is in window 0 twice"),
    (window(1, 2), "GPU 2 is not one of the 2 the begin record names"),
    (window(1, 0).replace("GPU-0aa", "GPU-0bb"), "GPU 0 is GPU-0bb where it was GPU-0aa before"),
    (BEGIN, "a begin record after the run began"),
])
def test_a_line_it_cannot_read_is_refused_and_counted_never_guessed(line: str, why: str) -> None:
    lines = [BEGIN, window(0, 0), window(0, 1), line, window(1, 0), window(1, 1), END.format(n=2)]
    out, partial = read(lines)
    assert len(out) == 4
    assert partial is not None and partial.startswith(f"1 line(s) refused (first: line 4: {why}")


def test_a_window_going_back_and_a_record_after_the_end_are_refused() -> None:
    out, partial = read([*run(2, 2), window(1, 0)])
    assert len(out) == 4 and partial == "1 line(s) refused (first: line 7: a window record after the end record)"
    lines = run(2, 2)
    lines.insert(5, window(0, 0).replace("gpu=0", "gpu=1").replace("GPU-0aa", "GPU-1aa"))
    assert read(lines)[1] == "1 line(s) refused (first: line 6: window 0 comes after window 1)"


def test_a_refused_line_names_no_gpu_and_the_lines_after_it_are_checked_as_ever() -> None:
    # The common line skips the checks that cannot fail on it: a refused line must not make a GPU "known", and a
    # repeated GPU, another UUID or a GPU past the begin record's count is refused on every line, not only the first.
    lines = run(2, 2)
    lines[1] = window(0, 0, throttle="hw_thermal,bogus").replace("GPU-0aa", "GPU-0ff")
    lines.insert(3, window(0, 1))
    lines.insert(5, window(1, 0).replace("GPU-0aa", "GPU-0bb"))
    lines.insert(7, window(1, 2))
    out, partial = read(lines)
    assert [(r.index, r.sample, r.uuid) for r in out] == [(0, 1, "GPU-0aa"), (1, 0, "GPU-1aa"), (1, 1, "GPU-1aa")]
    assert partial.startswith("4 line(s) refused (first: line 2: throttle='hw_thermal,bogus' names no NVML reason")
    assert "1 window(s) short of GPUs (first: window 0 has 1 of 2 GPUs)" in partial


@pytest.mark.parametrize(("lines", "partial"), [
    (run(2, 2)[:-1], "no end record: the log ends before the run did"),
    (run(2, 2)[1:], "no begin record: the log starts after the run began"),
    ([*run(2, 2)[:-1], END.format(n=3)], "the end record counts 3 windows where 2 were read"),
    ([line for line in run(3, 2) if "w=1 " not in line or "gpu=1" not in line],
     "1 window(s) short of GPUs (first: window 1 has 1 of 2 GPUs)"),
    (["no harness here"], None),
])
def test_rows_lost_make_a_partial_read_never_zero(lines: list[str], partial: str | None) -> None:
    assert read(lines)[1] == partial


def test_a_marker_inside_another_line_is_not_the_harness() -> None:
    assert read(["echo " + window(0, 0)]) == ([], None)


def mutated(seed: int) -> list[str]:
    """A run of 4 windows of 3 GPUs with a few of the faults a log meets: lines lost, repeated, swapped, a GPU's
    UUID changed, clock events (a fault, a software cap, a name NVML lacks), XIDs, a wrong result, the kubelet's
    timestamp, a foreign line, an end too early."""
    rnd = random.Random(seed)
    lines = [BEGIN.replace("gpus=2", "gpus=3")] + [window(w, g) for w in range(4) for g in range(3)] + [END.format(n=4)]
    for _edit in range(rnd.randint(1, 4)):
        at = rnd.randrange(len(lines))
        edit = rnd.choice(("drop", "repeat", "swap", "uuid", "throttle", "xid", "wrong", "stamp", "foreign", "end",
                           "crlf"))
        if edit == "drop":
            del lines[at]
        elif edit == "repeat":
            lines.insert(at, lines[at])
        elif edit == "swap" and at + 1 < len(lines):
            lines[at], lines[at + 1] = lines[at + 1], lines[at]
        elif edit == "uuid":
            lines[at] = lines[at].replace("aa tflops", "bb tflops")
        elif edit == "throttle":
            lines[at] = lines[at].replace("throttle=none", rnd.choice(("throttle=hw_slowdown", "throttle=sw_power_cap",
                                                                      "throttle=overheat", "throttle=none,sw_thermal")))
        elif edit == "xid":
            lines[at] = lines[at].replace("xid=none", rnd.choice(("xid=79", "xid=48,63", "xid=none,79")))
        elif edit == "wrong":
            lines[at] = lines[at].replace("check=ok", "check=wrong")
        elif edit == "stamp":   # the kubelet's timestamp before the line
            lines[at] = "2026-03-02T10:00:00.123456789Z " + lines[at]
        elif edit == "foreign":
            lines.insert(at, "NCCL INFO something else")
        elif edit == "end":
            lines.insert(at, END.format(n=1))
        else:
            lines[at] += "\r"
    return lines


@pytest.mark.parametrize("seed", range(60))
def test_a_log_read_whole_gives_what_it_gives_line_by_line(seed: int) -> None:
    # read_all makes the common line without a call; it must leave every row, refusal and count as read does.
    lines = mutated(seed)
    whole, by_line = GemmReader("node-3"), GemmReader("node-3")
    rows_whole = whole.read_all(lines)
    rows_by_line = [row for line in lines for row in by_line.read_all([line])]
    assert rows_whole == rows_by_line
    assert whole.finish() == by_line.finish()
    assert (whole.refused, whole.first_refused, whole.windows, whole.short, whole.ended) == \
        (by_line.refused, by_line.first_refused, by_line.windows, by_line.short, by_line.ended)


@pytest.mark.parametrize("piece", [1, 7, 1 << 16])
@pytest.mark.parametrize("seed", range(5))
def test_a_log_cut_into_pieces_gives_splitlines_own_lines(seed: int, piece: int,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # lines_of splits a piece at a time, cutting after a newline: every boundary splitlines knows, CR LF across the
    # cut included, must give the same lines.
    monkeypatch.setattr(gemm_burn_in, "_PIECE", piece)
    rnd = random.Random(seed)
    bits = ["x", "window w=1", "\n", "\r\n", "\r", "\n\n", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "é", " "]
    text = "".join(rnd.choice(bits) for _bit in range(rnd.randint(0, 40_000)))
    for case in (text, text + "\n", "\r\n" + text + "\r"):
        assert list(gemm_burn_in.lines_of(case)) == case.splitlines()
