"""A member's runs on the subtask page, a run's live rank on its verdict page, and the progress
chart of the best official score per team over time."""

from __future__ import annotations

import csv
import io
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from leaderboard.clock import FixedClock
from tests.conftest import AppFactory, csrf_from, login
from tests.dispatch import draw_asked
from tests.helpers.teams import loose_participant
from tests.runs import (
    GOLD_TEST_A,
    api_upload,
    make_organizer,
    make_participant,
    oracle_run,
    own_campaign,
    token_for,
)

T3 = "semeval2016-task3"
PAGE = f"/tasks/{T3}/A"
PASSWORD = "correct horse battery"
REGRESSION = Path(__file__).resolve().parents[2] / "docs" / "examples" / "regression"


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def run_for(score: str, every: int = 3) -> bytes:
    """Return a Task 3 A run giving ``score`` to most candidates and 0.9 to every ``every``-th."""
    lines = []
    for i, line in enumerate(GOLD_TEST_A.read_text().splitlines()):
        qid, cid, *_ = line.split("\t")
        top = i % every == 0
        lines.append(f"{qid}\t{cid}\t0\t{'0.9' if top else score}\t{'true' if top else 'false'}")
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(at("2016-01-05T12:00:00"))


@pytest.fixture
def app(make_app: AppFactory, clock: FixedClock) -> Flask:
    """Task 3 A in the organizers' own campaign: open on test, 3 runs a day, 5 in the phase."""
    application = make_app(clock=clock)
    own_campaign(application, T3, ("A",))
    _cli(application, "phase", T3, "A", "open", "--set", "test", "--start",
         "2016-01-01T00:00:00Z", "--end", "2016-01-31T00:00:00Z", "--daily-quota", "3",
         "--total-quota", "5")  # fmt: skip
    make_participant(application, "Aurora", "alice@example.org")
    make_participant(application, "Aurora", "amy@example.org")
    make_participant(application, "Borealis", "bob@example.org")
    return application


def _cli(app: Flask, *args: str) -> str:
    result = app.test_cli_runner().invoke(args=["leaderboard", *args])
    assert result.exit_code == 0, result.output
    return result.output


def _client(app: Flask, email: str, password: str = PASSWORD) -> FlaskClient:
    client = app.test_client()
    login(client, email, password)
    return client


def _upload(app: Flask, email: str, data: bytes, slot: str = "primary", **form: str) -> dict:
    resp = api_upload(app.test_client(), token_for(app, email), data, slot=slot, **form)
    assert resp.status_code == 201, resp.get_json()
    return resp.get_json()


def _rows(html: str) -> dict[int, str]:
    """Return the rows of the page's #our-submissions table by run id (their HTML)."""
    table = re.search(r'<table[^>]*id="our-submissions"[^>]*>(.*?)</table>', html, re.S)
    assert table is not None, "no #our-submissions table"
    return {
        int(m.group(1)): m.group(2)
        for m in re.finditer(r'<tr data-run-id="(\d+)"[^>]*>(.*?)</tr>', table.group(1), re.S)
    }


def _cell(row: str, name: str) -> str:
    found = re.search(rf'<td class="{name}">(.*?)</td>', row, re.S)
    assert found is not None, (name, row)
    return re.sub(r"<[^>]+>", "", found.group(1)).strip()


def _quota(html: str) -> str:
    found = re.search(r'<p id="quota">(.*?)</p>', html, re.S)
    assert found is not None, "no #quota"
    return " ".join(found.group(1).split())


def _run_rank(html: str) -> str | None:
    found = re.search(r'<span id="run-rank">(.*?)</span>', html)
    return found.group(1) if found else None


