"""Every row of the live and frozen tables says how many runs its team uploaded (issue 33)."""

from __future__ import annotations

import csv
import io
import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskCliRunner
from sqlalchemy import select, text

from leaderboard.clock import FixedClock
from leaderboard.models import FrozenTable
from tests.conftest import AppFactory
from tests.helpers.sentiment import PATH, SENTIMENT
from tests.runs import api_upload, make_participant, open_phase, token_for

FLIP = {"positive": "negative", "negative": "neutral", "neutral": "positive"}
ALICE, BOB = "alice@example.org", "bob@example.org"
TOOLTIP = "runs the team submitted to this set, replaced and withdrawn included"


def invoke(runner: FlaskCliRunner, *args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(args=["leaderboard", *args])


def noisy_run(every: int) -> bytes:
    """Return a run that mislabels every ``every``-th item of the gold."""
    items = [
        line.split("\t")
        for line in (SENTIMENT / "gold.tsv").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    return "".join(
        f"{i}\t{FLIP[label] if k % every == 0 else label}\n" for k, (i, label) in enumerate(items)
    ).encode()


@pytest.fixture
def app(make_app: AppFactory) -> Flask:
    return make_app(clock=FixedClock(datetime(2016, 1, 20, 12, tzinfo=UTC)))


@pytest.fixture
def runner(app: Flask) -> FlaskCliRunner:
    return app.test_cli_runner()


def upload(app: Flask, email: str, run: bytes, slot: str = "primary") -> int:
    response = api_upload(app.test_client(), token_for(app, email), run, path=PATH, slot=slot)
    assert response.status_code == 201, response.get_json()
    run_id: int = response.get_json()["id"]
    return run_id


def host(app: Flask, runner: FlaskCliRunner) -> None:
    """Aurora uploads 3 primaries (2 replaced) and a contrastive it withdraws; Borealis 2 runs.

    Borealis' third upload is refused; the three baselines are added.
    """
    assert invoke(runner, "add-task", str(SENTIMENT / "task.toml")).exit_code == 0
    open_phase(app, "example-sentiment", "A", "test")
    make_participant(app, "Aurora", ALICE)
    make_participant(app, "Borealis", BOB)
    for every in (5, 10, 50):
        upload(app, ALICE, noisy_run(every))
    withdrawn = upload(app, ALICE, noisy_run(4), slot="contrastive1")
    client = app.test_client()
    gone = client.post(
        f"/api/v1/runs/{withdrawn}/withdraw",
        headers={"Authorization": f"Bearer {token_for(app, ALICE)}"},
    )
    assert gone.status_code == 200, gone.get_json()
    upload(app, BOB, noisy_run(3))
    upload(app, BOB, noisy_run(6), slot="contrastive1")
    refused = api_upload(
        client, token_for(app, BOB), (SENTIMENT / "run-invalid.tsv").read_bytes(), path=PATH
    )
    assert refused.status_code == 422, refused.get_json()
    assert invoke(runner, "add-baselines", "example-sentiment", "A").exit_code == 0


def output(runner: FlaskCliRunner, fmt: str, *args: str) -> str:
    result = invoke(runner, "table", "example-sentiment", "A", "--format", fmt, *args)
    assert result.exit_code == 0, result.output
    out: str = result.output
    return out


def counts(runner: FlaskCliRunner, *args: str) -> dict[str, Any]:
    """Return each row's ``submitted`` by label, from the Table JSON."""
    rows = json.loads(output(runner, "json", *args))["rows"]
    return {r["label"]: r["submitted"] for r in rows}


def latex_last_cells(latex: str) -> dict[str, str]:
    """Return the last cell of each body row of a LaTeX table, by the row's submission cell."""
    body = latex.split("\\midrule", 1)[1].split("\\bottomrule", 1)[0]
    plain = re.compile(r"^\\textbf\{(.*)\}$")
    out = {}
    for line in body.strip().splitlines():
        cells = [plain.sub(r"\1", c.strip()) for c in line.removesuffix("\\\\").split("&")]
        out[cells[1]] = cells[-1]
    return out


LIVE = {
    "Aurora-primary": 4,
    "Borealis-primary": 2,
    "Borealis-contrastive1": 2,
    "Majority (neutral)": None,
    "Random (seed 7)": None,
    "All positive": None,
}


def test_each_row_shows_its_teams_uploads_in_json_csv_latex_and_html(
    app: Flask, runner: FlaskCliRunner
) -> None:
    host(app, runner)
    # Aurora: 3 primaries (2 replaced) and a withdrawn contrastive; Borealis' refusal is no run.
    assert counts(runner) == LIVE

    header, *body = list(csv.reader(io.StringIO(output(runner, "csv"))))
    assert header[-1] == "Runs"
    by_label = {line[1].rstrip("*"): line[-1] for line in body}
    assert (by_label["Aurora-primary"], by_label["Borealis-contrastive1"]) == ("4", "2")
    assert sorted(by_label.values()) == ["", "", "", "2", "2", "4"]

    latex = output(runner, "latex")
    assert "& kappa & Runs \\\\" in latex
    assert latex_last_cells(latex) == {
        "Aurora-primary": "4",
        "Borealis-contrastive1": "2",
        "Borealis-primary": "2",
        "Majority (neutral)": "",
        "Random (seed 7)": "",
        "All positive": "",
    }

    page = app.test_client().get("/tasks/example-sentiment/A")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert f'class="meta meta-submitted" title="{TOOLTIP}">Runs</th>' in html
    ranking = html.split('<table class="ranking">', 1)[1].split("</tbody>", 1)[0]
    cells = {}
    for row in ranking.split("<tbody>", 1)[1].split("<tr ")[1:]:
        label = re.search(r"<bdi>([^<]+)</bdi>", row)
        count = re.search(r'<td class="meta meta-submitted">(?:<strong>)?([^<]*)', row)
        assert label is not None and count is not None, row
        cells[label.group(1)] = count.group(1)
    assert cells == {label: "" if n is None else str(n) for label, n in LIVE.items()}


def test_a_frozen_table_keeps_the_counts_it_was_frozen_with(
    app: Flask, runner: FlaskCliRunner
) -> None:
    host(app, runner)
    assert invoke(runner, "freeze", "example-sentiment", "A").exit_code == 0
    upload(app, ALICE, noisy_run(25))
    upload(app, BOB, noisy_run(8), slot="contrastive2")
    assert counts(runner)["Aurora-primary"] == 5
    assert counts(runner)["Borealis-contrastive2"] == 3
    official = counts(runner, "--official")
    assert (official["Aurora-primary"], official["Borealis-primary"]) == (4, 2)
    header, *body = list(csv.reader(io.StringIO(output(runner, "csv", "--official"))))
    assert header[-1] == "Runs"
    assert {line[1]: line[-1] for line in body}["Aurora-primary"] == "4"
    verified = invoke(runner, "verify", "example-sentiment", "A")
    assert verified.exit_code == 0, verified.output


def reseal(app: Flask, change: Any) -> None:
    """Change the snapshot's manifest and table, and store them with a matching hash."""
    from leaderboard.services.freeze.core import _canonical, _sha256

    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        if session.get_bind().dialect.name == "postgresql":
            session.execute(
                text("ALTER TABLE frozen_tables DISABLE TRIGGER frozen_tables_immutable")
            )
        else:
            session.execute(text("DROP TRIGGER frozen_tables_no_update"))
        found = session.scalar(select(FrozenTable))
        assert found is not None
        manifest = json.loads(json.dumps(found.manifest))
        frozen_table = json.loads(json.dumps(found.table))
        change(manifest, frozen_table)
        found.manifest, found.table = manifest, frozen_table
        found.manifest_sha256 = _sha256(
            _canonical({"manifest": manifest, "table": frozen_table, "renders": found.renders})
        )
        if session.get_bind().dialect.name == "postgresql":
            session.flush()
            session.execute(
                text("ALTER TABLE frozen_tables ENABLE TRIGGER frozen_tables_immutable")
            )
        session.commit()


def test_a_table_frozen_before_the_counts_still_reads_and_verifies(
    app: Flask, runner: FlaskCliRunner
) -> None:
    host(app, runner)
    assert invoke(runner, "freeze", "example-sentiment", "A").exit_code == 0

    def as_before(manifest: dict[str, Any], frozen_table: dict[str, Any]) -> None:
        for item in manifest["runs"]:
            del item["entry"]["submitted"]
        for row in frozen_table["rows"]:
            del row["submitted"]
        # Nor did tables then state their part and board.
        del frozen_table["part"], frozen_table["board"]

    reseal(app, as_before)
    # The API serves the stored table as it is: its rows have no count, and none is made up.
    served = app.test_client().get(
        "/api/v1/tasks/example-sentiment/A/table",
        headers={"Authorization": f"Bearer {token_for(app, ALICE)}"},
    )
    assert served.status_code == 200, served.get_json()
    rows = served.get_json()["rows"]
    assert len(rows) == 6 and all("submitted" not in row for row in rows)
    verified = invoke(runner, "verify", "example-sentiment", "A")
    assert verified.exit_code == 0, verified.output


def test_verify_reports_a_frozen_count_that_was_changed(app: Flask, runner: FlaskCliRunner) -> None:
    host(app, runner)
    assert invoke(runner, "freeze", "example-sentiment", "A").exit_code == 0

    def fewer(_manifest: dict[str, Any], frozen_table: dict[str, Any]) -> None:
        row = next(r for r in frozen_table["rows"] if r["label"] == "Aurora-primary")
        row["submitted"] = 1

    reseal(app, fewer)
    verified = invoke(runner, "verify", "example-sentiment", "A")
    assert verified.exit_code == 1
    assert "the table rebuilt from the re-scored runs differs from the frozen table" in (
        verified.output
    )
