"""The upload's hot path stores what the ORM would, in few statements, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import event, func, select
from sqlalchemy.orm import Session

from leaderboard.models import EvalSet, GoldFile, Run, Score
from leaderboard.run_rows import add_scores, insert_as_loaded, insert_returning_ids
from leaderboard.states import RunKind, RunStatus


@contextmanager
def _statements(session: Session) -> Iterator[list[str]]:
    """Collect the SQL statements the session's connection runs inside the block."""
    seen: list[str] = []

    def count(*args: Any) -> None:
        seen.append(args[2])

    engine = session.get_bind()
    event.listen(engine, "before_cursor_execute", count)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", count)


def _baseline(session: Session) -> tuple[Run, GoldFile]:
    """Return a new (unsaved) baseline run of a preset set, and a gold file of that set."""
    gold = session.scalars(select(GoldFile).order_by(GoldFile.id).limit(1)).one()
    eval_set = session.get(EvalSet, gold.eval_set_id)
    assert eval_set is not None
    run = Run(
        subtask=eval_set.subtask,
        eval_set=eval_set,
        kind=RunKind.BASELINE,
        slot="baseline",
        name="repository test",
        file_sha256="0" * 64,
    )
    return run, gold


def test_a_run_inserted_as_loaded_reads_its_defaults_without_a_query(session: Session) -> None:
    run, _gold = _baseline(session)
    with _statements(session) as seen:
        insert_as_loaded(session, run)
        assert (run.status, run.description, run.lenient) == (RunStatus.ACTIVE, "", False)
        assert run.subtask_id == run.eval_set.subtask_id and run.team_id is None
    assert len(seen) == 1 and seen[0].lstrip().upper().startswith("INSERT")
    assert run in session and run.id is not None
    session.commit()
    stored = session.execute(
        select(Run.name, Run.status, Run.eval_set_id).where(Run.id == run.id)
    ).one()
    assert tuple(stored) == ("repository test", RunStatus.ACTIVE, run.eval_set_id)


def test_scores_are_inserted_as_loaded_in_row_order(session: Session) -> None:
    run, gold = _baseline(session)
    insert_as_loaded(session, run)
    values = [
        {"measure": "MAP", "value": 0.5, "official": "0.50", "flags": [], "per_query": {"q": 1}},
        {
            "measure": "MRR",
            "value": None,
            "official": "",
            "flags": ["undefined"],
            "per_query": None,
        },
    ]
    scores = [
        # Every column with a default is given, as the upload does (PostgreSQL's path needs it).
        {
            "gold_file_id": gold.id,
            "gold_sha256": gold.sha256,
            "scorer_version": "v",
            "note": "",
            **v,
        }
        for v in values
    ]
    with _statements(session) as seen:
        rows = add_scores(session, run, scores)
        assert [(s.measure, s.value, s.current) for s in rows] == [
            ("MAP", 0.5, True),
            ("MRR", None, True),
        ]
    # One executemany on PostgreSQL; SQLite keeps the rows' order with a statement per row.
    expected = 1 if session.get_bind().dialect.name == "postgresql" else len(scores)
    assert len(seen) == expected and all("INSERT INTO scores" in sql for sql in seen)
    assert [s.id for s in rows] == sorted(s.id for s in rows)
    session.commit()
    stored = session.execute(
        select(Score.measure, Score.official, Score.per_query, Score.run_id)
        .where(Score.run_id == run.id)
        .order_by(Score.id)
    ).all()
    assert [tuple(r) for r in stored] == [
        ("MAP", "0.50", {"q": 1}, run.id),
        ("MRR", "", None, run.id),
    ]


def test_no_scores_cost_no_statement(session: Session) -> None:
    run, _gold = _baseline(session)
    insert_as_loaded(session, run)
    with _statements(session) as seen:
        assert add_scores(session, run, []) == []
    assert seen == []


def test_insert_returning_ids_gives_each_row_its_id(session: Session) -> None:
    run, gold = _baseline(session)
    insert_as_loaded(session, run)
    when = datetime(2016, 1, 2, 3, 4, 5, tzinfo=UTC)
    rows = [
        {
            "run_id": run.id,
            "measure": f"M{k}",
            "value": float(k),
            "official": str(k),
            "gold_file_id": gold.id,
            "gold_sha256": gold.sha256,
            "scorer_version": "v",
            "current": True,
            "flags": [],
            "note": "",
            "created_at": when,
        }
        for k in range(5)
    ]
    ids = insert_returning_ids(session, Score.__table__, rows)  # type: ignore[arg-type]
    assert len(set(ids)) == 5
    by_id = dict(session.execute(select(Score.id, Score.measure).where(Score.id.in_(ids))).all())
    assert [by_id[i] for i in ids] == [f"M{k}" for k in range(5)]
    assert session.scalar(select(func.count()).where(Score.run_id == run.id)) == 5
