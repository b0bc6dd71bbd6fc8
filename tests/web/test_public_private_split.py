"""A split set end to end: scores per part, the public part shown until release, then shake-up."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sklearn import metrics
from sqlalchemy import select
from sqlalchemy.orm import undefer

from leaderboard.models import FrozenTable, Run, Score
from leaderboard.services.results.query_summaries import per_query_values, summarize_set
from leaderboard.services.results.significance import stored_scores
from leaderboard.services.tasks.catalog import load_set, resolve
from tests.conftest import csrf_from, login
from tests.helpers.item_tasks import pairs
from tests.helpers.ladder import ladder_on_means
from tests.runs import api_upload, make_organizer, make_participant, open_task, token_for

SENTIMENT = Path(__file__).resolve().parents[2] / "docs" / "examples" / "classification"
LABELS = ["positive", "negative", "neutral"]
TASK, SUBTASK = "example-sentiment", "A"
UPLOAD = f"/api/v1/tasks/{TASK}/{SUBTASK}/runs"
TABLE = f"/api/v1/tasks/{TASK}/{SUBTASK}/table"
PAGE = f"/tasks/{TASK}/{SUBTASK}"
FRACTION, SEED = 0.5, 2016


def public_by_rule(unit: str) -> bool:
    """Return whether a unit is public, written out from the rule as published."""
    digest = hashlib.sha256(f"{SEED}:{unit}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < FRACTION


def split_task(tmp_path: Path, public: str) -> Path:
    """Copy the sentiment example with a ``public = ...`` line in its test set."""
    folder = tmp_path / "task"
    shutil.copytree(SENTIMENT, folder)
    toml = folder / "task.toml"
    text = toml.read_text().replace('gold = "gold.tsv"', f'gold = "gold.tsv"\npublic = {public}')
    toml.write_text(text)
    return folder


def macro_f1(ids: list[str], gold: dict[str, str], run: dict[str, str]) -> float:
    """Return scikit-learn's macro-F1 over three labels on some items."""
    return float(
        metrics.f1_score(
            [gold[i] for i in ids], [run[i] for i in ids], labels=LABELS, average="macro"
        )
    )


@pytest.fixture
def hosted(app: Flask, runner: FlaskCliRunner, tmp_path: Path) -> dict[str, str]:
    """Host the split task; return tokens of a participant and an organizer."""
    folder = split_task(tmp_path, f"{{ fraction = {FRACTION}, seed = {SEED} }}")
    result = runner.invoke(args=["leaderboard", "add-task", str(folder / "task.toml")])
    assert result.exit_code == 0, result.output
    open_task(app, folder / "task.toml")
    make_participant(app, "Aurora", "alice@example.org")
    make_organizer(app, "org@example.org")
    return {"alice": token_for(app, "alice@example.org"), "org": token_for(app, "org@example.org")}


