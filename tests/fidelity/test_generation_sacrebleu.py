"""The generation scorer against the ``sacrebleu`` command line on the same files.

Each seeded case writes a hypothesis file and one to three reference files, reads them with the
format's readers, scores them with ``score_run`` and compares with what the ``sacrebleu``
command prints (``--format json -w 4``): scores to the 4 decimals it prints, signatures equal.
Cases cover CJK, Arabic, combining marks, emoji, very long lines, empty hypotheses, outputs
identical to a reference, one-segment sets, the 13a, intl, char, none and zh tokenizers, lowercase
on and off, CRLF and missing final newlines. Statistics are checked too: summed over all
segments they give the scorer's score exactly, over a resampled subset sacrebleu's own
``corpus_score`` on that subset.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from sacrebleu.metrics import BLEU, CHRF, TER

from leaderboard.scoring.generation import (
    GenerationOptions,
    corpus_score_from_stats,
    score_run,
)
from tests.helpers.sacrebleu_cases import (
    Case,
    cli_json,
    make_case,
    read_case,
)

CASES = 32


def cli_scores(case: Case, tmp: Path) -> dict[str, dict]:
    """Return {measure key: sacrebleu's JSON record} from two command runs."""
    hyp = tmp / f"hyp{case.seed}.txt"
    hyp.write_bytes(case.hyp)
    refs = []
    for k, data in enumerate(case.refs):
        refs.append(tmp / f"ref{case.seed}.{k}.txt")
        refs[-1].write_bytes(data)
    common = ["-tok", case.options.tokenize]
    if case.options.lowercase:
        common += ["-lc", "--chrf-lowercase"]
    first = cli_json(refs, hyp, ["bleu", "chrf", *(["ter"] if case.ter else [])], common)
    plus = cli_json(refs, hyp, ["chrf"], [*common, "--chrf-word-order", "2"])
    keys = ["BLEU", "chrF", "TER"]
    found = dict(zip(keys, first, strict=False))
    found["chrF++"] = plus[0]
    return found


ALL_CASES = [make_case(seed) for seed in range(CASES)]


@pytest.fixture(scope="module")
def cli_results(tmp_path_factory: pytest.TempPathFactory) -> dict[int, dict[str, dict]]:
    """Run the sacrebleu command for every case, two at a time."""
    tmp = tmp_path_factory.mktemp("sacrebleu")
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = pool.map(lambda case: cli_scores(case, tmp), ALL_CASES)
        return {case.seed: found for case, found in zip(ALL_CASES, results, strict=True)}


def test_the_cases_cover_the_edge_cases() -> None:
    assert len(ALL_CASES) >= 30
    assert {c.options.tokenize for c in ALL_CASES} == {"13a", "intl", "char", "none", "zh"}
    assert {c.options.lowercase for c in ALL_CASES} == {True, False}
    assert {len(c.refs) for c in ALL_CASES} == {1, 2, 3}
    assert any(c.hyp.count(b"\n") <= 1 and len(read_case(c)[0]) == 1 for c in ALL_CASES)
    assert any(b"\r\n" in c.hyp for c in ALL_CASES)
    assert any(not c.hyp.endswith(b"\n") for c in ALL_CASES)
    texts = b"".join(c.hyp for c in ALL_CASES).decode()
    for sample in ("東京", "مرحبا", "\u0301", "👍🏽"):
        assert sample in texts
    assert any(max(len(h.split()) for h in read_case(c)[0]) >= 800 for c in ALL_CASES)
    assert any("" in read_case(c)[0] for c in ALL_CASES)
    assert sum(c.ter for c in ALL_CASES) >= 15


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda c: f"seed{c.seed}")
def test_scores_and_signatures_equal_the_sacrebleu_command(
    case: Case, cli_results: dict[int, dict[str, dict]]
) -> None:
    expected = cli_results[case.seed]
    hyps, refs = read_case(case)
    ours = score_run(hyps, refs, list(expected), case.options)
    for key, record in expected.items():
        assert format(ours[key].score, ".4f") == format(record["score"], ".4f"), key
        assert ours[key].signature == record["signature"], key
        assert len(ours[key].stats) == len(hyps)


def reference_metric(key: str, options: GenerationOptions) -> BLEU | CHRF | TER:
    """Return sacrebleu's metric for ``key``, built here independently of the scorer."""
    if key == "BLEU":
        return BLEU(tokenize=options.tokenize, lowercase=options.lowercase)
    if key == "TER":
        return TER()
    return CHRF(word_order=2 if key == "chrF++" else 0, lowercase=options.lowercase)


@pytest.mark.parametrize("case", ALL_CASES[:12], ids=lambda c: f"seed{c.seed}")
def test_statistics_give_the_corpus_score_of_any_resample(case: Case) -> None:
    hyps, refs = read_case(case)
    keys = ["BLEU", "chrF", "chrF++", *(["TER"] if case.ter else [])]
    ours = score_run(hyps, refs, keys, case.options)
    rng = np.random.default_rng(case.seed)
    index = rng.integers(0, len(hyps), size=len(hyps))  # a bootstrap resample, with repeats
    for key in keys:
        stats = ours[key].stats
        assert corpus_score_from_stats(key, stats, case.options) == ours[key].score, key
        sub_hyps = [hyps[i] for i in index]
        sub_refs = [[ref[i] for i in index] for ref in refs]
        expected = reference_metric(key, case.options).corpus_score(sub_hyps, sub_refs).score
        assert corpus_score_from_stats(key, stats[index], case.options) == expected, key
