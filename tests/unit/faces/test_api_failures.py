"""Every API and transport failure a face can meet → its one line (plugin_utils/engine_action.failure)."""
from __future__ import annotations

import json
import warnings

import pytest
from urllib3.exceptions import (
    ConnectTimeoutError,
    MaxRetryError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
    SSLError,
)

from ansible_collections.cre.certification.plugins.module_utils.driver.preflight import PreflightFailure
from ansible_collections.cre.certification.plugins.module_utils.kube.errors import (
    ApiError,
    NotServed,
    Target,
    Unreachable,
    short_cause,
)
from ansible_collections.cre.certification.plugins.plugin_utils import engine_action
from ansible_collections.cre.certification.plugins.plugin_utils.engine_action import failure, warnings_to_display

CREATE_TRAINJOB = Target("create", "trainer.kubeflow.org/v1alpha1", "TrainJob", "nvcre", "wf-group-0-iter-1-workload",
                         "trainjobs.trainer.kubeflow.org")
LIST_NODES = Target("list", "v1", "Node", resource="nodes")
STATUS = Target("update", "nvcre.nvidia.com/v1alpha1", "Workflow", "nvcre", "wf", "workflows.nvcre.nvidia.com",
                "status")


def status_body(message: str) -> str:
    return json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message})


FORBIDDEN = ('trainjobs.trainer.kubeflow.org "wf-group-0-iter-1-workload" is forbidden: User '
             '"system:serviceaccount:nvcre:runner" cannot create resource "trainjobs" in API group '
             '"trainer.kubeflow.org" in the namespace "nvcre"')
CASES = {
    "403 on a namespaced create": (
        ApiError(CREATE_TRAINJOB, 403, "Forbidden", status_body(FORBIDDEN)),
        f"creating TrainJob nvcre/wf-group-0-iter-1-workload: forbidden: create trainjobs.trainer.kubeflow.org in "
        f"namespace nvcre ({FORBIDDEN}); grant it (see docs/rbac.md)"),
    "403 on a cluster-wide list": (
        ApiError(LIST_NODES, 403, "Forbidden", status_body("nodes is forbidden: User \"u\" cannot list")),
        'listing Nodes: forbidden: list nodes cluster-wide (nodes is forbidden: User "u" cannot list); '
        "grant it (see docs/rbac.md)"),
    "403 on a status write": (
        ApiError(STATUS, 403, "Forbidden", status_body("no")),
        "updating the status of Workflow nvcre/wf: forbidden: update workflows.nvcre.nvidia.com/status in "
        "namespace nvcre (no); grant it (see docs/rbac.md)"),
    "401": (
        ApiError(LIST_NODES, 401, "Unauthorized", status_body("Unauthorized")),
        "listing Nodes: Unauthorized: Unauthorized; the credentials were refused: renew them or point "
        "kubeconfig/context (or the K8S_AUTH_* variables) at valid ones"),
    "404 (a namespace that does not exist)": (
        ApiError(CREATE_TRAINJOB, 404, "Not Found", status_body('namespaces "nvcre" not found')),
        'creating TrainJob nvcre/wf-group-0-iter-1-workload: NotFound: namespaces "nvcre" not found; create it '
        "(or correct the name or namespace) and rerun"),
    "409 after the caller's retries": (
        ApiError(STATUS, 409, "Conflict", status_body("the object has been modified")),
        "updating the status of Workflow nvcre/wf: Conflict: the object has been modified; another client kept "
        "changing it: stop that client and rerun"),
    "422": (
        ApiError(CREATE_TRAINJOB, 422, "Unprocessable Entity", status_body("spec.x: Invalid value")),
        "creating TrainJob nvcre/wf-group-0-iter-1-workload: refused by the server (422 Unprocessable Entity): "
        "spec.x: Invalid value"),
    "503 after retries": (
        ApiError(LIST_NODES, 503, "Service Unavailable", status_body("etcd unavailable"), attempts=31, elapsed=179.6),
        "listing Nodes: the API server answered 503 Service Unavailable: etcd unavailable (31 attempts over 180s); "
        "check its health (kubectl get --raw /readyz) and rerun: the run continues where it stopped"),
    "429 without a Status body": (
        ApiError(LIST_NODES, 429, "Too Many Requests", "", attempts=2, elapsed=31.0),
        "listing Nodes: the API server answered 429 Too Many Requests: Too Many Requests (2 attempts over 31s); "
        "check its health (kubectl get --raw /readyz) and rerun: the run continues where it stopped"),
    "connection refused": (
        Unreachable(LIST_NODES, "127.0.0.1:6443", "connection refused", attempts=5, elapsed=2.6),
        "listing Nodes: cannot reach the API server 127.0.0.1:6443: connection refused (5 attempts over 3s); check "
        "that it runs and that kubeconfig/context (or the K8S_AUTH_* variables) point at it, then rerun"),
    "TLS": (
        Unreachable(LIST_NODES, "127.0.0.1:6443", "certificate verify failed: self-signed certificate", tls=True),
        "listing Nodes: TLS with the API server 127.0.0.1:6443 failed: certificate verify failed: self-signed "
        "certificate; set ca_cert to the CA that signed its certificate, or point kubeconfig/context at the right "
        "cluster"),
}


