"""Build what a process of the server holds: the database, the store, the clock, the queue."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.orm import Session, sessionmaker

from leaderboard.clock import Clock, clock_from_environment
from leaderboard.config import SESSION_SETTINGS, Settings
from leaderboard.db import make_engine, make_sessionmaker
from leaderboard.jobqueue import DISPATCHER, Dispatcher
from leaderboard.jobqueue.broker import CeleryDispatcher
from leaderboard.private_files import restrict_umask
from leaderboard.storage import Store, open_store

#: Builds a process's dispatcher from its settings (tests hand in their own).
DispatcherFactory = Callable[[Settings], Dispatcher]


@dataclass
class Resources:
    """One process's connections: built once per process (a forked worker builds its own)."""

    settings: Settings
    engine: Engine
    sessionmaker: sessionmaker[Session]
    store: Store
    clock: Clock
    dispatcher: Dispatcher

    def as_extension(self) -> dict[str, Any]:
        """Return the dict the Flask app keeps under ``extensions["leaderboard"]``."""
        return {
            "settings": self.settings,
            "engine": self.engine,
            "sessionmaker": self.sessionmaker,
            "store": self.store,
            "clock": self.clock,
            "dispatcher": self.dispatcher,
        }


def build(
    settings: Settings,
    *,
    clock: Clock | None = None,
    dispatcher: DispatcherFactory | None = None,
) -> Resources:
    """Open the database, the store and the queue client the settings name."""
    # Every server process (web, worker, command) builds these first: what it writes from
    # now on (the database, the queue, staged uploads) is its owner's only.
    restrict_umask()
    engine = make_engine(settings.database_url)
    queue = (dispatcher or CeleryDispatcher)(settings)
    return Resources(
        settings=settings,
        engine=engine,
        # Sessions carry the dispatcher, so a committed job row sends its task (and the
        # settings, so a service that mails builds its links).
        sessionmaker=make_sessionmaker(
            engine, info={DISPATCHER: queue, SESSION_SETTINGS: settings}
        ),
        store=open_store(
            settings.storage_url,
            default_dir=settings.storage_dir,
            endpoint_url=settings.s3_endpoint_url,
            presigned=settings.s3_presigned,
        ),
        clock=clock or clock_from_environment(),
        dispatcher=queue,
    )
