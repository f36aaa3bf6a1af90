"""Which writes of a Step go out together: runs of Creates, Patches or Deletes of distinct objects."""
from __future__ import annotations

from typing import Any

from ansible_collections.cre.certification.plugins.module_utils.driver import execute
from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import (
    Create,
    Delete,
    Event,
    Patch,
    Ref,
    Replace,
    UpdateStatus,
)


def obj(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"}}


def ref(name: str) -> Ref:
    return Ref.of(obj(name))


def described(batches: list[list[Any]]) -> list[list[str]]:
    return [[execute.describe(a).replace(" ConfigMap", "") for a in batch] for batch in batches]


def test_independent_writes_of_one_kind_go_together_and_the_order_between_kinds_holds() -> None:
    actions = [Create(obj("a")), Create(obj("b")), Patch(ref("a"), {}), Patch(ref("b"), {}), Patch(ref("a"), {}),
               Delete(ref("a")), Delete(ref("b")), Replace(obj("c")), Replace(obj("d")), UpdateStatus(obj("w")),
               Event(obj("w"), "Normal", "R", "m"), Event(obj("w"), "Normal", "R", "m")]
    assert described(list(execute._batches(actions))) == [
        ["create a", "create b"],
        ["patch a", "patch b"],
        ["patch a"],  # the same object again: after the first patch has answered
        ["delete a", "delete b"],
        ["replace c"], ["replace d"],  # a Replace carries a resourceVersion read before the step: one at a time
        ["status w"],
        ["event R"], ["event R"],
    ]


def test_no_actions_no_batches() -> None:
    assert list(execute._batches([])) == []
