"""Races on teams: simultaneous joins respect the size limit; simultaneous merges lose no run."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from flask import Flask
from sqlalchemy import func, select

from leaderboard.models import Run, Team, User
from leaderboard.services.common import settings
from leaderboard.services.common.errors import DomainError
from leaderboard.services.teams.admin import merge_teams
from leaderboard.unit_of_work import opened, unit_of
from tests.conftest import csrf_from, login
from tests.helpers.teams import loose_participant
from tests.runs import accepted, api_upload, constant_run, make_participant, oracle_run, token_for

PASSWORD = "correct horse battery"


def all_at_once(jobs: list[Callable[[], Any]]) -> list[Any]:
    """Run every job in its own thread, released together; return results (or exceptions)."""
    barrier = threading.Barrier(len(jobs))
    results: list[Any] = [None] * len(jobs)

    def work(i: int) -> None:
        barrier.wait()
        try:
            results[i] = jobs[i]()
        except Exception as exc:  # reported to the test, which names it
            results[i] = exc

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    return results


def test_twenty_simultaneous_joins_into_two_free_places_leave_two_members(app: Flask) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    factory = app.extensions["leaderboard"]["sessionmaker"]
    with opened(factory) as unit:
        settings.set_value(unit.session, "max_team_size", "3", actor="test")
        code = unit.session.scalar(select(Team.invite_code).where(Team.name == "Aurora"))
    clients = []
    for i in range(20):
        email = f"joiner{i}@example.org"
        loose_participant(app, email)
        client = app.test_client()
        login(client, email, PASSWORD)
        token = csrf_from(client.get(f"/teams/join/{code}").get_data(as_text=True))
        clients.append((client, token))

    def joiner(client: Any, token: str) -> Callable[[], int]:
        return lambda: client.post(f"/teams/join/{code}", data={"csrf_token": token}).status_code

    statuses = all_at_once([joiner(c, t) for c, t in clients])
    assert sorted(statuses) == [302, 302] + [409] * 18, statuses
    with factory() as s:
        team_id = s.scalar(select(Team.id).where(Team.name == "Aurora"))
        members = s.scalars(select(User.email).where(User.team_id == team_id)).all()
    assert len(members) == 3 and "alice@example.org" in members


def test_simultaneous_merges_of_one_team_lose_no_run(app: Flask) -> None:
    names = ("Aurora", "Borealis", "Cygnus")
    for i, name in enumerate(names):
        make_participant(app, name, f"m{i}@example.org")
    # Aurora's runs use slots the others leave free, so either merge may win.
    for slot in ("contrastive1", "contrastive2"):
        accepted(
            api_upload(app.test_client(), token_for(app, "m0@example.org"), oracle_run(), slot=slot)
        )
    for i in (1, 2):
        accepted(api_upload(app.test_client(), token_for(app, f"m{i}@example.org"), constant_run()))
    factory = app.extensions["leaderboard"]["sessionmaker"]
    with factory() as s:
        ids = {n: s.scalar(select(Team.id).where(Team.name == n)) for n in names}
        before = s.scalar(select(func.count(Run.id)))

    def merge(source: str, target: str) -> Callable[[], str]:
        def run() -> str:
            with opened(factory) as unit:
                return merge_teams(
                    unit.session, ids[source], ids[target], actor=f"org-{target}"
                ).name

        return run

    results = all_at_once([merge("Aurora", "Borealis"), merge("Aurora", "Cygnus")])
    won = [r for r in results if isinstance(r, str)]
    lost = [r for r in results if not isinstance(r, str)]
    assert len(won) == 1 and len(lost) == 1, results
    assert isinstance(lost[0], DomainError) and lost[0].status == 404, lost
    with factory() as s:
        runs = s.scalars(select(Run).where(Run.kind == "run")).all()
        assert s.scalar(select(func.count(Run.id))) == before
        winner = ids[won[0]]
        assert sorted(r.slot for r in runs if r.team_id == winner) == [
            "contrastive1",
            "contrastive2",
            "primary",
        ]
        assert all(r.team_id in ids.values() and r.team_id != ids["Aurora"] for r in runs)
        assert s.get(Team, ids["Aurora"]) is None


def test_crossed_merges_lock_in_id_order_and_lose_no_run(app: Flask) -> None:
    make_participant(app, "Aurora", "a@example.org")
    make_participant(app, "Borealis", "b@example.org")
    accepted(api_upload(app.test_client(), token_for(app, "a@example.org"), oracle_run()))
    accepted(
        api_upload(
            app.test_client(), token_for(app, "b@example.org"), constant_run(), slot="contrastive1"
        )
    )
    factory = app.extensions["leaderboard"]["sessionmaker"]
    with factory() as s:
        a = s.scalar(select(Team.id).where(Team.name == "Aurora"))
        b = s.scalar(select(Team.id).where(Team.name == "Borealis"))
    assert a is not None and b is not None

    def merge(source: int, target: int) -> Callable[[], str]:
        def run() -> str:
            with opened(factory) as unit:
                return merge_teams(unit.session, source, target, actor="org").name

        return run

    results = all_at_once([merge(a, b), merge(b, a)])
    assert sum(isinstance(r, str) for r in results) == 1, results
    with factory() as s:
        owners = {r.team_id for r in s.scalars(select(Run).where(Run.kind == "run"))}
        assert len(owners) == 1 and None not in owners
        assert s.scalar(select(func.count(Run.id)).where(Run.kind == "run")) == 2
        assert s.scalar(select(func.count(User.id)).where(User.team_id.in_(owners))) == 2


def test_simultaneous_creations_of_one_name_in_two_spellings_make_one_team(app: Flask) -> None:
    from leaderboard.services.teams.members import create_own_team

    factory = app.extensions["leaderboard"]["sessionmaker"]
    spellings = ["Borealis", "BOREALIS", "\uff42orealis", "borealis"]
    for i in range(len(spellings)):
        loose_participant(app, f"founder{i}@example.org")

    def founder(i: int) -> Callable[[], str]:
        def run() -> str:
            with factory() as s, unit_of(s):
                user = s.scalar(select(User).where(User.email == f"founder{i}@example.org"))
                assert user is not None
                return create_own_team(s, user, spellings[i]).name

        return run

    results = all_at_once([founder(i) for i in range(len(spellings))])
    made = [r for r in results if isinstance(r, str)]
    refused = [r for r in results if not isinstance(r, str)]
    assert len(made) == 1, results
    assert all(isinstance(r, DomainError) and r.status == 409 for r in refused), refused
    with factory() as s:
        assert s.scalars(select(Team.name)).all() == made
        assert s.scalar(select(func.count(User.id)).where(User.team_id.is_not(None))) == 1


def test_the_last_two_members_leaving_at_once_leave_an_empty_team_without_a_code(
    app: Flask,
) -> None:
    from leaderboard.services.teams.members import leave_team

    make_participant(app, "Aurora", "alice@example.org")  # the captain
    make_participant(app, "Aurora", "amy@example.org")
    accepted(api_upload(app.test_client(), token_for(app, "alice@example.org"), oracle_run()))
    factory = app.extensions["leaderboard"]["sessionmaker"]

    def leaver(email: str) -> Callable[[], bool]:
        def run() -> bool:
            with factory() as s, unit_of(s):
                user = s.scalar(select(User).where(User.email == email))
                assert user is not None
                return leave_team(s, user).deleted

        return run

    results = all_at_once([leaver("alice@example.org"), leaver("amy@example.org")])
    assert results == [False, False], results
    with factory() as s:
        team = s.scalar(select(Team).where(Team.name == "Aurora"))
        assert team is not None and team.invite_code is None
        assert s.scalar(select(func.count(User.id)).where(User.team_id == team.id)) == 0
        assert s.scalar(select(func.count(User.id)).where(User.is_captain)) == 0
