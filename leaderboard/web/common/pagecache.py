"""In-process caches keyed by a set's revision: rendered tables, and whole pages for anonymous readers.

A key holds the set's revision, which every change that can alter its tables advances in the
same transaction, so an entry can never be served stale; old revisions simply age out.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

from flask import Flask, Response, current_app, request, session
from flask_login import current_user

from leaderboard.services.common import revisions
from leaderboard.web.common.context import db

V = TypeVar("V")


class LRU(Generic[V]):
    """A small thread-safe least-recently-used map."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()
        self._building: dict[Hashable, threading.Lock] = {}

    def get(self, key: Hashable) -> V | None:
        """Return a cached value, or None."""
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: Hashable, value: V) -> None:
        """Store a value, evicting the least recently used beyond the size."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def get_or_make(self, key: Hashable, make: Callable[[], V]) -> V:
        """Return the cached value, computing it on a miss; one thread computes, the others wait.

        Without the per-key lock, every thread of a worker that misses at once would build the
        same table, and a cold page under load would take seconds instead of one build's time.
        """
        value = self.get(key)
        if value is not None:
            return value
        with self._lock:
            building = self._building.setdefault(key, threading.Lock())
        with building:
            value = self.get(key)
            if value is None:
                value = make()
                self.put(key, value)
        with self._lock:
            self._building.pop(key, None)
        return value

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._items.clear()


Page = tuple[bytes, str, tuple[tuple[str, str], ...]]


def init_caches(app: Flask) -> None:
    """Give the app its own caches (several apps in one process must not share entries)."""
    app.extensions["leaderboard"]["tables"] = LRU[str](256)
    app.extensions["leaderboard"]["pages"] = LRU[Page](512)
    app.extensions["leaderboard"]["diagnostics"] = LRU[Any](512)


def tables() -> LRU[str]:
    """Return the rendered tables: (set id, revision, view, format) -> text."""
    return current_app.extensions["leaderboard"]["tables"]


def pages() -> LRU[Page]:
    """Return whole responses for anonymous readers: (path with query, revision) -> response."""
    return current_app.extensions["leaderboard"]["pages"]


def diagnostics() -> LRU[Any]:
    """Return runs' per-query comparisons: (run, measure, set revisions, audience) -> them."""
    return current_app.extensions["leaderboard"]["diagnostics"]


def anonymous_get() -> bool:
    """Return whether this request's page is the same for every anonymous reader."""
    return (
        request.method == "GET" and not current_user.is_authenticated and "_flashes" not in session
    )


def page_key(task: str, subtask: str, timely: tuple[object, ...] = ()) -> tuple[object, ...] | None:
    """Return the anonymous-page cache key: the full path, the set's revision, and ``timely``.

    ``timely`` is what the page shows that changes with the clock alone (the schedule's states,
    countdown and uploads open): no revision advances when a deadline passes.
    """
    if not anonymous_get():
        return None
    rev = revisions.current(db(), task, subtask, request.args.get("set") or None)
    return (request.full_path, rev, *timely) if rev is not None else None


def cached_response(key: tuple[object, ...] | None) -> Response | None:
    """Return the kept response of an anonymous page, or None (no key, or not kept)."""
    hit = pages().get(key) if key is not None else None
    if hit is None:
        return None
    body, mimetype, headers = hit
    return Response(body, mimetype=mimetype, headers=list(headers))


def remember(key: tuple[object, ...] | None, resp: Response) -> Response:
    """Keep a successful anonymous page under ``key`` (None keeps nothing); return it."""
    if key is not None and resp.status_code == 200:
        kept = ("Content-Disposition", "ETag", "Cache-Control")
        headers = tuple((k, v) for k, v in resp.headers.items() if k in kept)
        pages().put(key, (resp.get_data(), resp.mimetype or "text/html", headers))
    return resp


def cached_page(
    task: str, subtask: str, timely: tuple[object, ...] = ()
) -> tuple[tuple[object, ...] | None, Response | None]:
    """Return an anonymous page's cache key (see :func:`page_key`) and its kept response, if any."""
    key = page_key(task, subtask, timely)
    return key, cached_response(key)