def test_a_member_sees_their_team_runs_only_and_the_quota_left(
    app: Flask, clock: FixedClock
) -> None:
    alice = _client(app, "alice@example.org")
    page = alice.get(PAGE)
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert 'id="upload-link"' in html and f'href="{PAGE}/submit?eval_set=test"' in html
    assert _rows(html) == {}
    assert _quota(html).startswith(
        "Runs your team may still submit: 3 today (UTC), 5 in phase open"
    )
    assert page.headers["Cache-Control"] == "private, no-store"

    first = _upload(app, "alice@example.org", run_for("0.3"), name="first try")
    clock.set(at("2016-01-05T13:00:00"))
    second = _upload(app, "amy@example.org", run_for("0.5"), slot="contrastive1", name="second")
    theirs = _upload(app, "bob@example.org", run_for("0.4", every=4), name="borealis run")
    # A refused upload is not a run: no row, and no quota used.
    refused = api_upload(app.test_client(), token_for(app, "alice@example.org"), b"junk\n")
    assert refused.status_code == 422

    html = alice.get(PAGE).get_data(as_text=True)
    rows = _rows(html)
    assert list(rows) == [second["id"], first["id"]]  # newest first; Borealis' run absent
    assert theirs["id"] not in rows and "borealis run" not in html
    assert "first try" in rows[first["id"]] and "primary" in rows[first["id"]]
    assert f'href="/runs/{first["id"]}"' in rows[first["id"]]
    assert f'href="/runs/{first["id"]}/file"' in rows[first["id"]]
    assert f'href="/runs/{first["id"]}/queries"' in rows[first["id"]]
    assert ">2016-01-05 12:00:00 UTC<" in rows[first["id"]]
    assert _cell(rows[first["id"]], "run-status") == "active"
    expected_map = format(float(first["official"]["MAP"]) * 100, ".2f")
    assert _cell(rows[first["id"]], "run-score") == f"MAP {expected_map}"
    assert _quota(html).startswith("Runs your team may still submit: 1 today (UTC), 3 in phase")
    # Bob sees his run alone; the next day the daily quota is full again.
    clock.set(at("2016-01-06T09:00:00"))
    bob_html = _client(app, "bob@example.org").get(PAGE).get_data(as_text=True)
    assert list(_rows(bob_html)) == [theirs["id"]] and "first try" not in bob_html
    assert _quota(bob_html).startswith("Runs your team may still submit: 3 today (UTC), 4 in")
    # (A log-in lasts 12 hours by the server clock.)
    alice = _client(app, "alice@example.org")
    assert _quota(alice.get(PAGE).get_data(as_text=True)).startswith(
        "Runs your team may still submit: 3 today (UTC), 3 in phase open"
    )


def test_no_member_section_for_visitors_organizers_or_cached_pages(app: Flask) -> None:
    _upload(app, "alice@example.org", run_for("0.3"), name="aurora secret name")
    make_organizer(app, "org@example.org")
    anon = app.test_client()
    for client in (anon, _client(app, "org@example.org", "organizer password")):
        html = client.get(PAGE).get_data(as_text=True)
        assert "our-submissions" not in html and 'id="upload-link"' not in html
        assert 'id="quota"' not in html and "aurora secret name" not in html
    # A member's page is never kept: the anonymous copy cached meanwhile shows no member's runs,
    # and the member never gets the anonymous copy.
    alice = _client(app, "alice@example.org")
    assert "aurora secret name" in alice.get(PAGE).get_data(as_text=True)
    again = anon.get(PAGE)
    assert "aurora secret name" not in again.get_data(as_text=True)
    assert "Cache-Control" not in again.headers or "private" not in again.headers["Cache-Control"]
    assert 'id="our-submissions"' in alice.get(PAGE).get_data(as_text=True)


