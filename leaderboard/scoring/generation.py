"""Corpus BLEU, chrF, chrF++ and TER through sacrebleu, with the per-segment statistics behind them.

Every score is sacrebleu's corpus score (0-100 scale) and carries sacrebleu's signature. The
per-segment sufficient statistics equal sacrebleu's ``_extract_corpus_statistics``: TER's are
sacrebleu's own, BLEU's and chrF's are counted in numpy by ``sacrebleu_stats`` (sacrebleu's
per-segment Counters take seconds on a large run). Summing them over any subset of segments and
passing the sums to the metric's ``_compute_score_from_stats`` gives the corpus score of that
subset, which is what resampling analyses need.

``lowercase`` applies to all four measures: BLEU's and chrF's ``lowercase`` and TER's
``case_sensitive = not lowercase``. sacrebleu's TER is case-insensitive by default; here a
definition that keeps case keeps it for TER too, and the signature says so (``case:mixed``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    # sacrebleu takes a fifth of a second to import: loaded by what scores or checks text.
    from sacrebleu.metrics import BLEU, CHRF, TER

from leaderboard.scoring.registry import Measure, MeasureRegistry, UnknownMeasure
from leaderboard.scoring.sacrebleu_stats import (
    ReferenceCache,
    bleu_statistics,
    chrf_scores,
    chrf_statistics,
)

#: The measure keys, in the order tables list them.
MEASURE_KEYS = ("BLEU", "chrF", "chrF++", "TER")
#: sacrebleu's BLEU tokenizers that work with sacrebleu alone: the MeCab ones need extra
#: packages and the SentencePiece ones download a model on first use, which a server must not.
TOKENIZERS = ("13a", "intl", "zh", "char", "none")
#: How many segments sacrebleu's TER prepares at a time (bounds its reference cache).
CHUNK_SEGMENTS = 500
#: The keys of a definition's ``sacrebleu`` table.
OPTION_KEYS = ("tokenize", "lowercase")

# Ties compare the official string: 4 decimals is what ``sacrebleu -w 4`` prints, finer than
# any difference a reader cares about and coarse enough that float noise never breaks a tie.
GENERATION_REGISTRY = MeasureRegistry(
    "generation",
    [
        Measure("BLEU", "BLEU", "score", 2, 4, notes="sacrebleu corpus BLEU (0-100)"),
        Measure("chrF", "chrF", "score", 2, 4, notes="sacrebleu corpus chrF, β = 2 (0-100)"),
        Measure(
            "chrF++",
            "chrF++",
            "score",
            2,
            4,
            notes="sacrebleu corpus chrF with word bigrams, β = 2 (0-100)",
        ),
        Measure(
            "TER",
            "TER",
            "score",
            2,
            4,
            lower_is_better=True,
            notes="sacrebleu corpus TER: edits per reference word (0-100+, lower is better)",
        ),
    ],
)


@dataclass(frozen=True)
class GenerationOptions:
    """A definition's sacrebleu options: BLEU's tokenizer and whether to lowercase."""

    tokenize: str = "13a"
    lowercase: bool = False


def parse_options(table: Mapping[str, Any] | None) -> GenerationOptions:
    """Return the options of a ``sacrebleu = {...}`` table; raise ValueError naming a bad key."""
    if table is None:
        return GenerationOptions()
    unknown = [key for key in table if key not in OPTION_KEYS]
    if unknown:
        raise ValueError(
            f"unknown sacrebleu option {str(unknown[0])[:80]!r}; known: {', '.join(OPTION_KEYS)}"
        )
    tokenize = table.get("tokenize", "13a")
    from sacrebleu.metrics import BLEU

    if isinstance(tokenize, str) and tokenize in BLEU.TOKENIZERS and tokenize not in TOKENIZERS:
        raise ValueError(
            f"sacrebleu option tokenize = {tokenize!r} needs packages or downloads this server "
            f"does not have; supported: {', '.join(TOKENIZERS)}"
        )
    if not isinstance(tokenize, str) or tokenize not in TOKENIZERS:
        raise ValueError(
            f"sacrebleu option tokenize = {str(tokenize)[:80]!r} is not one of sacrebleu's "
            f"tokenizers: {', '.join(TOKENIZERS)}"
        )
    lowercase = table.get("lowercase", False)
    if not isinstance(lowercase, bool):
        raise ValueError(f"sacrebleu option lowercase = {str(lowercase)[:80]!r} is not true/false")
    return GenerationOptions(tokenize=tokenize, lowercase=lowercase)


def metric(key: str, options: GenerationOptions) -> BLEU | CHRF | TER:
    """Return the sacrebleu metric object computing measure ``key`` under ``options``."""
    from sacrebleu.metrics import BLEU, CHRF, TER

    if key == "BLEU":
        return BLEU(tokenize=options.tokenize, lowercase=options.lowercase)
    if key == "chrF":
        return CHRF(lowercase=options.lowercase)
    if key == "chrF++":
        return CHRF(word_order=2, lowercase=options.lowercase)
    if key == "TER":
        return TER(case_sensitive=not options.lowercase)
    raise UnknownMeasure(
        f"unknown measure {key[:80]!r} for family generation; known: {', '.join(MEASURE_KEYS)}"
    )


@dataclass(frozen=True, eq=False)
class GenerationScore:
    """One measure of one run: sacrebleu's corpus score, its signature, per-segment statistics.

    ``stats`` has one row per segment: BLEU [hyp_len, ref_len, matches 1-4, totals 1-4]
    (ints); chrF and chrF++ [hyp, ref, match] counts per character then word n-gram order
    (ints); TER [edits, mean reference length] (floats).
    """

    key: str
    score: float
    signature: str
    stats: NDArray[Any]


def score_run(
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]] | ReferenceCache,
    measures: Iterable[str] = MEASURE_KEYS,
    options: GenerationOptions | None = None,
) -> dict[str, GenerationScore]:
    """Return each measure's corpus score, signature and per-segment statistics.

    BLEU = BP · exp(Σ_n ¼ log p_n), BP = min(1, exp(1 − r/c)); chrF = (1 + β²)·P·R / (β²·P + R)
    with β = 2 over averaged character (and, for chrF++, word) n-gram precisions and recalls;
    TER = Σ edits / Σ mean reference length; all × 100, from sums of the segment statistics.
    ``references`` holds one list of segments per reference file (or their ReferenceCache,
    which keeps them tokenized between runs).
    """
    from sacrebleu.metrics import BLEU, CHRF

    options = options or GenerationOptions()
    cache = references if isinstance(references, ReferenceCache) else ReferenceCache(references)
    if not hypotheses:
        raise ValueError("no segments to score")
    for ref in cache.references:
        if len(ref) != len(hypotheses):
            raise ValueError("every reference needs one segment per hypothesis")
    results: dict[str, GenerationScore] = {}
    for key in measures:
        scorer = metric(key, options)
        # The signature names the number of references, which sacrebleu learns while counting.
        scorer.num_refs = len(cache.references)
        if isinstance(scorer, BLEU):
            stats: NDArray[Any] = bleu_statistics(scorer, hypotheses, cache)
        elif isinstance(scorer, CHRF):
            stats = chrf_statistics(scorer, hypotheses, cache)
        else:
            stats = ter_statistics(scorer, hypotheses, cache.references)
        results[key] = GenerationScore(
            key=key,
            score=_score_of(scorer, stats),
            signature=scorer.get_signature().format(),
            stats=stats,
        )
    return results


def ter_statistics(
    scorer: TER, hypotheses: Sequence[str], references: Sequence[Sequence[str]]
) -> NDArray[np.float64]:
    """Return sacrebleu's own TER statistics [edits, mean reference length] per segment."""
    segment_stats: list[list[Any]] = []
    # Chunks bound memory: sacrebleu prepares every reference of the corpus before scoring.
    for start in range(0, len(hypotheses), CHUNK_SEGMENTS):
        end = start + CHUNK_SEGMENTS
        chunk = [ref[start:end] for ref in references]
        segment_stats += scorer._extract_corpus_statistics(hypotheses[start:end], chunk)
    return np.asarray(segment_stats, dtype=np.float64)


