"""TREC CAR 2017 through the API and the CLI: streaming uploads, qrels variants, grouped tables."""

from __future__ import annotations

import gzip
import io
import json
import shutil
import zipfile
from pathlib import Path

from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner

from tests.runs import api_upload, make_participant, token_for

PRESET = Path(__file__).resolve().parents[2] / "leaderboard" / "tasks" / "presets" / "trec-car-2017"
QRELS = PRESET / "qrels.car17v1.5.benchmarkY1test.txt"
API = "/api/v1/tasks/trec-car-2017/passage/runs"


def oracle(tag: str = "oracle", skip: int = 0) -> bytes:
    """Rank every topic's relevant paragraphs first; leave out the first ``skip`` topics."""
    rows = [line.split() for line in QRELS.read_text().splitlines()]
    topics = list(dict.fromkeys(r[0] for r in rows))[skip:]
    keep = set(topics)
    out = [f"{q} Q0 {d} {i} {100 - i} {tag}" for i, (q, _, d, _g) in enumerate(rows) if q in keep]
    return ("\n".join(out) + "\n").encode()


def test_gzip_run_through_the_api_and_missing_topics(app: Flask, client: FlaskClient) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    resp = api_upload(client, token, gzip.compress(oracle()), path=API)
    assert resp.status_code == 201, resp.get_json()
    assert resp.get_json()["official"] == {
        "automatic/MAP": "1.0000",
        "automatic/R-Prec": "1.0000",
        "automatic/MRR": "1.0000",
    }
    # Leaving out 25 of 2,125 topics scores exactly 2,100 / 2,125 on every measure, with a warning.
    resp = api_upload(client, token, oracle(skip=25), slot="contrastive1", path=API)
    body = resp.get_json()
    assert resp.status_code == 201, body
    assert body["scores"]["automatic/MAP"] == 2100 / 2125
    assert any(w.startswith("25 of 2,125 topics have no results") for w in body["warnings"])


def test_zip_and_bad_lines_are_refused(app: Flask, client: FlaskClient) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("run.txt", oracle())
    resp = api_upload(client, token, buf.getvalue(), path=API)
    assert resp.status_code == 422 and "Archives" in resp.get_json()["issues"][0]["message"]
    lines = oracle().splitlines()
    lines[2] = b"enwiki:Aftertaste Q0 38c1bd25ddca2705164677a3f598c46df85afba7 1 1.0 oracle"
    bad = b"\n".join(lines) + b"\n"
    resp = api_upload(client, token, bad, path=API)
    issues = resp.get_json()["issues"]
    assert resp.status_code == 422
    assert issues[0]["line"] == 3 and "belong to the v2.0 release" in issues[0]["message"]


def test_qrels_variants_add_column_groups(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    assert api_upload(client, token, oracle(), path=API).status_code == 201
    table = json.loads(
        runner.invoke(
            args=["leaderboard", "table", "trec-car-2017", "passage", "--format", "json"]
        ).output
    )
    assert {c["group"] for c in table["columns"]} == {"Automatic"}
    # Graded judgments: every paragraph of the automatic qrels gets grade 0 (relevant only at >= 0).
    graded = tmp_path / "manual.qrels"
    graded.write_text(
        "".join(
            f"{q} 0 {d} 0\n"
            for q, _, d, _g in (line.split() for line in QRELS.read_text().splitlines())
        )
    )
    for variant in ("lenient", "manual"):
        result = runner.invoke(
            args=[
                "leaderboard",
                "set-gold",
                "trec-car-2017",
                "passage",
                str(graded),
                "--variant",
                variant,
            ]
        )
        assert result.exit_code == 0, result.output
        assert "Re-scored 1 run(s)." in result.output
    table = json.loads(
        runner.invoke(
            args=["leaderboard", "table", "trec-car-2017", "passage", "--format", "json"]
        ).output
    )
    assert [c["group"] for c in table["columns"]] == ["Automatic"] * 3 + ["Lenient"] * 3 + [
        "Manual"
    ] * 3
    cells = table["rows"][0]["cells"]
    assert cells["lenient/MAP"]["display"] == "1.0000"  # grade 0 is relevant under lenient
    assert cells["manual/MAP"]["display"] == "0.0000"  # but not under manual (>= 1)
    html = client.get("/tasks/trec-car-2017/passage").get_data(as_text=True)
    assert 'colspan="3"' in html


def test_a_changed_threshold_is_used_for_the_next_upload(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner, tmp_path: Path
) -> None:
    make_participant(app, "Aurora", "alice@example.org")
    token = token_for(app, "alice@example.org")
    # Parses the gold with the shipped threshold (relevant at grade >= 1) and keeps it cached.
    resp = api_upload(client, token, oracle(), path=API)
    assert resp.status_code == 201, resp.get_json()
    assert resp.get_json()["official"]["automatic/MAP"] == "1.0000"
    # The same task and qrels file, but the automatic variant now counts grade >= 2 relevant.
    folder = tmp_path / "trec"
    shutil.copytree(PRESET, folder)
    definition = folder / "task.toml"
    old = 'slug = "automatic", label = "Automatic", threshold = 1,'
    text = definition.read_text()
    assert old in text
    definition.write_text(text.replace(old, old.replace("threshold = 1", "threshold = 2")))
    result = runner.invoke(args=["leaderboard", "add-task", str(definition)])
    assert result.exit_code == 0, result.output
    # Every automatic judgment has grade 1: nothing is relevant any more, every measure is 0.
    assert {line.split()[3] for line in QRELS.read_text().splitlines()} == {"1"}
    resp = api_upload(client, token, oracle(), slot="contrastive1", path=API)
    assert resp.status_code == 201, resp.get_json()
    assert resp.get_json()["official"] == {
        "automatic/MAP": "0.0000",
        "automatic/R-Prec": "0.0000",
        "automatic/MRR": "0.0000",
    }


def test_qrels_with_a_bad_grade_is_refused(runner: FlaskCliRunner, tmp_path: Path) -> None:
    bad = tmp_path / "bad.qrels"
    first = QRELS.read_text().splitlines()[0].split()
    bad.write_text(f"{first[0]} 0 {first[2]} 7\n")
    result = runner.invoke(
        args=[
            "leaderboard",
            "set-gold",
            "trec-car-2017",
            "passage",
            str(bad),
            "--variant",
            "manual",
        ]
    )
    assert result.exit_code == 1
    assert "refused" in result.output and "grade" in result.output
