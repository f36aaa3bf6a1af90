"""A cluster's pids are signalled only while they are still its processes: pids wrap at 32,768 on these
machines, so the file of a component that died long ago may name another process by the time it is read."""
from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools.sim import processes

SLEEP = "import sys, time; time.sleep(60)"


@pytest.fixture
def sleeper(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A process whose command line names `tmp_path/mine/` (as a cluster's processes name its directory)."""
    owner = f"{tmp_path / 'mine'}/"
    proc = subprocess.Popen([sys.executable, "-c", SLEEP, f"{owner}kubeconfig.yaml"])
    # Until the child has exec'd, its command line is still pytest's: a loaded machine makes that window long.
    deadline = time.monotonic() + 30
    while not processes.alive(proc.pid, owner) and time.monotonic() < deadline:
        time.sleep(0.01)
    try:
        assert processes.alive(proc.pid, owner), "the child never showed its own command line"
        yield proc, owner
    finally:
        proc.kill()
        proc.wait()


def test_a_process_counts_as_the_clusters_only_when_its_command_line_names_it(
        sleeper: tuple[subprocess.Popen[bytes], str], tmp_path: Path) -> None:
    proc, owner = sleeper
    assert processes.alive(proc.pid, owner)
    assert processes.alive(proc.pid)
    # A sibling directory whose name starts alike is another cluster's.
    assert not processes.alive(proc.pid, f"{tmp_path / 'mi'}/")
    assert not processes.alive(proc.pid, f"{tmp_path / 'mine2'}/")


def test_stop_leaves_a_process_that_is_not_the_clusters_alone(
        sleeper: tuple[subprocess.Popen[bytes], str], tmp_path: Path) -> None:
    proc, _owner = sleeper
    processes.stop([proc.pid], f"{tmp_path / 'other'}/", grace=0)
    assert proc.poll() is None


@pytest.mark.parametrize("grace", [0.0, 5.0])
def test_stop_ends_the_clusters_process(
        sleeper: tuple[subprocess.Popen[bytes], str], grace: float) -> None:
    proc, owner = sleeper
    processes.stop([proc.pid, 0], owner, grace=grace)
    assert not processes.alive(proc.pid)
    proc.wait(timeout=5)  # stop may have reaped it already (then its code is lost): only that it ended counts
