"""Fixtures of the driver tests: `in_memory` builds the driver's informers over the MemoryKube it is given
(tests.unit.driver.memory_cluster)."""
from __future__ import annotations

import pytest

from tests.unit.driver.memory_cluster import watch_in_memory


@pytest.fixture
def in_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    watch_in_memory(monkeypatch)
