"""--diff for the runs (driver/diff.py): one Ansible diff per object that changed, without the server's
bookkeeping, `{}` on the side where the object does not exist."""
from __future__ import annotations

from ansible_collections.cre.certification.plugins.module_utils.driver import diff


def obj(kind: str, name: str, **extra: object) -> dict:
    return {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": kind,
            "metadata": {"name": name, "namespace": "ns", "uid": "u1", "resourceVersion": "7", "generation": 2,
                         "managedFields": [{"manager": "x"}], "creationTimestamp": "2026-12-04T00:00:00Z"}, **extra}


def test_a_created_object_is_absent_before_and_whole_after():
    cert = obj("Certification", "c", spec={"categories": []})
    (entry,) = diff.entries({"Certification ns/c": None}, {"Certification ns/c": cert})
    assert entry == {"before_header": "Certification ns/c (absent)", "before": {},
                     "after_header": "Certification ns/c",
                     "after": {"apiVersion": "nvcre.nvidia.com/v1alpha1", "kind": "Certification",
                               "metadata": {"name": "c", "namespace": "ns"}, "spec": {"categories": []}}}


def test_only_what_changed_beyond_bookkeeping_is_shown():
    old = obj("Workflow", "w", status={"phase": "Pending"})
    same = {**obj("Workflow", "w", status={"phase": "Pending"}), "metadata": {**old["metadata"], "resourceVersion": "9"}}
    new = obj("Workflow", "w", status={"phase": "Succeeded"})
    assert diff.entries({"Workflow ns/w": old}, {"Workflow ns/w": same}) == []
    changed = diff.entries({"Workflow ns/w": old}, {"Workflow ns/w": new, "Workflow ns/x": obj("Workflow", "x")})
    assert [e["after_header"] for e in changed] == ["Workflow ns/w", "Workflow ns/x"]
    before, after = changed[0]["before"]["status"], changed[0]["after"]["status"]
    assert (before, after) == ({"phase": "Pending"}, {"phase": "Succeeded"})
    assert diff.key(new) == "Workflow ns/w" and "uid" in new["metadata"]   # the caller's object is left alone
