"""A run file stored as a baseline row under a label, in any family."""

from __future__ import annotations

import pytest
from flask import Flask
from sqlalchemy import select
from sqlalchemy.orm import Session

from leaderboard.models import Run
from leaderboard.services.common.errors import InvalidInput, RunRejected
from leaderboard.services.results.tables import live_table
from leaderboard.services.runs.baselines import import_baseline
from leaderboard.services.runs.core import Upload
from leaderboard.services.tasks.catalog import resolve
from leaderboard.unit_of_work import retried
from tests.runs import oracle_run


def _import(app: Flask, session: Session, task: str, subtask: str, files: dict[str, bytes], **kw):  # type: ignore[no-untyped-def]
    ext = app.extensions["leaderboard"]
    target = resolve(session, task, subtask)
    placement = import_baseline(
        session,
        ext["store"],
        ext["settings"],
        target,
        Upload.from_bytes(files),
        actor="test",
        **kw,
    )
    return retried(session, placement)


def test_a_cqa_run_file_becomes_a_labelled_baseline_row(app: Flask, session: Session) -> None:
    run = _import(app, session, "semeval2016-task3", "A", {"file": oracle_run()}, label="Oracle")
    assert (run.kind, run.team_id, run.label) == ("baseline", None, "Oracle")
    target = resolve(session, "semeval2016-task3", "A")
    table = live_table(session, app.extensions["leaderboard"]["store"], target)
    (row,) = [r for r in table.rows if r.label == "Oracle"]
    assert row.kind == "baseline" and row.rank is None
    # The oracle ranks every relevant candidate first; MAP counts each question's top 10 only,
    # so questions with more relevant candidates keep it at 96.33 (as the 2016 scorer says).
    cell = row.cells["MAP"]
    assert cell is not None and cell.display == "96.33"


def test_importing_the_same_label_again_replaces_the_row(app: Flask, session: Session) -> None:
    first = _import(app, session, "semeval2016-task3", "A", {"file": oracle_run()}, label="Oracle")
    second = _import(app, session, "semeval2016-task3", "A", {"file": oracle_run()}, label="Oracle")
    active = session.scalars(
        select(Run).where(Run.kind == "baseline", Run.status == "active", Run.label == "Oracle")
    ).all()
    assert [r.id for r in active] == [second.id] and first.id != second.id


def test_an_sts_baseline_is_ranked_as_if_and_marked(app: Flask, session: Session) -> None:
    from leaderboard.tasks.definition import PRESETS_DIR

    english = PRESETS_DIR / "semeval2016-task1" / "english"
    files = {
        part: (english / f"STS2016.gs.{part}.txt").read_bytes().replace(b"\n\n", b"\n2.5\n")
        for part in ("answer-answer", "headlines", "plagiarism", "postediting", "question-question")
    }
    run = _import(app, session, "semeval2016-task1", "en", files, label="Gold copy", lenient=True)
    assert run.kind == "baseline"
    table = live_table(
        session, app.extensions["leaderboard"]["store"], resolve(session, "semeval2016-task1", "en")
    )
    (row,) = [r for r in table.rows if r.label == "Gold copy"]
    assert row.rank_marker == "†"


def test_a_refused_file_or_label_stores_nothing(app: Flask, session: Session) -> None:
    before = session.scalars(select(Run)).all()
    with pytest.raises(RunRejected, match="The baseline was rejected"):
        _import(app, session, "semeval2016-task3", "A", {"file": b"Q1\tQ1_C1\n"}, label="Bad")
    with pytest.raises(InvalidInput, match="A baseline label is 1 to 100 printable characters"):
        _import(app, session, "semeval2016-task3", "A", {"file": oracle_run()}, label=" ")
    assert session.scalars(select(Run)).all() == before


def test_an_imported_baseline_is_recorded_with_its_placement(app: Flask, session: Session) -> None:
    from leaderboard.models import AuditEvent

    run = _import(app, session, "semeval2016-task3", "A", {"file": oracle_run()}, label="Oracle")
    session.rollback()  # committed with the run: nothing left for the entry point to commit
    (event,) = session.scalars(select(AuditEvent).where(AuditEvent.action == "import-baseline"))
    assert event.details["sha256"] == run.file_sha256 and event.details["label"] == "Oracle"


def test_each_generated_baseline_is_committed_before_the_next_is_made(
    app: Flask, session: Session
) -> None:
    from leaderboard.models import AuditEvent
    from leaderboard.services.runs.baselines import add_baselines

    ext = app.extensions["leaderboard"]
    target = resolve(session, "semeval2016-task3", "A")
    placed: list[Run] = []
    for placement in add_baselines(session, ext["store"], ext["settings"], target, actor="t"):
        # Those placed before are committed: another session sees them.
        with ext["sessionmaker"]() as other:
            seen = other.scalars(select(Run.id).where(Run.kind == "baseline")).all()
        assert [r.id for r in placed if r.id not in seen] == []
        placed.append(retried(session, placement))
    assert len(placed) > 1
    # The action is recorded once all are placed, for the entry point's commit.
    (event,) = [e for e in session.new if isinstance(e, AuditEvent)]
    assert event.action == "add-baselines" and event.details["roles"] == [r.slot for r in placed]
