"""The ad hoc example of docs/examples/trec hosted end to end, scored as pytrec_eval scores it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytrec_eval
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import select

from leaderboard.models import Run, Score
from tests.conftest import login
from tests.helpers.uploads import form_upload
from tests.runs import api_upload, make_participant, open_task, token_for
from tests.security import compile_latex

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "trec"
API = "/api/v1/tasks/example-adhoc/adhoc/runs"
#: Our keys and the trec_eval measures they are.
MEASURES = {"nDCG@10": "ndcg_cut_10", "P@10": "P_10", "R@100": "recall_100", "MAP": "map"}


def reference() -> dict[str, dict[str, float]]:
    """Return pytrec_eval's per-topic values of the example's valid run (relevant iff grade ≥ 1)."""
    qrels: dict[str, dict[str, int]] = {}
    for line in (EXAMPLE / "qrels.txt").read_text().splitlines():
        if line.startswith("#"):
            continue
        q, _, d, g = line.split()
        qrels.setdefault(q, {})[d] = int(g)
    run: dict[str, dict[str, float]] = {}
    for line in (EXAMPLE / "run-valid.txt").read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    evaluator = pytrec_eval.RelevanceEvaluator(
        qrels, {"ndcg_cut.10", "P.10", "recall.100", "map"}, relevance_level=1
    )
    return evaluator.evaluate(run)


@pytest.fixture()
def hosted(app: Flask, runner: FlaskCliRunner) -> str:
    """Host the example task and return a participant's API token."""
    result = runner.invoke(args=["leaderboard", "add-task", str(EXAMPLE / "task.toml")])
    assert result.exit_code == 0, result.output
    open_task(app, EXAMPLE / "task.toml")
    make_participant(app, "Aurora", "alice@example.org")
    return token_for(app, "alice@example.org")


def upload(client: FlaskClient, token: str, name: str, slot: str = "primary"):  # type: ignore[no-untyped-def]
    data = (EXAMPLE / name).read_bytes()
    return api_upload(
        client, token, data, path=API, slot=slot, filenames={"file": name}, name="bm25"
    )


def test_valid_run_is_scored_as_pytrec_eval_and_stores_per_topic_values(
    app: Flask, client: FlaskClient, hosted: str
) -> None:
    resp = upload(client, hosted, "run-valid.txt")
    body = resp.get_json()
    assert resp.status_code == 201, body
    per_topic = reference()
    assert len(per_topic) == 6
    for key, name in MEASURES.items():
        mean = sum(v[name] for v in per_topic.values()) / len(per_topic)
        assert body["scores"][key] == pytest.approx(mean, abs=1e-12), key
        assert body["official"][key] == format(mean, ".4f")
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        run = session.scalars(select(Run).where(Run.kind == "run")).one()
        stored = {
            s.measure: s.per_query
            for s in session.scalars(select(Score).where(Score.run_id == run.id))
        }
    for key, name in MEASURES.items():
        assert stored[key] == pytest.approx({q: v[name] for q, v in per_topic.items()}), key


def test_invalid_run_names_every_bad_line(client: FlaskClient, hosted: str) -> None:
    resp = upload(client, hosted, "run-invalid.txt")
    assert resp.status_code == 422
    issues = resp.get_json()["issues"]
    by_line = {i["line"]: i["message"] for i in issues}
    assert {8, 13, 21} <= set(by_line), issues
    assert "not-a-score" in by_line[8]
    assert "999" in by_line[13]
    for message in by_line.values():
        for car_word in ("paragraph", "benchmarkY1test", "enwiki", "CAR"):
            assert car_word not in message


def test_table_and_every_export(
    app: Flask, client: FlaskClient, hosted: str, tmp_path: Path
) -> None:
    assert upload(client, hosted, "run-valid.txt").status_code == 201
    resp = client.get(
        "/api/v1/tasks/example-adhoc/adhoc/table", headers={"Authorization": f"Bearer {hosted}"}
    )
    table = resp.get_json()
    assert resp.status_code == 200, table
    assert [c["key"] for c in table["columns"]] == list(MEASURES)
    assert [c["key"] for c in table["columns"] if c["official"]] == ["nDCG@10"]
    (row,) = [r for r in table["rows"] if r["kind"] == "run"]
    assert row["team"] == "Aurora" and row["rank"] == 1
    mean = sum(v["ndcg_cut_10"] for v in reference().values()) / 6
    assert row["cells"]["nDCG@10"]["display"] == format(mean, ".4f")
    assert row["cells"]["nDCG@10"]["value"] == pytest.approx(mean, abs=1e-12)
    notes = " ".join(table["footnotes"])
    assert "Unjudged documents are non-relevant" in notes and "grade ≥ 1" in notes
    for ext in ("csv", "json", "md", "tex"):
        resp = client.get(f"/tasks/example-adhoc/adhoc/results.{ext}")
        assert resp.status_code == 200, ext
        assert "nDCG@10" in resp.get_data(as_text=True) or "nDCG@10" in json.dumps(
            resp.get_json() if ext == "json" else {}
        )
    latex = client.get("/tasks/example-adhoc/adhoc/results.tex").get_data(as_text=True)
    done = compile_latex(latex, tmp_path, "example-adhoc")
    assert done.returncode == 0, done.stdout[-2000:]


