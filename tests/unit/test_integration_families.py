"""The integration suite's module families (tests/integration/families.py): who shares a worker decides how
many clusters a run starts."""
from types import SimpleNamespace

import pytest

from tests.integration.families import declared, families

H2, H4, G16, B4 = ("aws-h100", 2, 0), ("aws-h100", 4, 0), ("aws-gb200", 16, 0), ("onprem-b300", 4, 0)


def test_modules_sharing_a_cluster_transitively_are_one_family() -> None:
    got = families({"t.test_c": {H4, G16}, "t.test_a": {G16}, "t.test_e": {H4}, "t.test_b": {B4}, "t.test_d": set()})
    assert got["t.test_a"] == got["t.test_c"] == got["t.test_e"] == (frozenset({G16, H4}), "test_a")
    assert got["t.test_b"] == (frozenset({B4}), "test_b")
    assert got["t.test_d"] == (frozenset(), "test_d")  # a breaker: a family of its own that takes no pooled cluster


def test_a_module_joining_two_families_merges_them() -> None:
    got = families({"t.test_x": {H2}, "t.test_y": {B4}, "t.test_z": {H2, B4}})
    assert {name for _keys, name in got.values()} == {"test_x"}
    assert got["t.test_y"][0] == frozenset({H2, B4})


def test_a_module_declares_its_clusters_with_its_pytestmark() -> None:
    one = SimpleNamespace(pytestmark=pytest.mark.clusters(("aws-h100", 2), ("onprem-b300", 4, 1)))
    several = SimpleNamespace(pytestmark=[pytest.mark.clusters(("aws-gb200", 16)), pytest.mark.clusters(H4)])
    assert declared(one) == {H2, ("onprem-b300", 4, 1)}  # type: ignore[arg-type]
    assert declared(several) == {G16, H4}  # type: ignore[arg-type]
    assert declared(SimpleNamespace()) == set()  # type: ignore[arg-type]
