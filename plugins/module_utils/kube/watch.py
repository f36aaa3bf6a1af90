"""List + watch of one kind (an informer): a cache the API server's watch stream keeps current.

A pass of the driver then reads memory instead of re-listing the cluster: what it costs follows what changed,
not the size of the cluster. The cache is the server's state at a resourceVersion and nothing more, so a
restarted run lists again and sees the same. The initial list is paged; the watch resumes from the last
resourceVersion it saw (bookmarks keep that fresh while nothing changes); a 410 Gone (the server no longer has
that version) means a fresh list, and every object that differs from the cache is reported as changed.
"""
from __future__ import annotations

import json
import random
import sys
import threading
from collections.abc import Callable, Iterable
from typing import Any

from .errors import ApiError, Target, Unreachable
from .rest import Kube

Obj = dict[str, Any]
Trim = Callable[[Obj], Obj]
Changed = Callable[[str, str, Iterable[str]], None]  # (kind, what: "event"|"relist", names)

# The server ends a watch after this (it is then resumed); the read times out a little later, which also catches
# a connection that died without a close (bookmarks arrive about every minute, so a silent minute is not death).
WATCH_SECONDS = 240
READ_MARGIN = 30.0
PAGE = 500
# Only the fields the caller reads are kept: a node's images and a pod's spec are most of their bytes.
METADATA_ONLY = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
METADATA_ONLY_WATCH = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"


class Gone(Exception):
    """The watch asked for a resourceVersion the server has compacted away: list again."""


