"""Every page, chart and export names a run through the anonymity rule, whatever its state."""

from __future__ import annotations

from flask import Flask
from flask.testing import FlaskCliRunner

from tests.conftest import login
from tests.dispatch import draw_asked, summarize_changed
from tests.helpers.sentiment import PATH, SENTIMENT
from tests.runs import api_upload, token_for

SECRETS = ("Aurora", "Borealis", "aurora-tag", "borealis-tag")


def _cli(runner: FlaskCliRunner, *args: str) -> str:
    result = runner.invoke(args=["leaderboard", *args])
    assert result.exit_code == 0, result.output
    return result.output


def _anonymous_public_diagnostics(runner: FlaskCliRunner) -> None:
    _cli(runner, "phase", "example-sentiment", "A", "test", "--names", "anonymous")
    _cli(runner, "phase", "example-sentiment", "A", "test", "--diagnostics", "public")


def _named_runs(app: Flask) -> None:
    """Upload a contrastive run per team whose name carries the team's."""
    for email, name in (("alice@example.org", "aurora-tag"), ("bob@example.org", "borealis-tag")):
        resp = api_upload(app.test_client(), token_for(app, email),
                          (SENTIMENT / "run-valid.tsv").read_bytes(), path=PATH,
                          slot="contrastive1", name=name)  # fmt: skip
        assert resp.status_code == 201, resp.get_json()


def _public_views(app: Flask, run_id: int) -> dict[str, str]:
    public = app.test_client()
    # The worker's part first: the set's summaries, then the chart this reader asks for.
    summarize_changed(app)
    public.get(f"/runs/{run_id}/queries.svg")
    draw_asked(app)
    out = {}
    for suffix in ("", ".csv", ".svg"):
        resp = public.get(f"/runs/{run_id}/queries{suffix}")
        assert resp.status_code == 200, (suffix, resp.status_code)
        out[suffix] = resp.get_data(as_text=True)
    return out


def test_a_run_its_team_withdrew_stays_anonymous(app: Flask, hosted: FlaskCliRunner) -> None:
    _named_runs(app)
    _anonymous_public_diagnostics(hosted)
    bob = token_for(app, "bob@example.org")
    runs = app.test_client().get("/api/v1/team/runs", headers={"Authorization": f"Bearer {bob}"})
    run_id = next(r["id"] for r in runs.get_json()["runs"] if r["slot"] == "contrastive1")
    withdrawn = app.test_client().post(
        f"/api/v1/runs/{run_id}/withdraw", headers={"Authorization": f"Bearer {bob}"}
    )
    assert withdrawn.status_code == 200, withdrawn.get_json()
    views = _public_views(app, run_id)
    for body in views.values():
        for secret in SECRETS:
            assert secret not in body
    assert "Team 2-contrastive1" in views[""]
    # Bob's own team and the organizers still see the name.
    bob_client = app.test_client()
    login(bob_client, "bob@example.org", "correct horse battery")
    # Named as the table's style names a row (team and slot here), not by another rule.
    assert "(<bdi>Borealis-contrastive1</bdi>)" in bob_client.get(
        f"/runs/{run_id}/queries"
    ).get_data(as_text=True)


def test_every_run_of_a_withdrawn_team_stays_anonymous(app: Flask, hosted: FlaskCliRunner) -> None:
    _named_runs(app)
    _anonymous_public_diagnostics(hosted)
    _cli(hosted, "withdraw-team", "Aurora")
    alice = token_for(app, "alice@example.org")
    runs = app.test_client().get("/api/v1/team/runs", headers={"Authorization": f"Bearer {alice}"})
    ids = [r["id"] for r in runs.get_json()["runs"]]
    assert len(ids) == 2
    for run_id in ids:
        views = _public_views(app, run_id)
        for body in views.values():
            for secret in SECRETS:
                assert secret not in body
        assert "Team 1-" in views[""]


def test_a_replaced_runs_per_query_page_says_what_is_true(
    app: Flask,
    hosted: FlaskCliRunner,
) -> None:
    # Alice replaces her primary run (1): it keeps its per-query values.
    resp = api_upload(app.test_client(), token_for(app, "alice@example.org"),
                      (SENTIMENT / "run-valid.tsv").read_bytes(), path=PATH)  # fmt: skip
    assert resp.status_code == 201
    new_id = resp.get_json()["id"]
    alice = app.test_client()
    login(alice, "alice@example.org", "correct horse battery")
    assert alice.get("/runs/1").status_code == 200
    summarize_changed(app)
    page = alice.get("/runs/1/queries")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert f'Run 1 was replaced by <a href="/runs/{new_id}">run {new_id}</a>' in html
    assert 'id="query-table"' in html
    assert alice.get("/runs/1/queries.csv").status_code == 200
    assert "/runs/1/queries" in alice.get("/runs/1").get_data(as_text=True)
    # Nobody else knows of a replaced run, even with public diagnostics.
    _cli(hosted, "phase", "example-sentiment", "A", "test", "--diagnostics", "public")
    assert app.test_client().get("/runs/1/queries").status_code == 404
    bob = app.test_client()
    login(bob, "bob@example.org", "correct horse battery")
    assert bob.get("/runs/1/queries").status_code == 404
