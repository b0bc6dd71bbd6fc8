"""The generation example with sacrebleu options hosted end to end, and the options it refuses."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from flask import Flask
from flask.testing import FlaskClient, FlaskCliRunner
from sacrebleu.metrics import BLEU, CHRF, TER

from leaderboard.cli import leaderboard_group
from leaderboard.cli.references import load_set_gold, read_definition
from leaderboard.scoring.resampling import SummedRows
from leaderboard.tasks.families import get_family
from leaderboard.tasks.families.base import Context, StoredScore
from tests.runs import api_upload, make_participant, open_task, token_for

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "generation"
DEFINITION = EXAMPLE / "task-options.toml"
SLUG = "example-translation-options"
API = f"/api/v1/tasks/{SLUG}/en-de/runs"
SACREBLEU = Path(sys.executable).parent / "sacrebleu"
REFERENCES = [EXAMPLE / "reference-1.de", EXAMPLE / "reference-2.de"]

#: Each column of the example as the sacrebleu command computes it (options written out by
#: hand from the definition: task table, measure table, set table, brackets).
CLI = {
    "chrF++": ("chrf", ["--chrf-word-order", "2", "--chrf-eps-smoothing"]),
    "BLEU": ("bleu", ["-tok", "13a", "-lc"]),
    "BLEU[smooth_method=floor]": ("bleu", ["-tok", "13a", "-lc", "-s", "floor"]),
    "BLEU[tokenize=intl,lowercase=false]": ("bleu", ["-tok", "intl"]),
    "chrF[beta=1,whitespace=true]": ("chrf", ["--chrf-beta", "1", "--chrf-whitespace"]),
    "TER": ("ter", ["--ter-normalized"]),
    "TER[no_punct=true]": ("ter", ["--ter-normalized", "--ter-no-punct"]),
}
#: The same columns as sacrebleu's metric objects, for resampled subsets.
METRICS = {
    "chrF++": lambda: CHRF(word_order=2, eps_smoothing=True),
    "BLEU": lambda: BLEU(lowercase=True),
    "BLEU[smooth_method=floor]": lambda: BLEU(lowercase=True, smooth_method="floor"),
    "BLEU[tokenize=intl,lowercase=false]": lambda: BLEU(tokenize="intl"),
    "chrF[beta=1,whitespace=true]": lambda: CHRF(beta=1, whitespace=True),
    "TER": lambda: TER(normalized=True),
    "TER[no_punct=true]": lambda: TER(normalized=True, no_punct=True),
}


def sacrebleu_cli(hypotheses: Path, key: str) -> dict[str, str]:
    """Return the JSON record the sacrebleu command prints for one column."""
    name, flags = CLI[key]
    argv = [str(SACREBLEU), *map(str, REFERENCES), "-i", str(hypotheses), "-m", name]
    done = subprocess.run(
        [*argv, "-w", "4", "--format", "json", *flags], check=True, capture_output=True, text=True
    )
    record: dict[str, str] = json.loads(done.stdout)
    return record


@pytest.fixture()
def token(app: Flask, runner: FlaskCliRunner) -> str:
    result = runner.invoke(args=["leaderboard", "add-task", str(DEFINITION)])
    assert result.exit_code == 0, result.output
    open_task(app, DEFINITION)
    make_participant(app, "Aurora", "alice@example.org")
    return token_for(app, "alice@example.org")


def test_every_column_is_scored_as_the_sacrebleu_command_with_its_options(
    app: Flask, client: FlaskClient, runner: FlaskCliRunner, token: str
) -> None:
    run = EXAMPLE / "run-valid.de"
    resp = api_upload(client, token, run.read_bytes(), path=API)
    body = resp.get_json()
    assert resp.status_code == 201, body
    assert sorted(body["official"]) == sorted(CLI)
    records = {key: sacrebleu_cli(run, key) for key in CLI}
    for key, record in records.items():
        assert body["official"][key] == format(float(record["score"]), ".4f"), key
    # Two columns with the same options but the brackets differ in their own signatures.
    for key in ("BLEU", "BLEU[smooth_method=floor]", "TER[no_punct=true]"):
        assert f"{key}: {records[key]['signature']}" in body["notes"], key
    assert "smooth:floor[0.10]" in records["BLEU[smooth_method=floor]"]["signature"]
    chrf = next(n for n in body["notes"] if n.startswith("chrF[beta=1,whitespace=true]: "))
    assert "space:yes|beta:1|version:" in chrf

    result = runner.invoke(args=["leaderboard", "add-baselines", SLUG, "en-de"])
    assert result.exit_code == 0, result.output
    table = client.get(API.replace("/runs", "/table"), headers={"Authorization": f"Bearer {token}"})
    shown = table.get_json()
    assert [(c["key"], c["label"]) for c in shown["columns"]] == [(k, k) for k in CLI]
    assert [c["key"] for c in shown["columns"] if c["official"]] == ["chrF++"]
    copy = next(r for r in shown["rows"] if r["kind"] == "baseline")
    # TER and its bracketed form are lower-is-better: the copied source is worse on both.
    for key in ("TER", "TER[no_punct=true]"):
        assert copy["cells"][key]["value"] > body["scores"][key], key
    for ext in ("csv", "json", "md", "tex"):
        export = client.get(f"/tasks/{SLUG}/en-de/results.{ext}")
        assert export.status_code == 200, ext
        assert "floor" in export.get_data(as_text=True), ext

    args = ["score", SLUG, "en-de", str(run), "--definition", str(DEFINITION), "--json"]
    scored = CliRunner().invoke(leaderboard_group, args)
    assert scored.exit_code == 0, scored.output
    measures = json.loads(scored.output)["measures"]
    assert measures == pytest.approx(body["scores"])


def test_the_resampling_rows_of_every_column_are_sacrebleus_scores_on_the_sample() -> None:
    definition = read_definition(DEFINITION)
    subtask = definition.subtasks[0]
    setdef = subtask.sets[0]
    gold = load_set_gold(definition, subtask, setdef, 10 << 20)
    family = get_family("generation")
    ctx = Context(definition, subtask, setdef.slug, 10 << 20)
    inputs = family.inputs_from_path(EXAMPLE / "run-valid.de", ctx)
    evaluation = family.evaluate(inputs, gold, ctx, lenient=False, options={})
    inputs["file"].close()
    assert evaluation.results is not None
    hyps = (EXAMPLE / "run-valid.de").read_text().splitlines()
    refs = [path.read_text().splitlines() for path in REFERENCES]
    index = np.random.default_rng(7).integers(0, len(hyps), len(hyps))
    for key, make in METRICS.items():
        result = evaluation.results[key]
        _, rows = family.unit_rows(key, gold, StoredScore(None, result.item_stats, None))
        assert isinstance(rows, SummedRows)
        assert rows.value() == pytest.approx(result.raw, rel=1e-9), key
        expected = make().corpus_score(
            [hyps[i] for i in index], [[r[i] for i in index] for r in refs]
        )
        on_sample = float(rows.finish(rows.rows[index].sum(axis=0)))
        assert on_sample == pytest.approx(expected.score, rel=1e-9, abs=1e-9), key


def _definition(tmp_path: Path, old: str, new: str) -> Path:
    """Copy the example with one edit, and return the definition's path."""
    for path in [EXAMPLE / "source.en", *REFERENCES]:
        shutil.copy(path, tmp_path / path.name)
    text = DEFINITION.read_text()
    assert old in text, old
    (tmp_path / "task.toml").write_text(text.replace(old, new, 1))
    return tmp_path / "task.toml"


