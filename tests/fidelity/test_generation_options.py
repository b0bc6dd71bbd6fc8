"""Every sacrebleu option of the generation family against the ``sacrebleu`` command line.

Twelve generated corpora (one to three references, empty outputs, one-segment sets, CJK, Arabic,
combining marks, emoji) are scored under a grid of options: every combination of BLEU's
tokenizer, ``lowercase`` and smoothing (method and value) once, ``force`` on half of them; 60
combinations of chrF's character order, word order, beta, ``lowercase``, ``whitespace`` and
``eps_smoothing`` covering every pair of values; every combination of TER's four flags at least
three times. One command run per corpus and grid row computes the three measures. BLEU's
``max_ngram_order`` and ``effective_order``, which the command does not take, are compared with
sacrebleu's ``BLEU`` objects. For every combination the statistics equal sacrebleu's
``_extract_corpus_statistics`` row for row, and the resampling rows give sacrebleu's corpus
score of a bootstrap sample.
"""

from __future__ import annotations

import itertools
import random
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, CHRF, TER

from leaderboard.scoring.generation import (
    GenerationOptions,
    corpus_score_from_stats,
    metric,
    score_run,
    scores_from_sums,
)
from tests.helpers.sacrebleu_cases import Case, cli_json, make_case, read_case

#: Seeds of test_generation_sacrebleu's corpora without the very long lines (TER on them
#: takes seconds), chosen to cover 1-3 references, empty outputs, one segment and the scripts.
SEEDS = (0, 1, 2, 3, 4, 6, 7, 11, 13, 16, 20, 24)
PER_CORPUS = 5
TOKENIZERS = ("13a", "intl", "zh", "char", "none")
SMOOTHING: tuple[tuple[str, float | None], ...] = (
    ("exp", None),
    ("floor", None),
    ("floor", 0.3),
    ("add-k", None),
    ("add-k", 2),
    ("none", None),
)
BLEU_GRID = [
    {"tokenize": tok, "lowercase": lc, "smooth_method": method, "smooth_value": value}
    for tok, lc, (method, value) in itertools.product(TOKENIZERS, (False, True), SMOOTHING)
]
CHRF_VALUES: dict[str, tuple[Any, ...]] = {
    "char_order": (0, 1, 3, 6),
    "word_order": (0, 1, 2),
    "beta": (1, 2, 3),
    "lowercase": (False, True),
    "whitespace": (False, True),
    "eps_smoothing": (False, True),
}
TER_FLAGS = ("normalized", "no_punct", "asian_support", "case_sensitive")
TER_GRID = [
    dict(zip(TER_FLAGS, flags, strict=True)) for flags in itertools.product((0, 1), repeat=4)
]


def chrf_grid(size: int) -> list[dict[str, Any]]:
    """Return ``size`` chrF combinations covering every pair of option values (seeded)."""
    every = [
        dict(zip(CHRF_VALUES, values, strict=True))
        for values in itertools.product(*CHRF_VALUES.values())
        if values[0] + values[1] > 0
    ]
    random.Random(3).shuffle(every)
    chosen: list[dict[str, Any]] = []
    missing = {
        (a, va, b, vb)
        for a, b in itertools.combinations(CHRF_VALUES, 2)
        for va in CHRF_VALUES[a]
        for vb in CHRF_VALUES[b]
        if va + vb > 0 or {a, b} != {"char_order", "word_order"}
    }
    # Greedy: each pick covers the most pairs not yet covered; then fill up in seeded order.
    while missing and len(chosen) < size:
        best = max(every, key=lambda c: len(missing & _pairs(c)))
        chosen.append(best)
        missing -= _pairs(best)
        every.remove(best)
    assert not missing, missing
    return chosen + every[: size - len(chosen)]


def _pairs(combo: dict[str, Any]) -> set[tuple[str, Any, str, Any]]:
    """Return the option-value pairs one combination covers."""
    return {(a, combo[a], b, combo[b]) for a, b in itertools.combinations(combo, 2)}


ROWS = len(SEEDS) * PER_CORPUS
CHRF_GRID = chrf_grid(ROWS)


