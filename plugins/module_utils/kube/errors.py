"""API failures that carry what was being done to which object, and the one line a user reads for each.

Every request of `Kube` names its Target; a failure keeps it, so the face can say "creating TrainJob nvcre/x:
forbidden: create trainjobs.trainer.kubeflow.org in namespace nvcre (...); grant it (see docs/rbac.md)"
instead of a status code and a headers dump. The lines are built here, without I/O.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

try:
    from kubernetes.client.exceptions import ApiException
except ImportError:  # the faces report the missing library
    ApiException = Exception  # type: ignore[assignment,misc]

from ..engine.api.vocabulary import GROUP, TRAINER_GROUP, WORKFLOW

JOBSET_GROUP = "jobset.x-k8s.io"
RBAC_DOC = "docs/rbac.md"
CREDENTIALS = "kubeconfig/context (or the K8S_AUTH_* variables)"
# What installs each API group the run needs, named in the line when the server does not serve it.
INSTALL = {
    GROUP: "install the NVCRE CRDs (role cre.certification.crds)",
    TRAINER_GROUP: "install Kubeflow Trainer v2 (trainjobs.trainer.kubeflow.org v1alpha1)",
    JOBSET_GROUP: "install JobSet (jobsets.jobset.x-k8s.io v1alpha2, which Kubeflow Trainer runs on)",
}
# The answers that say an object is bigger than the cluster stores: etcd's request limit (1.5 MiB by default), the
# apiserver's gRPC limit towards etcd (2 MiB), its own request body limit (3 MiB). Another try gets the same answer.
TOO_LARGE = ("etcdserver: request is too large", "trying to send message larger than max", "Request entity too large")
_DOING = {"get": "reading", "list": "listing", "create": "creating", "update": "updating", "patch": "patching",
          "delete": "deleting"}


@dataclass(frozen=True)
class Target:
    """One request: the RBAC verb, the kind and where, and the resource discovery named (plural.group)."""

    verb: str
    api_version: str
    kind: str
    namespace: str = ""
    name: str = ""
    resource: str = ""
    sub: str = ""
    what: str = ""  # for a call on no object: "the API discovery of v1"

    def doing(self) -> str:
        """"creating TrainJob nvcre/x", "listing Pods in nvcre", "reading the log of Pod nvcre/p"."""
        if self.what:
            return f"{_DOING.get(self.verb, self.verb)} {self.what}"
        where = f"{self.namespace}/{self.name}" if self.namespace and self.name else self.name
        if where:
            what = f"{self.kind} {where}"
            if self.sub == "status":
                return f"{_DOING.get(self.verb, self.verb)} the status of {what}"
            if self.sub:
                return f"{_DOING.get(self.verb, self.verb)} the {self.sub} of {what}"
            return f"{_DOING.get(self.verb, self.verb)} {what}"
        plural = f"{self.kind}s" if not self.kind.endswith("s") else self.kind
        return f"{_DOING.get(self.verb, self.verb)} {plural}" + (f" in {self.namespace}" if self.namespace else "")

    def permission(self) -> str:
        """The missing permission as RBAC reads it: "create trainjobs.trainer.kubeflow.org in namespace nvcre"."""
        resource = (self.resource or self.kind.lower() or "the discovery paths (/api, /apis)") + \
            (f"/{self.sub}" if self.sub else "")
        scope = f" in namespace {self.namespace}" if self.namespace else " cluster-wide"
        return f"{self.verb} {resource}{scope}"


class ApiError(ApiException):
    """A non-2xx answer, after the retries it was worth; still an ApiException, so `status` checks keep working."""

    def __init__(self, target: Target, status: int, reason: str, body: str, attempts: int = 1,
                 elapsed: float = 0.0) -> None:
        super().__init__(status=status, reason=reason)
        self.body = body
        self.target, self.attempts, self.elapsed = target, attempts, elapsed

    def message(self) -> str:
        """The server's own words (a Status message), as Go's StatusError prints them."""
        return server_message(self.body, self.reason)

    def line(self) -> str:
        return api_error_line(self.target, self.status, str(self.reason), self.message(), self.attempts, self.elapsed)

    def too_large(self) -> bool:
        return too_large(self.status, self.message())


class NotServed(LookupError):
    """The server serves no such kind at that group-version (a CRD not installed, an API not enabled)."""

    def __init__(self, api_version: str, kind: str) -> None:
        super().__init__(f"the server does not serve {kind} in {api_version}")
        self.api_version, self.kind = api_version, kind
        self.target: Target | None = None  # the call that needed it, set by Kube

    def line(self) -> str:
        doing = f"{self.target.doing()}: " if self.target else ""
        return f"{doing}the server does not serve {self.kind} ({self.api_version}); {install_fix(self.api_version)} " \
               "and rerun"


def install_fix(api_version: str) -> str:
    """What installs the API group of `api_version`."""
    group = api_version.split("/")[0] if "/" in api_version else ""
    return INSTALL.get(group, "install the API that serves it")


class Unreachable(Exception):
    """No answer from the API server (refused, reset, timed out, TLS), after the retries it was worth."""

    def __init__(self, target: Target, host: str, cause: str, tls: bool = False, attempts: int = 1,
                 elapsed: float = 0.0) -> None:
        super().__init__(cause)
        self.target, self.host, self.cause, self.tls = target, host, cause, tls
        self.attempts, self.elapsed = attempts, elapsed

    def line(self) -> str:
        doing = self.target.doing()
        if self.tls:
            return (f"{doing}: TLS with the API server {self.host} failed: {self.cause}; set ca_cert to the CA "
                    "that signed its certificate, or point kubeconfig/context at the right cluster")
        return (f"{doing}: cannot reach the API server {self.host}: {self.cause} ({_tries(self.attempts, self.elapsed)}); "
                f"check that it runs and that {CREDENTIALS} point at it, then rerun")


def server_message(body: str | bytes | None, reason: object) -> str:
    """The `message` of a Status body, else the HTTP reason."""
    try:
        return json.loads(body or "").get("message") or str(reason)
    except (TypeError, ValueError, AttributeError):
        return str(reason)


def too_large(status: int | None, message: str) -> bool:
    """Whether the server refused the object for its size (a 413, or a 500 carrying etcd's refusal)."""
    return status == 413 or any(words in message for words in TOO_LARGE)


def _shrink(target: Target) -> str:
    if target.kind == WORKFLOW:
        return ("a Workflow keeps every group in its status: put more nodes in each group "
                "(spec.jobTemplate.spec.workload.trainJob.trainer.numNodes) or split the nodes over several Workflows, "
                "then rerun")
    return "make it smaller (etcd stores at most 1.5 MiB per object by default), then rerun"


def api_error_line(target: Target, status: int, reason: str, message: str, attempts: int = 1,
                   elapsed: float = 0.0) -> str:
    """What was being done, to what, the server's message and the fix, for one refused request."""
    doing = target.doing()
    if status == 401:
        return f"{doing}: Unauthorized: {message}; the credentials were refused: renew them or point {CREDENTIALS} " \
               "at valid ones"
    if status == 403 and '"system:anonymous"' in message:  # no credential was accepted: granting is no fix
        return (f"{doing}: forbidden ({message}): the server took the request as anonymous, so it accepted no "
                f"credential (a username and password are ignored: Kubernetes has no basic auth); point {CREDENTIALS} "
                "at a token or a client certificate")
    if status == 403:
        return f"{doing}: forbidden: {target.permission()} ({message}); grant it (see {RBAC_DOC})"
    if status == 404:
        return f"{doing}: NotFound: {message}; create it (or correct the name or namespace) and rerun"
    if status == 409:
        return f"{doing}: Conflict: {message}; another client kept changing it: stop that client and rerun"
    if too_large(status, message):
        return f"{doing}: the cluster cannot store it, it is too large ({message}); {_shrink(target)}"
    if status in (400, 422):
        return f"{doing}: refused by the server ({status} {reason}): {message}"
    if status == 429 or status >= 500:
        return (f"{doing}: the API server answered {status} {reason}: {message} ({_tries(attempts, elapsed)}); "
                "check its health (kubectl get --raw /readyz) and rerun: the run continues where it stopped")
    return f"{doing}: API error {status} {reason}: {message}"


def short_cause(exc: BaseException, timeouts: tuple[float, float]) -> tuple[str, bool, bool]:
    """(a few words on a urllib3/socket failure, whether it was TLS, whether the request may have been sent)."""
    reason = getattr(exc, "reason", None)
    inner = reason if isinstance(reason, BaseException) else exc
    name = type(inner).__name__
    text = str(inner)
    if "SSL" in name or "CERTIFICATE" in text.upper() or "SSLError" in text:
        match = re.search(r"\[SSL[^\]]*\]\s*([^(]+)", text)
        return (match.group(1).strip() if match else text.splitlines()[-1][:200]), True, False
    if name == "ConnectTimeoutError":
        return f"no connection within {timeouts[0]:g}s", False, False
    if name == "ReadTimeoutError" or "Read timed out" in text:
        return f"no answer within {timeouts[1]:g}s", False, True
    if name == "NewConnectionError" or "Connection refused" in text:
        match = re.search(r"\[Errno -?\d+\]\s*([^'\")]+)", text)
        return (match.group(1).strip().lower() if match else "no connection"), False, False
    if name == "ProtocolError" or "reset" in text.lower() or "RemoteDisconnected" in text:
        return "the connection was closed before the answer", False, True
    return text.splitlines()[-1][:200] if text else name, False, True


def _tries(attempts: int, elapsed: float) -> str:
    return f"{attempts} attempt{'s' if attempts != 1 else ''} over {elapsed:.0f}s"
