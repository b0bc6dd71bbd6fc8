"""A measure undefined for a run is stored without a value, shown "—", footnoted, never ranked."""

from __future__ import annotations

import json
from pathlib import Path

from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import select

from leaderboard.models import Run, Score
from tests.runs import accepted, api_upload, make_participant, oracle_run, token_for


def undefine(app: Flask, team_run: int, measure: str) -> None:
    """Store ``measure`` of a run as a family does for an undefined value: no value, no string."""
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        score = session.scalars(
            select(Score).where(Score.run_id == team_run, Score.measure == measure)
        ).one()
        score.value = None
        score.official = ""
        session.commit()


def test_undefined_value_in_the_table_the_api_and_every_export(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    make_participant(app, "Aurora", "a@example.org")
    make_participant(app, "Borealis", "b@example.org")
    aurora = token_for(app, "a@example.org")
    borealis = token_for(app, "b@example.org")
    best = accepted(api_upload(client, aurora, oracle_run()))["id"]
    accepted(api_upload(client, borealis, oracle_run()))
    # The official measure (MAP) and MRR of Aurora's run become undefined.
    undefine(app, best, "MAP")
    undefine(app, best, "MRR")
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        assert session.get(Run, best) is not None
    table = json.loads(
        runner.invoke(
            args=["leaderboard", "table", "semeval2016-task3", "A", "--format", "json"]
        ).output
    )
    runs = [r for r in table["rows"] if r["kind"] == "run"]
    # Borealis is ranked first on MAP; Aurora has no MAP, so no MAP rank, and comes after it.
    assert [r["team"] for r in runs] == ["Borealis", "Aurora"]
    aurora_row = runs[1]
    assert aurora_row["cells"]["MAP"] is None and aurora_row["cells"]["MRR"] is None
    assert aurora_row["cells"]["P"]["display"] == "100.00"
    assert runs[0]["cells"]["MAP"]["rank"] == 1
    assert any("Undefined here: MAP, MRR." in note for note in table["footnotes"])
    run = client.get(f"/api/v1/runs/{best}", headers={"Authorization": f"Bearer {aurora}"})
    body = run.get_json()
    assert body["scores"]["MAP"] is None and body["official"]["MAP"] == ""
    for ext in ("csv", "md", "tex", "json"):
        resp = client.get(f"/tasks/semeval2016-task3/A/results.{ext}")
        assert resp.status_code == 200, ext
    md = client.get("/tasks/semeval2016-task3/A/results.md").get_data(as_text=True)
    assert "—" in md and "Undefined here: MAP, MRR." in md


def test_measure_notes_are_footnoted_once_per_distinct_note(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner
) -> None:
    make_participant(app, "Aurora", "a@example.org")
    make_participant(app, "Borealis", "b@example.org")
    aurora = token_for(app, "a@example.org")
    first = accepted(api_upload(client, aurora, oracle_run()))["id"]
    second = accepted(api_upload(client, token_for(app, "b@example.org"), oracle_run()))["id"]
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        for run_id, note in ((first, "version:1"), (second, "version:1")):
            score = session.scalars(
                select(Score).where(Score.run_id == run_id, Score.measure == "MRR")
            ).one()
            score.note = note
        session.commit()
    table = json.loads(
        runner.invoke(
            args=["leaderboard", "table", "semeval2016-task3", "A", "--format", "json"]
        ).output
    )
    assert [n for n in table["footnotes"] if n.startswith("MRR: ")] == ["MRR: version:1"]
    body = client.get(
        f"/api/v1/runs/{first}", headers={"Authorization": f"Bearer {aurora}"}
    ).get_json()
    assert "MRR: version:1" in body["notes"]
