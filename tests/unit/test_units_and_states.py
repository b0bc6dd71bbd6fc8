"""db.transaction commits a block or undoes all of it; states are stored as their plain values."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import select, text
from sqlalchemy.exc import StatementError
from sqlalchemy.orm import Session

from leaderboard.db import make_engine, transaction
from leaderboard.models import Base, JoinRequest, Team, User
from leaderboard.states import JoinStatus, Role


@pytest.fixture
def session() -> Iterator[Session]:
    engine = make_engine("sqlite://")
    Base.metadata.create_all(engine)
    with Session(engine) as s:
        yield s


def _team_names(session: Session) -> list[str]:
    # A second connection's view would not see uncommitted rows; a fresh query after
    # rollback or commit shows what the database kept.
    return list(session.scalars(select(Team.name).order_by(Team.name)))


def test_a_block_that_ends_is_committed(session: Session) -> None:
    with transaction(session):
        session.add(Team(name="Aurora"))
    session.rollback()  # nothing left to undo: the block committed
    assert _team_names(session) == ["Aurora"]


def test_a_block_that_raises_leaves_nothing_and_the_error_goes_on(session: Session) -> None:
    with transaction(session):
        session.add(Team(name="Aurora"))
    with pytest.raises(KeyError, match="stop"), transaction(session):
        session.add(Team(name="Borealis"))
        session.flush()
        raise KeyError("stop")
    assert _team_names(session) == ["Aurora"]


def test_states_are_stored_as_their_values_and_read_back_as_members(session: Session) -> None:
    with transaction(session):
        team = Team(name="Aurora")
        user = User(email="a@example.org", role="participant")
        session.add_all([team, user])
        session.flush()
        session.add(JoinRequest(team_id=team.id, user_id=user.id))
    stored = session.execute(text("SELECT role FROM users")).scalar_one()
    assert (type(stored), stored) == (str, "participant")
    assert session.execute(text("SELECT status FROM join_requests")).scalar_one() == "pending"
    session.expire_all()
    assert session.scalars(select(User.role)).one() is Role.PARTICIPANT
    assert session.scalars(select(JoinRequest.status)).one() is JoinStatus.PENDING


def test_a_misspelt_state_is_refused_before_it_reaches_a_row(session: Session) -> None:
    session.add(User(email="a@example.org", role="organiser"))
    with pytest.raises(StatementError, match="organiser"):
        session.flush()
