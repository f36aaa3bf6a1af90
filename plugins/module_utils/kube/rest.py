"""Raw JSON REST over a configured ApiClient: any kind, plain dicts, counted requests.

The generated typed clients deserialize every object into models and back, which dominates a run's CPU on
large clusters; the driver needs dicts, so it speaks JSON directly. Kinds are resolved by discovery of their
group-version, once per process.
"""
from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote, urlencode, urlsplit

try:
    from kubernetes.client import ApiClient
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError
except ImportError:  # the faces report the missing library
    ApiClient = ApiException = HTTPError = None  # type: ignore[assignment,misc]

from ..engine.api.actions import Ref
from .errors import ApiError, NotServed, Target, Unreachable, short_cause
from .retry import Backoff, retry_after, retryable

Obj = dict[str, Any]

# (connect, read) seconds. An apiserver answers a call in milliseconds; 30 s is one stuck behind a dead etcd
# (it gives up after its own 60 s request timeout), so the call is abandoned and retried earlier.
TIMEOUT = (5.0, 30.0)
# Pod logs of long runs are megabytes, read while the node's kubelet (kwok here) streams them.
LOG_TIMEOUT = (5.0, 120.0)
# A log read the kubelet cannot serve now is retried by the measurement itself on a later pass: wait briefly.
LOG_BACKOFF = Backoff(budget=10.0)
AGGREGATED_DISCOVERY = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json"
# A list of the items' metadata only (PartialObjectMetadataList): what a selector finds, never their bodies.
METADATA_LIST = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json"