def not_served(api_version: str, kind: str, target: Target) -> NotServed:
    exc = NotServed(api_version, kind)
    exc.target = target
    return exc


READ_WF = Target("get", "nvcre.nvidia.com/v1alpha1", "Workflow", "nvcre", "wf")
NOT_SERVED = {
    "an NVCRE CRD": (
        not_served("nvcre.nvidia.com/v1alpha1", "Workflow", READ_WF),
        "reading Workflow nvcre/wf: the server does not serve Workflow (nvcre.nvidia.com/v1alpha1); install the "
        "NVCRE CRDs (role cre.certification.crds) and rerun"),
    "Trainer": (
        not_served("trainer.kubeflow.org/v1alpha1", "TrainJob", Target("list", "trainer.kubeflow.org/v1alpha1",
                                                                       "TrainJob", "nvcre")),
        "listing TrainJobs in nvcre: the server does not serve TrainJob (trainer.kubeflow.org/v1alpha1); install "
        "Kubeflow Trainer v2 (trainjobs.trainer.kubeflow.org v1alpha1) and rerun"),
    "JobSet": (
        not_served("jobset.x-k8s.io/v1alpha2", "JobSet", Target("list", "jobset.x-k8s.io/v1alpha2", "JobSet", "n")),
        "listing JobSets in n: the server does not serve JobSet (jobset.x-k8s.io/v1alpha2); install JobSet "
        "(jobsets.jobset.x-k8s.io v1alpha2, which Kubeflow Trainer runs on) and rerun"),
}


@pytest.mark.parametrize("case", [*CASES, *NOT_SERVED])
def test_each_failure_is_its_line(case: str) -> None:
    exc, line = {**CASES, **NOT_SERVED}[case]
    assert failure(exc) == {"failed": True, "msg": line}
    assert "\n" not in line and "HTTPHeaderDict" not in line


def test_api_error_is_still_an_api_exception_with_the_status_callers_check() -> None:
    from kubernetes.client.exceptions import ApiException

    exc = ApiError(READ_WF, 404, "Not Found", status_body("gone"))
    assert isinstance(exc, ApiException) and exc.status == 404 and exc.message() == "gone"
    assert isinstance(NotServed("a/v1", "K"), LookupError) and str(NotServed("a/v1", "K")) == \
        "the server does not serve K in a/v1"


def test_preflight_failure_passes_its_message_through() -> None:
    assert failure(PreflightFailure("preflight of Workflow n/w: x")) == {"failed": True,
                                                                        "msg": "preflight of Workflow n/w: x"}


def test_a_plain_bug_is_not_mapped() -> None:
    assert failure(KeyError("x")) is None


POOL = None


@pytest.mark.parametrize(("exc", "expected"), [
    (MaxRetryError(POOL, "/api", NewConnectionError(POOL, "Failed to establish a new connection: [Errno 111] "
                                                          "Connection refused")),
     ("connection refused", False, False)),
    (MaxRetryError(POOL, "/api", ConnectTimeoutError(POOL, "timed out")), ("no connection within 5s", False, False)),
    (ReadTimeoutError(POOL, "/api", "Read timed out. (read timeout=30.0)"), ("no answer within 30s", False, True)),
    (ProtocolError("Connection aborted.", ConnectionResetError(104, "Connection reset by peer")),
     ("the connection was closed before the answer", False, True)),
    (MaxRetryError(POOL, "/api", SSLError("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed "
                                          "certificate (_ssl.c:1010)")),
     ("certificate verify failed: self-signed certificate", True, False)),
])
def test_short_cause_of_transport_failures(exc: BaseException, expected: tuple[str, bool, bool]) -> None:
    assert short_cause(exc, (5.0, 30.0)) == expected


def test_warnings_reach_the_display_once(monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[str] = []
    monkeypatch.setattr(engine_action.display, "warning", shown.append)
    with warnings_to_display():
        for _ in range(3):
            warnings.warn_explicit("Unverified HTTPS request is being made to host '127.0.0.1'. Adding certificate "
                                   "verification is strongly advised. See: https://example.invalid/advanced-usage",
                                   UserWarning, "rest.py", 1)
    assert shown == ["UserWarning: Unverified HTTPS request is being made to host '127.0.0.1'. Adding certificate "
                     "verification is strongly advised."]
