"""A saved workload log read offline as a measurement would read it (ours: the log_check module).

A user writing or choosing a LogProfile sees, before any run, what it reads from a real log: the nccl-tests rows
(per size, the peak, the test measured and the others, transports, each table's `# Avg bus bandwidth`, the rows
refused and why) or the training steps (step time, TFLOP/s, loss, warmup, checkpoints, restore), and the verdict
of the thresholds on the figures a Job would be judged by.
"""
from __future__ import annotations

from typing import Any

from ..spec.thresholds import evaluate_all, validate
from .goodput_log import GoodputParser
from .log_lines import LogProfileError
from .nccl_log import NcclParser, aggregate, peak
from .profile_match import step_matches

Obj = dict[str, Any]
# Thresholds whose figure needs a whole run's accounting (interruptions, restarts), not one log.
RUN_ONLY = ("goodputRatio",)


def check_log(text: str, profile: Obj, test_type: str = "", thresholds: dict[str, str] | None = None,
              training_profiles: list[Obj] | None = None) -> Obj:
    """The reading of `text` with `profile` (bandwidth when it has a bandwidthResult pattern, else goodput) and the
    verdict of `thresholds`. LogProfileError when the profile cannot read logs; InputError for a bad threshold."""
    thresholds = thresholds or {}
    validate(thresholds, "thresholds")
    patterns = (profile.get("spec") or {}).get("patterns") or {}
    if patterns.get("bandwidthResult"):
        out, values = _bandwidth(text, profile, test_type)
    elif patterns.get("trainingStep"):
        out, values = _goodput(text, profile)
        out["profiles_matched"] = step_matches(text, training_profiles or [profile])
    else:
        raise LogProfileError("it has neither a bandwidthResult nor a trainingStep pattern")
    out["verdict"] = _verdict(thresholds, values)
    return out


def _bandwidth(text: str, profile: Obj, test_type: str) -> tuple[Obj, dict[str, float]]:
    parsed = NcclParser.from_profile(profile).parse(text, test_type)
    results = aggregate([], parsed.rows)
    top = peak(results)
    out: Obj = {
        "kind": "bandwidth",
        "rows": [{"sizeBytes": r.size, "algBW": r.alg_bw, "busBW": r.bus_bw} for r in parsed.rows],
        "results": results,
        "peak": {"busBW": top[0], "algBW": top[1]} if top else None,
        "measured_test": parsed.measured, "other_tests": parsed.others, "transports": parsed.transports,
        "mnnvl": parsed.mnnvl.enabled, "fabric_not_ready": parsed.mnnvl.not_ready_hosts(),
        "tables": [{"test": t.collective or "", "ranks": t.ranks, "rows": len(t.rows), "refused": len(t.refused),
                    "avg_bus_bandwidth": t.avg_bus} for t in parsed.tables],
        "refused": [{"line": line.strip(), "why": why} for line, why in parsed.refused],
        "withheld": parsed.withheld,
        "warnings": parsed.warnings,
    }
    values = {"busBandwidthGBps": top[0], "algBandwidthGBps": top[1]} if top else {}
    return out, values


def _goodput(text: str, profile: Obj) -> tuple[Obj, dict[str, float]]:
    window = GoodputParser.from_profile(profile).parse(text)
    counted = [s for s in window.steps if not s.warmup]
    with_tflops = [s.tflops for s in counted if s.tflops > 0]
    out: Obj = {
        "kind": "goodput",
        "steps": [{"step": s.global_step, "step_time_sec": s.step_timing, "tflops": s.tflops, "loss": s.loss,
                   "warmup": s.warmup} for s in window.steps],
        "avg_step_time_sec": sum(s.step_timing for s in counted) / len(counted) if counted else None,
        "avg_tflops_per_gpu": sum(with_tflops) / len(with_tflops) if with_tflops else None,
        "checkpoints": [{"step": c.step, "path": c.path, "save_duration_sec": c.save_duration}
                        for c in window.checkpoints],
        "restore": {"step": window.restore.step, "path": window.restore.path} if window.restore else None,
    }
    figures = (("avgStepTimeSec", "avg_step_time_sec"), ("avgTFLOPsPerGPU", "avg_tflops_per_gpu"))
    values = {key: out[field] for key, field in figures if out[field]}
    return out, values


def _verdict(thresholds: dict[str, str], values: dict[str, float]) -> Obj | None:
    """None without thresholds; else passed, and the first problem as the Job would name it (the thresholds were
    validated: no unknown key is left)."""
    if not thresholds:
        return None
    problem = evaluate_all(thresholds, values)
    if problem:
        return {"passed": False, "reason": problem[0], "message": problem[1]}
    missing = sorted(k for k in thresholds if k not in values)
    if missing:
        why = "need a whole run" if set(missing) <= set(RUN_ONLY) else "have no figure in this log"
        return {"passed": False, "reason": "MeasurementUnavailable", "message": f"{', '.join(missing)} {why}"}
    return {"passed": True, "reason": "ThresholdsMet", "message": "All performance thresholds satisfied"}