def grid_row(i: int) -> dict[str, dict[str, Any]]:
    """Return grid row ``i``: the options of each measure."""
    bleu = {**BLEU_GRID[i], "force": i % 2 == 1}
    options = {
        "BLEU": {k: v for k, v in bleu.items() if v is not None},
        "chrF": CHRF_GRID[i],
        "TER": {k: bool(v) for k, v in TER_GRID[i % len(TER_GRID)].items()},
    }
    return options


def table_of(options: dict[str, dict[str, Any]]) -> GenerationOptions:
    """Return the options as per-measure ``sacrebleu`` tables (brackets would exceed 64 chars)."""
    return GenerationOptions(
        per_measure=tuple((name, tuple(opts.items())) for name, opts in options.items())
    )


def flags_of(options: dict[str, dict[str, Any]]) -> list[str]:
    """Return the command's flags for one grid row, written independently of the scorer."""
    bleu, chrf, ter = options["BLEU"], options["chrF"], options["TER"]
    flags = ["-tok", bleu["tokenize"], "-s", bleu["smooth_method"]]
    if "smooth_value" in bleu:
        flags += ["-sv", str(bleu["smooth_value"])]
    flags += ["-lc"] if bleu["lowercase"] else []
    flags += ["--force"] if bleu["force"] else []
    flags += ["-cc", str(chrf["char_order"]), "-cw", str(chrf["word_order"])]
    flags += ["--chrf-beta", str(chrf["beta"])]
    for option in ("lowercase", "whitespace", "eps_smoothing"):
        if chrf[option]:
            flags.append("--chrf-" + option.replace("_", "-"))
    for option in TER_FLAGS:
        if ter[option]:
            flags.append("--ter-" + option.replace("_", "-"))
    return flags


CORPORA = {seed: make_case(seed) for seed in SEEDS}
RUNS = [(seed, SEEDS.index(seed) * PER_CORPUS + j) for seed in SEEDS for j in range(PER_CORPUS)]


@pytest.fixture(scope="module")
def cli_records(tmp_path_factory: pytest.TempPathFactory) -> dict[int, list[dict[str, Any]]]:
    """Run the sacrebleu command once per corpus and grid row, two at a time."""
    tmp = tmp_path_factory.mktemp("sacrebleu-options")
    paths: dict[int, tuple[list[Path], Path]] = {}
    for seed, case in CORPORA.items():
        hyp = tmp / f"hyp{seed}.txt"
        hyp.write_bytes(case.hyp)
        refs = [tmp / f"ref{seed}.{k}.txt" for k in range(len(case.refs))]
        for path, data in zip(refs, case.refs, strict=True):
            path.write_bytes(data)
        paths[seed] = (refs, hyp)

    def run(item: tuple[int, int]) -> list[dict[str, Any]]:
        seed, row = item
        refs, hyp = paths[seed]
        return cli_json(refs, hyp, ["bleu", "chrf", "ter"], flags_of(grid_row(row)))

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(zip((row for _, row in RUNS), pool.map(run, RUNS), strict=True))


def test_the_grid_covers_every_option() -> None:
    cases: list[Case] = list(CORPORA.values())
    assert len(cases) >= 12
    assert {len(c.refs) for c in cases} == {1, 2, 3}
    assert any("" in read_case(c)[0] for c in cases)
    assert any(len(read_case(c)[0]) == 1 for c in cases)
    texts = b"".join(c.hyp for c in cases).decode()
    for sample in ("東京", "مرحبا", "👍🏽"):
        assert sample in texts
    bleu = {tuple(sorted(grid_row(i)["BLEU"].items())) for i in range(ROWS)}
    assert len(bleu) == len(BLEU_GRID) == ROWS
    assert {grid_row(i)["BLEU"]["force"] for i in range(ROWS)} == {False, True}
    ter = [tuple(grid_row(i)["TER"].values()) for i in range(ROWS)]
    assert min(ter.count(flags) for flags in set(ter)) >= 3 and len(set(ter)) == 16
    assert len({tuple(c.values()) for c in CHRF_GRID}) == ROWS


