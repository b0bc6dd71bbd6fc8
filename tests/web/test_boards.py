"""The best and Ladder boards: one row per team, released values only, verdicts for the team."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sklearn import metrics
from sqlalchemy import event, select

from leaderboard.models import LadderDecision
from tests.conftest import login
from tests.helpers.item_tasks import pairs
from tests.helpers.ladder import ladder_on_means
from tests.runs import api_upload, make_participant, open_task, token_for

SENTIMENT = Path(__file__).resolve().parents[2] / "docs" / "examples" / "classification"
TASK, SUBTASK = "example-sentiment", "A"
UPLOAD = f"/api/v1/tasks/{TASK}/{SUBTASK}/runs"
TABLE = f"/api/v1/tasks/{TASK}/{SUBTASK}/table"
LABELS = ["positive", "negative", "neutral"]


def host(app: Flask, runner: FlaskCliRunner, tmp_path: Path, official: str) -> dict[str, str]:
    """Host the sentiment example ranked by ``official``; return two teams' tokens."""
    folder = tmp_path / "task"
    shutil.copytree(SENTIMENT, folder)
    toml = folder / "task.toml"
    toml.write_text(
        toml.read_text().replace(
            'official_measure = "macro-F1"', f'official_measure = "{official}"'
        )
    )
    result = runner.invoke(args=["leaderboard", "add-task", str(toml)])
    assert result.exit_code == 0, result.output
    open_task(app, toml)
    make_participant(app, "Aurora", "alice@example.org")
    make_participant(app, "Borealis", "bob@example.org")
    return {"alice": token_for(app, "alice@example.org"), "bob": token_for(app, "bob@example.org")}


def board(runner: FlaskCliRunner, *options: str) -> str:
    result = runner.invoke(args=["leaderboard", "phase", TASK, SUBTASK, "open", *options])
    assert result.exit_code == 0, result.output
    return result.output


def wrong_on(k: int) -> tuple[bytes, dict[str, str]]:
    """Return a run right on every item but the first ``k`` (labelled another label)."""
    gold = pairs(SENTIMENT / "gold.tsv")
    run = {}
    for n, (item, label) in enumerate(gold.items()):
        run[item] = LABELS[(LABELS.index(label) + 1) % 3] if n < k else label
    return "".join(f"{i}\t{v}\n" for i, v in run.items()).encode(), run


def upload(client: FlaskClient, token: str, k: int) -> dict:  # type: ignore[type-arg]
    resp = api_upload(client, token, wrong_on(k)[0], path=UPLOAD)
    assert resp.status_code == 201, resp.get_json()
    body: dict = resp.get_json()  # type: ignore[type-arg]
    return body


def table(client: FlaskClient, token: str) -> dict:  # type: ignore[type-arg]
    resp = client.get(TABLE, headers={"Authorization": f"Bearer {token}"})
    assert resp.status_code == 200, resp.get_json()
    body: dict = resp.get_json()  # type: ignore[type-arg]
    return body


def team_rows(shown: dict) -> dict[str, dict]:  # type: ignore[type-arg]
    return {r["team"]: r for r in shown["rows"] if r["kind"] == "run"}


