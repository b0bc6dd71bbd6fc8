"""The upload path's lookups: one-query resolve, cached definitions, few statements per upload."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import event, select, update
from sqlalchemy.orm import Session

from leaderboard.models import GoldFile, Run
from leaderboard.services.common.errors import NotFound
from leaderboard.services.tasks.catalog import load_set, resolve
from leaderboard.storage import LocalStore
from leaderboard.tasks import loading as definition_module
from leaderboard.tasks.loading import stored_definition
from tests.runs import api_upload, make_participant, oracle_run, own_campaign, token_for

TASK = "semeval2016-task3"
URL = f"/api/v1/tasks/{TASK}/A/runs"


def test_resolve_finds_the_default_set_with_its_current_files(session: Session) -> None:
    target = resolve(session, TASK, "A")
    assert target.eval_set.slug == target.subtask.default_set == "test"
    assert target.task.slug == TASK and target.subtask.slug == "A"
    gold = session.scalars(
        select(GoldFile).where(
            GoldFile.eval_set_id == target.eval_set.id, GoldFile.active_key.is_not(None)
        )
    ).all()
    assert {g.role: g.id for g in gold} == {r: g.id for r, g in target.files.items()}
    assert "gold" in target.files and target.loaded == frozenset(target.files)


def test_resolve_takes_a_named_set(session: Session) -> None:
    target = resolve(session, TASK, "A", "dev")
    assert target.eval_set.slug == "dev" and target.files["gold"].eval_set_id == target.eval_set.id


@pytest.mark.parametrize(
    ("names", "message"),
    [
        (("nope", "A", None), "No task 'nope'."),
        ((TASK, "Z", None), f"Task '{TASK}' has no subtask 'Z'."),
        ((TASK, "A", "train"), "Subtask 'A' has no evaluation set 'train' (known: "),
    ],
)
def test_resolve_names_the_unknown_part(
    session: Session, names: tuple[str, str, str | None], message: str
) -> None:
    with pytest.raises(NotFound, match="^" + re.escape(message)) as caught:
        resolve(session, *names)
    assert str(caught.value).startswith(message)


def test_a_set_without_current_files_resolves_with_none(session: Session) -> None:
    target = resolve(session, TASK, "A")
    session.execute(
        update(GoldFile).where(GoldFile.eval_set_id == target.eval_set.id).values(active_key=None)
    )
    session.flush()
    bare = resolve(session, TASK, "A")
    assert bare.eval_set.id == target.eval_set.id
    assert bare.files == {} and bare.loaded == frozenset()
    session.rollback()


def test_an_upload_reads_the_files_of_its_resolve_other_readers_read_again(
    app: Flask, session: Session
) -> None:
    store = LocalStore(app.extensions["leaderboard"]["settings"].storage_dir)
    target = resolve(session, TASK, "A")
    session.execute(
        update(GoldFile).where(GoldFile.eval_set_id == target.eval_set.id).values(active_key=None)
    )
    session.flush()
    files = load_set(session, store, target, fresh=False).files
    assert files.keys() == target.files.keys()
    with pytest.raises(NotFound, match="has no gold file yet"):
        load_set(session, store, target)
    session.rollback()


def test_stored_definitions_are_parsed_once_per_content(session: Session) -> None:
    target = resolve(session, TASK, "A")
    raw, sha = target.task.definition, target.task.definition_sha256
    first = stored_definition(raw, sha)
    assert stored_definition(dict(raw), sha) is first
    changed = {**raw, "title": "Another title"}
    other = stored_definition(changed, sha)
    assert other is not first and other.title == "Another title"
    assert stored_definition(raw, sha).title == first.title


def test_the_cache_keeps_its_own_copy_of_a_definition(session: Session) -> None:
    definition_module._STORED.clear()
    target = resolve(session, TASK, "A")
    raw = {**target.task.definition}
    parsed = stored_definition(raw, target.task.definition_sha256)
    raw["title"] = "changed by the caller"
    assert parsed.raw["title"] != "changed by the caller"
    assert stored_definition(raw, target.task.definition_sha256).title == "changed by the caller"


@contextmanager
def statements(app: Flask) -> Iterator[list[str]]:
    """Collect the SQL statements the app's engine executes meanwhile."""
    engine = app.extensions["leaderboard"]["engine"]
    seen: list[str] = []

    def listen(_conn: Any, _cursor: Any, sql: str, *_args: Any) -> None:
        seen.append(" ".join(sql.split())[:110])

    event.listen(engine, "before_cursor_execute", listen)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", listen)


