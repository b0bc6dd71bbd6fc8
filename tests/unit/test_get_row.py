"""get_row answers None for ids no row can have, instead of asking the database."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy.orm import Session

from leaderboard.db import get_row, make_engine
from leaderboard.models import Base, Team


@pytest.fixture
def session() -> Iterator[Session]:
    engine = make_engine("sqlite://")
    Base.metadata.create_all(engine)
    with Session(engine) as s:
        s.add(Team(id=7, name="Aurora", name_key="aurora"))
        s.commit()
        yield s


def test_finds_a_row(session: Session) -> None:
    team = get_row(session, Team, 7)
    assert team is not None
    assert team.name == "Aurora"


@pytest.mark.parametrize("ident", [8, 0, -1, 2**31, 2**63, 10**20])
def test_missing_and_impossible_ids(session: Session, ident: int) -> None:
    assert get_row(session, Team, ident) is None