class Kube:
    """One API server. `requests` counts calls by verb (benchmarks read it)."""

    def __init__(self, api: ApiClient, backoff: Backoff | None = None) -> None:
        self.api = api
        self.backoff = backoff or Backoff()
        self.requests: Counter[str] = Counter()
        self.retries = 0  # calls sent again after a retryable failure
        self.log_bytes = 0  # pod-log bytes read (benchmarks hold it against the logs' size)
        self.bytes_read = 0  # every answer's bytes, watch streams included (benchmarks)
        self._count_lock = threading.Lock()  # the driver calls from several threads
        self._resources: dict[str, dict[str, tuple[str, bool]]] = {}
        self._reached = False  # the server answered once: a later silence is a restart, worth waiting out

    # ---------------------------------------------------------------- plumbing

    def _count(self, method: str) -> None:
        with self._count_lock:
            self.requests[method] += 1

    def host(self) -> str:
        return urlsplit(self.api.configuration.host).netloc or self.api.configuration.host

    def request(self, method: str, path: str, body: Any = None, query: dict[str, Any] | None = None,
                content_type: str = "application/json", target: Target | None = None,
                accept: str = "application/json") -> Obj:
        """One call, retried while that is safe; ApiError (an ApiException) on a non-2xx answer, Unreachable
        when the server cannot be reached."""
        data = self.send(method, path, body, query, content_type, target, accept, TIMEOUT, self.backoff)
        return json.loads(data) if data else {}

    def send(self, method: str, path: str, body: Any, query: dict[str, Any] | None, content_type: str,
             target: Target | None, accept: str, timeout: tuple[float, float], backoff: Backoff) -> bytes:
        """The raw body of a 2xx answer, after the retries the failures were worth (kube/retry.py)."""
        target = target or Target(method.lower(), "", "", what=path)
        url_path = f"{path}?{urlencode(query)}" if query else path
        # A create that lets the server pick the name would make a second object if sent twice.
        repeatable = not (method == "POST" and isinstance(body, dict)
                          and not (body.get("metadata") or {}).get("name"))
        headers = {"Accept": accept} if body is None else {"Accept": accept, "Content-Type": content_type}
        start, attempt = time.monotonic(), 0
        while True:
            self._count(method)
            _method, url, hdrs, data, _post = self.api.param_serialize(
                method, url_path, header_params=dict(headers), body=body, auth_settings=["BearerToken"])
            wait: float | None = None
            try:
                response = self.api.call_api(method, url, header_params=hdrs, body=data, _request_timeout=timeout)
                payload = response.read()
            except ApiException as exc:  # the client's own wrapping of a TLS failure (status 0)
                failure: ApiError | Unreachable = Unreachable(target, self.host(), short_cause(exc, timeout)[0], True)
            except (HTTPError, OSError) as exc:
                cause, tls, sent = short_cause(exc, timeout)
                failure = Unreachable(target, self.host(), cause, tls)
                if not tls and retryable(None, sent, repeatable):
                    wait = backoff.delay(attempt, None, random.random)
            else:
                self._reached = True
                with self._count_lock:
                    self.bytes_read += len(payload or b"")
                if 200 <= response.status < 300:
                    return payload or b""
                failure = ApiError(target, response.status, str(response.reason), (payload or b"").decode(errors="replace"))
                if retryable(response.status, True, repeatable, failure.too_large()):
                    after = retry_after(response.getheader("Retry-After"), datetime.now(UTC))
                    wait = backoff.delay(attempt, after, random.random)
            elapsed = time.monotonic() - start
            if wait is None or backoff.gives_up(elapsed, wait, self._reached):
                failure.attempts, failure.elapsed = attempt + 1, elapsed
                raise failure
            with self._count_lock:
                self.retries += 1
            time.sleep(wait)
            attempt += 1

    def stream(self, path: str, query: dict[str, Any], target: Target, read_timeout: float,
               accept: str = "application/json", opened: Callable[[Any], None] | None = None) -> Iterator[bytes]:
        """The lines of a streamed answer (a watch), as they arrive; ApiError on a non-2xx answer, Unreachable
        when the server cannot be reached or the stream breaks. Not retried: a watch resumes where it was.
        `opened` gets the open response (closing it from another thread ends the stream)."""
        self._count("WATCH")
        url_path = f"{path}?{urlencode(query)}"
        _method, url, hdrs, _data, _post = self.api.param_serialize(
            "GET", url_path, header_params={"Accept": accept}, auth_settings=["BearerToken"])
        try:
            response = self.api.call_api("GET", url, header_params=hdrs, _request_timeout=(TIMEOUT[0], read_timeout))
        except (ApiException, HTTPError, OSError) as exc:
            raise Unreachable(target, self.host(), short_cause(exc, TIMEOUT)[0], False) from None
        self._reached = True
        raw = response.response
        if opened:
            opened(raw)
        try:
            if not 200 <= response.status < 300:
                raise ApiError(target, response.status, str(response.reason), (raw.data or b"").decode(errors="replace"))
            pending = b""
            try:
                for chunk in raw.stream(64 * 1024):
                    with self._count_lock:
                        self.bytes_read += len(chunk)
                    lines = (pending + chunk).split(b"\n")
                    pending = lines.pop()
                    yield from (line for line in lines if line.strip())
            except (HTTPError, OSError) as exc:
                raise Unreachable(target, self.host(), short_cause(exc, (TIMEOUT[0], read_timeout))[0], False) from None
            if pending.strip():
                yield pending
        finally:
            raw.release_conn()

    def _group_path(self, api_version: str) -> str:
        return f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"

    def discover(self) -> set[str]:
        """Every group-version the server serves, with its kinds cached: one aggregated discovery call
        (servers before 1.30 answer a plain group list; their kinds are then read per group-version on use)."""
        doc = self.request("GET", "/apis", accept=AGGREGATED_DISCOVERY, target=Target("get", "", "", what="the API discovery"))
        served = {"v1"}
        if doc.get("kind") != "APIGroupDiscoveryList":
            for group in doc.get("groups") or []:
                served.update(v["groupVersion"] for v in group.get("versions") or [])
            return served
        for group in doc.get("items") or []:
            name = (group.get("metadata") or {}).get("name", "")
            for version in group.get("versions") or []:
                api_version = f"{name}/{version['version']}"
                served.add(api_version)
                self._resources.setdefault(api_version, {
                    r["responseKind"]["kind"]: (r["resource"], r.get("scope") == "Namespaced")
                    for r in version.get("resources") or [] if r.get("responseKind")})
        return served

    def resource(self, api_version: str, kind: str) -> tuple[str, bool]:
        """(plural, namespaced) of a kind, from its group-version's discovery document; NotServed if none."""
        if api_version not in self._resources:
            try:
                doc = self.request("GET", self._group_path(api_version),
                                   target=Target("get", api_version, "", what=f"the API discovery of {api_version}"))
            except ApiError as exc:
                if exc.status == 404:
                    raise NotServed(api_version, kind) from None
                raise
            self._resources[api_version] = {
                r["kind"]: (r["name"], r["namespaced"]) for r in doc.get("resources", []) if "/" not in r["name"]
            }
        try:
            return self._resources[api_version][kind]
        except KeyError:
            raise NotServed(api_version, kind) from None

    def target(self, verb: str, api_version: str, kind: str, namespace: str = "", name: str = "",
               sub: str = "") -> tuple[Target, str]:
        """The Target of a call and its path; NotServed (with the call's verb) when the kind is not served."""
        try:
            plural, namespaced = self.resource(api_version, kind)
        except NotServed as exc:
            exc.target = Target(verb, api_version, kind, namespace, name)
            raise
        group = api_version.split("/")[0] if "/" in api_version else ""
        target = Target(verb, api_version, kind, namespace if namespaced else "", name,
                        f"{plural}.{group}" if group else plural, sub)
        parts = [self._group_path(api_version)]
        if namespaced and namespace:
            parts.append(f"namespaces/{quote(namespace)}")
        parts.append(plural)
        if name:
            parts.append(quote(name))
        if sub:
            parts.append(sub)
        return target, "/".join(parts)

    # ---------------------------------------------------------------- verbs

    def get(self, ref: Ref) -> Obj | None:
        target, path = self.target("get", ref.api_version, ref.kind, ref.namespace, ref.name)
        try:
            return self.request("GET", path, target=target)
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise

    def list(self, api_version: str, kind: str, namespace: str = "", labels: str = "", fields: str = "") -> list[Obj]:
        """Every item (pages followed), each with its apiVersion and kind filled in."""
        target, path = self.target("list", api_version, kind, namespace)
        items: list[Obj] = []
        query: dict[str, Any] = {"limit": 500}
        if labels:
            query["labelSelector"] = labels
        if fields:
            query["fieldSelector"] = fields
        while True:
            page = self.request("GET", path, query=query, target=target)
            for item in page.get("items", []):
                item.setdefault("apiVersion", api_version)
                item.setdefault("kind", kind)
                items.append(item)
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return items
            query["continue"] = token

    def list_metadata(self, api_version: str, kind: str, namespace: str = "", labels: str = "") -> Iterator[Obj]:
        """The metadata of every item (pages followed) as the API's PartialObjectMetadataList: a list that never
        holds the items' bodies (a shard ConfigMap's is up to 1 MiB)."""
        target, path = self.target("list", api_version, kind, namespace)
        query: dict[str, Any] = {"limit": 500, **({"labelSelector": labels} if labels else {})}
        while True:
            page = self.request("GET", path, query=query, target=target, accept=METADATA_LIST)
            for item in page.get("items") or []:
                yield item.get("metadata") or {}
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return
            query["continue"] = token

    def create(self, obj: Obj, dry_run: bool = False) -> Obj:
        ref = Ref.of(obj)
        target, path = self.target("create", ref.api_version, ref.kind, ref.namespace)
        target = Target(target.verb, target.api_version, target.kind, target.namespace,
                        ref.name or (obj.get("metadata") or {}).get("generateName", ""), target.resource)
        query = {"fieldValidation": "Strict", **({"dryRun": "All"} if dry_run else {})}
        return self.request("POST", path, obj, query, target=target)

    def replace(self, obj: Obj, sub: str = "") -> Obj:
        ref = Ref.of(obj)
        target, path = self.target("update", ref.api_version, ref.kind, ref.namespace, ref.name, sub)
        return self.request("PUT", path, obj, target=target)

    def merge_patch(self, ref: Ref, patch: Obj, sub: str = "") -> Obj:
        target, path = self.target("patch", ref.api_version, ref.kind, ref.namespace, ref.name, sub)
        return self.request("PATCH", path, patch, content_type="application/merge-patch+json", target=target)

    def json_patch(self, ref: Ref, operations: Sequence[Obj]) -> Obj:
        target, path = self.target("patch", ref.api_version, ref.kind, ref.namespace, ref.name)
        return self.request("PATCH", path, operations, content_type="application/json-patch+json", target=target)

    def delete(self, ref: Ref, uid: str = "", propagation: str = "Background") -> bool:
        """True if deleted; False if it was already gone. A UID precondition never deletes a namesake."""
        body: Obj = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation}
        if uid:
            body["preconditions"] = {"uid": uid}
        target, path = self.target("delete", ref.api_version, ref.kind, ref.namespace, ref.name)
        try:
            self.request("DELETE", path, body, target=target)
            return True
        except ApiError as exc:
            if exc.status == 404:
                return False
            raise

    def pod_log(self, namespace: str, pod: str, container: str = "", since: str = "", timestamps: bool = False,
                limit_bytes: int = 0, tail_lines: int = 0) -> str:
        """A pod's log as the log endpoint serves it (`since`: RFC 3339, second precision); ApiError on error."""
        path = f"/api/v1/namespaces/{quote(namespace)}/pods/{quote(pod)}/log"
        params = {"container": container, "sinceTime": since, "timestamps": "true" if timestamps else "",
                  "limitBytes": limit_bytes or "", "tailLines": tail_lines or ""}
        target = Target("get", "v1", "Pod", namespace, pod, "pods", "log")
        data = self.send("GET", path, None, {k: v for k, v in params.items() if v}, "", target, "*/*", LOG_TIMEOUT,
                         LOG_BACKOFF)
        with self._count_lock:
            self.log_bytes += len(data)
        return data.decode(errors="replace")

    def log_tail(self, namespace: str, pod: str, container: str, lines: int = 800) -> str:
        """The end of a failed container's log for failureLog; "" when it cannot be read (best effort)."""
        try:
            return self.pod_log(namespace, pod, container, tail_lines=lines, limit_bytes=32 * 1024)
        except (ApiError, Unreachable):
            return ""
