"""`make test`: every stage, in two lanes side by side, then each stage's time, the slowest tests and one total.

The cluster lane (the integration tests on simulated clusters) mostly waits on the simulator; the checks lane (mypy,
unit tests, ansible-test sanity, ansible-lint and ruff, the docs lint, then the molecule scenario) mostly needs CPU.
Run one after the other they took an hour on two cores; beside each other the checks fit in the integration tests'
waits. Each stage's output is kept whole in tests/output/stages/<stage>.log and printed when the stage ends, so
lanes never interleave lines.
"""
from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tools.sim.state import known_clusters  # noqa: E402 - the checkout first on the path

SECONDS_FILE = ROOT / "tests" / "output" / "module_seconds.json"  # read by tests/integration/conftest.py
OUT = ROOT / "tests" / "output" / "stages"
BIN = ROOT / ".venv" / "bin"
MAKE = ["make", "--no-print-directory"]
# Integration workers: each holds its own clusters, and most of a test's time is the simulator's pods running.
WORKERS = os.environ.get("CRE_TEST_WORKERS", "3")
SLOWEST = 20


@dataclass
class Stage:
    name: str
    argv: list[str]
    junit: Path | None = None
    seconds: float = 0.0
    returncode: int | None = None


def pytest(name: str, *args: str) -> Stage:
    junit = OUT / f"{name}.xml"
    return Stage(name, [str(BIN / "python"), "-m", "pytest", "-q", f"--junitxml={junit}", *args], junit)


# The checks lane ends long before the integration tests: molecule (one small cluster of its own) goes there.
LANES = {
    "cluster": [pytest("integration", "tests/integration", "-n", WORKERS, "--dist", "loadfile",
                       f"--durations={SLOWEST}")],
    "checks": [Stage("typecheck", [*MAKE, "typecheck"]), pytest("unit", "tests/unit"),
               Stage("sanity", [*MAKE, "sanity"]), Stage("lint", [*MAKE, "lint"]), Stage("docs", [*MAKE, "docs-lint"]),
               Stage("molecule", [*MAKE, "molecule"])],
}
_print_lock = threading.Lock()


def run_lane(stages: list[Stage]) -> None:
    for stage in stages:
        log = OUT / f"{stage.name}.log"
        start = time.monotonic()
        with open(log, "w") as out:
            stage.returncode = subprocess.call(stage.argv, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT,
                                               stdin=subprocess.DEVNULL)
        stage.seconds = time.monotonic() - start
        with _print_lock:
            verdict = "ok" if stage.returncode == 0 else f"FAILED (exit {stage.returncode})"
            print(f"\n===== {stage.name}: {verdict} in {stage.seconds:.0f}s =====", flush=True)
            sys.stdout.write(log.read_text(errors="replace"))
            sys.stdout.flush()


@functools.cache
def _parsed(junit: Path) -> tuple[ET.Element, ...]:
    return tuple(ET.parse(junit).getroot().iter("testcase"))


def cases(stage: Stage) -> tuple[ET.Element, ...]:
    """The stage's test cases from its JUnit file (read once: the summary looks at them several times)."""
    if stage.junit is None or stage.returncode is None or not stage.junit.exists():
        return ()
    return _parsed(stage.junit)


def outcome(case: ET.Element) -> str:
    tags = {child.tag for child in case}
    return next((t for t in ("failure", "error", "skipped") if t in tags), "passed")


def summary(stages: list[Stage], wall: float) -> int:
    print(f"\n===== make test: {wall / 60:.1f} min wall =====")
    print(f"{'stage':<12} {'seconds':>8}  result")
    for stage in stages:
        counted = cases(stage)
        tally = ""
        if counted:
            kinds = [outcome(c) for c in counted]
            tally = "  " + ", ".join(f"{kinds.count(k)} {k}" for k in ("passed", "failure", "error", "skipped")
                                     if kinds.count(k))
        verdict = "ok" if stage.returncode == 0 else f"FAILED (exit {stage.returncode})"
        print(f"{stage.name:<12} {stage.seconds:>8.0f}  {verdict}{tally}")
    timed = sorted(((float(c.get("time") or 0), s.name, f"{c.get('classname')}::{c.get('name')}")
                    for s in stages for c in cases(s)), reverse=True)[:SLOWEST]
    print(f"\nslowest {len(timed)} tests (setup + call + teardown):")
    for seconds, stage_name, test in timed:
        print(f"{seconds:>8.1f}s  {stage_name:<12} {test}")
    kinds = [outcome(c) for s in stages for c in cases(s)]
    failed = kinds.count("failure") + kinds.count("error")
    skipped = f", {kinds.count('skipped')} skipped" if kinds.count("skipped") else ""
    print(f"\ntests: {kinds.count('passed')} passed, {failed} failed{skipped}")
    return 0 if all(s.returncode == 0 for s in stages) else 1


class ClusterCount:
    """Every simulated cluster that existed during the run (tests and molecule alike), seen in the simulator's
    clusters directory: a start takes over ten seconds, so a look every half second misses none."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.done = threading.Event()

    def watch(self) -> None:
        while not self.done.wait(0.5):
            self.names.update(known_clusters())


def module_seconds(stage: Stage) -> None:
    """After a green integration run: each module's seconds, which the next run uses to start the longest first."""
    seconds: dict[str, float] = {}
    for case in cases(stage):
        module = (case.get("classname") or "").rsplit(".", 1)[-1]
        seconds[module] = seconds.get(module, 0.0) + float(case.get("time") or 0)
    SECONDS_FILE.write_text(json.dumps({m: round(s) for m, s in sorted(seconds.items())}, indent=1) + "\n")


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    count = ClusterCount()
    threading.Thread(target=count.watch, daemon=True).start()
    threads = [threading.Thread(target=run_lane, args=(stages,)) for stages in LANES.values()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    count.done.set()
    integration = LANES["cluster"][0]
    if integration.returncode == 0:
        module_seconds(integration)
    print(f"\nsimulated clusters started: {len(count.names)}")
    return summary([s for stages in LANES.values() for s in stages], time.monotonic() - start)


if __name__ == "__main__":
    sys.exit(main())
