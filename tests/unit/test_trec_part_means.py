"""TREC parts from the whole run's per-query values: equal to scoring the run cut to each part."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from leaderboard.cli.references import load_set_split, read_definition
from leaderboard.tasks.families import get_family
from leaderboard.tasks.families.base import Context, Evaluation, Family
from leaderboard.tasks.families.trec.family import TrecFamily

#: One measure of every separable kind, with options; counts, geometric means and -J among them.
SEPARABLE = [
    "MAP", "GMAP", "MAP@100", "R-Prec", "R-Prec[mult=0.5]", "MRR", "MRR@10", "P@5", "P@10",
    "relative_P@10", "R@100", "Success@5", "nDCG", "nDCG@10", "DCG", "DCG@10", "bpref", "gm_bpref",
    "infAP", "iPrec@0.10", "11pt_avg", "set_P", "set_recall", "set_map", "set_F",
    "set_relative_P", "utility", "binG", "Hits@10", "Judged@10", "num_ret", "num_rel",
    "num_rel_ret", "num_nonrel_judged_ret", "num_q",
]  # fmt: skip
TOPICS = [f"q{i:03d}" for i in range(60)]

TASK_TOML = """\
slug = "parts-trec"
title = "Parts"
family = "trec"
table_style = "trec"
official_measure = "graded/MAP"
measures = [{measures}]

[runs]
slots = ["primary"]
ranked_slots = ["primary"]

[format]
max_per_query = 50

[[subtasks]]
slug = "s"
title = "S"
default_set = "test"

[[subtasks.sets]]
slug = "test"
title = "Test"
topics = "topics.txt"
missing_topics = "{missing}"
variants = [
  {{ slug = "graded", label = "Graded", threshold = 1, qrels = "qrels.txt" }},
  {{ slug = "strict", label = "Strict", threshold = 2, qrels = "qrels.txt" }},
]
public = {{ fraction = 0.4, seed = 99 }}
"""


def write_task(folder: Path, measures: list[str], missing: str) -> Path:
    """Write a task with graded qrels and a run missing some topics; return the run's path."""
    rng = random.Random(3)
    listed = ", ".join(f'"{v}/{m}"' for v in ("graded", "strict") for m in measures)
    (folder / "task.toml").write_text(TASK_TOML.format(measures=listed, missing=missing))
    (folder / "topics.txt").write_text("".join(f"{t}\n" for t in TOPICS))
    qrels, run = [], []
    for t in TOPICS:
        docs = [f"{t}-d{k}" for k in range(40)]
        for d in rng.sample(docs, 12):
            qrels.append(f"{t} 0 {d} {rng.choice((0, 0, 1, 2, 3))}\n")
        qrels.append(f"{t} 0 {t}-unretrieved 1\n")
        if t.endswith("7"):
            continue  # topics without results: zero (trec_eval -c) or skipped
        scores = sorted((rng.uniform(0, 30) for _ in range(30)), reverse=True)
        for rank, (d, s) in enumerate(zip(rng.sample(docs, 30), scores, strict=True), 1):
            run.append(f"{t} Q0 {d} {rank} {s:.4f} tag\n")
    (folder / "qrels.txt").write_text("".join(qrels))
    (folder / "run.txt").write_text("".join(run))
    return folder / "run.txt"


def evaluate(folder: Path, run: Path) -> tuple[Evaluation, Any, Any]:
    """Return the run's evaluation with its set's parts, the set's split and its gold."""
    d = read_definition(folder / "task.toml")
    sd = d.subtask("s")
    assert sd is not None
    setdef = sd.set("test")
    assert setdef is not None
    gold, split = load_set_split(d, sd, setdef, 1 << 30)
    assert split is not None
    family = get_family("trec")
    ctx = Context(d, sd, "test", 1 << 30)
    inputs = family.inputs_from_path(run, ctx)
    try:
        evaluation = family.evaluate(
            inputs, gold, ctx, lenient=False, options={}, part_golds=split.golds
        )
    finally:
        for stream in inputs.values():
            stream.close()
    assert evaluation.ok, evaluation.verdict.errors
    return evaluation, split, gold


def cut_and_scored(evaluation: Evaluation, split: Any, gold: Any) -> dict[str, Any]:
    """Return trec_eval's way: the run cut to each part's queries, scored on the part's qrels."""
    family = get_family("trec")
    parsed = evaluation.verdict.parsed
    return {
        name: Family.score_part(family, parsed, gold, part.gold, part.units)
        for name, part in split.golds.items()
    }


@pytest.mark.parametrize("missing", ["zero", "skip"])
def test_separable_measures_equal_the_cut_run_bit_for_bit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, missing: str
) -> None:
    run = write_task(tmp_path, SEPARABLE, missing)

    def refused(*args: object) -> None:
        raise AssertionError("the derived path cuts no run")

    with monkeypatch.context() as patched:
        patched.setattr(TrecFamily, "restrict_run", refused)
        evaluation, split, gold = evaluate(tmp_path, run)
    expected = cut_and_scored(evaluation, split, gold)
    assert set(evaluation.by_part) == {"public", "private"}
    for name, want in expected.items():
        got = evaluation.by_part[name]
        assert list(got) == list(want)
        for key in want:
            # Exact: the same value, official string, gold role and per-query values.
            assert got[key] == want[key], key
        assert want["graded/num_q"].raw == len(want["graded/MAP"].per_query or {})


def test_a_set_with_a_measure_that_is_not_separable_is_cut_and_rescored(tmp_path: Path) -> None:
    run = write_task(tmp_path, ["MAP", "Rndcg", "ndcg_rel", "G"], "zero")
    evaluation, split, gold = evaluate(tmp_path, run)
    assert evaluation.by_part == cut_and_scored(evaluation, split, gold)


def test_a_part_mean_is_the_mean_of_its_queries_values(tmp_path: Path) -> None:
    run = write_task(tmp_path, ["MAP", "num_rel"], "skip")
    evaluation, split, _ = evaluate(tmp_path, run)
    whole = evaluation.results
    assert whole is not None
    for name in ("public", "private"):
        units = split.golds[name].units
        values = [v for q, v in (whole["graded/MAP"].per_query or {}).items() if q in units]
        assert evaluation.by_part[name]["graded/MAP"].raw == pytest.approx(
            sum(values) / len(values), rel=1e-12
        )
        # Skipped: the topics without results (q..7) are not among a part's evaluated queries.
        assert not any(
            q.endswith("7") for q in evaluation.by_part[name]["graded/MAP"].per_query or {}
        )