def test_the_best_board_shows_each_team_s_best_run_and_how_many_it_tried(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    tokens = host(app, runner, tmp_path, "Acc")
    assert "board best" in board(runner, "--board", "best")
    for k in (20, 5, 12):  # the second is the best; the last one is what the slot holds
        upload(client, tokens["alice"], k)
    shown = table(client, tokens["bob"])
    assert shown["board"] == "best"
    [row] = team_rows(shown).values()
    assert row["submitted"] == 3
    n = len(pairs(SENTIMENT / "gold.tsv"))
    # Scale 1, four decimals for the example's measures.
    assert row["cells"]["Acc"]["value"] == pytest.approx((n - 5) / n, abs=1e-12)
    # The classic board shows what the slot holds now: the last run.
    board(runner, "--board", "slots")
    [slot_row] = team_rows(table(client, tokens["bob"])).values()
    assert slot_row["cells"]["Acc"]["value"] == pytest.approx((n - 12) / n, abs=1e-12)
    assert table(client, tokens["bob"])["board"] == "slots"


def test_the_ladder_releases_a_value_only_on_a_real_gain(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    tokens = host(app, runner, tmp_path, "Acc")
    assert "board ladder (alpha 0.05)" in board(runner, "--board", "ladder")
    gold = pairs(SENTIMENT / "gold.tsv")
    ks = [12, 11, 2]  # one item better (noise), then ten better (a real gain)
    runs = [upload(client, tokens["alice"], k) for k in ks]
    expected = ladder_on_means(
        [np.array([1.0 if wrong_on(k)[1][i] == gold[i] else 0.0 for i in gold]) for k in ks]
    )
    assert [e[0] for e in expected] == [True, False, True]
    # The team is told the verdict, never the run's own score.
    for body, (replaced, _released) in zip(runs, expected, strict=True):
        assert body["scores"] == {} and body["scores_hidden"] is True
        assert body["ladder"]["replaced"] is replaced
    second = client.get(
        f"/api/v1/runs/{runs[1]['id']}", headers={"Authorization": f"Bearer {tokens['alice']}"}
    ).get_json()
    assert second["ladder"]["replaced"] is False and second["scores"] == {}
    assert "not better than the released value" in second["ladder"]["text"]
    # The board shows the released value (the last gain), one row per team, official measure only.
    shown = table(client, tokens["bob"])
    assert shown["board"] == "ladder"
    assert [c["key"] for c in shown["columns"]] == ["Acc"]
    [row] = team_rows(shown).values()
    assert row["cells"]["Acc"]["value"] == pytest.approx(expected[-1][1], abs=1e-12)
    assert row["submitted"] == 3
    # Decisions are stored once per run.
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        stored = session.scalars(select(LadderDecision).order_by(LadderDecision.run_id)).all()
        assert [(d.run_id, d.replaced) for d in stored] == [
            (body["id"], e[0]) for body, e in zip(runs, expected, strict=True)
        ]
    # The team's page lists the run that did not count; per-item values are probes too.
    alice, bob = app.test_client(), app.test_client()
    login(alice, "alice@example.org", "correct horse battery")
    login(bob, "bob@example.org", "correct horse battery")
    page = alice.get("/team").get_data(as_text=True)
    assert page.count("not better than the released value") == 1
    own = alice.get(f"/runs/{runs[1]['id']}/queries")
    assert own.status_code == 200 and "board is a Ladder" in own.get_data(as_text=True)
    assert alice.get(f"/runs/{runs[1]['id']}/queries.csv").status_code == 404
    assert bob.get(f"/runs/{runs[0]['id']}/queries").status_code == 404
    run_page = alice.get(f"/runs/{runs[1]['id']}").get_data(as_text=True)
    assert 'id="ladder-verdict"' in run_page


def test_the_ladder_on_a_corpus_measure_uses_the_paired_bootstrap(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    tokens = host(app, runner, tmp_path, "macro-F1")
    board(runner, "--board", "ladder", "--ladder-alpha", "0.1")
    first = upload(client, tokens["alice"], 15)
    same = upload(client, tokens["alice"], 15)
    assert first["ladder"]["replaced"] is True
    # The same predictions again: no evidence of a gain, whatever the samples.
    assert same["ladder"]["replaced"] is False
    gold = pairs(SENTIMENT / "gold.tsv")
    run = wrong_on(15)[1]
    f1 = metrics.f1_score(
        [gold[i] for i in gold], [run[i] for i in gold], labels=LABELS, average="macro"
    )
    [row] = team_rows(table(client, tokens["bob"])).values()
    # Released rounded to the measure's display decimals (four, scale 1).
    assert row["cells"]["macro-F1"]["value"] == pytest.approx(round(f1, 4), abs=1e-12)


def test_a_wrong_board_or_alpha_is_refused(
    runner: FlaskCliRunner, app: Flask, tmp_path: Path
) -> None:
    host(app, runner, tmp_path, "Acc")
    bad = runner.invoke(
        args=["leaderboard", "phase", TASK, SUBTASK, "open", "--ladder-alpha", "1.5"]
    )
    assert bad.exit_code != 0 and "strictly between 0 and 1" in bad.output
    wrong = runner.invoke(args=["leaderboard", "phase", TASK, SUBTASK, "open", "--board", "top"])
    assert wrong.exit_code != 0 and "top" in wrong.output


def test_pages_listing_a_team_s_runs_replay_its_ladder_once(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    tokens = host(app, runner, tmp_path, "Acc")
    board(runner, "--board", "ladder")
    for k in (12, 11, 2, 9):
        upload(client, tokens["alice"], k)
    engine = app.extensions["leaderboard"]["engine"]
    read: list[str] = []

    def listen(conn: Any, cursor: Any, text: str, *rest: Any) -> None:
        if "FROM ladder_decisions" in text:
            read.append(text)

    alice = app.test_client()
    login(alice, "alice@example.org", "correct horse battery")
    headers = {"Authorization": f"Bearer {tokens['alice']}"}
    event.listen(engine, "before_cursor_execute", listen)
    try:
        page = alice.get("/team").get_data(as_text=True)
        assert page.count("not better than the released value") == 2
        assert len(read) == 1
        read.clear()
        listed = client.get("/api/v1/team/runs", headers=headers)
        assert listed.status_code == 200
        assert len(read) == 1
    finally:
        event.remove(engine, "before_cursor_execute", listen)


def test_a_best_or_ladder_board_charts_no_analysis_of_the_runs(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    tokens = host(app, runner, tmp_path, "Acc")
    upload(client, tokens["alice"], 5)
    upload(client, tokens["bob"], 12)
    chart = "/tasks/example-sentiment/A/analysis/measure.csv"

    def analysed_chart(kind: str) -> tuple[int, bytes]:
        board(runner, "--board", kind)
        # An organizer's analysis of the current scores, whatever the board.
        analysed = runner.invoke(args=["leaderboard", "significance", TASK, SUBTASK])
        assert analysed.exit_code == 0, analysed.output
        shown = app.test_client().get(chart)
        return shown.status_code, shown.data

    # The analysis charts each run's own value: a board showing released values only hides it.
    for kind in ("best", "ladder"):
        status, data = analysed_chart(kind)
        assert status == 404 and b"Aurora" not in data, kind
    status, data = analysed_chart("slots")
    assert status == 200 and b"Aurora" in data