def compact(value: Any) -> Any:
    """A copy with dict keys and short strings interned: thousands of Jobs or Nodes from one template then share
    their strings (the JSON decoder makes fresh ones per document)."""
    if isinstance(value, dict):
        return {sys.intern(k): compact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [compact(v) for v in value]
    if isinstance(value, str) and len(value) <= 64:
        return sys.intern(value)
    return value


def _shut(response: Any) -> None:
    """Shut a watch stream for reading, which ends it at once. A stream that already ended (the server closed it,
    or it broke and its thread is backing off) has given its connection back: urllib3 refuses to shut that one
    (RuntimeError, or ValueError once closed), and there is nothing left to end."""
    if response is None:
        return
    try:
        response.shutdown()
    except (RuntimeError, ValueError, OSError):
        pass


def _same(obj: Obj, cached: Obj | None) -> bool:
    """Equal but for the resourceVersion: what the caller keeps did not change (a trimmed-away field did)."""
    if cached is None:
        return False
    meta, old = obj.get("metadata") or {}, cached.get("metadata") or {}
    return ({**obj, "metadata": {**meta, "resourceVersion": ""}} == {**cached, "metadata": {**old, "resourceVersion": ""}})


def _version(obj: Obj) -> int:
    try:
        return int((obj.get("metadata") or {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


class Informer:
    """One kind in one namespace ("" = cluster-wide or cluster-scoped), narrowed by label and field selectors.

    `start()` lists synchronously (its errors reach the caller); a thread then watches. `changed` is called from
    that thread with the names that changed. A watch failure the server will not get over (403, 404) is kept in
    `error` for the caller to raise; transient ones (restarts, timeouts, 5xx) are retried with backoff."""

    def __init__(self, kube: Kube, api_version: str, kind: str, namespace: str = "", labels: str = "",
                 fields: str = "", trim: Trim | None = None, metadata_only: bool = False,
                 changed: Changed | None = None) -> None:
        self.kube, self.api_version, self.kind, self.namespace = kube, api_version, kind, namespace
        self.labels, self.fields, self.metadata_only = labels, fields, metadata_only
        self.trim = trim or (lambda obj: obj)
        self.changed = changed or (lambda kind, what, names: None)
        self.error: Exception | None = None
        self.relists = 0   # lists after the first (a 410 Gone)
        self.events = 0    # watch events applied (bookmarks excluded)
        self.resource_version = ""
        self._items: dict[str, Obj] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._response: Any = None  # the open watch stream, which stop() shuts

    # ---------------------------------------------------------------- reading

    def items(self) -> dict[str, Obj]:
        """name -> object, a snapshot (objects are shared: callers must not change them)."""
        with self._lock:
            return dict(self._items)

    def get(self, name: str) -> Obj | None:
        with self._lock:
            return self._items.get(name)

    def put(self, obj: Obj) -> None:
        """What a write of ours answered, so the next pass sees it before its watch event arrives; an older
        version than the cached one is ignored (the event may have come first)."""
        item = self._prepare(obj)
        name = item["metadata"]["name"]
        with self._lock:
            cached = self._items.get(name)
            if cached is None or _version(item) >= _version(cached):
                self._items[name] = item

    # ---------------------------------------------------------------- lifecycle

    def start(self) -> Informer:
        self._list()
        self._thread = threading.Thread(target=self._run, name=f"watch-{self.kind}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """End the watch now (its thread then exits; the cache stays readable)."""
        self._stop.set()
        _shut(self._response)

    def _opened(self, response: Any) -> None:
        self._response = response
        if self._stop.is_set():
            _shut(response)

    # ---------------------------------------------------------------- plumbing

    def _target(self, verb: str) -> tuple[Target, str]:
        return self.kube.target(verb, self.api_version, self.kind, self.namespace)

    def _prepare(self, obj: Obj) -> Obj:
        if self.metadata_only:  # the server calls them PartialObjectMetadata; they are what was asked for
            obj.update(apiVersion=self.api_version, kind=self.kind)
        obj.setdefault("apiVersion", self.api_version)
        obj.setdefault("kind", self.kind)
        (obj.get("metadata") or {}).pop("managedFields", None)
        return compact(self.trim(obj))

    def _list(self) -> None:
        target, path = self._target("list")
        query: dict[str, Any] = {"limit": PAGE, **self._selectors()}
        fresh: dict[str, Obj] = {}
        accept = METADATA_ONLY if self.metadata_only else "application/json"
        while True:
            page = self.kube.request("GET", path, query=query, target=target, accept=accept)
            for obj in page.get("items") or []:
                item = self._prepare(obj)
                fresh[item["metadata"]["name"]] = item
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                break
            query["continue"] = token
        with self._lock:
            old, self._items = self._items, fresh
        self.resource_version = (page.get("metadata") or {}).get("resourceVersion") or ""
        if self._thread is None:  # the first list: nobody is waiting for news yet
            return
        differ = [n for n in fresh.keys() | old.keys()
                  if (fresh.get(n) or {}).get("metadata", {}).get("resourceVersion")
                  != (old.get(n) or {}).get("metadata", {}).get("resourceVersion")]
        if differ:
            self.changed(self.kind, "relist", differ)

    def _selectors(self) -> dict[str, str]:
        return {k: v for k, v in (("labelSelector", self.labels), ("fieldSelector", self.fields)) if v}

    def _run(self) -> None:
        attempt = 0
        while not self._stop.is_set():
            try:
                self._watch()
                attempt = 0
            except Gone:
                self._relist()
            except (Unreachable, ApiError) as exc:
                if isinstance(exc, ApiError) and exc.status in (401, 403, 404):
                    self.error = exc
                    return
                self._stop.wait(self.kube.backoff.delay(attempt, None, random.random))
                attempt += 1

    def _relist(self) -> None:
        """List again until it works (the server may still be coming back)."""
        attempt = 0
        while not self._stop.is_set():
            try:
                self._list()
                self.relists += 1
                return
            except (Unreachable, ApiError) as exc:
                if isinstance(exc, ApiError) and exc.status in (401, 403, 404):
                    self.error = exc
                    self._stop.set()
                    return
                self._stop.wait(self.kube.backoff.delay(attempt, None, random.random))
                attempt += 1

    def _watch(self) -> None:
        target, path = self._target("watch")
        query = {"watch": "true", "resourceVersion": self.resource_version, "allowWatchBookmarks": "true",
                 "timeoutSeconds": WATCH_SECONDS, **self._selectors()}
        accept = METADATA_ONLY_WATCH if self.metadata_only else "application/json"
        try:
            for line in self.kube.stream(path, query, target, WATCH_SECONDS + READ_MARGIN, accept, self._opened):
                if self._stop.is_set():
                    return
                self._apply(json.loads(line))
        except ApiError as exc:
            if exc.status == 410:
                raise Gone() from None
            raise

    def _apply(self, event: Obj) -> None:
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            if obj.get("code") == 410:
                raise Gone()
            raise ApiError(self._target("watch")[0], int(obj.get("code") or 500), str(obj.get("reason") or ""),
                           json.dumps(obj))
        version = (obj.get("metadata") or {}).get("resourceVersion") or self.resource_version
        if kind == "BOOKMARK":
            self.resource_version = version
            return
        item = self._prepare(obj)
        name = item["metadata"]["name"]
        with self._lock:
            cached = self._items.get(name)
            if kind == "DELETED":
                self._items.pop(name, None)
            elif cached is None or _version(item) >= _version(cached):
                self._items[name] = item
            else:
                cached = item  # older than what a write of ours put there: nothing new
        self.resource_version = version
        self.events += 1
        if kind == "DELETED" or not _same(item, cached):
            self.changed(self.kind, "event", [name])
