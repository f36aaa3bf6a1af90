"""A pass's cost runs from its start to the next pass's start, so its wait (and what the watch threads did in it)
counts; the counters are the Kube client's own (no cluster: they are bumped by hand)."""
from __future__ import annotations

from collections import Counter
from types import SimpleNamespace
from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.driver.pass_stats import PassStats


def stats() -> tuple[PassStats, Any]:
    kube = SimpleNamespace(requests=Counter(), bytes_read=0)
    return PassStats(kube), kube  # type: ignore[arg-type]  # only the two counters are read


def test_a_pass_takes_in_what_happens_before_the_next_one_begins() -> None:
    passes, kube = stats()
    passes.begin("start")
    passes.jobs = 3
    kube.requests["GET"] += 2
    kube.bytes_read += 100
    passes.begin("")  # what a wait costs after the reconcile still belongs to the first pass
    kube.requests["WATCH"] += 1
    passes.begin("changed")
    passes.end()
    assert [(p.why, p.jobs, p.requests, p.bytes_read) for p in passes.passes] == [
        ("start", 3, 2, 100), ("", 0, 1, 0), ("changed", 0, 0, 0)]
    assert all(p.cpu >= 0 for p in passes.passes)
    assert [p.at for p in passes.passes] == sorted(p.at for p in passes.passes)


def test_end_without_an_open_pass_records_nothing() -> None:
    passes = stats()[0]
    passes.end()
    passes.begin("start")
    passes.end()
    passes.end()
    assert [p.why for p in passes.passes] == ["start"]