@pytest.mark.parametrize(("seed", "row"), RUNS, ids=[f"seed{s}-row{r}" for s, r in RUNS])
def test_scores_signatures_and_statistics_equal_sacrebleus(
    seed: int, row: int, cli_records: dict[int, list[dict[str, Any]]]
) -> None:
    hyps, refs = read_case(CORPORA[seed])
    options = grid_row(row)
    keys = ["BLEU", "chrF", "TER"]
    table = table_of(options)
    ours = score_run(hyps, refs, keys, table)
    index = np.random.default_rng(row).integers(0, len(hyps), len(hyps))
    for key, record, make in zip(keys, cli_records[row], (BLEU, CHRF, TER), strict=True):
        name = key
        assert format(ours[key].score, ".4f") == format(record["score"], ".4f"), key
        beta = options["chrF"]["beta"]
        extra = f"|beta:{beta}" if name == "chrF" and beta != 2 else ""
        expected_signature = record["signature"].replace("|version:", f"{extra}|version:")
        assert ours[key].signature == expected_signature, key
        # sacrebleu's own metric object, built here from the grid, not by the scorer.
        reference = make(**{k: v for k, v in options[name].items() if k != "force"})
        stats = np.asarray(reference._extract_corpus_statistics(hyps, refs))
        assert ours[key].stats.shape == stats.shape and (ours[key].stats == stats).all(), key
        sample = reference.corpus_score(
            [hyps[i] for i in index], [[r[i] for i in index] for r in refs]
        )
        assert corpus_score_from_stats(key, ours[key].stats[index], table) == sample.score, key
        sums = ours[key].stats[index].sum(axis=0)[None, :]
        assert scores_from_sums(key, sums, table)[0] == pytest.approx(sample.score, abs=1e-9), key


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("method", ["exp", "floor", "add-k", "none"])
def test_bleu_orders_and_effective_order_equal_sacrebleus_objects(seed: int, method: str) -> None:
    hyps, refs = read_case(CORPORA[seed])
    orders = [(n, eff) for n in (1, 2, 3, 5, 6) for eff in (False, True)]
    keys = [f"BLEU[max_ngram_order={n},effective_order={str(eff).lower()}]" for n, eff in orders]
    table = GenerationOptions(per_measure=(("BLEU", (("smooth_method", method),)),))
    ours = score_run(hyps, refs, keys, table)
    index = np.random.default_rng(seed).integers(0, len(hyps), len(hyps))
    for key, (order, eff) in zip(keys, orders, strict=True):
        reference = BLEU(max_ngram_order=order, effective_order=eff, smooth_method=method)
        assert ours[key].score == reference.corpus_score(hyps, refs).score, key
        stats = np.asarray(reference._extract_corpus_statistics(hyps, refs))
        assert (ours[key].stats == stats).all(), key
        sample = reference.corpus_score(
            [hyps[i] for i in index], [[r[i] for i in index] for r in refs]
        )
        sums = ours[key].stats[index].sum(axis=0)[None, :]
        assert scores_from_sums(key, sums, table)[0] == pytest.approx(sample.score, abs=1e-9), key
        assert f"|ngram:{order}|" in ours[key].signature


def test_table_and_measure_options_reach_sacrebleus_metrics() -> None:
    hyps, refs = read_case(CORPORA[0])
    table = GenerationOptions(
        tokenize="intl",
        lowercase=True,
        common=(("smooth_method", "floor"), ("beta", 3), ("normalized", True)),
        per_measure=(("BLEU", (("smooth_value", 0.5),)), ("TER", (("case_sensitive", True),))),
    )
    found = score_run(hyps, refs, ["BLEU", "chrF", "TER"], table)
    expected = [
        BLEU(tokenize="intl", lowercase=True, smooth_method="floor", smooth_value=0.5),
        CHRF(lowercase=True, beta=3),
        TER(normalized=True, case_sensitive=True),
    ]
    for (key, ours), reference in zip(found.items(), expected, strict=True):
        assert ours.score == reference.corpus_score(hyps, refs).score, key
        signature = reference.get_signature().format()
        if key == "chrF":
            signature = signature.replace("|version:", "|beta:3|version:")
        assert ours.signature == signature, key
    # The scorer's metric for a bracketed key starts from the tables, brackets winning.
    bleu = metric("BLEU[smooth_value=0.2]", table)
    assert (bleu.tokenizer_signature, bleu.smooth_method, bleu.smooth_value) == (
        "intl",
        "floor",
        0.2,
    )