@pytest.mark.parametrize(
    ("old", "new", "key", "words"),
    [
        (
            '"TER[no_punct=true]"',
            '"TER[lowercase=true]"',
            "subtasks[0].measures",
            "does not take lowercase; it takes: normalized, no_punct, asian_support, "
            "case_sensitive",
        ),
        (
            '"BLEU[smooth_method=floor]"',
            '"BLEU[smooth_method=laplace]"',
            "subtasks[0].measures",
            "smooth_method = 'laplace' is not one of exp, floor, add-k, none",
        ),
        (
            '"BLEU[smooth_method=floor]"',
            '"BLEU[4]"',
            "subtasks[0].measures",
            "takes options as name=value",
        ),
        (
            '"BLEU[tokenize=intl,lowercase=false]"',
            '"BLEU[lowercase=false, tokenize=intl]", "BLEU[tokenize=intl,lowercase=false]"',
            "subtasks[0].measures",
            "'BLEU[tokenize=intl,lowercase=false]' is 'BLEU[lowercase=false, tokenize=intl]' "
            "written again",
        ),
        (
            '"chrF[beta=1,whitespace=true]"',
            '"chrF[char_order=0]"',
            "subtasks[0].measures",
            "char_order and word_order are both 0",
        ),
        (
            '"chrF[beta=1,whitespace=true]"',
            '"chrF[char_order=1,word_order=1,beta=1,whitespace=true,eps_smoothing=true]"',
            "subtasks[0].measures",
            "a measure key has at most 64",
        ),
        (
            "[sacrebleu.BLEU]\nlowercase = true",
            "[sacrebleu.TER]\nlowercase = true",
            "sacrebleu",
            "unknown sacrebleu option 'lowercase' for TER; known: normalized, no_punct",
        ),
        (
            'tokenize = "13a"',
            'tokenize = "flores200"',
            "sacrebleu",
            "downloads a SentencePiece model",
        ),
        (
            'tokenize = "13a"',
            "beta = 0",
            "sacrebleu",
            "beta = '0' is not a whole number from 1 to 100",
        ),
        (
            "{ TER = { normalized = true } }",
            "{ TER = { normalized = 1 } }",
            "subtasks[0].sets[0].sacrebleu",
            "normalized = '1' is not true/false",
        ),
        (
            "{ TER = { normalized = true } }",
            "{ smooth = 1 }",
            "subtasks[0].sets[0].sacrebleu",
            "unknown sacrebleu option 'smooth'; known: tokenize, lowercase, force",
        ),
    ],
)
def test_wrong_options_are_refused_naming_the_key_and_the_options_taken(
    runner: FlaskCliRunner, tmp_path: Path, old: str, new: str, key: str, words: str
) -> None:
    definition = _definition(tmp_path, old, new)
    result = runner.invoke(args=["leaderboard", "add-task", str(definition)])
    assert result.exit_code == 1, result.output
    assert key in result.output and words in result.output, result.output
    assert "Traceback" not in result.output