def _score_of(scorer: BLEU | CHRF | TER, stats: NDArray[Any]) -> float:
    """Return the corpus score of statistics rows, summed in sacrebleu's order and types."""
    from sacrebleu.metrics import TER

    if isinstance(scorer, TER):
        # sacrebleu adds float statistics one segment after the other; cumsum adds in the same
        # order, so the sums (and the score) are bit-identical to sacrebleu's.
        totals: list[Any] = [float(x) for x in np.cumsum(stats, axis=0, dtype=np.float64)[-1]]
    else:
        totals = [int(x) for x in stats.sum(axis=0, dtype=np.int64)]
    return float(scorer._compute_score_from_stats(totals).score)


def _my_log(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """Return log, with sacrebleu's -9999999999 for 0."""
    with np.errstate(divide="ignore"):
        return np.where(values == 0, -9999999999.0, np.log(np.where(values == 0, 1.0, values)))


def bleu_from_sums(sums: NDArray[Any], order: int = 4) -> NDArray[np.float64]:
    """Return sacrebleu's corpus BLEU (exp smoothing) of each row of summed statistics.

    BLEU = BP · exp(Σ_n log p_n / N) with p_n = 100·correct_n / total_n, or 100 / (2^k·total_n)
    for the k-th order without a match; orders from the first with no n-grams on count 0
    (log 0 is -9999999999); BP = exp(1 − ref/sys) when sys < ref (0 when sys = 0), else 1.
    """
    sums = np.asarray(sums, dtype=np.float64)
    sys_len, ref_len = sums[..., 0], sums[..., 1]
    correct, total = sums[..., 2 : 2 + order], sums[..., 2 + order : 2 + 2 * order]
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = np.where(
            sys_len < ref_len,
            np.where(sys_len > 0, np.exp(1 - ref_len / np.where(sys_len > 0, sys_len, 1)), 0.0),
            1.0,
        )
        smooth = np.ones(sys_len.shape)
        stopped = np.zeros(sys_len.shape, dtype=bool)
        logs = np.zeros(sys_len.shape)
        for n in range(order):
            stopped |= total[..., n] == 0
            safe_total = np.where(stopped, 1.0, total[..., n])
            unmatched = ~stopped & (correct[..., n] == 0)
            smooth = np.where(unmatched, smooth * 2, smooth)
            precision = np.where(
                unmatched, 100.0 / (smooth * safe_total), 100.0 * correct[..., n] / safe_total
            )
            logs = logs + _my_log(np.where(stopped, 0.0, precision))
        score = bp * np.exp(logs / order)
    return np.where(correct.sum(axis=-1) == 0, 0.0, score)


def ter_from_sums(sums: NDArray[Any]) -> NDArray[np.float64]:
    """Return sacrebleu's TER = 100 · edits / reference length (100 for an empty reference)."""
    sums = np.asarray(sums, dtype=np.float64)
    edits, length = sums[..., 0], sums[..., 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(length > 0, edits / np.where(length > 0, length, 1), 0.0)
    return 100 * np.where(length > 0, ratio, np.where(edits > 0, 1.0, 0.0))


def scores_from_sums(
    measure: str, sums: NDArray[Any], options: GenerationOptions | None = None
) -> NDArray[np.float64]:
    """Return a measure's corpus score for each row of summed statistics (resampled analysis)."""
    from sacrebleu.metrics import BLEU, CHRF

    scorer = metric(measure, options or GenerationOptions())
    if isinstance(scorer, BLEU):
        return bleu_from_sums(sums, scorer.max_ngram_order)
    if isinstance(scorer, CHRF):
        return chrf_scores(scorer, np.asarray(sums, dtype=np.float64))
    return ter_from_sums(sums)


def corpus_score_from_stats(
    measure: str, stats: NDArray[Any], options: GenerationOptions | None = None
) -> float:
    """Return the corpus score of the segments whose statistics are the rows of ``stats``."""
    if len(stats) == 0:
        raise ValueError("no segments to score")
    return _score_of(metric(measure, options or GenerationOptions()), stats)
