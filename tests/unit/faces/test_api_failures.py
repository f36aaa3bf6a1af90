"""Every API and transport failure a face can meet → its one line (plugin_utils/engine_action.failure)."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
import yaml
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

CASES = yaml.safe_load((Path(__file__).parent / "data" / "api_failures.yaml").read_text())
READ_WF = Target("get", "nvcre.nvidia.com/v1alpha1", "Workflow", "nvcre", "wf")


def status_body(message: str) -> str:
    return json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message})


def raised(case: dict) -> Exception:
    """The exception the transport raises for a case of data/api_failures.yaml."""
    target = Target(**case["target"])
    tries = {"attempts": case.get("attempts", 1), "elapsed": case.get("elapsed", 0.0)}
    if case["failure"] == "answer":
        body = status_body(case["message"]) if "message" in case else ""
        return ApiError(target, case["status"], case["reason"], body, **tries)
    if case["failure"] == "unreachable":
        return Unreachable(target, case["host"], case["cause"], case.get("tls", False), **tries)
    exc = NotServed(case["api_version"], case["kind"])
    exc.target = target
    return exc


def test_the_corpus_covers_every_failure_kind() -> None:
    assert {c["failure"] for c in CASES} == {"answer", "unreachable", "not_served"}
    assert {c["status"] for c in CASES if "status" in c} == {401, 403, 404, 409, 413, 422, 429, 500, 503}


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_each_failure_is_its_line(case: dict) -> None:
    assert failure(raised(case)) == {"failed": True, "msg": case["line"]}
    assert "\n" not in case["line"] and "HTTPHeaderDict" not in case["line"]


def test_api_error_is_still_an_api_exception_with_the_status_callers_check() -> None:
    from kubernetes.client.exceptions import ApiException

    exc = ApiError(READ_WF, 404, "Not Found", status_body("gone"))
    assert isinstance(exc, ApiException) and exc.status == 404 and exc.message() == "gone"
    assert isinstance(NotServed("a/v1", "K"), LookupError) and str(NotServed("a/v1", "K")) == \
        "the server does not serve K in a/v1"


def test_preflight_failure_passes_its_message_through() -> None:
    line = "preflight of Workflow n/w: x"
    assert failure(PreflightFailure(line)) == {"failed": True, "msg": line}


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
        for _attempt in range(3):
            warnings.warn_explicit("Unverified HTTPS request is being made to host '127.0.0.1'. Adding certificate "
                                   "verification is strongly advised. See: https://example.invalid/advanced-usage",
                                   UserWarning, "rest.py", 1)
    assert shown == ["UserWarning: Unverified HTTPS request is being made to host '127.0.0.1'. Adding certificate "
                     "verification is strongly advised."]
