"""``leaderboard meta-eval`` on a hosted task: the spec's JSON, its Markdown, and refusals."""

from __future__ import annotations

import json

from flask.testing import FlaskCliRunner

from tests.helpers.cli import invoke, json_of

KEYS = [
    "runs",
    "units",
    "pairs_significant",
    "adjacent_significant",
    "splits",
    "tau_mean",
    "tau_p05",
    "top_stable",
]


def meta(runner: FlaskCliRunner, *args: str) -> dict:  # type: ignore[type-arg]
    out: dict = json_of(runner, "meta-eval", "example-sentiment", "A", *args)  # type: ignore[type-arg]
    return out


def test_json_before_and_after_an_analysis(hosted: FlaskCliRunner) -> None:
    before = invoke(hosted, "meta-eval", "example-sentiment", "A", "--splits", "100")
    assert before.exit_code == 0, before.output
    body = json.loads(before.stdout)
    assert list(body) == KEYS
    # Two teams' runs and three baselines ranked "as if", on every item of the set.
    assert (body["runs"], body["splits"]) == (5, 100)
    assert body["units"] > 10
    assert body["pairs_significant"] is None and body["adjacent_significant"] is None
    assert "No analysis of the set's current scores on macro-F1 yet" in before.stderr
    assert -1 <= body["tau_p05"] <= body["tau_mean"] <= 1
    assert 0 <= body["top_stable"] <= 1
    # The oracle is first on every half of the items.
    assert body["top_stable"] == 1.0
    # The same seed, the same numbers; another seed, other splits.
    assert meta(hosted, "--splits", "100") == body
    assert meta(hosted, "--splits", "100", "--seed", "7")["tau_mean"] != body["tau_mean"]
    # With an analysis of the set's current scores: its pairs, at its alpha, in its rank order.
    analysed = invoke(hosted, "significance", "example-sentiment", "A", "--samples", "500")
    assert analysed.exit_code == 0, analysed.output
    report = json.loads(analysed.stdout)
    after = meta(hosted, "--splits", "100")
    pairs = report["pairs"]
    assert after["pairs_significant"] == sum(p["significant"] for p in pairs) / len(pairs)
    by_pair = {(p["a"], p["b"]): p["significant"] for p in pairs}
    adjacent = [by_pair[pair] for pair in zip(report["runs"], report["runs"][1:], strict=False)]
    assert after["adjacent_significant"] == sum(adjacent) / len(adjacent)
    assert {k: after[k] for k in KEYS if "significant" not in k} == {
        k: body[k] for k in KEYS if "significant" not in k
    }
    # Another measure has no analysis of its own yet.
    other = invoke(
        hosted, "meta-eval", "example-sentiment", "A", "--splits", "50", "--measure", "Acc"
    )
    assert other.exit_code == 0, other.output
    assert json.loads(other.stdout)["pairs_significant"] is None
    assert json.loads(other.stdout)["runs"] == 5
    assert "`leaderboard significance example-sentiment A --measure Acc`" in other.stderr


def test_markdown_states_it_in_one_sentence(hosted: FlaskCliRunner) -> None:
    assert (
        invoke(hosted, "significance", "example-sentiment", "A", "--samples", "500").exit_code == 0
    )
    body = meta(hosted, "--splits", "50")
    md = invoke(hosted, "meta-eval", "example-sentiment", "A", "--splits", "50", "--format", "md")
    assert md.exit_code == 0, md.output
    assert md.stdout.startswith(
        "Meta-evaluation of Example message polarity classification — Subtask A: message "
        "polarity — Test, macro-F1\n"
    )
    assert "| Ranked runs | 5 |" in md.stdout and "| Half-splits | 50 |" in md.stdout
    share = round(100 * body["pairs_significant"])
    assert (
        f"This test set separates {share} % of the pairs; halves of it agree on the order with "
        f"τ = {body['tau_mean']:.2f}."
    ) in md.stdout.replace("−", "-")


def test_refusals(hosted: FlaskCliRunner) -> None:
    # Bad option values: a message naming the option, exit 2, no traceback.
    for args, message in (
        (("--splits", "0"), "--splits"),
        (("--splits", "many"), "--splits"),
        (("--seed", "-1"), "--seed"),
        (("--format", "latex"), "--format"),
        (("--measure", "BLEU"), "has no measure 'BLEU'"),
    ):
        result = invoke(hosted, "meta-eval", "example-sentiment", "A", *args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output and "Traceback" not in result.output, args
    # Unknown names: exit 1 with the message, as every command says it.
    unknown = invoke(hosted, "meta-eval", "example-sentiment", "Z")
    assert unknown.exit_code == 1 and "Z" in unknown.output
    nowhere = invoke(hosted, "meta-eval", "example-sentiment", "A", "--set", "nowhere")
    assert nowhere.exit_code == 1 and "nowhere" in nowhere.output
