"""The preflight of a run that names spec.priorityClassName: the PriorityClass get is asked for (only then), and a
class that does not exist is refused at its field path before anything is written."""
from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.cre.certification.plugins.module_utils.driver import preflight as pf
from ansible_collections.cre.certification.plugins.module_utils.engine.api.actions import Ref
from ansible_collections.cre.certification.plugins.module_utils.engine.api.errors import InputError


class FakeKube:
    """Serves every kind the run needs, allows every SelfSubjectAccessReview, holds the PriorityClasses given."""

    def __init__(self, classes: set[str]) -> None:
        self.classes = classes
        self.reviews: list[dict[str, Any]] = []
        self.gets: list[Ref] = []
        self.writes = 0

    def discover(self) -> set[str]:
        return {v for v, _k in pf.WORKFLOW_KINDS + pf.CERTIFICATION_KINDS + pf.WORKLOAD_RUN_KINDS}

    def resource(self, api_version: str, kind: str) -> None:
        return None

    def request(self, method: str, path: str, body: dict[str, Any], target: Any = None) -> dict[str, Any]:
        self.reviews.append(body["spec"]["resourceAttributes"])
        return {"status": {"allowed": True}}

    def get(self, ref: Ref) -> dict[str, Any] | None:
        self.gets.append(ref)
        return {"metadata": {"name": ref.name}} if ref.name in self.classes else None

    def create(self, obj: dict[str, Any]) -> None:
        self.writes += 1


def priority_reviews(kube: FakeKube) -> list[dict[str, Any]]:
    return [r for r in kube.reviews if r["resource"] == "priorityclasses"]


@pytest.mark.parametrize("certification", [True, False])
def test_an_existing_class_passes_and_its_get_was_asked_for(certification: bool) -> None:
    kube = FakeKube({"high"})
    pf.preflight(kube, "ns", "run", certification=certification, workload_run=not certification,
                 priority_class="high")
    assert priority_reviews(kube) == [{"verb": "get", "group": "scheduling.k8s.io", "resource": "priorityclasses"}]
    assert kube.gets == [Ref("scheduling.k8s.io/v1", "PriorityClass", "", "high")]


def test_a_missing_class_is_refused_at_its_field_path() -> None:
    kube = FakeKube({"high"})
    with pytest.raises(InputError) as err:
        pf.preflight(kube, "ns", "run", certification=True, priority_class="hihg")
    assert str(err.value) == ('spec.priorityClassName: no PriorityClass named "hihg" exists; create it or name one that '
                              "does (kubectl get priorityclasses), then rerun; nothing was written")
    assert kube.writes == 0


def test_without_a_class_nothing_about_priority_classes_is_asked() -> None:
    kube = FakeKube(set())
    pf.preflight(kube, "ns", "run", certification=True)
    assert priority_reviews(kube) == [] and kube.gets == []