def test_offline_score_prints_per_topic_values(runner: FlaskCliRunner) -> None:
    result = runner.invoke(
        args=[
            "leaderboard", "score", "example-adhoc", "adhoc", str(EXAMPLE / "run-valid.txt"),
            "--definition", str(EXAMPLE / "task.toml"), "--json", "--per-query",
        ]
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    per_topic = reference()
    for key, name in MEASURES.items():
        assert out["per_query"][key] == pytest.approx({q: v[name] for q, v in per_topic.items()})


def test_offline_score_refuses_the_invalid_run_with_its_lines(runner: FlaskCliRunner) -> None:
    result = runner.invoke(
        args=[
            "leaderboard", "score", "example-adhoc", "adhoc", str(EXAMPLE / "run-invalid.txt"),
            "--definition", str(EXAMPLE / "task.toml"),
        ]
    )  # fmt: skip
    assert result.exit_code == 1
    assert "line 8: score 'not-a-score' is not a number." in result.output
    assert "line 13: unknown query id '999' (not a topic of this set)." in result.output


def test_set_gold_replaces_the_one_qrels_file_and_rescores(
    client: FlaskClient, runner: FlaskCliRunner, hosted: str, tmp_path: Path
) -> None:
    assert upload(client, hosted, "run-valid.txt").status_code == 201
    # Every judged document relevant at grade 1: P@10 becomes the share of judged documents.
    lines = (EXAMPLE / "qrels.txt").read_text().splitlines()
    flat = [" ".join([*line.split()[:3], "1"]) for line in lines if not line.startswith("#")]
    qrels = tmp_path / "flat.qrels"
    qrels.write_text("\n".join(flat) + "\n")
    result = runner.invoke(args=["leaderboard", "set-gold", "example-adhoc", "adhoc", str(qrels)])
    assert result.exit_code == 0, result.output
    judged: dict[str, set[str]] = {}
    for line in flat:
        q, _, d, _ = line.split()
        judged.setdefault(q, set()).add(d)
    top: dict[str, list[str]] = {}
    for line in (EXAMPLE / "run-valid.txt").read_text().splitlines():
        q, _, d, _, _, _ = line.split()
        top.setdefault(q, []).append(d)
    expected = sum(len(set(docs[:10]) & judged[q]) / 10 for q, docs in top.items()) / len(top)
    table = client.get(
        "/api/v1/tasks/example-adhoc/adhoc/table", headers={"Authorization": f"Bearer {hosted}"}
    ).get_json()
    (row,) = [r for r in table["rows"] if r["kind"] == "run"]
    assert row["cells"]["P@10"]["value"] == pytest.approx(expected)
    bad = tmp_path / "bad.qrels"
    bad.write_text("301 0 DOC-0001 1\n301 0 DOC-0002 two\n")
    result = runner.invoke(args=["leaderboard", "set-gold", "example-adhoc", "adhoc", str(bad)])
    assert result.exit_code == 1
    assert "bad.qrels" in result.output and "Line 2" in result.output and "two" in result.output


def test_a_run_tag_warning_names_where_the_run_name_was_given(
    client: FlaskClient, hosted: str
) -> None:
    # The API: no form was used, so the warning does not speak of one.
    body = upload(client, hosted, "run-valid.txt").get_json()
    tagged = [w for w in body["warnings"] if "run tag" in w]
    assert tagged == [
        "The run tag 'bm25-rerank' differs from the run name 'bm25' sent in the upload's name field."
    ]
    # The web form: the name was typed into it.
    login(client, "alice@example.org", "correct horse battery")
    page = form_upload(
        client,
        (EXAMPLE / "run-valid.txt").read_bytes(),
        slot="contrastive1",
        url="/tasks/example-adhoc/adhoc/submit",
        name="bm25",
    )
    assert page.status_code == 302, page.get_data(as_text=True)[-500:]
    run_page = client.get(page.headers["Location"]).get_data(as_text=True)
    assert "differs from the run name &#39;bm25&#39; entered in the form." in run_page