def test_an_api_upload_takes_few_statements(app: Flask, client: FlaskClient) -> None:
    make_participant(app, "Team Q", "q@example.org")
    token = token_for(app, "q@example.org")
    run = oracle_run()
    assert api_upload(client, token, run, path=URL, slot="primary").status_code == 201
    with statements(app) as seen:
        response = api_upload(client, token, run, path=URL, slot="primary")
    assert response.status_code == 201, response.get_json()
    # The score rows go one by one (SQLite) or pipelined in one round trip (PostgreSQL).
    grouped = [sql for k, sql in enumerate(seen) if k == 0 or sql != seen[k - 1]]
    # token+user+team, target+gold files, phases, previous run, UPDATE previous, INSERT run,
    # INSERT scores, UPDATE replaced_by, UPDATE revision (the phases answer both questions).
    assert len(grouped) <= 9, "\n".join(grouped)
    assert [sql.split(" (")[0] for sql in grouped if sql.startswith("INSERT")] == [
        "INSERT INTO runs",
        "INSERT INTO scores",
    ]
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        runs = s.scalars(select(Run).where(Run.kind == "run")).all()
        assert sorted(r.status for r in runs) == ["active", "replaced"]
        replaced = next(r for r in runs if r.status == "replaced")
        active = next(r for r in runs if r.status == "active")
        assert replaced.replaced_by_id == active.id
        assert response.get_json()["id"] == active.id


def test_phases_are_asked_once_per_transaction(app: Flask, session: Session) -> None:
    from leaderboard.models import Phase
    from leaderboard.services.campaign.phases import hidden_phase, phases_of

    own_campaign(app, TASK)
    target = resolve(session, TASK, "A")
    session.add(
        Phase(
            subtask_id=target.subtask.id,
            name="test",
            eval_set_id=target.eval_set.id,
            results_hidden=True,
        )
    )
    session.commit()
    target = resolve(session, TASK, "A")
    with statements(app) as seen:
        assert [p.name for p in phases_of(session, target.subtask)] == ["test"]
        hidden = hidden_phase(session, target.eval_set)
        assert hidden is not None and hidden.name == "test"
    assert len(seen) == 1, seen
    hidden.results_hidden = False
    session.flush()  # a flush may change phases: they are asked again
    with statements(app) as seen:
        assert hidden_phase(session, target.eval_set) is None
    assert len(seen) == 1, seen
    session.rollback()  # so does the end of a transaction
    target = resolve(session, TASK, "A")
    with statements(app) as seen:
        assert hidden_phase(session, target.eval_set) is not None
        assert hidden_phase(session, target.eval_set) is not None
    assert len(seen) == 1, seen


def test_a_tokens_note_of_use_goes_with_the_upload(app: Flask, client: FlaskClient) -> None:
    from leaderboard.models import ApiToken

    make_participant(app, "Team N", "n@example.org")
    uploader, reader = token_for(app, "n@example.org"), token_for(app, "n@example.org")
    engine = app.extensions["leaderboard"]["engine"]
    commits: list[str] = []

    def count(_conn: Any) -> None:
        commits.append("COMMIT")

    event.listen(engine, "commit", count)
    try:
        upload = api_upload(client, uploader, oracle_run(), path=URL)
        assert upload.status_code == 201, upload.get_json()
        upload_commits = len(commits)
        # A request that only reads writes its note at its end.
        assert client.get("/api/v1/tasks", headers={"Authorization": "Bearer x"}).status_code == 401
        listed = client.get("/api/v1/team/runs", headers={"Authorization": f"Bearer {reader}"})
        assert listed.status_code == 200
    finally:
        event.remove(engine, "commit", count)
    # PostgreSQL writes the note in the upload's transaction; SQLite in one of its own.
    sqlite = engine.dialect.name == "sqlite"
    assert upload_commits == (2 if sqlite else 1)
    with app.extensions["leaderboard"]["sessionmaker"]() as s:
        used = s.scalars(select(ApiToken.last_used_at)).all()
        assert len(used) == 2 and all(u is not None for u in used)