def test_withdraw_from_the_table_and_download_the_file(app: Flask) -> None:
    data = run_for("0.3")
    run = _upload(app, "alice@example.org", data)
    alice = _client(app, "alice@example.org")
    html = alice.get(PAGE).get_data(as_text=True)
    row = _rows(html)[run["id"]]
    assert f'action="/runs/{run["id"]}/withdraw"' in row and "Withdraw" in row
    file = alice.get(f"/runs/{run['id']}/file")
    assert file.status_code == 200 and file.data == data
    assert "attachment" in file.headers["Content-Disposition"]
    # Another team's run file answers like a missing one.
    assert _client(app, "bob@example.org").get(f"/runs/{run['id']}/file").status_code == 404

    # Without its token the button does nothing.
    refused = alice.post(f"/runs/{run['id']}/withdraw", data={"back": "results"})
    assert refused.status_code == 400
    done = alice.post(
        f"/runs/{run['id']}/withdraw", data={"csrf_token": csrf_from(html), "back": "results"}
    )
    assert done.status_code == 302 and done.headers["Location"] == f"{PAGE}?set=test"
    html = alice.get(PAGE).get_data(as_text=True)
    assert f"Run {run['id']} was withdrawn" in html
    row = _rows(html)[run["id"]]
    assert _cell(row, "run-status") == "withdrawn (not ranked)"
    assert "Withdraw</button>" not in row and _cell(row, "run-rank") == "—"


def test_live_ranks_on_the_page_and_the_verdict(app: Flask, clock: FixedClock) -> None:
    # Borealis ranks first with the oracle; Aurora's primary second.
    top = _upload(app, "bob@example.org", oracle_run())
    primary = _upload(app, "alice@example.org", run_for("0.3"))
    # A contrastive run better than Aurora's primary but below the oracle: "as if 2"; a worse
    # contrastive run below both primaries: "as if 3".
    between = _upload(app, "alice@example.org", run_for("0.4242", every=2), slot="contrastive1")
    below = _upload(app, "alice@example.org", run_for("0.1", every=7), slot="contrastive2")
    maps = {r["id"]: float(r["official"]["MAP"]) for r in (top, primary, between, below)}
    assert maps[top["id"]] > maps[between["id"]] > maps[primary["id"]] > maps[below["id"]]

    alice = _client(app, "alice@example.org")
    rows = _rows(alice.get(PAGE).get_data(as_text=True))
    assert _cell(rows[primary["id"]], "run-rank") == "2"
    assert _cell(rows[between["id"]], "run-rank") == "as if 2"
    assert _cell(rows[below["id"]], "run-rank") == "as if 3"
    assert _run_rank(alice.get(f"/runs/{primary['id']}").get_data(as_text=True)) == "2"
    assert _run_rank(alice.get(f"/runs/{between['id']}").get_data(as_text=True)) == "as if 2"
    bob = _client(app, "bob@example.org")
    assert _run_rank(bob.get(f"/runs/{top['id']}").get_data(as_text=True)) == "1"

    # After the deadline a late primary is ranked as if on time; the on-time ranks stay.
    _cli(app, "phase", T3, "A", "open", "--late")
    clock.set(at("2016-02-02T10:00:00"))
    late = _upload(app, "alice@example.org", oracle_run(), name="late oracle")
    assert late["late"] is True
    alice, bob = _client(app, "alice@example.org"), _client(app, "bob@example.org")
    rows = _rows(alice.get(PAGE).get_data(as_text=True))
    assert _cell(rows[late["id"]], "run-rank") == "as if 1"
    assert _run_rank(alice.get(f"/runs/{late['id']}").get_data(as_text=True)) == "as if 1"
    assert _run_rank(bob.get(f"/runs/{top['id']}").get_data(as_text=True)) == "1"
    # The replaced primary has left the live table: no rank.
    replaced = alice.get(f"/runs/{primary['id']}").get_data(as_text=True)
    assert _run_rank(replaced) is None and "not in the live table" in replaced
    assert _cell(rows[primary["id"]], "run-rank") == "—"


