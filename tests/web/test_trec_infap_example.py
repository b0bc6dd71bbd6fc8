"""The sampled-pool example of docs/examples/trec-infap hosted end to end, scored as trec_eval.

Its measures take options (a gain map, condensed lists, a multiple of R): the reference is
trec_eval's own code through pytrec_eval's C class, with the same options in trec_eval's syntax.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from pytrec_eval_ext import RelevanceEvaluator
from sqlalchemy import select

from leaderboard.models import Run, Score
from tests.runs import api_upload, make_participant, open_task, token_for
from tests.security import compile_latex

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "trec-infap"
API = "/api/v1/tasks/example-infap/adhoc/runs"
#: Our keys -> (trec_eval's -m argument, the name it prints, whether -J is on).
MEASURES = {
    "infAP": ("infAP", "infAP", False),
    "nDCG": ("ndcg.1=1,2=2,3=4,4=8", "ndcg", False),
    "P@10[judged_only=true]": ("P.10", "P_10", True),
    "bpref": ("bpref", "bpref", False),
    "R-Prec[mult=2]": ("Rprec_mult.2", "Rprec_mult_2.00", False),
    "num_q": ("num_q", "num_q", False),
}


def read(name: str) -> list[list[str]]:
    lines = (EXAMPLE / name).read_text().splitlines()
    return [line.split() for line in lines if not line.startswith("#")]


def reference() -> dict[str, dict[str, float]]:
    """Return trec_eval's per-topic values of the valid run, by our key."""
    qrels: dict[str, dict[str, int]] = {}
    for q, _, d, g in read("qrels.txt"):
        qrels.setdefault(q, {})[d] = int(g)
    run: dict[str, dict[str, float]] = {}
    for q, _, d, _, s, _ in read("run-valid.txt"):
        run.setdefault(q, {})[d] = float(s)
    out: dict[str, dict[str, float]] = {}
    for key, (spec, printed, condensed) in MEASURES.items():
        values = RelevanceEvaluator(
            query_relevance=qrels,
            measures={spec},
            relevance_level=1,
            judged_docs_only_flag=condensed,
        ).evaluate(run)
        out[key] = {q: v[printed] for q, v in values.items()}
    return out


def mean(key: str, values: dict[str, float]) -> float:
    return sum(values.values()) if key == "num_q" else sum(values.values()) / len(values)


@pytest.fixture()
def hosted(app: Flask, runner: FlaskCliRunner) -> str:
    """Host the example task and return a participant's API token."""
    result = runner.invoke(args=["leaderboard", "add-task", str(EXAMPLE / "task.toml")])
    assert result.exit_code == 0, result.output
    open_task(app, EXAMPLE / "task.toml")
    make_participant(app, "Aurora", "alice@example.org")
    return token_for(app, "alice@example.org")


def upload(client: FlaskClient, token: str, name: str):  # type: ignore[no-untyped-def]
    data = (EXAMPLE / name).read_bytes()
    return api_upload(client, token, data, path=API, filenames={"file": name}, name="bm25")


def test_valid_run_is_scored_as_trec_eval_with_per_topic_values(
    app: Flask, client: FlaskClient, hosted: str
) -> None:
    resp = upload(client, hosted, "run-valid.txt")
    body = resp.get_json()
    assert resp.status_code == 201, body
    expected = reference()
    assert all(len(values) == 6 for values in expected.values())
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        run = session.scalars(select(Run).where(Run.kind == "run")).one()
        stored = {
            s.measure: s.per_query
            for s in session.scalars(select(Score).where(Score.run_id == run.id))
        }
    for key, values in expected.items():
        assert body["scores"][key] == pytest.approx(mean(key, values), abs=1e-12), key
        assert stored[key] == pytest.approx(values, abs=1e-12), key
    assert body["official"]["num_q"] == "6"


def test_invalid_run_is_refused_with_its_lines(client: FlaskClient, hosted: str) -> None:
    resp = upload(client, hosted, "run-invalid.txt")
    assert resp.status_code == 422
    lines = {i["line"] for i in resp.get_json()["issues"]}
    assert {8, 13, 21} <= lines


def test_table_and_every_export(client: FlaskClient, hosted: str, tmp_path: Path) -> None:
    assert upload(client, hosted, "run-valid.txt").status_code == 201
    resp = client.get(
        "/api/v1/tasks/example-infap/adhoc/table", headers={"Authorization": f"Bearer {hosted}"}
    )
    table = resp.get_json()
    assert resp.status_code == 200, table
    assert [c["key"] for c in table["columns"]] == list(MEASURES)
    assert [c["key"] for c in table["columns"] if c["official"]] == ["infAP"]
    (row,) = [r for r in table["rows"] if r["kind"] == "run"]
    infap = mean("infAP", reference()["infAP"])
    assert row["cells"]["infAP"]["display"] == format(infap, ".4f")
    assert row["cells"]["num_q"]["display"] == "6"
    for ext in ("csv", "json", "md", "tex"):
        resp = client.get(f"/tasks/example-infap/adhoc/results.{ext}")
        assert resp.status_code == 200, ext
        text = resp.get_data(as_text=True)
        # Markdown escapes the brackets of a bracketed key; LaTeX is checked by compiling it.
        shown = {"md": r"R-Prec\[mult=2\]", "tex": "R-Prec"}.get(ext, "R-Prec[mult=2]")
        assert shown in text, ext
    latex = client.get("/tasks/example-infap/adhoc/results.tex").get_data(as_text=True)
    done = compile_latex(latex, tmp_path, "example-infap")
    assert done.returncode == 0, done.stdout[-2000:]


def test_offline_score_prints_per_topic_values(runner: FlaskCliRunner) -> None:
    result = runner.invoke(
        args=[
            "leaderboard", "score", "example-infap", "adhoc", str(EXAMPLE / "run-valid.txt"),
            "--definition", str(EXAMPLE / "task.toml"), "--json", "--per-query",
        ]
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    for key, values in reference().items():
        assert out["measures"][key] == pytest.approx(mean(key, values), abs=1e-12), key
        if key != "num_q":
            assert out["per_query"][key] == pytest.approx(values, abs=1e-12), key
