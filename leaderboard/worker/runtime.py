"""Hold each worker process's own connections, built on first use after the process starts."""

from __future__ import annotations

import os
import threading

from leaderboard.config import Settings, load_settings
from leaderboard.resources import Resources, build

_lock = threading.Lock()
_settings: Settings | None = None
_built: tuple[int, Resources] | None = None


def configure(settings: Settings) -> None:
    """Set the settings this process and its forked children build their connections from."""
    global _settings, _built
    with _lock:
        _settings, _built = settings, None


def resources() -> Resources:
    """Return this process's connections; a forked child builds its own, never its parent's."""
    global _built
    with _lock:
        if _built is not None and _built[0] != os.getpid():
            # The parent's pooled connections are its own: dropped here without a word to the
            # database, which would otherwise end them for the parent too.
            _built[1].engine.dispose(close=False)
            _built = None
        if _built is None:
            _built = (os.getpid(), build(_settings or load_settings()))
        return _built[1]