def test_a_hidden_phase_shows_no_score_no_rank_and_no_progress(app: Flask) -> None:
    run = _upload(app, "alice@example.org", run_for("0.3"))
    _cli(app, "phase", T3, "A", "open", "--results", "hidden")
    alice = _client(app, "alice@example.org")
    html = alice.get(PAGE).get_data(as_text=True)
    row = _rows(html)[run["id"]]
    assert _cell(row, "run-score") == "hidden until released"
    assert _cell(row, "run-rank") == "hidden"
    assert "/queries" not in row and 'id="progress"' not in html
    shown = format(float(run["official"]["MAP"]) * 100, ".2f")
    assert shown not in html and run["official"]["MAP"] not in html
    verdict = alice.get(f"/runs/{run['id']}").get_data(as_text=True)
    assert 'id="run-rank"' not in verdict and "Live rank" not in verdict
    for client in (app.test_client(), alice):
        for ext in ("svg", "csv"):
            resp = client.get(f"{PAGE}/progress.{ext}")
            assert resp.status_code == 403
            assert "hidden until the organizers release them" in resp.get_data(as_text=True)
    # Released, the chart is public and the page links it.
    _cli(app, "phase", T3, "A", "open", "--results", "visible")
    html = app.test_client().get(PAGE).get_data(as_text=True)
    assert 'id="progress"' in html and "The chart is being drawn" in html
    draw_asked(app)
    html = app.test_client().get(PAGE).get_data(as_text=True)
    assert f"{PAGE}/progress.svg?set=test" in html


def _progress(client: FlaskClient, path: str = f"{PAGE}/progress.csv") -> list[list[str]]:
    resp = client.get(path)
    assert resp.status_code == 200, resp.get_data(as_text=True)
    assert resp.mimetype == "text/csv"
    return list(csv.reader(io.StringIO(resp.get_data(as_text=True))))


def test_progress_is_the_best_so_far_per_team_of_the_runs_that_count(
    app: Flask, clock: FixedClock
) -> None:
    assert app.test_client().get(f"{PAGE}/progress.csv").status_code == 404  # nothing yet
    made = []
    for when, email, score, every, slot in (
        ("2016-01-05T12:00:00", "alice@example.org", "0.3", 3, "primary"),
        ("2016-01-06T12:00:00", "bob@example.org", "0.4242", 4, "primary"),
        # Better, then worse: Aurora's best stays at the better one while it is in the table.
        ("2016-01-07T12:00:00", "alice@example.org", "0.5", 2, "primary"),
        # Not a ranked slot: it does not count.
        ("2016-01-08T12:00:00", "bob@example.org", "0.9", 2, "contrastive1"),
    ):
        clock.set(at(when))
        made.append(_upload(app, email, run_for(score, every), slot=slot))
    # Unrounded, in the table's scale (percent), as the upload's answer gives them.
    a1, b1, a2, _b2 = (r["scores"]["MAP"] for r in made)
    rows = _progress(app.test_client())
    assert rows[0] == ["team", "time", "score", "best"]
    # Aurora's first primary was replaced: only its second counts (the table ranks it).
    by_team = [(r[0], r[1], round(float(r[2]), 4), round(float(r[3]), 4)) for r in rows[1:]]
    first, second = sorted([("Aurora", a2), ("Borealis", b1)], key=lambda t: -t[1])
    times = {"Aurora": "2016-01-07T12:00:00Z", "Borealis": "2016-01-06T12:00:00Z"}
    assert by_team == [
        (first[0], times[first[0]], round(first[1], 4), round(first[1], 4)),
        (second[0], times[second[0]], round(second[1], 4), round(second[1], 4)),
    ]
    assert a1 != a2


