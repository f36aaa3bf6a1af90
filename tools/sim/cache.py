"""A list+watch cache of one kind for the simulator's agents, so that a pass reads memory, not the apiserver.

At 10,000 nodes a full node list is ~30 MB of JSON: listing it on every half-second pass would keep the
apiserver busy serving the simulator instead of the workloads. The cache lists once (paged), then follows a
watch from that resourceVersion; a broken watch resumes from the last version seen, an expired one (410 Gone)
or any other failure re-lists. Objects are kept as plain dicts, trimmed by `keep` to what the agents read.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from kubernetes import client
from kubernetes.watch.watch import iter_resp_lines

LOG = logging.getLogger("cre-sim-cache")

Obj = dict[str, Any]
PAGE = 1000
WATCH_SECONDS = 300
RETRY_SECONDS = 1.0


class Gone(Exception):
    """The watch's resourceVersion is too old: list again."""


def without_managed_fields(obj: Obj) -> Obj:
    obj.get("metadata", {}).pop("managedFields", None)
    return obj


def node_view(node: Obj) -> Obj:
    """What the agents read of a Node: its name, labels, annotations and spec (status is kwok's heartbeat)."""
    meta = node.get("metadata") or {}
    return {"metadata": {k: meta[k] for k in ("name", "uid", "labels", "annotations") if k in meta},
            "spec": node.get("spec") or {}}


class Cache:
    """Objects of one list call (`list_call`: a kubernetes client list method, e.g. CoreV1Api.list_node), keyed
    by namespace/name. `run` (in a thread of its own) keeps them current; `items` is a snapshot."""

    def __init__(self, list_call: Callable[..., Any], label_selector: str = "",
                 keep: Callable[[Obj], Obj] = without_managed_fields) -> None:
        self._list, self._selector, self._keep = list_call, label_selector, keep
        self._objects: dict[str, Obj] = {}
        self._lock = threading.Lock()
        self.synced = threading.Event()

    def items(self) -> list[Obj]:
        with self._lock:
            return list(self._objects.values())

    def by_name(self) -> dict[str, Obj]:
        with self._lock:
            return {o["metadata"]["name"]: o for o in self._objects.values()}

    @staticmethod
    def _key(obj: Obj) -> str:
        meta = obj.get("metadata") or {}
        return f"{meta.get('namespace', '')}/{meta.get('name', '')}"

    def relist(self) -> str:
        """Replace the contents with a fresh paged list; returns its resourceVersion."""
        objects: dict[str, Obj] = {}
        token = ""
        while True:
            page = json.loads(self._list(label_selector=self._selector, limit=PAGE, _continue=token,
                                         _preload_content=False).data)
            for obj in page.get("items") or []:
                objects[self._key(obj)] = self._keep(obj)
            token = (page.get("metadata") or {}).get("continue") or ""
            if not token:
                break
        with self._lock:
            self._objects = objects
        self.synced.set()
        return str(page["metadata"]["resourceVersion"])

    def follow(self, version: str) -> str:
        """Apply one watch's events until the server ends it; returns the last resourceVersion seen."""
        resp = self._list(label_selector=self._selector, watch=True, resource_version=version,
                          allow_watch_bookmarks=True, timeout_seconds=WATCH_SECONDS, _preload_content=False)
        try:
            for line in iter_resp_lines(resp):
                event = json.loads(line)
                obj = event.get("object") or {}
                if event.get("type") == "ERROR":
                    if obj.get("code") == 410:
                        raise Gone()
                    raise client.ApiException(status=obj.get("code"), reason=obj.get("message"))
                version = (obj.get("metadata") or {}).get("resourceVersion") or version
                if event["type"] == "BOOKMARK":
                    continue
                with self._lock:
                    if event["type"] == "DELETED":
                        self._objects.pop(self._key(obj), None)
                    else:
                        self._objects[self._key(obj)] = self._keep(obj)
        finally:
            resp.release_conn()
        return version

    def run(self) -> None:
        version, last = "", ""
        while True:
            try:
                version = version or self.relist()
                version = self.follow(version)
                last = ""
            except Gone:
                version = ""
            except Exception as exc:  # noqa: BLE001 - the apiserver may be restarting: list again shortly
                version = ""
                error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                if error != last:  # once per new error: a cluster that is down does not flood the log
                    LOG.warning("list+watch failed, listing again every %gs: %s", RETRY_SECONDS, error)
                last = error
                time.sleep(RETRY_SECONDS)
