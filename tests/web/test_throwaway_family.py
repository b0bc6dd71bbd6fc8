"""A family from the test folder is hosted end to end without touching the package."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from leaderboard.tasks.definition import DefinitionError
from leaderboard.tasks.families import get_family, registered_family
from tests.conftest import csrf_from, login
from tests.families.throwaway import YesNoFamily
from tests.runs import make_organizer, make_participant, open_task

TASK = "yes-or-no"
DEFINITION = f"""\
slug = "{TASK}"
title = "Yes or no"
family = "throwaway-yesno"
official_measure = "Agree"
measures = ["Agree"]

[runs]
slots = ["primary", "contrastive1"]
ranked_slots = ["primary"]

[[subtasks]]
slug = "main"
title = "Answer each item"
sets = [{{ slug = "test", title = "Test", gold = "gold.tsv" }}]
"""
GOLD = b"i1\tyes\ni2\tno\ni3\tyes\ni4\tno\n"


@pytest.fixture
def family() -> Iterator[YesNoFamily]:
    with registered_family(YesNoFamily()) as hosted:
        yield hosted
    with pytest.raises(DefinitionError, match="unknown family 'throwaway-yesno'"):
        get_family("throwaway-yesno")


def _host(app: Flask, runner: FlaskCliRunner, tmp_path: Path) -> Path:
    folder = tmp_path / "task"
    folder.mkdir()
    (folder / "gold.tsv").write_bytes(GOLD)
    (folder / "task.toml").write_text(DEFINITION)
    result = runner.invoke(args=["leaderboard", "add-task", str(folder / "task.toml")])
    assert result.exit_code == 0, result.output
    open_task(app, folder / "task.toml")
    return folder


@pytest.fixture
def folder(family: YesNoFamily, app: Flask, runner: FlaskCliRunner, tmp_path: Path) -> Path:
    """Host the yes-or-no task; return its definition's folder."""
    return _host(app, runner, tmp_path)


@pytest.fixture
def verdict(app: Flask, folder: Path) -> str:
    """Upload Aurora's run of all yes through the web form; return the verdict page."""
    make_participant(app, "Aurora", "alice@example.org")
    alice = app.test_client()
    login(alice, "alice@example.org", "correct horse battery")
    page = alice.get(f"/tasks/{TASK}/main/submit").get_data(as_text=True)
    resp = alice.post(
        f"/tasks/{TASK}/main/submit",
        data={
            "csrf_token": csrf_from(page),
            "eval_set": "test",
            "slot": "primary",
            "file": (io.BytesIO(b"i1\tyes\ni2\tyes\ni3\tyes\ni4\tyes\n"), "run.tsv"),
        },
        content_type="multipart/form-data",
    )
    assert resp.status_code == 302, resp.get_data(as_text=True)[:2000]
    return alice.get(resp.headers["Location"]).get_data(as_text=True)


@pytest.fixture
def org(app: Flask, folder: Path) -> FlaskClient:
    """Log an organizer in."""
    make_organizer(app, "org@example.org")
    client = app.test_client()
    login(client, "org@example.org", "organizer password")
    return client


@pytest.fixture
def imported(org: FlaskClient, verdict: str) -> FlaskClient:
    """Import Kelp's run in the family's mode: one item missing (a run note), answers flipped."""
    subtask_page = org.get(f"/organizer/tasks/{TASK}/main").get_data(as_text=True)
    resp = org.post(
        f"/organizer/tasks/{TASK}/main/import",
        data={
            "csrf_token": csrf_from(subtask_page),
            "eval_set": "test",
            "team": "Kelp",
            "slot": "primary",
            "mode": "flip",
            "file": (io.BytesIO(b"i1\tno\ni2\tyes\ni3\tno\n"), "kelp.tsv"),
        },
        content_type="multipart/form-data",
    )
    assert resp.status_code == 302, resp.get_data(as_text=True)[:2000]
    return org


def test_a_web_upload_to_the_familys_task_shows_its_score(verdict: str) -> None:
    assert "Agree" in verdict and "50.0" in verdict


