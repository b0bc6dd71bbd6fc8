"""Give a session's transaction one owner: open it, commit or roll it back, and run what follows.

Entry points (a web request, a CLI command, a worker task) open a unit of work and commit it;
services receive it, or its session, and register work on it instead of committing:

* after a commit: jobs and mail to hand to the broker, which must never run for a rolled-back
  row, so a rollback discards them (a savepoint's rollback keeps the outer transaction's);
* before a commit: a write that rides on whichever transaction commits next (a token's note of
  use), kept through a rollback until one commits;
* a cache of what the session has read, dropped whenever the session flushes or a transaction
  ends, so it is never stale after a change.

A step that can lose a race to another transaction (an upload's slot) raises ``Lost``; the entry
point runs it with ``retried``, each attempt in a transaction of its own.

The unit follows its own session's events (those of the factory's sessions, see ``watch``; not
every ``Session``'s), so its lists run whoever calls ``commit``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Any, TypeVar

from sqlalchemy import event
from sqlalchemy.orm import Session, SessionTransaction, sessionmaker

#: Where a session keeps its unit of work.
_UNIT = "leaderboard.unit_of_work"


class UnitOfWork:
    """One session's transaction and the work that must wait for its commit."""

    def __init__(self, session: Session) -> None:
        self.session = session
        #: What the session has read, valid until it next flushes or ends a transaction.
        self.cache: dict[str, Any] = {}
        self._after_commit: list[Callable[[], object]] = []
        self._before_commit: dict[str, Callable[[Session], object]] = {}
        self._ran_before_commit: set[str] = set()
        session.info[_UNIT] = self
        if not getattr(type(session), _WATCHED, False):
            # A session of another factory (a test's): listen to it alone (slower to set up).
            for name, handler in _HANDLERS.items():
                event.listen(session, name, getattr(self, handler))

    def __enter__(self) -> UnitOfWork:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            self.rollback()
            return
        try:
            self.commit()
        except BaseException:
            self.rollback()
            raise

    def commit(self) -> None:
        """Commit the session's transaction, then run the after-commit work."""
        self.session.commit()

    def rollback(self) -> None:
        """Roll the session's transaction back and discard its after-commit work."""
        self.session.rollback()

    def after_commit(self, work: Callable[[], object]) -> None:
        """Run ``work`` once the transaction commits; never if it rolls back."""
        if self.session.get_transaction() is None:
            # Begun now, so that a rollback before any statement still ends it (and its work).
            self.session.begin()
        self._after_commit.append(work)

    def before_commit(self, key: str, work: Callable[[Session], object]) -> None:
        """Run ``work`` in the next transaction that commits; ``key`` replaces earlier work."""
        self._before_commit[key] = work
        self._ran_before_commit.discard(key)

    def take_before_commit(self, key: str) -> Callable[[Session], object] | None:
        """Remove and return before-commit work that no commit has run yet."""
        self._ran_before_commit.discard(key)
        return self._before_commit.pop(key, None)

    def _on_before_commit(self, session: Session) -> None:
        for key, work in list(self._before_commit.items()):
            if key not in self._ran_before_commit:
                work(session)
                self._ran_before_commit.add(key)

    def _on_after_commit(self, _session: Session) -> None:
        for key in self._ran_before_commit:
            self._before_commit.pop(key, None)
        self._ran_before_commit.clear()
        pending, self._after_commit = self._after_commit, []
        for work in pending:
            work()

    def _on_soft_rollback(self, _session: Session, previous: SessionTransaction) -> None:
        # Rolled back, before-commit work was not written: the next commit writes it.
        self._ran_before_commit.clear()
        # A savepoint's rollback leaves the outer transaction, and its work, in place.
        if not previous.nested:
            self._after_commit.clear()

    def _drop_cache(self, _session: Session, *_args: object) -> None:
        self.cache.clear()


#: The session events a unit follows, and its method for each.
_HANDLERS = {
    "before_commit": "_on_before_commit",
    "after_commit": "_on_after_commit",
    "after_soft_rollback": "_on_soft_rollback",
    "after_flush": "_drop_cache",
    "after_transaction_end": "_drop_cache",
}
#: Set on a factory's session class whose events reach the sessions' units.
_WATCHED = "_leaderboard_units_watched"


def _forward(handler: str) -> Callable[..., None]:
    def listener(session: Session, *args: Any) -> None:
        unit = session.info.get(_UNIT)
        if unit is not None:
            getattr(unit, handler)(session, *args)

    return listener


def watch(factory: sessionmaker[Session]) -> None:
    """Route the events of the factory's sessions to their units (set up once, not per session).

    Listening to each session instead costs half a millisecond per session.
    """
    for name, handler in _HANDLERS.items():
        event.listen(factory, name, _forward(handler))
    setattr(factory.class_, _WATCHED, True)


def unit_of(session: Session) -> UnitOfWork:
    """Return the session's unit of work, made on first asking."""
    unit = session.info.get(_UNIT)
    return unit if unit is not None else UnitOfWork(session)


@contextmanager
def opened(sessions: Callable[[], Session]) -> Iterator[UnitOfWork]:
    """Open a session and its unit of work; commit at the end, or roll back and re-raise."""
    with sessions() as session, unit_of(session) as unit:
        yield unit


T = TypeVar("T")


class Lost(Exception):
    """A step lost a race to another transaction: roll back, wait ``pause`` seconds, run it again."""

    def __init__(self, pause: float) -> None:
        super().__init__(pause)
        self.pause = pause


def retried(session: Session, step: Callable[[int], T]) -> T:
    """Run ``step(attempt)`` in a unit of work of its own, committed; after a ``Lost``, again.

    Each lost attempt is rolled back before the next; the step, told which attempt it is, gives
    up by raising anything else.
    """
    attempt = 0
    while True:
        try:
            with unit_of(session):
                return step(attempt)
        except Lost as lost:
            time.sleep(lost.pause)
        attempt += 1