def _get(client: FlaskClient, token: str, path: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    resp = client.get(path, headers={"Authorization": f"Bearer {token}"})
    return resp.status_code, resp.get_json()


def _release(runner: FlaskCliRunner, value: str = "visible") -> str:
    result = runner.invoke(args=["leaderboard", "phase", TASK, SUBTASK, "open", "--private", value])
    assert result.exit_code == 0, result.output
    return result.output


def test_scores_are_stored_per_part_and_corpus_measures_recomputed(
    app: Flask, client: FlaskClient, hosted: dict[str, str]
) -> None:
    gold, run = pairs(SENTIMENT / "gold.tsv"), pairs(SENTIMENT / "run-valid.tsv")
    public = [i for i in gold if public_by_rule(i)]
    private = [i for i in gold if not public_by_rule(i)]
    assert public and private
    resp = api_upload(
        client, hosted["alice"], (SENTIMENT / "run-valid.tsv").read_bytes(), path=UPLOAD
    )
    body = resp.get_json()
    assert resp.status_code == 201, body
    # The participant's answer is on the public part, and says so.
    assert body["part"] == "public"
    assert body["scores"]["macro-F1"] == pytest.approx(macro_f1(public, gold, run), abs=1e-12)
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        rows = session.scalars(select(Score).where(Score.run_id == body["id"])).all()
        by_part = {(s.part, s.measure): s.value for s in rows}
    assert {p for p, _m in by_part} == {"public", "private", "all"}
    for part, ids in (("public", public), ("private", private), ("all", list(gold))):
        assert by_part[(part, "macro-F1")] == pytest.approx(macro_f1(ids, gold, run), abs=1e-12)
        expected_acc = metrics.accuracy_score([gold[i] for i in ids], [run[i] for i in ids])
        assert by_part[(part, "Acc")] == pytest.approx(expected_acc, abs=1e-12)
    # A corpus measure is not the average of the parts' values.
    mean_of_parts = (by_part[("public", "macro-F1")] + by_part[("private", "macro-F1")]) / 2
    assert by_part[("all", "macro-F1")] != pytest.approx(mean_of_parts, abs=1e-9)


def test_participants_see_the_public_part_only_until_release(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner, hosted: dict[str, str]
) -> None:
    gold, run = pairs(SENTIMENT / "gold.tsv"), pairs(SENTIMENT / "run-valid.tsv")
    public = [i for i in gold if public_by_rule(i)]
    private = [i for i in gold if not public_by_rule(i)]
    body = api_upload(
        client, hosted["alice"], (SENTIMENT / "run-valid.tsv").read_bytes(), path=UPLOAD
    ).get_json()
    alice, org = hosted["alice"], hosted["org"]

    status, table = _get(client, alice, TABLE)
    assert status == 200 and table["part"] == "public"
    cell = next(r for r in table["rows"] if r["kind"] == "run")["cells"]["macro-F1"]
    assert cell["value"] == pytest.approx(macro_f1(public, gold, run) * 100, abs=1e-9) or cell[
        "value"
    ] == pytest.approx(macro_f1(public, gold, run), abs=1e-12)
    for part in ("private", "all"):
        status, refused = _get(client, alice, f"{TABLE}?part={part}")
        assert status == 403, refused
        assert str(round(macro_f1(private, gold, run), 4)) not in json.dumps(refused)
    status, bad = _get(client, alice, f"{TABLE}?part=secret")
    assert status == 400 and "public, private, all" in bad["error"]
    # The organizer reads the public part by default, as participants do, and may ask the others.
    status, table = _get(client, org, TABLE)
    assert status == 200 and table["part"] == "public"
    status, table = _get(client, org, f"{TABLE}?part=private")
    assert status == 200 and table["part"] == "private"
    # The page and every export are on the public part, and say so; asking for another is refused.
    page = client.get(PAGE).get_data(as_text=True)
    assert "public part" in page
    exported = json.loads(client.get(f"{PAGE}/results.json").get_data(as_text=True))
    assert exported["part"] == "public"
    assert client.get(f"{PAGE}?part=private").status_code == 403
    assert client.get(f"{PAGE}/results.csv?part=private").status_code == 403
    status, seen = _get(client, alice, f"/api/v1/runs/{body['id']}")
    assert status == 200 and seen["part"] == "public"
    team = app.test_client()
    login(team, "alice@example.org", "correct horse battery")
    assert 'id="scores-part"' in team.get(f"/runs/{body['id']}").get_data(as_text=True)
    queries = team.get(f"/runs/{body['id']}/queries").get_data(as_text=True)
    assert 'id="values-part"' in queries and "public part" in queries

    output = _release(runner)
    assert "private part visible" in output
    status, table = _get(client, alice, TABLE)
    assert status == 200 and table["part"] == "private"
    status, table = _get(client, alice, f"{TABLE}?part=all")
    assert status == 200 and table["part"] == "all"
    status, seen = _get(client, alice, f"/api/v1/runs/{body['id']}")
    assert seen["part"] == "private"
    assert seen["scores"]["macro-F1"] == pytest.approx(macro_f1(private, gold, run), abs=1e-12)


def test_the_phase_page_releases_the_private_part(
    app: Flask, client: FlaskClient, hosted: dict[str, str]
) -> None:
    api_upload(client, hosted["alice"], (SENTIMENT / "run-valid.tsv").read_bytes(), path=UPLOAD)
    org = app.test_client()
    login(org, "org@example.org", "organizer password")
    page_url = f"/organizer/tasks/{TASK}/{SUBTASK}/phase?name=open"
    page = org.get(page_url).get_data(as_text=True)
    assert 'name="private"' in page
    data = {"name": "open", "eval_set": "test", "zone": "UTC", "late": "", "corrections": ""}
    data.update(results="", names="", diagnostics="", daily_quota="", total_quota="")
    token = csrf_from(page)
    resp = org.post(
        f"/organizer/tasks/{TASK}/{SUBTASK}/phase",
        data={**data, "private": "visible", "csrf_token": token},
    )
    assert resp.status_code == 302, resp.get_data(as_text=True)
    status, table = _get(client, hosted["alice"], TABLE)
    assert status == 200 and table["part"] == "private"


def test_a_freeze_ranks_by_the_private_part_once_released(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner, hosted: dict[str, str]
) -> None:
    api_upload(client, hosted["alice"], (SENTIMENT / "run-valid.tsv").read_bytes(), path=UPLOAD)
    refused = runner.invoke(args=["leaderboard", "freeze", TASK, SUBTASK])
    assert refused.exit_code != 0
    assert "release it first" in refused.output
    _release(runner)
    done = runner.invoke(args=["leaderboard", "freeze", TASK, SUBTASK])
    assert done.exit_code == 0, done.output
    status, table = _get(client, hosted["alice"], f"{TABLE}?view=official")
    assert status == 200 and table["part"] == "private"
    verified = runner.invoke(args=["leaderboard", "verify", TASK, SUBTASK])
    assert verified.exit_code == 0, verified.output
    # The freeze keeps the split, so that anyone can check it once it is published.
    gold = pairs(SENTIMENT / "gold.tsv")
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        manifest = session.scalars(select(FrozenTable)).one().manifest
    split = manifest["split"]
    assert (split["rule"], split["fraction"], split["seed"]) == ("sha256", FRACTION, SEED)
    assert split["public_units"] == [i for i in gold if public_by_rule(i)]
    assert split["private_units"] == [i for i in gold if not public_by_rule(i)]


def test_a_listed_split_refuses_ids_that_are_not_units(
    runner: FlaskCliRunner, tmp_path: Path
) -> None:
    folder = split_task(tmp_path, '{ units = "public.txt" }')
    (folder / "public.txt").write_text("tw-001\nnot-an-item\ntw-001\n")
    result = runner.invoke(args=["leaderboard", "add-task", str(folder / "task.toml")])
    assert result.exit_code != 0
    assert "'not-an-item' is not a unit of the gold" in result.output
    assert "listed twice" in result.output


@pytest.mark.parametrize(
    ("public", "message"),
    [
        ("{ fraction = 1.5, seed = 1 }", "strictly between 0 and 1"),
        ("{ fraction = 0.5 }", "public.seed: is required"),
        ('{ fraction = 0.5, seed = 1, units = "x.txt" }', "not both"),
        ("{ fraction = 0.5, seed = 1, size = 3 }", "unknown key"),
        ("0.5", "must be a table"),
    ],
)
def test_a_wrong_split_is_refused_with_its_key(
    runner: FlaskCliRunner, tmp_path: Path, public: str, message: str
) -> None:
    folder = split_task(tmp_path, public)
    result = runner.invoke(args=["leaderboard", "add-task", str(folder / "task.toml")])
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output


def test_runs_stay_unsplit_without_a_split(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner
) -> None:
    result = runner.invoke(args=["leaderboard", "add-task", str(SENTIMENT / "task.toml")])
    assert result.exit_code == 0, result.output
    open_task(app, SENTIMENT / "task.toml")
    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    body = api_upload(
        client, token, (SENTIMENT / "run-valid.tsv").read_bytes(), path=UPLOAD
    ).get_json()
    assert body["part"] == "all"
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        parts = set(session.scalars(select(Score.part).where(Score.run_id == body["id"])))
        assert parts == {"all"}
        assert session.get(Run, body["id"]) is not None
    status, refused = _get(client, token, f"{TABLE}?part=public")
    assert status == 400 and "no public/private split" in refused["error"]


def _run_right_on(ids: set[str]) -> bytes:
    """Return a run right on ``ids`` and wrong (another label) on every other item."""
    gold = pairs(SENTIMENT / "gold.tsv")
    lines = []
    for item, label in gold.items():
        wrong = LABELS[(LABELS.index(label) + 1) % 3]
        lines.append(f"{item}\t{label if item in ids else wrong}\n")
    return "".join(lines).encode()


def test_after_release_rows_carry_their_public_rank_and_shakeup(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner, hosted: dict[str, str]
) -> None:
    gold = pairs(SENTIMENT / "gold.tsv")
    public = {i for i in gold if public_by_rule(i)}
    private = set(gold) - public
    make_participant(app, "Borealis", "bob@example.org")
    bob = token_for(app, "bob@example.org")
    # Aurora fits the public part; Borealis does better on the private one.
    some_private = set(sorted(private)[: len(private) // 2])
    api_upload(client, hosted["alice"], _run_right_on(public), path=UPLOAD)
    api_upload(client, bob, _run_right_on(some_private | set(sorted(public)[:3])), path=UPLOAD)
    status, before = _get(client, bob, TABLE)
    assert [r["team"] for r in before["rows"] if r["kind"] == "run" and r["rank"] == 1] == [
        "Aurora"
    ]
    assert all("shakeup" not in r for r in before["rows"])
    _release(runner)
    status, after = _get(client, bob, TABLE)
    assert after["part"] == "private"
    rows = {r["team"]: r for r in after["rows"] if r["kind"] == "run"}
    assert rows["Borealis"]["rank"] == 1 and rows["Borealis"]["public_rank"] == 2
    assert rows["Borealis"]["shakeup"] == 1 and rows["Aurora"]["shakeup"] == -1
    page = client.get(PAGE).get_data(as_text=True)
    assert "Shake-up" in page and "+1" in page
    assert runner.invoke(args=["leaderboard", "freeze", TASK, SUBTASK]).exit_code == 0
    status, frozen = _get(client, bob, f"{TABLE}?view=official")
    assert {r["team"]: r["shakeup"] for r in frozen["rows"] if r["kind"] == "run"} == {
        "Aurora": -1,
        "Borealis": 1,
    }
    verified = runner.invoke(args=["leaderboard", "verify", TASK, SUBTASK])
    assert verified.exit_code == 0, verified.output


def test_baselines_and_rescoring_cover_every_part(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner, hosted: dict[str, str]
) -> None:
    gold = pairs(SENTIMENT / "gold.tsv")
    private = [i for i in gold if not public_by_rule(i)]
    result = runner.invoke(args=["leaderboard", "add-baselines", TASK, SUBTASK])
    assert result.exit_code == 0, result.output
    body = api_upload(
        client, hosted["alice"], (SENTIMENT / "run-valid.tsv").read_bytes(), path=UPLOAD
    ).get_json()
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        baselines = session.scalars(select(Run).where(Run.team_id.is_(None))).all()
        assert baselines
        for run in baselines:
            parts = {s.part for s in run.scores if s.current}
            assert parts == {"public", "private", "all"}, run.label
        majority = next(r for r in baselines if (r.label or "").startswith("Majority"))
        label = (majority.label or "").split("(")[1].rstrip(")")
        expected = sum(gold[i] == label for i in private) / len(private)
        value = next(
            s.value
            for s in majority.scores
            if s.current and s.part == "private" and s.measure == "Acc"
        )
        assert value == pytest.approx(expected, abs=1e-12)
    rescored = runner.invoke(args=["leaderboard", "rescore", TASK, SUBTASK])
    assert rescored.exit_code == 0, rescored.output
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        current = session.scalars(
            select(Score).where(Score.run_id == body["id"], Score.current.is_(True))
        ).all()
        assert sorted({s.part for s in current}) == ["all", "private", "public"]
        assert len(current) == 3 * len({s.measure for s in current})


def test_live_ranks_are_on_the_public_part_until_release(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner, hosted: dict[str, str]
) -> None:
    gold = pairs(SENTIMENT / "gold.tsv")

    def moved(label: str) -> str:
        return LABELS[(LABELS.index(label) + 1) % 3]

    # Aurora's run is right on every public item only, Borealis' on every private one only:
    # Aurora ranks first on the public part, Borealis on the private part and on all.
    right_public = {i: gold[i] if public_by_rule(i) else moved(gold[i]) for i in gold}
    right_private = {i: moved(gold[i]) if public_by_rule(i) else gold[i] for i in gold}
    assert sum(map(public_by_rule, gold)) < len(gold) / 2
    make_participant(app, "Borealis", "bob@example.org")
    bob = token_for(app, "bob@example.org")
    ids = {}
    for name, token, run in (("alice", hosted["alice"], right_public), ("bob", bob, right_private)):
        data = "".join(f"{i}\t{label}\n" for i, label in run.items()).encode()
        ids[name] = api_upload(client, token, data, path=UPLOAD).get_json()["id"]
    alice = app.test_client()
    login(alice, "alice@example.org", "correct horse battery")
    page = alice.get(f"/runs/{ids['alice']}").get_data(as_text=True)
    assert '<span id="run-rank">1</span>' in page
    _release(runner)
    page = alice.get(f"/runs/{ids['alice']}").get_data(as_text=True)
    assert '<span id="run-rank">2</span>' in page


def test_the_table_command_prints_any_part_for_organizers(
    client: FlaskClient, runner: FlaskCliRunner, hosted: dict[str, str]
) -> None:
    api_upload(client, hosted["alice"], (SENTIMENT / "run-valid.tsv").read_bytes(), path=UPLOAD)
    for part in ("public", "private", "all"):
        result = runner.invoke(
            args=["leaderboard", "table", TASK, SUBTASK, "--format", "json", "--part", part]
        )
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["part"] == part
    default = runner.invoke(args=["leaderboard", "table", TASK, SUBTASK, "--format", "json"])
    assert json.loads(default.output)["part"] == "public"
    both = runner.invoke(
        args=["leaderboard", "table", TASK, SUBTASK, "--official", "--part", "all"]
    )
    assert both.exit_code != 0 and "--part" in both.output


def correct(ids: list[str], gold: dict[str, str], run: dict[str, str]) -> dict[str, float]:
    """Return each item's accuracy (1.0 right, 0.0 wrong), the per-item values Acc keeps."""
    return {i: float(gold[i] == run[i]) for i in ids}


def test_a_parts_per_item_values_are_kept_once_and_read_on_its_units(
    app: Flask, client: FlaskClient, hosted: dict[str, str]
) -> None:
    gold, run = pairs(SENTIMENT / "gold.tsv"), pairs(SENTIMENT / "run-valid.tsv")
    parts = {
        "public": [i for i in gold if public_by_rule(i)],
        "private": [i for i in gold if not public_by_rule(i)],
        "all": list(gold),
    }
    run_id = api_upload(
        client, hosted["alice"], (SENTIMENT / "run-valid.tsv").read_bytes(), path=UPLOAD
    ).get_json()["id"]
    ext = app.extensions["leaderboard"]
    with ext["sessionmaker"]() as session:
        rows = {
            (s.part, s.measure): s
            for s in session.scalars(
                select(Score)
                .where(Score.run_id == run_id)
                .options(undefer(Score.per_query), undefer(Score.item_stats))
            )
        }
        # Kept once, on all units: a part's row holds no per-item values of its own.
        assert rows[("all", "Acc")].per_query == correct(parts["all"], gold, run)
        assert not rows[("all", "Acc")].units_from_all
        for part in ("public", "private"):
            assert rows[(part, "Acc")].units_from_all
            assert rows[(part, "Acc")].per_query is None
        split = load_set(session, ext["store"], resolve(session, TASK, SUBTASK, "test")).split
        assert split is not None
        for part, ids in parts.items():
            expected = correct(ids, gold, run)
            assert per_query_values(session, [run_id], "Acc", part, split) == {run_id: expected}
            kept = stored_scores(session, [run_id], "Acc", part, split)[run_id]
            assert kept.per_query == expected
            assert list(kept.per_query) == ids  # in gold order
        # A set that lost its split has nothing to derive a part's values from.
        assert per_query_values(session, [run_id], "Acc", "public", None) == {}
        # A row stored before parts shared their values is read as it was stored.
        rows[("public", "Acc")].units_from_all = False
        rows[("public", "Acc")].per_query = {"tw-001": 0.25}
        session.flush()
        assert per_query_values(session, [run_id], "Acc", "public", split) == {
            run_id: {"tw-001": 0.25}
        }
        session.rollback()
        assert summarize_set(session, ext["store"], rows[("all", "Acc")].run.eval_set_id)
        session.commit()
    # The run's per-item page lists the public items only (no private id reaches the team).
    team = app.test_client()
    login(team, "alice@example.org", "correct horse battery")
    page = team.get(f"/runs/{run_id}/queries?measure=Acc").get_data(as_text=True)
    assert all(f">{i}<" in page for i in parts["public"])
    assert not any(i in page for i in parts["private"])


def test_the_ladder_on_a_split_set_decides_on_the_public_units(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    folder = split_task(tmp_path, f"{{ fraction = {FRACTION}, seed = {SEED} }}")
    toml = folder / "task.toml"
    toml.write_text(
        toml.read_text().replace('official_measure = "macro-F1"', 'official_measure = "Acc"')
    )
    result = runner.invoke(args=["leaderboard", "add-task", str(toml)])
    assert result.exit_code == 0, result.output
    open_task(app, toml)
    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    _release(runner, "hidden")
    result = runner.invoke(
        args=["leaderboard", "phase", TASK, SUBTASK, "open", "--board", "ladder"]
    )
    assert result.exit_code == 0, result.output
    gold = pairs(SENTIMENT / "gold.tsv")
    public = [i for i in gold if public_by_rule(i)]
    private = [i for i in gold if not public_by_rule(i)]

    def wrong_on(ids: list[str]) -> dict[str, str]:
        return {i: LABELS[(LABELS.index(v) + 1) % 3] if i in ids else v for i, v in gold.items()}

    first = wrong_on(public[:10] + private[:12])
    # Better on ten private items only: on all units a gain, on the public part none.
    second = wrong_on(public[:10] + private[:2])
    # Better on eight public items: a gain where the Ladder looks.
    third = wrong_on(public[:2] + private[:2])
    runs = [first, second, third]
    expected = ladder_on_means([np.array(list(correct(public, gold, r).values())) for r in runs])
    assert [replaced for replaced, _ in expected] == [True, False, True]
    for r, (replaced, _released) in zip(runs, expected, strict=True):
        text = "".join(f"{i}\t{v}\n" for i, v in r.items()).encode()
        body = api_upload(client, token, text, path=UPLOAD).get_json()
        assert body["ladder"]["replaced"] is replaced, body
    status, shown = _get(client, token, TABLE)
    assert status == 200 and shown["board"] == "ladder" and shown["part"] == "public"
    [row] = [r for r in shown["rows"] if r["kind"] == "run"]
    assert row["cells"]["Acc"]["value"] == pytest.approx(expected[-1][1], abs=1e-12)


def test_meta_eval_splits_the_part_every_reader_sees(
    client: FlaskClient, runner: FlaskCliRunner, hosted: dict[str, str]
) -> None:
    api_upload(client, hosted["alice"], (SENTIMENT / "run-valid.tsv").read_bytes(), path=UPLOAD)
    assert runner.invoke(args=["leaderboard", "add-baselines", TASK, SUBTASK]).exit_code == 0
    gold = pairs(SENTIMENT / "gold.tsv")

    def units() -> int:
        args = ["leaderboard", "meta-eval", TASK, SUBTASK, "--splits", "20"]
        result = runner.invoke(args=args)
        assert result.exit_code == 0, result.output
        body = json.loads(result.stdout)
        assert body["runs"] == 4  # the run and three baselines ranked "as if"
        return int(body["units"])

    assert units() == sum(public_by_rule(i) for i in gold)
    _release(runner)
    assert units() == sum(not public_by_rule(i) for i in gold)