def test_score_rows_inserted_in_one_round_trip_store_what_the_orm_stores(
    app: Flask, client: FlaskClient, session: Session
) -> None:
    """The executemany path of PostgreSQL and SQLAlchemy's own insert store the same columns."""
    from sqlalchemy import delete, insert, text

    from leaderboard.models import Score
    from leaderboard.run_rows import insert_returning_ids

    make_participant(app, "Team Q", "q@example.org")
    token = token_for(app, "q@example.org")
    assert api_upload(client, token, oracle_run(), path=URL, slot="primary").status_code == 201
    run_id = session.scalars(select(Run.id).limit(1)).first()
    gold = session.scalars(select(GoldFile).limit(1)).one()
    assert run_id is not None
    when = datetime(2016, 1, 2, 3, 4, 5, tzinfo=UTC)
    rows = [
        {
            "run_id": run_id,
            "measure": f"M{k}",
            "value": value,
            "official": "" if value is None else f"{value:.2f}",
            "gold_file_id": gold.id,
            "gold_sha256": gold.sha256,
            "scorer_version": "v",
            "current": k % 2 == 0,
            "flags": flags,
            "per_query": per_query,
            "note": "nrefs:2|tok:13a",
            "item_stats": stats,
            "created_at": when,
        }
        for k, (value, flags, per_query, stats) in enumerate(
            [
                (0.5, [], {"q1": 0.25, "q2": [1, 2, 3, 4]}, None),
                (None, ["undefined"], None, [[1, 2], [3, 4]]),
                (1e-300, ["late", "é"], {"Ω": -0.0}, []),
            ]
        )
    ]
    ours = insert_returning_ids(session, Score.__table__, rows)
    theirs = list(
        session.execute(
            insert(Score.__table__).returning(Score.id, sort_by_parameter_order=True),
            [{**r, "measure": "X" + r["measure"]} for r in rows],
        ).scalars()
    )
    assert len(set(ours)) == 3 and ours == sorted(ours)
    columns = (
        "value, official, gold_file_id, gold_sha256, scorer_version, current, "
        "CAST(flags AS TEXT), CAST(per_query AS TEXT), note, CAST(item_stats AS TEXT), created_at"
    )
    read = text(f"SELECT measure, {columns} FROM scores WHERE id = :id")
    for mine, other, row in zip(ours, theirs, rows, strict=True):
        a = session.execute(read, {"id": mine}).one()
        b = session.execute(read, {"id": other}).one()
        assert a[0] == row["measure"] and b[0] == "X" + row["measure"]
        assert tuple(a[1:]) == tuple(b[1:])
    session.execute(delete(Score).where(Score.id.in_(ours + theirs)))
    session.rollback()


def test_an_upload_commits_only_once_its_file_is_on_disk(
    app: Flask, client: FlaskClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The file's flush runs beside the run's rows, and the commit waits for it."""
    import threading

    from leaderboard import storage

    make_participant(app, "Team Q", "q@example.org")
    token = token_for(app, "q@example.org")
    events: list[str] = []
    inserted = threading.Event()

    def slow_fsync(fd: int) -> None:
        # The flush ends only after the rows went in (or never, if it ran before them, so the
        # order below fails): a fixed sleep raced a slow insert.
        inserted.wait(timeout=10)
        events.append("file flushed")

    monkeypatch.setattr(storage.os, "fsync", slow_fsync)
    engine = app.extensions["leaderboard"]["engine"]

    def on_run_insert(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if statement.startswith("INSERT INTO runs"):
            events.append("run inserted")
            inserted.set()

    def on_commit(conn: Any) -> None:
        events.append("commit")

    event.listen(engine, "before_cursor_execute", on_run_insert)
    event.listen(engine, "commit", on_commit)
    try:
        response = api_upload(client, token, oracle_run(), path=URL, slot="primary")
    finally:
        event.remove(engine, "before_cursor_execute", on_run_insert)
        event.remove(engine, "commit", on_commit)
    assert response.status_code == 201, response.get_json()
    # The rows were written while the flush ran; the upload's commit came after it.
    upload = events[events.index("run inserted") :]
    assert upload.index("run inserted") < upload.index("file flushed") < upload.index("commit")
