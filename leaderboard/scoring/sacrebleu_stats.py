"""sacrebleu's per-segment BLEU and chrF statistics, computed in numpy instead of per n-gram.

The statistics equal sacrebleu's ``_extract_corpus_statistics`` row for row (the tests compare
them on generated corpora): sacrebleu's own tokenizers and preprocessing make the tokens, and
``ngram_matches`` counts the n-grams of all segments at once, where sacrebleu builds a Counter
per segment and n-gram order (most of its time on a large run).

BLEU row: [hyp_len, ref_len, matches 1..4, totals 1..4], where ref_len is the reference length
closest to hyp_len (the shorter on a tie) and matches clip each hypothesis n-gram's count by its
largest count in any one reference. chrF row: [hyp, ref, match] per character order 1..6, then
per word order (chrF++), all taken from the reference with the best segment-level chrF (the
first on a tie); a hypothesis count is 0 where the reference has no n-gram of that order.

Every option of sacrebleu's BLEU and chrF is covered: BLEU's tokenizer, ``lowercase`` and
``max_ngram_order`` (the others act on the score, not the statistics); chrF's orders (a
``char_order`` of 0 has no character columns), ``lowercase``, ``whitespace`` (spaces kept as
characters) and ``beta`` and ``eps_smoothing`` (which choose the best reference).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    # Types only: sacrebleu takes a fifth of a second to import, paid by what scores text.
    from sacrebleu.metrics import BLEU, CHRF

from leaderboard.scoring.ngram_matches import IntArray, Texts, count_matches

#: Every code point Python's ``str.split()`` splits on (``str.isspace``), which chrF drops
#: before counting; a test compares the list with a scan of all code points.
SPACES = np.array(
    [*range(0x09, 0x0E), *range(0x1C, 0x21), 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B)]
    + [0x2028, 0x2029, 0x202F, 0x205F, 0x3000],
    dtype=np.int64,
)


Tokens = list[list[str]]


@dataclass(frozen=True)
class _Numbered:
    """Reference texts as symbol ids, with the vocabulary that numbered them."""

    vocab: dict[str, int]
    symbols: list[IntArray]
    lengths: list[IntArray]


def _number(texts: list[Tokens], vocab: dict[str, int]) -> tuple[list[IntArray], list[IntArray]]:
    """Return the ids of tokenized texts, adding unseen tokens to ``vocab``."""
    symbols: list[IntArray] = []
    lengths: list[IntArray] = []
    for text in texts:
        ids = [vocab.setdefault(tok, len(vocab) + 1) for seg in text for tok in seg]
        symbols.append(np.asarray(ids, dtype=np.int64))
        lengths.append(np.fromiter((len(seg) for seg in text), dtype=np.int64, count=len(text)))
    return symbols, lengths


def _with_hypothesis(hypothesis: Tokens, refs: _Numbered) -> Texts:
    """Return the hypothesis numbered in the references' vocabulary, then the references."""
    # A copy: the cached vocabulary must not grow with every run's unseen tokens.
    (symbols,), (lengths,) = _number([hypothesis], dict(refs.vocab))
    return Texts([symbols, *refs.symbols], [lengths, *refs.lengths])


def _code_points(text: list[str], whitespace: bool = False) -> tuple[NDArray[np.int32], IntArray]:
    """Return the code points of a text's segments (whitespace removed unless kept), and lengths."""
    joined = "".join(text)
    cps = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32).astype(np.int32)
    seg_lengths = np.fromiter((len(s) for s in text), dtype=np.int64, count=len(text))
    if whitespace:
        return cps, seg_lengths
    keep = ~np.isin(cps, SPACES)
    if not keep.all():
        # Each segment shrinks by the spaces it held.
        seg_index = np.repeat(np.arange(len(text)), seg_lengths)
        seg_lengths = seg_lengths - np.bincount(seg_index[~keep], minlength=len(text))
        cps = cps[keep]
    return cps, seg_lengths.astype(np.int64)


def _dense(points: list[NDArray[np.int32]]) -> list[IntArray]:
    """Return code points renumbered 1.. among those present, to keep sort keys small."""
    present = np.zeros(0x110000, dtype=np.int32)
    for cps in points:
        present[cps] = 1
    rank = np.cumsum(present, dtype=np.int32)
    return [rank[cps].astype(np.int64) for cps in points]


class ReferenceCache:
    """References tokenized and numbered once per measure setting, reused by every run."""

    def __init__(self, references: Sequence[Sequence[str]]) -> None:
        self.references = references
        self._prepared: dict[tuple[Any, ...], Any] = {}

    def words(self, key: tuple[Any, ...], tokenize: Callable[[str], list[str]]) -> _Numbered:
        """Return the references tokenized by ``tokenize`` (cached under ``key``)."""
        found = self._prepared.get(("words", *key))
        if found is None:
            vocab: dict[str, int] = {}
            tokens = [[tokenize(s) for s in ref] for ref in self.references]
            symbols, lengths = _number(tokens, vocab)
            found = _Numbered(vocab, symbols, lengths)
            self._prepared[("words", *key)] = found
        return cast(_Numbered, found)

    def chars(
        self, key: tuple[Any, ...], preprocess: Callable[[str], str], whitespace: bool = False
    ) -> list[tuple[NDArray[np.int32], IntArray]]:
        """Return each reference's code points, whitespace removed unless kept (cached)."""
        found = self._prepared.get(("chars", whitespace, *key))
        if found is None:
            found = [
                _code_points([preprocess(s) for s in ref], whitespace) for ref in self.references
            ]
            self._prepared[("chars", whitespace, *key)] = found
        return cast(list[tuple[NDArray[np.int32], IntArray]], found)


