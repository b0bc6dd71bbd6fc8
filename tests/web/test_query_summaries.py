"""Per-query summaries: stored once per revision of a set, from the ranked runs' own values."""

from __future__ import annotations

import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import select

from leaderboard.jobqueue import DRAW_CHART, enqueue_once
from leaderboard.models import EvalSet, QuerySummary, Run, Score
from leaderboard.services.results.query_summaries import stale_sets
from leaderboard.services.tasks.catalog import resolve
from leaderboard.states import RunKind, RunStatus
from leaderboard.worker.jobs import summarize_set
from tests.dispatch import LocalDispatcher
from tests.helpers.sentiment import PATH, SENTIMENT
from tests.runs import api_upload, token_for


def _set_id(app: Flask) -> int:
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        return resolve(session, "example-sentiment", "A").eval_set.id


def test_a_summary_is_the_best_median_and_worst_of_the_ranked_runs(
    app: Flask,
    hosted: FlaskCliRunner,
) -> None:
    ext = app.extensions["leaderboard"]
    set_id = _set_id(app)
    with ext["sessionmaker"]() as session:
        assert (set_id, session.get(EvalSet, set_id).revision) in stale_sets(session)
        assert summarize_set(session, ext["store"], set_id) >= 1
        assert set_id not in [s for s, _ in stale_sets(session)]
        row = session.get(QuerySummary, (set_id, "Acc"))
        assert row is not None and row.revision == session.get(EvalSet, set_id).revision
        # The ranked runs: both teams' primaries; the three baselines, placed in the table as
        # if they took part, are not what a team compares itself with.
        ranked = session.scalars(
            select(Score.per_query)
            .join(Run, Run.id == Score.run_id)
            .where(Run.eval_set_id == set_id, Run.status == RunStatus.ACTIVE, Score.current)
            .where(Score.measure == "Acc")
            .where(Run.slot == "primary", Run.kind != RunKind.BASELINE)
        ).all()
    assert row.runs == len(ranked) == 2
    items = sorted(ranked[0])
    assert sorted(row.values) == items
    for item in items:
        column = np.array([float(values[item]) for values in ranked])
        best, median, worst, runs = row.values[item]
        assert (best, median, worst, runs) == (column.max(), np.median(column), column.min(), 2)


def test_a_new_contrastive_run_moves_the_set_but_not_the_ranked_runs(
    app: Flask,
    hosted: FlaskCliRunner,
) -> None:
    ext = app.extensions["leaderboard"]
    set_id = _set_id(app)
    with ext["sessionmaker"]() as session:
        summarize_set(session, ext["store"], set_id)
        before = session.get(QuerySummary, (set_id, "Acc"))
        assert before is not None
        values, revision = before.values, before.revision
    resp = api_upload(app.test_client(), token_for(app, "bob@example.org"),
                      (SENTIMENT / "run-valid.tsv").read_bytes(), path=PATH, slot="contrastive1")  # fmt: skip
    assert resp.status_code == 201
    with ext["sessionmaker"]() as session:
        assert set_id in [s for s, _ in stale_sets(session)]
        summarize_set(session, ext["store"], set_id)
        after = session.get(QuerySummary, (set_id, "Acc"))
        assert after is not None and after.revision > revision
        # A contrastive run is not ranked: the medians and bests stay those of the two.
        assert after.values == values and after.runs == 2


def test_a_set_without_per_query_values_is_summarized_once(
    app: Flask, runner: FlaskCliRunner
) -> None:
    """STS keeps no per-pair mean: nothing stored, and the set is not looked at again."""
    ext = app.extensions["leaderboard"]
    with ext["sessionmaker"]() as session:
        target = resolve(session, "semeval2016-task1", "en")
        set_id = target.eval_set.id
        assert summarize_set(session, ext["store"], set_id) == 0
        assert (
            session.scalars(select(QuerySummary).where(QuerySummary.eval_set_id == set_id)).all()
            == []
        )
        assert set_id not in [s for s, _ in stale_sets(session)]


def test_work_a_reader_asks_for_is_sent_once_per_interval(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    import leaderboard.jobqueue as jobqueue

    dispatcher: LocalDispatcher = app.extensions["leaderboard"]["dispatcher"]
    clock = [1000.0]
    monkeypatch.setattr(jobqueue.time, "monotonic", lambda: clock[0])
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        assert enqueue_once(session, "k1", 30, DRAW_CHART, "a")
        assert not enqueue_once(session, "k1", 30, DRAW_CHART, "a")
        assert enqueue_once(session, "k2", 30, DRAW_CHART, "b")
        session.commit()
        clock[0] += 31
        assert enqueue_once(session, "k1", 30, DRAW_CHART, "a")
        session.commit()
    assert dispatcher.sent == [(DRAW_CHART, ("a",)), (DRAW_CHART, ("b",)), (DRAW_CHART, ("a",))]


def test_summaries_another_worker_stored_meanwhile_leave_nothing_to_draw(
    app: Flask, hosted: FlaskCliRunner, monkeypatch: pytest.MonkeyPatch
) -> None:
    from leaderboard.services.results import query_summaries
    from leaderboard.worker import jobs

    ext = app.extensions["leaderboard"]
    set_id = _set_id(app)
    with ext["sessionmaker"]() as session:
        assert summarize_set(session, ext["store"], set_id) >= 1
    summarize = query_summaries.summarize_set
    drawn: list[object] = []

    def clashing(session, store, eval_set_id):  # type: ignore[no-untyped-def]
        summarized = summarize(session, store, eval_set_id)
        # As if another worker's rows were there first: the commit fails on the same key.
        session.flush()
        row = session.get(QuerySummary, (eval_set_id, "Acc"))
        session.expunge(row)
        session.add(QuerySummary(eval_set_id=eval_set_id, measure="Acc", revision=0, runs=0,
                                 values={}))  # fmt: skip
        return summarized

    monkeypatch.setattr(query_summaries, "summarize_set", clashing)
    monkeypatch.setattr(jobs, "draw_all", lambda *args: drawn.append(args) or 0)
    with ext["sessionmaker"]() as session:
        assert jobs.summarize_set(session, ext["store"], set_id) == 0
        assert drawn == []
        # Rolled back whole: the summaries stored before are there, unchanged.
        row = session.get(QuerySummary, (set_id, "Acc"))
        assert row is not None and row.runs == 2
    monkeypatch.setattr(query_summaries, "summarize_set", summarize)
    with ext["sessionmaker"]() as session:
        assert jobs.summarize_set(session, ext["store"], set_id) >= 1
        assert len(drawn) == 1 and drawn[0][2]  # the runs' charts, drawn after the commit
