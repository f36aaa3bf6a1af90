"""The collector paused while logs are read: enabled again once the last read running ends, in any thread, even
after an error; left disabled if it was."""
from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.gc_pause import paused
from ansible_collections.cre.certification.plugins.module_utils.engine.evidence.gemm_burn_in import GemmReader


@pytest.fixture(autouse=True)
def collector_enabled() -> Iterator[None]:
    gc.enable()
    yield
    gc.enable()


def test_a_read_pauses_the_collector_and_resumes_it_after() -> None:
    seen = []

    def lines() -> Iterator[str]:
        seen.append(gc.isenabled())
        yield "gemm-burn-in/1 begin gpus=1 dtype=bf16 m=8192 n=8192 k=8192 window_s=1 warmup_s=0"

    GemmReader("node-1").read_all(lines())
    assert seen == [False] and gc.isenabled()


def test_an_error_in_a_read_resumes_the_collector() -> None:
    def lines() -> Iterator[str]:
        yield "gemm-burn-in/1 end windows=0"
        raise OSError("the log stream broke")

    with pytest.raises(OSError, match="broke"):
        GemmReader("node-1").read_all(lines())
    assert gc.isenabled()


def test_reads_in_two_threads_share_one_pause() -> None:
    inside, release = threading.Event(), threading.Event()

    def other() -> None:
        with paused():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    thread.start()
    inside.wait(10)
    with paused():
        assert not gc.isenabled()
    assert not gc.isenabled(), "the other thread's read still runs"
    release.set()
    thread.join()
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled() -> None:
    gc.disable()
    with paused():
        assert not gc.isenabled()
    assert not gc.isenabled()