def test_progress_respects_the_measure_direction_and_anonymous_names(
    app: Flask, clock: FixedClock, tmp_path: Path
) -> None:
    """Lower MAE is better: the team with the lower best comes first; "Team N" while anonymous."""
    task = tmp_path / "change"
    shutil.copytree(REGRESSION, task)
    toml = (task / "task.toml").read_text()
    (task / "task.toml").write_text(
        toml.replace('official_measure = "Spearman"', 'official_measure = "MAE"')
    )
    _cli(app, "add-task", str(task / "task.toml"))
    _cli(app, "phase", "example-change", "graded", "open", "--start", "2000-01-01T00:00:00Z",
         "--names", "anonymous")  # fmt: skip
    lines = (task / "gold.tsv").read_text().splitlines()
    gold = [(w, float(v)) for w, v in (x.split("\t") for x in lines if not x.startswith("#"))]
    path = "/api/v1/tasks/example-change/graded/runs"

    def upload(email: str, offset: float, slot: str, when: str) -> None:
        clock.set(at(when))
        # Every prediction off by ``offset``: the mean absolute error is ``offset``.
        run = "".join(f"{w}\t{v + offset:.6f}\n" for w, v in gold).encode()
        resp = api_upload(app.test_client(), token_for(app, email), run, path=path, slot=slot)
        assert resp.status_code == 201, resp.get_json()

    upload("alice@example.org", 0.3, "primary", "2016-01-05T12:00:00")
    upload("bob@example.org", 0.25, "primary", "2016-01-05T18:00:00")
    # Better, but not in a ranked slot: it does not count.
    upload("alice@example.org", 0.01, "contrastive1", "2016-01-06T12:00:00")
    csv_path = "/tasks/example-change/graded/progress.csv"
    rows = _progress(app.test_client(), csv_path)[1:]
    got = [(r[0], r[1], round(float(r[2]), 4), round(float(r[3]), 4)) for r in rows]
    # Borealis (Team 2, second to upload) has the lower error: it comes first.
    assert got == [
        ("Team 2", "2016-01-05T18:00:00Z", 0.25, 0.25),
        ("Team 1", "2016-01-05T12:00:00Z", 0.3, 0.3),
    ]
    # Aurora improves its primary: 0.1 < 0.25, so Aurora now comes first.
    upload("alice@example.org", 0.1, "primary", "2016-01-07T12:00:00")
    rows = _progress(app.test_client(), csv_path)[1:]
    assert [(r[0], round(float(r[3]), 4)) for r in rows] == [("Team 1", 0.1), ("Team 2", 0.25)]
    # A member sees their own team by name, the others still anonymous.
    clock.set(at("2016-01-07T13:00:00"))
    own = _progress(_client(app, "bob@example.org"), csv_path)[1:]
    assert [r[0] for r in own] == ["Team 1", "Borealis"]


def test_best_so_far_follows_the_measure_direction() -> None:
    from leaderboard.services.results.standing import best_so_far

    assert best_so_far([30.0, 20.0, 40.0, 35.0], lower_is_better=False) == [30, 30, 40, 40]
    assert best_so_far([0.3, 0.5, 0.1, 0.2], lower_is_better=True) == [0.3, 0.3, 0.1, 0.1]
    assert best_so_far([], lower_is_better=True) == []