def bleu_statistics(
    metric: BLEU, hypotheses: Sequence[str], references: ReferenceCache
) -> NDArray[np.int64]:
    """Return sacrebleu's BLEU statistics, one row per segment."""

    def tokenize(segment: str) -> list[str]:
        return cast(str, metric._preprocess_segment(segment)).split()

    refs = references.words(("bleu", metric.tokenizer_signature, metric.lowercase), tokenize)
    texts = _with_hypothesis([tokenize(s) for s in hypotheses], refs)
    counts = count_matches(texts, metric.max_ngram_order)
    hyp_len = texts.lengths[0]
    # The closest reference length, the shorter on a tie, as sacrebleu picks it.
    closest = texts.lengths[1].copy()
    best_diff = np.abs(hyp_len - closest)
    for ref_len in texts.lengths[2:]:
        diff = np.abs(hyp_len - ref_len)
        take = (diff < best_diff) | ((diff == best_diff) & (ref_len < closest))
        closest = np.where(take, ref_len, closest)
        best_diff = np.where(take, diff, best_diff)
    return np.column_stack([hyp_len, closest, counts.clipped, counts.totals[0]]).astype(np.int64)


def chrf_scores(metric: CHRF, stats: NDArray[Any]) -> NDArray[np.float64]:
    """Return sacrebleu's chrF of each row of statistics (..., K), its operations in its order."""
    eps = 1e-16
    factor = metric.beta**2
    shape = stats.shape[:-1]
    if metric.eps_smoothing:
        return _chrf_eps_scores(metric, stats)
    avg_prec = np.zeros(shape)
    avg_rec = np.zeros(shape)
    effective = np.zeros(shape, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(metric.order):
            n_hyp, n_ref, prec, rec = _order_precision_recall(stats, i, eps)
            both = (n_hyp > 0) & (n_ref > 0)
            avg_prec = np.where(both, avg_prec + prec, avg_prec)
            avg_rec = np.where(both, avg_rec + rec, avg_rec)
            effective += both
        divisor = np.where(effective > 0, effective, 1)
        avg_prec = np.where(effective > 0, avg_prec / divisor, 0.0)
        avg_rec = np.where(effective > 0, avg_rec / divisor, 0.0)
        score = (1 + factor) * avg_prec * avg_rec
        score = score / (factor * avg_prec + avg_rec)
    return np.where(avg_prec + avg_rec != 0, 100 * score, 0.0)


def _order_precision_recall(
    stats: NDArray[Any], i: int, eps: float
) -> tuple[NDArray[Any], NDArray[Any], NDArray[Any], NDArray[Any]]:
    """Return order ``i``'s hypothesis and reference counts, precision and recall (eps if 0/0)."""
    n_hyp = stats[..., 3 * i]
    n_ref = stats[..., 3 * i + 1]
    n_match = stats[..., 3 * i + 2]
    prec = np.where(n_hyp > 0, n_match / np.where(n_hyp > 0, n_hyp, 1), eps)
    rec = np.where(n_ref > 0, n_match / np.where(n_ref > 0, n_ref, 1), eps)
    return n_hyp, n_ref, prec, rec


def _chrf_eps_scores(metric: CHRF, stats: NDArray[Any]) -> NDArray[np.float64]:
    """Return chrF with eps smoothing: the mean of every order's F-beta, eps where undefined."""
    eps = 1e-16
    factor = metric.beta**2
    score = np.zeros(stats.shape[:-1])
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(metric.order):
            _, _, prec, rec = _order_precision_recall(stats, i, eps)
            denom = factor * prec + rec
            term = (1 + factor) * prec * rec / np.where(denom > 0, denom, 1)
            score = score + np.where(denom > 0, term, eps)
    return np.asarray(100 * score / metric.order, dtype=np.float64)


def chrf_statistics(
    metric: CHRF, hypotheses: Sequence[str], references: ReferenceCache
) -> NDArray[np.int64]:
    """Return sacrebleu's chrF (or chrF++) statistics, one row per segment."""
    preprocess = metric._preprocess_segment
    hyp_texts = [preprocess(s) for s in hypotheses]
    parts = []
    if metric.char_order > 0:
        refs = references.chars(("chrf", metric.lowercase), preprocess, metric.whitespace)
        hyp_chars = _code_points(hyp_texts, metric.whitespace)
        points = _dense([hyp_chars[0], *(cps for cps, _ in refs)])
        lengths = [hyp_chars[1], *(ln for _, ln in refs)]
        parts.append(count_matches(Texts(points, lengths), metric.char_order))
    if metric.word_order > 0:
        words = references.words(
            ("chrf-words", metric.lowercase), lambda s: metric._remove_punctuation(preprocess(s))
        )
        hyp_words = [metric._remove_punctuation(s) for s in hyp_texts]
        parts.append(count_matches(_with_hypothesis(hyp_words, words), metric.word_order))
    per_ref: list[NDArray[np.int64]] = []
    for ref in range(len(references.references)):
        columns = []
        for counts in parts:
            for n in range(counts.totals[0].shape[1]):
                ref_total = counts.totals[ref + 1][:, n]
                hyp_total = np.where(ref_total > 0, counts.totals[0][:, n], 0)
                columns += [hyp_total, ref_total, counts.matches[ref][:, n]]
        per_ref.append(np.column_stack(columns).astype(np.int64))
    best = per_ref[0]
    best_f = chrf_scores(metric, best)
    for stats in per_ref[1:]:
        f = chrf_scores(metric, stats)
        better = f > best_f
        best = np.where(better[:, None], stats, best)
        best_f = np.where(better, f, best_f)
    return best
