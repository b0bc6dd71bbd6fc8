"""The unit of work commits or rolls back, and runs its lists only when they are due."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import Column, Integer, MetaData, Table, create_engine, func, select
from sqlalchemy.orm import Session

from leaderboard.db import make_sessionmaker
from leaderboard.unit_of_work import Lost, opened, retried, unit_of

_METADATA = MetaData()
_ROWS = Table("rows", _METADATA, Column("id", Integer, primary_key=True))


@pytest.fixture(params=["factory", "plain"])
def session(request: pytest.FixtureRequest) -> Iterator[Session]:
    """Return a session on a new in-memory database with one table.

    Of the project's factory (its units follow the factory's events) or a plain one (its unit
    listens to the session itself).
    """
    engine = create_engine("sqlite://")
    _METADATA.create_all(engine)
    with make_sessionmaker(engine)() if request.param == "factory" else Session(engine) as s:
        yield s
    engine.dispose()


def _count(session: Session) -> int:
    return session.scalar(select(func.count()).select_from(_ROWS)) or 0


def test_after_commit_work_runs_once_committed(session: Session) -> None:
    ran: list[str] = []
    with unit_of(session) as unit:
        session.execute(_ROWS.insert())
        unit.after_commit(lambda: ran.append("sent"))
        assert ran == []
    assert ran == ["sent"]
    assert _count(session) == 1


def test_a_rollback_discards_after_commit_work(session: Session) -> None:
    ran: list[str] = []
    unit = unit_of(session)
    unit.after_commit(lambda: ran.append("sent"))
    unit.rollback()
    unit.commit()
    assert ran == []


def test_a_savepoint_rollback_keeps_the_outer_work(session: Session) -> None:
    ran: list[str] = []
    unit = unit_of(session)
    unit.after_commit(lambda: ran.append("outer"))
    with session.begin_nested() as savepoint:
        session.execute(_ROWS.insert())
        savepoint.rollback()
    unit.commit()
    assert ran == ["outer"]
    assert _count(session) == 0


def test_the_block_rolls_back_and_reraises_on_error(session: Session) -> None:
    ran: list[str] = []
    with pytest.raises(RuntimeError, match="refused"), unit_of(session) as unit:
        session.execute(_ROWS.insert())
        unit.after_commit(lambda: ran.append("sent"))
        raise RuntimeError("refused")
    assert ran == []
    assert _count(session) == 0


def test_opened_commits_its_own_session(session: Session) -> None:
    bind = session.get_bind()
    with opened(lambda: Session(bind)) as unit:
        unit.session.execute(_ROWS.insert())
    assert _count(session) == 1


def test_before_commit_work_waits_through_a_rollback(session: Session) -> None:
    unit = unit_of(session)
    unit.before_commit("note", lambda s: s.execute(_ROWS.insert()))
    session.execute(select(1))
    unit.rollback()
    assert _count(session) == 0
    unit.commit()
    assert _count(session) == 1
    unit.commit()
    assert _count(session) == 1  # written once, by the first commit


def test_taken_before_commit_work_is_not_run(session: Session) -> None:
    unit = unit_of(session)
    unit.before_commit("note", lambda s: s.execute(_ROWS.insert()))
    assert unit.take_before_commit("note") is not None
    assert unit.take_before_commit("note") is None
    unit.commit()
    assert _count(session) == 0


def test_the_cache_is_dropped_when_the_session_flushes_or_ends(session: Session) -> None:
    unit = unit_of(session)
    assert unit_of(session) is unit
    session.execute(select(1))
    unit.cache["k"] = 1
    session.flush()  # nothing to flush: no flush event, the cache stays
    assert unit.cache == {"k": 1}
    unit.rollback()
    assert unit.cache == {}


def test_retried_runs_a_lost_step_again_in_a_new_transaction(session: Session) -> None:
    attempts: list[int] = []

    def step(attempt: int) -> int:
        attempts.append(attempt)
        session.execute(_ROWS.insert())
        if attempt < 2:
            raise Lost(0)  # each lost attempt's row is rolled back with it
        return attempt

    assert retried(session, step) == 2
    assert attempts == [0, 1, 2]
    session.rollback()  # the last attempt was committed: nothing left to undo
    assert _count(session) == 1


def test_retried_gives_up_when_the_step_raises_anything_else(session: Session) -> None:
    def step(attempt: int) -> None:
        session.execute(_ROWS.insert())
        if attempt == 0:
            raise Lost(0)
        raise LookupError("given up")

    with pytest.raises(LookupError, match="given up"):
        retried(session, step)
    assert _count(session) == 0
