"""The generation example hosted end to end, scored as the sacrebleu command line scores it."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sqlalchemy import select

from leaderboard.models import Run, Score
from leaderboard.scoring.generation import corpus_score_from_stats
from tests.runs import api_upload, make_participant, open_task, token_for
from tests.security import compile_latex

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "generation"
API = "/api/v1/tasks/example-translation/en-de/runs"
SACREBLEU = Path(sys.executable).parent / "sacrebleu"


def sacrebleu_cli(hypotheses: Path) -> dict[str, float]:
    """Return BLEU, chrF, chrF++ and TER of a file as the sacrebleu command prints them."""
    refs = [str(EXAMPLE / "reference-1.de"), str(EXAMPLE / "reference-2.de")]
    out: dict[str, float] = {}
    for names, extra in ((("BLEU", "chrF", "TER"), []), (("chrF++",), ["--chrf-word-order", "2"])):
        metrics = ["bleu", "chrf", "ter"] if len(names) == 3 else ["chrf"]
        done = subprocess.run(
            [str(SACREBLEU), *refs, "-i", str(hypotheses), "-m", *metrics, "-b", "-w", "4", *extra],
            check=True,
            capture_output=True,
            text=True,
        )
        values = json.loads(done.stdout) if done.stdout.strip().startswith("[") else None
        numbers = values if values is not None else [float(x) for x in done.stdout.split()]
        out.update(zip(names, map(float, numbers), strict=True))
    return out


@pytest.fixture()
def token(app: Flask, runner: FlaskCliRunner) -> str:
    result = runner.invoke(args=["leaderboard", "add-task", str(EXAMPLE / "task.toml")])
    assert result.exit_code == 0, result.output
    open_task(app, EXAMPLE / "task.toml")
    make_participant(app, "Aurora", "alice@example.org")
    return token_for(app, "alice@example.org")


def test_generation_example_scored_as_the_sacrebleu_command(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner, token: str, tmp_path: Path
) -> None:
    resp = api_upload(client, token, (EXAMPLE / "run-valid.de").read_bytes(), path=API)
    body = resp.get_json()
    assert resp.status_code == 201, body
    reference = sacrebleu_cli(EXAMPLE / "run-valid.de")
    for key, value in reference.items():
        assert body["official"][key] == format(value, ".4f"), key
    assert any("empty output line (line 9)" in w for w in body["warnings"])
    signatures = [n for n in body["notes"] if n.startswith("BLEU: ")]
    assert signatures == [
        f"BLEU: nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:{sacrebleu_version()}"
    ]
    # The per-segment statistics recompute the corpus score, on all segments and on a sample.
    with app.extensions["leaderboard"]["sessionmaker"]() as session:
        run = session.scalars(select(Run).where(Run.kind == "run")).one()
        bleu = session.scalars(
            select(Score).where(Score.run_id == run.id, Score.measure == "BLEU")
        ).one()
        stats = np.array(bleu.item_stats)
    assert len(stats) == 10
    assert corpus_score_from_stats("BLEU", stats) == pytest.approx(body["scores"]["BLEU"])

    resp = api_upload(
        client, token, (EXAMPLE / "run-invalid.de").read_bytes(), path=API, slot="contrastive1"
    )
    assert resp.status_code == 422
    issues = resp.get_json()["issues"]
    messages = [i["message"] for i in issues]
    assert "The file has 9 lines; the source has 10 segments" in " ".join(messages)
    assert any(
        i["line"] == 9 and "UTF-8" in i["message"] and "Line" not in i["message"] for i in issues
    )

    result = runner.invoke(args=["leaderboard", "add-baselines", "example-translation", "en-de"])
    assert result.exit_code == 0, result.output
    table = client.get(API.replace("/runs", "/table"), headers={"Authorization": f"Bearer {token}"})
    shown = table.get_json()
    assert [c["key"] for c in shown["columns"]] == ["chrF", "BLEU", "chrF++", "TER"]
    copy = next(r for r in shown["rows"] if r["kind"] == "baseline")
    assert copy["label"] == "Copy source"
    assert copy["cells"]["TER"]["value"] > body["scores"]["TER"]
    notes = " ".join(shown["footnotes"])
    assert "BLEU: nrefs:2|case:mixed|eff:no|tok:13a" in notes and "TER: nrefs:2" in notes
    for ext in ("csv", "json", "md", "tex"):
        assert client.get(f"/tasks/example-translation/en-de/results.{ext}").status_code == 200
    latex = client.get("/tasks/example-translation/en-de/results.tex").get_data(as_text=True)
    done = compile_latex(latex, tmp_path, "example-translation")
    assert done.returncode == 0, done.stdout[-2000:]


def sacrebleu_version() -> str:
    import sacrebleu

    return str(sacrebleu.__version__)


@pytest.mark.parametrize(
    ("change", "key", "words"),
    [
        (('"TER"]', '"TER", "METEOR"]'), "subtasks[0].measures", "unknown measure"),
        (('tokenize = "13a"', 'tokenize = "moses"'), "sacrebleu", "tokenizers"),
        (('target_language = "de"\n', ""), "target_language", "required"),
        (('"copy-source"', '"copy-reference"'), "baselines.recipes", "unknown recipe"),
    ],
)
def test_wrong_generation_definitions_are_refused_naming_the_key(
    runner: FlaskCliRunner, tmp_path: Path, change: tuple[str, str], key: str, words: str
) -> None:
    for name in ("source.en", "reference-1.de", "reference-2.de"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    text = (EXAMPLE / "task.toml").read_text()
    assert change[0] in text
    (tmp_path / "task.toml").write_text(text.replace(change[0], change[1]))
    result = runner.invoke(args=["leaderboard", "add-task", str(tmp_path / "task.toml")])
    assert result.exit_code == 1
    assert key in result.output and words in result.output, result.output


def test_references_of_different_lengths_are_refused(
    runner: FlaskCliRunner, tmp_path: Path
) -> None:
    for name in ("source.en", "reference-1.de", "task.toml"):
        shutil.copy(EXAMPLE / name, tmp_path / name)
    short = (EXAMPLE / "reference-2.de").read_text().splitlines()[:7]
    (tmp_path / "reference-2.de").write_text("\n".join(short) + "\n")
    result = runner.invoke(args=["leaderboard", "add-task", str(tmp_path / "task.toml")])
    assert result.exit_code == 1
    assert "reference 2 has 7 lines" in result.output, result.output
    assert "Traceback" not in result.output


def test_an_output_line_far_longer_than_any_reference_is_refused(
    client: FlaskClient, token: str
) -> None:
    lines = (EXAMPLE / "run-valid.de").read_text().splitlines()
    longest = max(
        len(s)
        for name in ("reference-1.de", "reference-2.de")
        for s in (EXAMPLE / name).read_text().splitlines()
    )
    lines[3] = "Wort" * 500  # 2,000 characters: beyond max(1,000, 4 × the longest reference)
    assert len(lines[3]) > max(1000, 4 * longest)
    resp = api_upload(client, token, ("\n".join(lines) + "\n").encode(), path=API)
    assert resp.status_code == 422
    (issue,) = resp.get_json()["issues"]
    assert issue["line"] == 4 and "2,000 characters" in issue["message"]