def test_the_import_form_offers_strict_lenient_and_the_familys_mode(org: FlaskClient) -> None:
    subtask_page = org.get(f"/organizer/tasks/{TASK}/main").get_data(as_text=True)
    modes = re.search(r'<select[^>]*name="mode".*?</select>', subtask_page, re.S)
    assert modes is not None
    assert re.findall(r'<option[^>]*value="([^"]*)"', modes.group(0)) == [
        "strict", "lenient", "flip",
    ]  # fmt: skip


def test_the_results_show_the_familys_flag_marker_and_run_notes(imported: FlaskClient) -> None:
    table = json.loads(imported.get(f"/tasks/{TASK}/main/results.json").get_data(as_text=True))
    cells = {row["label"]: row["cells"]["Agree"] for row in table["rows"]}
    assert cells["Kelp-primary"]["value"] == pytest.approx(75.0)  # 3 of 4 after flipping
    assert cells["Aurora-primary"]["note"] == "◊"
    assert "⁑ Kelp-primary: 1 of 4 items missing" in table["footnotes"]
    assert "◊ the run gives the same answer to every item" in table["footnotes"]
    html = imported.get(f"/tasks/{TASK}/main").get_data(as_text=True)
    assert '<bdi>Kelp-primary</bdi><span class="marker">⁑</span>' in html
    assert '<sup class="note">◊</sup>' in html
    assert "<li>⁑ Kelp-primary: 1 of 4 items missing</li>" in html


def test_a_runs_page_shows_its_note_under_the_scores(imported: FlaskClient) -> None:
    run_page = imported.get("/runs/2").get_data(as_text=True)
    assert '<p class="note">⁑ 1 of 4 items missing</p>' in run_page


def test_the_command_line_offers_the_familys_flags_while_it_is_hosted(
    runner: FlaskCliRunner, folder: Path
) -> None:
    help_text = runner.invoke(args=["leaderboard", "import-runs", "--help"]).output
    assert "--flip" in help_text and "With --lenient: flip every answer." in help_text


def test_set_gold_reads_the_familys_judge_option(
    runner: FlaskCliRunner, folder: Path, imported: FlaskClient
) -> None:
    gold = folder / "gold-2.tsv"
    gold.write_bytes(GOLD.replace(b"i4\tno", b"i4\tyes"))
    wrong = runner.invoke(
        args=["leaderboard", "set-gold", TASK, "main", str(gold), "--judge", "other"]
    )
    assert wrong.exit_code != 0
    assert "Unknown judge 'other'; this set has main." in wrong.output
    right = runner.invoke(
        args=["leaderboard", "set-gold", TASK, "main", str(gold), "--judge", "main"]
    )
    assert right.exit_code == 0, right.output
    assert "Re-scored 2 run(s)." in right.output


def test_another_familys_import_flag_is_accepted_and_ignored(
    family: YesNoFamily, app: Flask, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    folder = _host(app, runner, tmp_path)
    run = folder / "run.tsv"
    run.write_bytes(GOLD)
    result = runner.invoke(
        args=["leaderboard", "import-runs", TASK, "main", str(run), "--team", "Kelp",
              "--slot", "primary", "--resort"]
    )  # fmt: skip
    # --resort is another family's mode: accepted as a flag, ignored by this family.
    assert result.exit_code == 0, result.output
    assert "imported Kelp/run.tsv" in result.output


def test_a_family_without_units_refuses_a_split(
    family: YesNoFamily, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    folder = tmp_path / "task"
    folder.mkdir()
    (folder / "gold.tsv").write_bytes(GOLD)
    split = 'gold = "gold.tsv", public = { fraction = 0.5, seed = 1 }'
    (folder / "task.toml").write_text(DEFINITION.replace('gold = "gold.tsv"', split))
    result = runner.invoke(args=["leaderboard", "add-task", str(folder / "task.toml")])
    assert result.exit_code != 0
    assert "throwaway-yesno family have no units to split" in result.output
    assert "Traceback" not in result.output
