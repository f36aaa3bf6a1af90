"""Raw JSON REST over a configured ApiClient: any kind, plain dicts, counted requests.

The generated typed clients deserialize every object into models and back, which dominates a run's CPU on
large clusters; the driver needs dicts, so it speaks JSON directly. Kinds are resolved by discovery of their
group-version, once per process.
"""
from __future__ import annotations

import json
import threading
from collections import Counter
from typing import Any
from urllib.parse import quote, urlencode

try:
    from kubernetes.client import ApiClient
    from kubernetes.client.exceptions import ApiException
except ImportError:  # the faces report the missing library
    ApiClient = ApiException = None  # type: ignore[assignment,misc]

from ..engine.api.actions import Ref

Obj = dict[str, Any]


class Kube:
    """One API server. `requests` counts calls by verb (benchmarks read it)."""

    def __init__(self, api: ApiClient) -> None:
        self.api = api
        self.requests: Counter[str] = Counter()
        self.log_bytes = 0  # pod-log bytes read (benchmarks hold it against the logs' size)
        self._count_lock = threading.Lock()  # the driver calls from several threads
        self._resources: dict[str, dict[str, tuple[str, bool]]] = {}

    # ---------------------------------------------------------------- plumbing

    def _count(self, method: str) -> None:
        with self._count_lock:
            self.requests[method] += 1

    def request(self, method: str, path: str, body: Any = None, query: dict[str, Any] | None = None,
                content_type: str = "application/json") -> Obj:
        """One call; raises ApiException (status, body) on any non-2xx answer."""
        self._count(method)
        url_path = f"{path}?{urlencode(query)}" if query else path
        _method, url, headers, data, _post = self.api.param_serialize(
            method, url_path, header_params={"Accept": "application/json", "Content-Type": content_type},
            body=body, auth_settings=["BearerToken"])
        response = self.api.call_api(method, url, header_params=headers, body=data)
        response.read()
        if not 200 <= response.status < 300:
            raise ApiException(http_resp=response)
        return json.loads(response.data) if response.data else {}

    def _group_path(self, api_version: str) -> str:
        return f"/api/{api_version}" if "/" not in api_version else f"/apis/{api_version}"

    def resource(self, api_version: str, kind: str) -> tuple[str, bool]:
        """(plural, namespaced) of a kind, from its group-version's discovery document."""
        if api_version not in self._resources:
            doc = self.request("GET", self._group_path(api_version))
            self._resources[api_version] = {
                r["kind"]: (r["name"], r["namespaced"]) for r in doc.get("resources", []) if "/" not in r["name"]
            }
        try:
            return self._resources[api_version][kind]
        except KeyError:
            raise LookupError(f"the server does not serve {kind} in {api_version}") from None

    def path(self, api_version: str, kind: str, namespace: str = "", name: str = "", sub: str = "") -> str:
        plural, namespaced = self.resource(api_version, kind)
        parts = [self._group_path(api_version)]
        if namespaced and namespace:
            parts.append(f"namespaces/{quote(namespace)}")
        parts.append(plural)
        if name:
            parts.append(quote(name))
        if sub:
            parts.append(sub)
        return "/".join(parts)

    # ---------------------------------------------------------------- verbs

    def get(self, ref: Ref) -> Obj | None:
        try:
            return self.request("GET", self.path(ref.api_version, ref.kind, ref.namespace, ref.name))
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise

    def list(self, api_version: str, kind: str, namespace: str = "", labels: str = "", fields: str = "") -> list[Obj]:
        """Every item (pages followed), each with its apiVersion and kind filled in."""
        items: list[Obj] = []
        query: dict[str, Any] = {"limit": 500}
        if labels:
            query["labelSelector"] = labels
        if fields:
            query["fieldSelector"] = fields
        while True:
            page = self.request("GET", self.path(api_version, kind, namespace), query=query)
            for item in page.get("items", []):
                item.setdefault("apiVersion", api_version)
                item.setdefault("kind", kind)
                items.append(item)
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return items
            query["continue"] = token

    def create(self, obj: Obj, dry_run: bool = False) -> Obj:
        ref = Ref.of(obj)
        query = {"fieldValidation": "Strict", **({"dryRun": "All"} if dry_run else {})}
        return self.request("POST", self.path(ref.api_version, ref.kind, ref.namespace), obj, query)

    def replace(self, obj: Obj, sub: str = "") -> Obj:
        ref = Ref.of(obj)
        return self.request("PUT", self.path(ref.api_version, ref.kind, ref.namespace, ref.name, sub), obj)

    def merge_patch(self, ref: Ref, patch: Obj, sub: str = "") -> Obj:
        return self.request("PATCH", self.path(ref.api_version, ref.kind, ref.namespace, ref.name, sub), patch,
                            content_type="application/merge-patch+json")

    def delete(self, ref: Ref, uid: str = "", propagation: str = "Background") -> bool:
        """True if deleted; False if it was already gone. A UID precondition never deletes a namesake."""
        body: Obj = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation}
        if uid:
            body["preconditions"] = {"uid": uid}
        try:
            self.request("DELETE", self.path(ref.api_version, ref.kind, ref.namespace, ref.name), body)
            return True
        except ApiException as exc:
            if exc.status == 404:
                return False
            raise

    def pod_log(self, namespace: str, pod: str, container: str = "", since: str = "", timestamps: bool = False,
                limit_bytes: int = 0, tail_lines: int = 0) -> str:
        """A pod's log as the log endpoint serves it (`since`: RFC 3339, second precision); ApiException on error."""
        self._count("GET")
        path = f"/api/v1/namespaces/{quote(namespace)}/pods/{quote(pod)}/log"
        params = {"container": container, "sinceTime": since, "timestamps": "true" if timestamps else "",
                  "limitBytes": limit_bytes or "", "tailLines": tail_lines or ""}
        query = urlencode({k: v for k, v in params.items() if v})
        _method, url, headers, _body, _post = self.api.param_serialize(
            "GET", f"{path}?{query}" if query else path, auth_settings=["BearerToken"])
        response = self.api.call_api("GET", url, header_params=headers)
        data = response.read()
        if not 200 <= response.status < 300:
            raise ApiException(http_resp=response)
        with self._count_lock:
            self.log_bytes += len(data or b"")
        return data.decode(errors="replace") if data else ""

    def log_tail(self, namespace: str, pod: str, container: str, lines: int = 800) -> str:
        """The end of a failed container's log for failureLog; "" when it cannot be read (best effort)."""
        try:
            return self.pod_log(namespace, pod, container, tail_lines=lines, limit_bytes=32 * 1024)
        except ApiException:
            return ""
