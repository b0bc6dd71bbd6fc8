"""Our numpy BLEU and chrF segment statistics against sacrebleu's own, row for row.

sacrebleu's ``_extract_corpus_statistics`` builds Counters per segment; ``sacrebleu_stats``
counts all segments at once. The two must agree exactly on every row, or the corpus scores,
the stored statistics and every resampling analysis built on them would drift from sacrebleu.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import BLEU, CHRF

from leaderboard.scoring import ngram_matches
from leaderboard.scoring.sacrebleu_stats import (
    SPACES,
    ReferenceCache,
    bleu_statistics,
    chrf_statistics,
)

WORDS = [
    "the",
    "a",
    "of",
    "cat",
    "dog",
    "sat",
    "on",
    "mat",
    "the.",
    "mat,",
    "(cat)",
    "'dog'",
    "cat!",
    "Über",
    "straße",
    "CAFÉ",
    "café",
    "naïve",
    "東京",
    "北京大学",
    "机器翻译",
    "مرحبا",
    "العالم",
    "😀",
    "👍🏽",
    "é",
    "ño",
    "3.14",
    "$5",
    "--",
    "...",
    "«»",
    "?!",
]
#: Separators str.split() knows besides the space: chrF must drop them, BLEU split on them.
SEPARATORS = [" ", " ", " ", "  ", "\t", "\u00a0", "\u3000", "\u2009", "\x1c", "\u2028"]


def segment(rng: random.Random, longest: int) -> str:
    """Return up to ``longest`` words joined by mixed whitespace (sometimes nothing)."""
    length = rng.choice([0, 1, 2, rng.randint(0, longest)])
    text = ""
    for _ in range(length):
        text += rng.choice(WORDS) + rng.choice(SEPARATORS)
    return text if rng.random() < 0.8 else text.strip()


def corpus(seed: int) -> tuple[list[str], list[list[str]]]:
    """Return a seeded case: hypotheses and one to three references, near copies of each other."""
    rng = random.Random(seed)
    n = rng.choice([1, 2, 7, 300, 1100])  # 1100 spans three 512-segment chunks
    longest = rng.choice([3, 30, 400])
    refs = [[segment(rng, longest) for _ in range(n)] for _ in range(rng.randint(1, 3))]
    hyps = []
    for i in range(n):
        r = rng.random()
        if r < 0.3:
            hyps.append(refs[0][i])  # an exact copy: every n-gram matches
        elif r < 0.5 and len(refs) > 1:
            hyps.append(refs[-1][i])  # equal to another reference: chrF's pick among equals
        else:
            hyps.append(segment(rng, longest))
    return hyps, refs


def sacrebleu_rows(metric: BLEU | CHRF, hyps: list[str], refs: list[list[str]]) -> np.ndarray:
    return np.asarray(metric._extract_corpus_statistics(hyps, refs), dtype=np.int64)


METRICS = [
    ("BLEU 13a", lambda: BLEU()),
    ("BLEU intl lowercase", lambda: BLEU(tokenize="intl", lowercase=True)),
    ("BLEU char", lambda: BLEU(tokenize="char")),
    ("BLEU zh", lambda: BLEU(tokenize="zh")),
    ("BLEU none", lambda: BLEU(tokenize="none")),
    ("chrF", lambda: CHRF()),
    ("chrF lowercase", lambda: CHRF(lowercase=True)),
    ("chrF++", lambda: CHRF(word_order=2)),
]


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize(("label", "make"), METRICS, ids=[m[0] for m in METRICS])
def test_rows_equal_sacrebleus(seed: int, label: str, make) -> None:  # type: ignore[no-untyped-def]
    hyps, refs = corpus(seed)
    metric = make()
    ours_of = bleu_statistics if isinstance(metric, BLEU) else chrf_statistics
    ours = ours_of(metric, hyps, ReferenceCache(refs))
    theirs = sacrebleu_rows(make(), hyps, refs)
    assert ours.shape == theirs.shape
    differ = np.flatnonzero((ours != theirs).any(axis=1))
    assert differ.size == 0, (label, differ[:3], ours[differ[:1]], theirs[differ[:1]])


def test_a_cached_reference_serves_runs_with_unseen_tokens() -> None:
    hyps, refs = corpus(3)
    cache = ReferenceCache(refs)
    first = bleu_statistics(BLEU(), hyps, cache)
    other = [h + " zzz-unseen-token" for h in hyps]
    assert (bleu_statistics(BLEU(), other, cache) == sacrebleu_rows(BLEU(), other, refs)).all()
    # The second run's tokens did not enter the cache: the first run still counts the same.
    assert (bleu_statistics(BLEU(), hyps, cache) == first).all()
    assert (chrf_statistics(CHRF(), other, cache) == sacrebleu_rows(CHRF(), other, refs)).all()


def test_chrf_takes_the_first_of_equally_good_references() -> None:
    # Both references give the hypothesis the same chrF with different counts: sacrebleu
    # keeps the first (it replaces only on a strictly better score).
    hyps = ["ab"]
    refs = [["abx"], ["aby"]]
    ours = chrf_statistics(CHRF(), hyps, ReferenceCache(refs))
    assert (ours == sacrebleu_rows(CHRF(), hyps, refs)).all()
    assert ours[0, :3].tolist() == [2, 3, 2]


def test_bleu_takes_the_shorter_of_equally_close_reference_lengths() -> None:
    hyps = ["a b c d"]
    refs = [["a b c d e f"], ["a b"]]
    ours = bleu_statistics(BLEU(), hyps, ReferenceCache(refs))
    assert ours[0, :2].tolist() == [4, 2]
    assert (ours == sacrebleu_rows(BLEU(), hyps, refs)).all()


def test_words_too_many_for_one_key_word_still_count() -> None:
    # 70,000 distinct tokens need 17 bits each: four of them and the segment take two words.
    rng = random.Random(5)
    vocab = [f"w{i}" for i in range(70_000)]
    refs = [[" ".join(rng.choice(vocab) for _ in range(40)) for _ in range(1800)]]
    hyps = [" ".join(s.split()[:30] + [rng.choice(vocab)]) for s in refs[0]]
    ours = bleu_statistics(BLEU(), hyps, ReferenceCache(refs))
    assert (ours == sacrebleu_rows(BLEU(), hyps, refs)).all()


def test_spaces_are_exactly_what_str_split_splits_on() -> None:
    assert sorted(SPACES.tolist()) == [c for c in range(0x110000) if chr(c).isspace()]


def test_counts_by_hand() -> None:
    # Hypothesis "1 2 1 1", references "1 1 3" and "2 1": bigrams of the hypothesis are
    # (1,2) (2,1) (1,1); the first reference has (1,1) (1,3), the second (2,1).
    texts = ngram_matches.Texts(
        [np.array([1, 2, 1, 1]), np.array([1, 1, 3]), np.array([2, 1])],
        [np.array([4]), np.array([3]), np.array([2])],
    )
    counts = ngram_matches.count_matches(texts, 3)
    assert counts.totals[0].tolist() == [[4, 3, 2]]
    assert counts.totals[1].tolist() == [[3, 2, 1]]
    assert counts.totals[2].tolist() == [[2, 1, 0]]
    # Unigrams: hyp {1: 3, 2: 1}; ref1 {1: 2, 3: 1} -> 2; ref2 {2: 1, 1: 1} -> 2; max -> 3.
    assert counts.matches[0].tolist() == [[2, 1, 0]]
    assert counts.matches[1].tolist() == [[2, 1, 0]]
    assert counts.clipped.tolist() == [[3, 2, 0]]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(alphabet="ab. \u00a0\u3000Éé", max_size=12),
            st.text(alphabet="ab. \u00a0Éé", max_size=12),
            st.text(alphabet="ab.\t É", max_size=12),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_any_small_corpus_agrees(rows: list[tuple[str, str, str]]) -> None:
    hyps = [h for h, _, _ in rows]
    refs = [[r for _, r, _ in rows], [r for _, _, r in rows]]
    for metric in (BLEU(), CHRF(), CHRF(word_order=2), BLEU(lowercase=True)):
        ours_of = bleu_statistics if isinstance(metric, BLEU) else chrf_statistics
        assert (
            ours_of(metric, hyps, ReferenceCache(refs)) == sacrebleu_rows(metric, hyps, refs)
        ).all()