def test_the_chart_is_drawn_by_the_worker_then_served_with_an_etag(app: Flask) -> None:
    _upload(app, "alice@example.org", run_for("0.3"))
    _upload(app, "bob@example.org", oracle_run())
    anon = app.test_client()
    first = anon.get(f"{PAGE}/progress.svg")
    assert first.status_code == 404 and first.headers["Retry-After"] == "5"
    assert "being drawn" in first.get_data(as_text=True)
    # The page asks for it too (the worker is asked once all the same) and, until it is
    # drawn, says so instead of embedding a broken image: a script puts the chart in place
    # once it is stored. That page is not kept, so a reload finds the chart.
    for _ in range(2):
        waiting = anon.get(PAGE)
        html = waiting.get_data(as_text=True)
        section = html.split('id="progress"')[1].split("</section>")[0]
        assert "The chart is being drawn" in section and "<img" not in section
        assert f'data-chart-src="{PAGE}/progress.svg?set=test"' in html
        assert '<script src="/static/chart-wait.js" defer></script>' in html
        assert waiting.headers["Cache-Control"] == "no-store"
    assert draw_asked(app) == 1
    html = anon.get(PAGE).get_data(as_text=True)
    assert f'<img src="{PAGE}/progress.svg?set=test"' in html
    assert "being drawn" not in html and "chart-wait.js" not in html
    drawn = anon.get(f"{PAGE}/progress.svg")
    assert drawn.status_code == 200 and drawn.mimetype == "image/svg+xml"
    assert drawn.headers["Cache-Control"] == "public, max-age=60"
    svg = drawn.get_data(as_text=True)
    assert "Aurora" in svg and "Borealis" in svg and "best MAP so far" in svg
    etag = drawn.headers["ETag"]
    assert anon.get(f"{PAGE}/progress.svg", headers={"If-None-Match": etag}).status_code == 304
    # A new run that counts changes what is drawn: a new chart, asked of the worker again.
    _upload(app, "amy@example.org", run_for("0.5", every=2))
    # The first reader of the new revision's page has the worker draw the new chart.
    assert "The chart is being drawn" in anon.get(PAGE).get_data(as_text=True)
    assert draw_asked(app) == 1
    assert f'<img src="{PAGE}/progress.svg?set=test"' in anon.get(PAGE).get_data(as_text=True)
    redrawn = anon.get(f"{PAGE}/progress.svg")
    assert redrawn.status_code == 200 and redrawn.headers["ETag"] != etag
    assert anon.get(f"{PAGE}/progress.pdf").status_code == 404


def test_runs_of_every_set_of_the_subtask_are_listed_with_their_own_ranks(app: Flask) -> None:
    _cli(app, "phase", T3, "A", "open-dev", "--set", "dev", "--start", "2016-01-01T00:00:00Z")
    dev_gold = GOLD_TEST_A.parents[1] / "dev" / GOLD_TEST_A.name.replace("test", "dev")
    dev_run = "".join(
        f"{q}\t{c}\t0\t0.5\tfalse\n"
        for q, c, *_ in (line.split("\t") for line in dev_gold.read_text().splitlines())
    ).encode()
    on_dev = _upload(app, "alice@example.org", dev_run, set="dev")
    on_test = _upload(app, "alice@example.org", run_for("0.3"))
    _upload(app, "bob@example.org", oracle_run())
    rows = _rows(_client(app, "alice@example.org").get(PAGE).get_data(as_text=True))
    assert list(rows) == [on_test["id"], on_dev["id"]]
    assert "<td>dev</td>" in rows[on_dev["id"]] and "<td>test</td>" in rows[on_test["id"]]
    # Alone on dev, first; second to Borealis' oracle on test.
    assert _cell(rows[on_dev["id"]], "run-rank") == "1"
    assert _cell(rows[on_test["id"]], "run-rank") == "2"


@pytest.mark.parametrize(
    ("mode", "says"),
    [
        ("open", "You need a team to upload: "),
        ("closed", "You need a team to upload, and registration is closed"),
    ],
)
def test_a_participant_without_a_team_is_told_how_to_get_one(
    app: Flask, mode: str, says: str
) -> None:
    loose_participant(app, "dana@example.org")
    _cli(app, "settings", "registration", mode)
    html = _client(app, "dana@example.org").get(PAGE).get_data(as_text=True)
    hint = html[html.index('<section id="no-team">') :].split("</section>")[0]
    assert says in hint
    assert ('href="/teams/new"' in hint) == (mode == "open")
    assert 'id="upload-link"' not in html
    # Members, organizers and visitors see no such hint.
    make_organizer(app, "org@example.org")
    for client in (
        _client(app, "alice@example.org"),
        _client(app, "org@example.org", "organizer password"),
        app.test_client(),
    ):
        assert 'id="no-team"' not in client.get(PAGE).get_data(as_text=True)
