"""The informer's cache rules, without a server: events and our own writes by resourceVersion, no-op changes
silent, a 410 in the stream means a fresh list."""
from __future__ import annotations

import sys
from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.kube import watch


def obj(name: str, version: int, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "resourceVersion": str(version)},
            **fields}


def informer(seen: list[str], trim: watch.Trim | None = None) -> watch.Informer:
    return watch.Informer(None, "v1", "ConfigMap", trim=trim,  # type: ignore[arg-type]
                          changed=lambda kind, what, names: seen.extend(names))


def test_events_and_writes_keep_the_newest_version():
    seen: list[str] = []
    inf = informer(seen)
    inf._apply({"type": "ADDED", "object": obj("a", 5, data={"v": "1"})})
    inf.put(obj("a", 7, data={"v": "2"}))  # what our write answered
    inf._apply({"type": "MODIFIED", "object": obj("a", 6, data={"v": "old"})})  # an event older than it
    assert inf.get("a")["data"] == {"v": "2"}
    assert seen == ["a"]  # the stale event is no news
    inf._apply({"type": "DELETED", "object": obj("a", 8)})
    assert inf.items() == {} and seen == ["a", "a"]
    assert inf.resource_version == "8"


def test_a_change_only_to_a_field_it_does_not_keep_is_silent():
    seen: list[str] = []
    inf = informer(seen, trim=lambda o: {k: v for k, v in o.items() if k != "noise"})
    inf._apply({"type": "ADDED", "object": obj("a", 1, noise=1)})
    inf._apply({"type": "MODIFIED", "object": obj("a", 2, noise=2)})
    assert seen == ["a"] and inf.get("a")["metadata"]["resourceVersion"] == "2"


def test_bookmarks_move_the_resource_version_only():
    seen: list[str] = []
    inf = informer(seen)
    inf._apply({"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "42"}}})
    assert inf.resource_version == "42" and seen == [] and inf.items() == {}


def test_a_410_in_the_stream_is_gone():
    with pytest.raises(watch.Gone):
        informer([])._apply({"type": "ERROR", "object": {"kind": "Status", "code": 410, "reason": "Expired"}})


def test_managed_fields_are_dropped_and_strings_shared():
    inf = informer([])
    meta = {"name": "a", "resourceVersion": "1", "managedFields": [{"manager": "x"}]}
    inf.put(obj("a", 1, data={"key": "a-value"}) | {"metadata": meta})
    kept = inf.get("a")
    assert "managedFields" not in kept["metadata"]
    assert kept["data"]["key"] is sys.intern("a-value")
