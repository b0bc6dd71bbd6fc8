"""trec_eval 9.0.8's measures per query and as means, vectorised over one ranked run."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation
from functools import cached_property
from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import NDArray

from leaderboard.scoring.measure_keys import (
    Bracketed,
    Scalar,
    refuse_unknown_options,
    split_bracketed,
)
from leaderboard.scoring.ranking import match_index, rank_order
from leaderboard.scoring.registry import Measure, MeasureRegistry, UnknownMeasure

#: trec_eval's floor for the per-query values of a geometric mean (MIN_GEO_MEAN).
GEO_MEAN_FLOOR = 0.00001

#: Fixed keys and their trec_eval names, in the order tables list them.
_FIXED = {
    "MAP": "map",
    "GMAP": "gm_map",
    "R-Prec": "Rprec",
    "MRR": "recip_rank",
    "nDCG": "ndcg",
    "bpref": "bpref",
    "num_ret": "num_ret",
    "num_rel": "num_rel",
    "num_rel_ret": "num_rel_ret",
    "infAP": "infAP",
    "gm_bpref": "gm_bpref",
    "set_P": "set_P",
    "set_recall": "set_recall",
    "set_F": "set_F",
    "set_map": "set_map",
    "set_relative_P": "set_relative_P",
    "11pt_avg": "11pt_avg",
    "utility": "utility",
    "DCG": "dcg",
    "G": "G",
    "binG": "binG",
    "Rndcg": "Rndcg",
    "ndcg_rel": "ndcg_rel",
    "num_nonrel_judged_ret": "num_nonrel_judged_ret",
    "num_q": "num_q",
}
_FIXED_ALIASES = {name: key for key, name in _FIXED.items() if name != "dcg"}
_COUNTS = frozenset({"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret", "num_q"})
#: Measures whose mean is trec_eval's floored geometric mean of the per-query values.
_GEOMETRIC = frozenset({"gm_map", "gm_bpref"})
#: Measures that take nDCG's gain options (``gains``, ``dcg``).
GAIN_KINDS = frozenset({"ndcg", "ndcg_cut", "dcg", "dcg_cut"})
#: The ``dcg`` option's values: trec_eval's linear gains, or 2^g - 1 (ir_measures, ranx).
DCG_FORMS = ("log2", "exp-log2")
#: Default parameters of the parameterised measures (trec_eval's defaults).
_DEFAULT_PARAMS: dict[str, tuple[float, ...]] = {
    "set_F": (1.0,),
    "utility": (1.0, -1.0, 0.0, 0.0),
    "11pt_avg": tuple(i / 10 for i in range(11)),
}
#: Cutoff measures: key prefix -> kind; the kind is also trec_eval's prefix except for MRR@k.
_CUT_PREFIX = {
    "MAP": "map_cut",
    "MRR": "mrr_cut",
    "P": "P",
    "R": "recall",
    "nDCG": "ndcg_cut",
    "Success": "success",
    "relative_P": "relative_P",
    "Hits": "hits",
    "DCG": "dcg_cut",
    "Judged": "judged",
}
_CUT_KEY = {kind: prefix for prefix, kind in _CUT_PREFIX.items()}
_CUT_ALIASES = frozenset({"map_cut", "P", "recall", "ndcg_cut", "success", "relative_P"})
#: The largest k accepted: far beyond any run's depth, small enough for int64 arithmetic.
MAX_CUTOFF = 999_999_999

_KEY_CUT = re.compile(r"(MAP|MRR|P|R|nDCG|Success|relative_P|Hits|DCG|Judged)@(.*)", re.DOTALL)
_ALIAS_CUT = re.compile(r"(map_cut|P|recall|ndcg_cut|success|relative_P)_(.*)", re.DOTALL)
_IPREC = re.compile(r"(?:iPrec@|iprec_at_recall_)(.*)", re.DOTALL)
#: trec_eval's printed names of parameterised measures: set_F_0.5, Rprec_mult_0.20, utility_1,-1,0,0.
_ALIAS_PARAM = re.compile(r"(set_F|Rprec_mult|utility)_(.*)", re.DOTALL)
_POSITIVE = re.compile(r"[1-9][0-9]*")
_RECALL_LEVEL = re.compile(r"0(?:\.[0-9]+)?|1(?:\.0+)?|\.[0-9]+")
_NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
#: What each bracketed measure takes: positional parameters (count or "levels") and options.
_TAKES: dict[str, tuple[str, ...]] = {
    "set_F": ("x (one number, default 1)",),
    "utility": ("a, b, c, d (four coefficients)",),
    "11pt_avg": ("recall levels in [0, 1]",),
    "R-Prec": ("mult",),
}

FORMS = (
    "MAP@k",
    "MRR@k",
    "P@k",
    "R@k",
    "nDCG@k",
    "Success@k",
    "iPrec@r",
    "relative_P@k",
    "Hits@k",
    "DCG@k",
    "Judged@k",
    "set_F[x]",
    "R-Prec[mult=x]",
    "11pt_avg[r1,r2,...]",
    "utility[a,b,c,d]",
    "trec_eval names (map, gm_map, Rprec, recip_rank, ndcg, bpref, map_cut_k, P_k, recall_k, "
    "ndcg_cut_k, success_k, iprec_at_recall_r, relative_P_k, set_F_x, Rprec_mult_x, "
    "utility_a,b,c,d)",
    "with k a positive integer and r a recall level in [0, 1]",
)


@dataclass(frozen=True)
class TrecMeasureKey:
    """One trec measure: its canonical key, its kind and its cutoff k or recall level r."""

    key: str
    kind: str
    k: int | None = None
    r: float | None = None
    #: Parameters: set_F's x, Rprec_mult's multiple, utility's coefficients, 11pt_avg's levels.
    params: tuple[float, ...] = ()
    #: nDCG/DCG options (None: not set, trec_eval's default): a gain per grade, the gain form.
    gains: tuple[tuple[int, float], ...] | None = None
    dcg: str | None = None
    #: trec_eval's -J: unjudged lines are removed before ranking (None: not set, false).
    judged_only: bool | None = None

    @property
    def custom_gains(self) -> bool:
        """Return whether gains differ from trec_eval's default (the grade, linear)."""
        return bool(self.gains) or self.dcg == "exp-log2"

    def with_defaults(
        self,
        gains: dict[int, float] | None = None,
        dcg: str | None = None,
        judged_only: bool | None = None,
    ) -> TrecMeasureKey:
        """Return the measure with set-level options where it takes them and brackets did not set them."""
        changes: dict[str, Any] = {}
        if self.kind in GAIN_KINDS:
            if self.gains is None and gains:
                changes["gains"] = tuple(sorted(gains.items()))
            if self.dcg is None and dcg is not None:
                changes["dcg"] = dcg
        if self.judged_only is None and judged_only is not None:
            changes["judged_only"] = judged_only
        return replace(self, **changes) if changes else self

    @property
    def is_count(self) -> bool:
        """Return whether the measure is a count, summed over queries rather than averaged."""
        return self.kind in _COUNTS

    @property
    def is_geometric(self) -> bool:
        """Return whether the mean is trec_eval's floored geometric mean (gm_map, gm_bpref)."""
        return self.kind in _GEOMETRIC

    @property
    def trec_eval_name(self) -> str | None:
        """Return trec_eval's name of the measure (``ndcg_cut_10``), or None where it has none."""
        if self.kind in ("mrr_cut", "hits", "dcg", "dcg_cut", "judged"):
            return None
        if self.k is not None:
            return f"{self.kind}_{self.k}"
        if self.r is not None:
            return f"iprec_at_recall_{self.r:.2f}"
        if self.kind == "Rprec_mult":
            return f"Rprec_mult_{self.params[0]:.2f}"
        return self.kind


def _unknown(name: str, why: str) -> UnknownMeasure:
    """Build the error for a name that is no trec measure, listing the accepted forms."""
    accepted = ", ".join([*_FIXED, *FORMS])
    return UnknownMeasure(f"unknown trec measure {name[:80]!r}: {why}; accepted: {accepted}")


def _cutoff(name: str, text: str) -> int:
    """Return the cutoff k written in ``text``; raise UnknownMeasure unless a positive integer."""
    if not _POSITIVE.fullmatch(text) or int(text) > MAX_CUTOFF:
        raise _unknown(name, f"the cutoff must be a positive integer up to {MAX_CUTOFF}")
    return int(text)


def _recall_level(name: str, text: str) -> Decimal:
    """Return the recall level written in ``text``; raise unless it is a number in [0, 1]."""
    level = None
    if _RECALL_LEVEL.fullmatch(text):
        try:
            level = Decimal(text)
        except InvalidOperation:
            level = None
    if level is None or not 0 <= level <= 1:
        raise _unknown(name, "the recall level must be a number in [0, 1] (0.10 or 0.1, 0.25)")
    return level


def _level_text(level: Decimal) -> str:
    """Return a recall level as keys write it: two decimals at least (0.10), more if given."""
    if (level * 100) % 1 == 0:
        return f"{level:.2f}"
    return format(level.normalize(), "f")


def _number_text(value: float) -> str:
    """Return a parameter as keys write it: 1 for 1.0, 0.5, -1."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def _number(name: str, value: Scalar | str, what: str) -> float:
    """Return a numeric parameter; raise UnknownMeasure naming ``what`` unless it is a number."""
    if isinstance(value, bool):
        raise _unknown(name, f"{what} must be a number, not {value!r}")
    if isinstance(value, int | float):
        return float(value)
    if not _NUMBER.fullmatch(value):
        raise _unknown(name, f"{what} must be a number, not {value!r}")
    return float(value)


def _parameterised(
    name: str, base: str, positional: Sequence[Scalar | str], named: dict[str, Scalar]
) -> TrecMeasureKey:
    """Return set_F[x], utility[a,b,c,d], 11pt_avg[levels] or R-Prec[mult=x] from its parameters."""
    takes = _TAKES[base]
    if base == "R-Prec":
        extra = sorted(set(named) - {"mult"}) + (["a positional parameter"] if positional else [])
        if extra:
            raise UnknownMeasure(
                f"Measure {name[:80]!r} does not take {', '.join(extra)}; it takes: "
                f"{', '.join(takes)}, judged_only."
            )
        if "mult" not in named:
            raise _unknown(name, "R-Prec takes mult, as R-Prec[mult=2]")
        mult = _number(name, named["mult"], "mult")
        if not 0 < mult <= 1000:
            raise _unknown(name, "mult must be a number above 0 (up to 1000)")
        return TrecMeasureKey(f"R-Prec[mult={_number_text(mult)}]", "Rprec_mult", params=(mult,))
    if named:
        raise UnknownMeasure(
            f"Measure {name[:80]!r} does not take {', '.join(sorted(named))}; it takes: "
            f"{', '.join(takes)}, judged_only."
        )
    if base == "set_F":
        if len(positional) != 1:
            raise _unknown(name, "set_F takes one parameter x, as set_F[0.5]")
        x = _number(name, positional[0], "x")
        if x < 0:
            raise _unknown(name, "set_F's x must be 0 or more")
        key = "set_F" if x == 1 else f"set_F[{_number_text(x)}]"
        return TrecMeasureKey(key, "set_F", params=(x,))
    if base == "utility":
        if len(positional) != 4:
            raise _unknown(name, "utility takes four coefficients, as utility[1,-1,0,0]")
        coefficients = tuple(_number(name, v, "a coefficient") for v in positional)
        key = f"utility[{','.join(_number_text(c) for c in coefficients)}]"
        return TrecMeasureKey(key, "utility", params=coefficients)
    if not positional:
        raise _unknown(name, "11pt_avg takes recall levels, as 11pt_avg[0.0,0.5,1.0]")
    levels = [_recall_level(name, str(v)) for v in positional]
    key = f"11pt_avg[{','.join(_level_text(v) for v in levels)}]"
    return TrecMeasureKey(key, "11pt_avg", params=tuple(float(v) for v in levels))


def _bracketed(name: str) -> TrecMeasureKey:
    """Return the measure of a key with brackets; refuse options the measure does not take."""
    parts: Bracketed = split_bracketed(name)
    base = "R-Prec" if parts.name in ("Rprec", "R-Prec") else parts.name
    named = dict(parts.named)
    if "gains" in named:
        raise UnknownMeasure(
            f"Measure {name[:80]!r}: gains is a table of grades; set it at the set, subtask or "
            'top level (gains = {{ "1" = 1, "2" = 3 }}), not in brackets.'
        )
    judged_only = named.pop("judged_only", None)
    dcg = named.pop("dcg", None)
    if base in _TAKES and (parts.positional or named):
        parsed = _parameterised(name, base, parts.positional, named)
        if parsed.params == _DEFAULT_PARAMS.get(parsed.kind):
            parsed = parse_trec_measure(parsed.kind)
    else:
        parsed = parse_trec_measure(base)
        options = ("judged_only", "dcg") if parsed.kind in GAIN_KINDS else ("judged_only",)
        refuse_unknown_options(
            name[:80], {**named, **({"dcg": dcg} if dcg is not None else {})}, options
        )
        if parts.positional:
            raise UnknownMeasure(f"Measure {name[:80]!r} takes no parameters in brackets.")
    if dcg is not None:
        if parsed.kind not in GAIN_KINDS:
            raise UnknownMeasure(
                f"Measure {name[:80]!r} does not take dcg; it takes: {', '.join(_takes(parsed))}."
            )
        if dcg not in DCG_FORMS:
            raise _unknown(name, f"dcg must be one of {', '.join(DCG_FORMS)}, not {dcg!r}")
    if judged_only is not None and not isinstance(judged_only, bool):
        raise _unknown(name, f"judged_only must be true or false, not {judged_only!r}")
    options_text = [f"dcg={dcg}"] if dcg is not None else []
    if judged_only is not None:
        options_text.append(f"judged_only={'true' if judged_only else 'false'}")
    if not options_text:
        return parsed
    stem, bracket, inside = parsed.key.partition("[")
    listed = [inside[:-1]] if bracket else []
    key = f"{stem}[{','.join([*listed, *options_text])}]"
    return replace(
        parsed,
        key=key,
        dcg=str(dcg) if dcg is not None else None,
        judged_only=judged_only if isinstance(judged_only, bool) else None,
    )


def _takes(parsed: TrecMeasureKey) -> tuple[str, ...]:
    """Return the options and parameters a measure takes, for messages."""
    own = _TAKES.get("R-Prec" if parsed.kind == "Rprec_mult" else parsed.kind, ())
    gain = ("dcg",) if parsed.kind in GAIN_KINDS else ()
    return (*own, *gain, "judged_only")


def parse_trec_measure(name: str) -> TrecMeasureKey:
    """Return the measure a definition names by its key or trec_eval name.

    Raises UnknownMeasure naming the accepted forms. ``iPrec@0.1`` and ``iPrec@0.10`` are the
    same measure, whose canonical key is ``iPrec@0.10``.
    """
    if "[" in name or "]" in name:
        return _bracketed(name)
    if name in _FIXED:
        return TrecMeasureKey(name, _FIXED[name], params=_DEFAULT_PARAMS.get(_FIXED[name], ()))
    if name in _FIXED_ALIASES:
        key = _FIXED_ALIASES[name]
        return TrecMeasureKey(key, _FIXED[key], params=_DEFAULT_PARAMS.get(_FIXED[key], ()))
    match = _KEY_CUT.fullmatch(name)
    if match is not None:
        k = _cutoff(name, match.group(2))
        return TrecMeasureKey(f"{match.group(1)}@{k}", _CUT_PREFIX[match.group(1)], k=k)
    match = _ALIAS_CUT.fullmatch(name)
    if match is not None:
        kind = match.group(1)
        k = _cutoff(name, match.group(2))
        return TrecMeasureKey(f"{_CUT_KEY[kind]}@{k}", kind, k=k)
    match = _IPREC.fullmatch(name)
    if match is not None:
        r = _recall_level(name, match.group(1))
        return TrecMeasureKey(f"iPrec@{_level_text(r)}", "iprec_at_recall", r=float(r))
    match = _ALIAS_PARAM.fullmatch(name)
    if match is not None:
        base, text = match.groups()
        if base == "Rprec_mult":
            return _parameterised(name, "R-Prec", [], {"mult": text})
        values = text.split(",")
        if not all(_NUMBER.fullmatch(v) for v in values):
            raise _unknown(name, f"{base}'s parameters must be numbers separated by commas")
        parsed = _parameterised(name, base, values, {})
        if parsed.params == _DEFAULT_PARAMS.get(parsed.kind):
            return parse_trec_measure(parsed.kind)
        return parsed
    raise _unknown(name, "no such measure")


#: Measures on their own scale (not 0-1): utility, unnormalised DCG, and Hits@k, a count per
#: query averaged over queries (as ranx does).
_SCORES = frozenset({"utility", "dcg", "dcg_cut", "hits"})


def measure_entry(measure: TrecMeasureKey) -> Measure:
    """Return the registry entry of a trec measure (counts have scale "count", 0 decimals)."""
    if measure.is_count:
        return Measure(measure.key, measure.key, "count", 0, 0)
    if measure.kind in _SCORES:
        return Measure(measure.key, measure.key, "score", 4, 4)
    return Measure(measure.key, measure.key, "fraction", 4, 4)


def _entry_of(match: re.Match[str]) -> Measure:
    """Return the entry of a matched key or alias (the parser's message if it is invalid)."""
    return measure_entry(parse_trec_measure(match.group(0)))


TREC_REGISTRY = MeasureRegistry(
    "trec",
    [measure_entry(parse_trec_measure(key)) for key in _FIXED],
    patterns=[
        (re.compile("|".join(re.escape(a) for a in _FIXED_ALIASES)), _entry_of),
        (_KEY_CUT, _entry_of),
        (_ALIAS_CUT, _entry_of),
        (_IPREC, _entry_of),
        (_ALIAS_PARAM, _entry_of),
        (re.compile(r"[^\[\]]+\[.*\]", re.DOTALL), _entry_of),
    ],
    forms=FORMS,
)


@dataclass(frozen=True)
class TrecEvaluation:
    """Per-query values and means of trec measures, by canonical key.

    ``per_query[key][q]`` is query q's value (GMAP: its average precision; a query without lines
    scores 0, num_rel still R); ``means[key]`` is the mean over the evaluated queries (GMAP:
    their floored geometric mean; counts: their sum).
    """

    per_query: dict[str, NDArray[np.float64]]
    means: dict[str, float]
    evaluated: NDArray[np.bool_]


class _Ranked:
    """The judged lines of a ranked run and the judgments, with the parts measures share."""

    def __init__(
        self,
        n_queries: int,
        n_relevant: NDArray[np.int64],
        n_nonrelevant: NDArray[np.int64],
        judged_query: NDArray[np.int64],
        judged_rank: NDArray[np.int64],
        judged_grade: NDArray[np.int64],
        judged_relevant: NDArray[np.bool_],
        qrels_query: NDArray[np.int64],
        qrels_gain: NDArray[np.int64],
    ) -> None:
        self.n = n_queries
        self.n_relevant = n_relevant
        self.n_nonrelevant = n_nonrelevant
        self.judged_query = judged_query
        self.judged_rank = judged_rank
        self.judged_grade = judged_grade
        self.judged_relevant = judged_relevant
        self.qrels_query = qrels_query
        self.qrels_gain = qrels_gain
        self.safe_r = np.maximum(n_relevant, 1)
        #: Every non-negative judgment (query, grade), for ideal rankings under gain maps.
        self.all_query = np.zeros(0, dtype=np.int64)
        self.all_grade = np.zeros(0, dtype=np.int64)
        #: Query and rank of the lines judged with a negative grade (set for infAP, Judged@k).
        self.negative_query = np.zeros(0, dtype=np.int64)
        self.negative_rank = np.zeros(0, dtype=np.int64)

    def count(self, query: NDArray[Any], weights: NDArray[Any] | None = None) -> NDArray[Any]:
        """Return per-query sums (counts without weights); bincount adds in array order."""
        return np.bincount(query, weights=weights, minlength=self.n)[: self.n]

    def over_r(self, total: NDArray[Any]) -> NDArray[np.float64]:
        """Return total / R_q, 0 where R_q = 0."""
        return np.where(self.n_relevant > 0, total / self.safe_r, 0.0)

    @cached_property
    def rel_query(self) -> NDArray[np.int64]:
        """Return the query of each retrieved relevant line (lines by query, then rank)."""
        return self.judged_query[self.judged_relevant]

    @cached_property
    def rel_rank(self) -> NDArray[np.int64]:
        """Return the rank of each retrieved relevant line."""
        return self.judged_rank[self.judged_relevant]

    @cached_property
    def rel_retrieved(self) -> NDArray[np.int64]:
        """Return the number of retrieved relevant lines per query."""
        return self.count(self.rel_query)

    @cached_property
    def rel_start(self) -> NDArray[np.int64]:
        """Return the offset of each query's first relevant line among the relevant lines."""
        return np.cumsum(self.rel_retrieved) - self.rel_retrieved

    @cached_property
    def hits(self) -> NDArray[np.int64]:
        """Return h(i) at each relevant line: its query's relevant lines at ranks <= i."""
        return np.arange(1, len(self.rel_query) + 1) - self.rel_start[self.rel_query]

    @cached_property
    def precision(self) -> NDArray[np.float64]:
        """Return h(i)/i at each relevant line."""
        return self.hits / self.rel_rank

    @cached_property
    def first_rank(self) -> NDArray[np.int64]:
        """Return the rank of each query's first relevant line, 0 if none is retrieved."""
        first = np.zeros(self.n, dtype=np.int64)
        found = self.rel_retrieved > 0
        first[found] = self.rel_rank[self.rel_start[found]]
        return first

    def within(self, k: int) -> NDArray[np.bool_]:
        """Return which relevant lines are at ranks <= k."""
        return self.rel_rank <= k

    @cached_property
    def suffix_max_precision(self) -> NDArray[np.float64]:
        """Return max_{j >= i} h(j)/j over the relevant lines j of each relevant line i's query."""
        values, code = np.unique(self.precision, return_inverse=True)
        if len(values) == 0:
            return self.precision
        # Reversed, queries descend; prefixing each code with (n - query) makes the running
        # maximum restart at every query, and integer codes keep the values exact.
        reversed_query = self.rel_query[::-1].astype(np.int64)
        key = (self.n - reversed_query) * len(values) + code.reshape(-1)[::-1]
        best = np.maximum.accumulate(key) % len(values)
        return values[best[::-1]]

    def dcg(self, k: int | None) -> NDArray[np.float64]:
        """Return sum over judged lines at ranks <= k of gain / log2(rank + 1)."""
        keep = self.judged_grade > 0
        if k is not None:
            keep &= self.judged_rank <= k
        rank = self.judged_rank[keep]
        return self.count(self.judged_query[keep], self.judged_grade[keep] / np.log2(rank + 1.0))

    @cached_property
    def ideal_rank(self) -> NDArray[np.int64]:
        """Return the rank of each positive judgment in its query's ideal ranking."""
        per_query = self.count(self.qrels_query)
        start = np.cumsum(per_query) - per_query
        return np.arange(1, len(self.qrels_query) + 1) - start[self.qrels_query]

    def ideal_dcg(self, k: int | None) -> NDArray[np.float64]:
        """Return the DCG of each query's ideal ranking cut at k."""
        keep = slice(None) if k is None else self.ideal_rank <= k
        rank = self.ideal_rank[keep]
        return self.count(self.qrels_query[keep], self.qrels_gain[keep] / np.log2(rank + 1.0))

    def ndcg(self, k: int | None) -> NDArray[np.float64]:
        """Return DCG / ideal DCG, 0 where the ideal DCG is 0."""
        ideal = self.ideal_dcg(k)
        return np.where(ideal > 0, self.dcg(k) / np.where(ideal > 0, ideal, 1.0), 0.0)

    def gain(self, m: TrecMeasureKey, grades: NDArray[np.int64]) -> NDArray[np.float64]:
        """Return the gains of non-negative grades under a measure's gain map and form."""
        gains = grades.astype(np.float64)
        for grade, value in m.gains or ():
            gains[grades == grade] = value
        if m.dcg == "exp-log2":
            gains = np.exp2(gains) - 1.0
        return gains

    def mapped_dcg(
        self, m: TrecMeasureKey, k: int | None
    ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Return DCG and ideal DCG at k with a measure's gains (the ideal sorted by gain)."""
        gains = self.gain(m, self.judged_grade)
        keep = gains > 0
        if k is not None:
            keep &= self.judged_rank <= k
        rank = self.judged_rank[keep]
        dcg = self.count(self.judged_query[keep], gains[keep] / np.log2(rank + 1.0))
        ideal_gains = self.gain(m, self.all_grade)
        positive = ideal_gains > 0
        query, value = self.all_query[positive], ideal_gains[positive]
        order = np.lexsort((-value, query))
        query, value = query[order], value[order]
        per_query = self.count(query)
        ideal_rank = np.arange(1, len(query) + 1) - (np.cumsum(per_query) - per_query)[query]
        inside = slice(None) if k is None else ideal_rank <= k
        ideal = self.count(query[inside], value[inside] / np.log2(ideal_rank[inside] + 1.0))
        return dcg, ideal

    def mapped_ndcg(self, m: TrecMeasureKey, k: int | None) -> NDArray[np.float64]:
        """Return nDCG at k with a measure's gains."""
        dcg, ideal = self.mapped_dcg(m, k)
        return np.where(ideal > 0, dcg / np.where(ideal > 0, ideal, 1.0), 0.0)

    def bin_g(self) -> NDArray[np.float64]:
        """Return binG: (1/R) sum over relevant lines of 1/log2(2 + non-relevant lines above)."""
        above = self.rel_rank - self.hits
        return self.over_r(self.count(self.rel_query, 1.0 / np.log2(above + 2.0)))

    def g(self) -> NDArray[np.float64]:
        """Return G: sum over positive lines of g_i / log2(1 + x_i), over the query's total gain.

        x_i = 1 + CGI(min(i, P)) - CGR(i) + max(0, i - P): CGR the run's cumulative gain down to
        rank i, CGI the ideal one, P the query's positive judgments (binG with grades).
        """
        positive = self.judged_grade > 0
        query = self.judged_query[positive]
        grade = self.judged_grade[positive].astype(np.float64)
        rank = self.judged_rank[positive]
        per_query = self.count(query)
        cumulative = np.cumsum(grade)
        before = np.concatenate(([0.0], cumulative))[(np.cumsum(per_query) - per_query)[query]]
        run_gain = cumulative - before
        ideal_per_query = self.count(self.qrels_query)
        ideal_before = np.cumsum(ideal_per_query) - ideal_per_query
        ideal_cumulative = np.concatenate(([0.0], np.cumsum(self.qrels_gain.astype(np.float64))))
        depth = np.minimum(rank, ideal_per_query[query])
        start = ideal_before[query]
        ideal_gain = ideal_cumulative[start + depth] - ideal_cumulative[start]
        x = 1 + ideal_gain - run_gain + np.maximum(rank - ideal_per_query[query], 0)
        total = ideal_cumulative[ideal_before + ideal_per_query] - ideal_cumulative[ideal_before]
        found = self.count(query, grade / np.log2(1 + x))
        return np.where(total > 0, found / np.where(total > 0, total, 1.0), 0.0)

    def ndcg_at(self, query: NDArray[np.int64], k: NDArray[np.int64]) -> NDArray[np.float64]:
        """Return nDCG at cutoff k[j] of query[j], for any number of (query, cutoff) pairs."""
        positive = self.judged_grade > 0
        gain = np.where(positive, self.judged_grade / np.log2(self.judged_rank + 1.0), 0.0)
        cumulative = np.concatenate(([0.0], np.cumsum(gain)))
        stride = np.int64(max(int(self.judged_rank.max(initial=0)), int(k.max(initial=0))) + 1)
        line_key = self.judged_query * stride + self.judged_rank
        end = np.searchsorted(line_key, query * stride + k, side="right")
        start = np.searchsorted(line_key, query * stride)
        dcg = cumulative[end] - cumulative[start]
        ideal_per_query = self.count(self.qrels_query)
        ideal_before = np.cumsum(ideal_per_query) - ideal_per_query
        ideal_cumulative = np.concatenate(
            ([0.0], np.cumsum(self.qrels_gain / np.log2(self.ideal_rank + 1.0)))
        )
        depth = np.minimum(k, ideal_per_query[query])
        first = ideal_before[query]
        ideal = ideal_cumulative[first + depth] - ideal_cumulative[first]
        return np.where(ideal > 0, dcg / np.where(ideal > 0, ideal, 1.0), 0.0)

    def rndcg(self, n_retrieved: NDArray[np.int64]) -> NDArray[np.float64]:
        """Return Rndcg: the mean of nDCG at each R_l, R_l = judgments of grade >= l for each
        positive grade l of the query, and at n if n > P + 1 (P positive judgments); 0 if R = 0.
        """
        query, grade = self.qrels_query.astype(np.int64), self.qrels_gain
        last = np.ones(len(query), dtype=bool)
        last[:-1] = (query[1:] != query[:-1]) | (grade[1:] != grade[:-1])
        positives = self.count(query)
        deep = np.flatnonzero(n_retrieved > positives + 1)
        cut_query = np.concatenate((query[last], deep))
        cut_k = np.concatenate((self.ideal_rank[last], n_retrieved[deep])).astype(np.int64)
        order = np.lexsort((cut_k, cut_query))
        cut_query, cut_k = cut_query[order], cut_k[order]
        total = self.count(cut_query, self.ndcg_at(cut_query, cut_k))
        cuts = self.count(cut_query)
        found = (self.n_relevant > 0) & (cuts > 0)
        return np.where(found, total / np.maximum(cuts, 1), 0.0)

    def ndcg_rel(self) -> NDArray[np.float64]:
        """Return ndcg_rel: the mean over positive judgments of nDCG at each one's rank (full nDCG if not retrieved)."""
        positive = self.judged_grade > 0
        gain = np.where(positive, self.judged_grade / np.log2(self.judged_rank + 1.0), 0.0)
        per_query = self.count(self.judged_query)
        before = np.cumsum(per_query) - per_query
        cumulative = np.cumsum(gain)
        dcg_at = cumulative - np.concatenate(([0.0], cumulative))[before[self.judged_query]]
        ideal_per_query = self.count(self.qrels_query)
        ideal_before = np.cumsum(ideal_per_query) - ideal_per_query
        ideal_cumulative = np.concatenate(
            ([0.0], np.cumsum(self.qrels_gain / np.log2(self.ideal_rank + 1.0)))
        )
        # Its relevant documents are those with a positive gain, whatever the threshold.
        rel = positive
        query = self.judged_query[rel]
        depth = np.minimum(self.judged_rank[rel], ideal_per_query[query])
        start = ideal_before[query]
        ideal_at = ideal_cumulative[start + depth] - ideal_cumulative[start]
        at = np.where(ideal_at > 0, dcg_at[rel] / np.where(ideal_at > 0, ideal_at, 1.0), 0.0)
        missed = ideal_per_query - self.count(query)
        total = self.count(query, at) + missed * self.ndcg(None)
        return np.where(ideal_per_query > 0, total / np.maximum(ideal_per_query, 1), 0.0)

    def bpref(self) -> NDArray[np.float64]:
        """Return bpref: (1/R) sum over relevant lines of 1 - min(n_r, R) / min(N, R)."""
        nonrel = ~self.judged_relevant
        nonrel_query = self.judged_query[nonrel]
        per_query = self.count(nonrel_query)
        before_query = np.cumsum(per_query) - per_query
        nonrel_before = np.cumsum(nonrel)[self.judged_relevant] - before_query[self.rel_query]
        r = self.n_relevant[self.rel_query]
        bound = np.minimum(self.n_nonrelevant[self.rel_query], r)
        term = np.where(
            nonrel_before > 0,
            1.0 - np.minimum(nonrel_before, r) / np.maximum(bound, 1),
            1.0,
        )
        return self.over_r(self.count(self.rel_query, term))

    def iprec(self, level: float) -> NDArray[np.float64]:
        """Return max{h(i)/i : rel_i = 1, h(i) >= max(1, floor(level * R + 0.9))}, else 0."""
        # trec_eval 9.0.8 turns the recall level into a number of relevant lines this way
        # (computed in double, as here), so 2 of 3 relevant lines reach the level 0.70.
        needed = np.maximum((level * self.n_relevant + 0.9).astype(np.int64), 1)
        reached = needed <= self.rel_retrieved
        out = np.zeros(self.n)
        out[reached] = self.suffix_max_precision[(self.rel_start + needed - 1)[reached]]
        return out

    def measure(self, m: TrecMeasureKey, n_retrieved: NDArray[np.int64]) -> NDArray[np.float64]:
        """Return the per-query values of one measure."""
        kind, k = m.kind, m.k or 0
        if kind in ("map", "gm_map"):
            return self.over_r(self.count(self.rel_query, self.precision))
        if kind == "map_cut":
            inside = self.within(k)
            return self.over_r(self.count(self.rel_query[inside], self.precision[inside]))
        if kind == "Rprec":
            inside = self.rel_rank <= self.n_relevant[self.rel_query]
            return self.over_r(self.count(self.rel_query[inside]))
        if kind == "recip_rank":
            return np.where(self.first_rank > 0, 1.0 / np.maximum(self.first_rank, 1), 0.0)
        if kind == "mrr_cut":
            found = (self.first_rank > 0) & (self.first_rank <= k)
            return np.where(found, 1.0 / np.maximum(self.first_rank, 1), 0.0)
        if kind == "P":
            return self.count(self.rel_query[self.within(k)]) / k
        if kind == "recall":
            return self.over_r(self.count(self.rel_query[self.within(k)]))
        if kind == "success":
            return ((self.first_rank > 0) & (self.first_rank <= k)).astype(np.float64)
        if kind == "ndcg":
            return self.mapped_ndcg(m, None) if m.custom_gains else self.ndcg(None)
        if kind == "ndcg_cut":
            return self.mapped_ndcg(m, k) if m.custom_gains else self.ndcg(k)
        if kind == "bpref":
            return self.bpref()
        if kind == "iprec_at_recall":
            return self.iprec(m.r or 0.0)
        if kind == "num_ret":
            return n_retrieved.astype(np.float64)
        if kind == "num_rel":
            return self.n_relevant.astype(np.float64)
        if kind == "num_rel_ret":
            return self.rel_retrieved.astype(np.float64)
        return self.further(m, n_retrieved)

    def further(self, m: TrecMeasureKey, n_retrieved: NDArray[np.int64]) -> NDArray[np.float64]:
        """Return the per-query values of a measure beyond the classic ones."""
        kind, k = m.kind, m.k or 0
        if kind == "infAP":
            return self.inf_ap()
        if kind == "binG":
            return self.bin_g()
        if kind == "G":
            return self.g()
        if kind == "Rndcg":
            return self.rndcg(n_retrieved)
        if kind == "ndcg_rel":
            return self.ndcg_rel()
        if kind == "gm_bpref":
            return self.bpref()
        if kind == "hits":
            return self.count(self.rel_query[self.within(k)]).astype(np.float64)
        if kind in ("dcg", "dcg_cut"):
            cut = k if kind == "dcg_cut" else None
            return self.mapped_dcg(m, cut)[0] if m.custom_gains else self.dcg(cut)
        if kind == "judged":
            judged = self.count(self.judged_query[self.judged_rank <= k])
            judged += self.count(self.negative_query[self.negative_rank <= k])
            shown = np.minimum(n_retrieved, k)
            return np.where(shown > 0, judged / np.maximum(shown, 1), 0.0)
        if kind == "relative_P":
            inside = self.count(self.rel_query[self.within(k)])
            bound = np.minimum(self.n_relevant, k)
            return np.where(bound > 0, inside / np.maximum(bound, 1), 0.0)
        if kind == "Rprec_mult":
            # trec_eval turns the multiple of R into a rank as for iprec: floor(mult R + 0.9).
            cutoff = (m.params[0] * self.n_relevant + 0.9).astype(np.int64)
            inside = self.rel_rank <= cutoff[self.rel_query]
            found = self.count(self.rel_query[inside])
            return np.where(cutoff > 0, found / np.maximum(cutoff, 1), 0.0)
        if kind == "11pt_avg":
            return np.mean([self.iprec(level) for level in m.params], axis=0)
        rel_ret = self.rel_retrieved.astype(np.float64)
        precision = np.where(n_retrieved > 0, rel_ret / np.maximum(n_retrieved, 1), 0.0)
        recall = self.over_r(rel_ret)
        if kind == "set_P":
            return precision
        if kind == "set_recall":
            return recall
        if kind == "set_map":
            return precision * recall
        if kind == "set_F":
            x = m.params[0]
            denominator = x * precision + recall
            safe = np.where(denominator > 0, denominator, 1.0)
            return np.where(denominator > 0, (x + 1) * precision * recall / safe, 0.0)
        if kind == "set_relative_P":
            bound = np.minimum(n_retrieved, self.n_relevant)
            return np.where(bound > 0, rel_ret / np.maximum(bound, 1), 0.0)
        if kind == "utility":
            a, b, c, d = m.params
            nonrel_ret = n_retrieved - rel_ret
            rel_missed = self.n_relevant - rel_ret
            # trec_eval's collection size (-N) is 0 unless given: its last term is negative.
            nonrel_missed = -n_retrieved - self.n_relevant + rel_ret
            return a * rel_ret + b * nonrel_ret + c * rel_missed + d * nonrel_missed
        if kind == "num_nonrel_judged_ret":
            return self.count(self.judged_query[~self.judged_relevant]).astype(np.float64)
        if kind == "num_q":
            return np.ones(self.n)
        raise UnknownMeasure(f"unknown trec measure kind {kind!r}")

    def inf_ap(self) -> NDArray[np.float64]:
        """Return trec_eval's infAP: AP inferred from a sampled pool (negative grades: unjudged).

        For a relevant line at 0-based position i with, above it, r relevant, j judged
        non-relevant and u pooled-but-unjudged (negative grade) lines, the term is 1 at i = 0,
        else 1/(i+1) + i/(i+1) * (r+j+u)/i * (r+eps)/(r+j+2 eps), eps = 0.00001; the sum over R.
        """
        eps = 0.00001
        judged_per_query = self.count(self.judged_query)
        judged_start = np.cumsum(judged_per_query) - judged_per_query
        position = np.flatnonzero(self.judged_relevant) - judged_start[self.rel_query]
        rel_before = (self.hits - 1).astype(np.float64)
        nonrel_before = position - rel_before
        stride = np.int64(max(int(self.judged_rank.max(initial=0)), 1) + 1)
        stride = max(stride, np.int64(int(self.negative_rank.max(initial=0)) + 1))
        negative_key = self.negative_query * stride + self.negative_rank
        unjudged_before = np.searchsorted(
            negative_key, self.rel_query * stride + self.rel_rank
        ) - np.searchsorted(negative_key, self.rel_query * stride)
        i = (self.rel_rank - 1).astype(np.float64)
        safe_i = np.maximum(i, 1.0)
        term = np.where(
            i == 0,
            1.0,
            1.0 / (i + 1)
            + (i / (i + 1))
            * ((rel_before + nonrel_before + unjudged_before) / safe_i)
            * ((rel_before + eps) / (rel_before + nonrel_before + 2 * eps)),
        )
        return self.over_r(self.count(self.rel_query, term))


#: Measures that read the lines judged with a negative grade.
_NEEDS_NEGATIVES = frozenset({"infAP", "judged"})


def _negative_lines(
    query: NDArray[Any],
    docids: NDArray[Any],
    order: NDArray[np.intp],
    n_retrieved: NDArray[np.int64],
    qrels_query: NDArray[Any],
    qrels_docids: NDArray[Any],
    qrels_grades: NDArray[Any],
    n_queries: int,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Return the query and rank of the run lines judged with a negative grade, in rank order."""
    qq = np.asarray(qrels_query).astype(np.int64)
    grades = np.asarray(qrels_grades).astype(np.int64)
    negative = (qq >= 0) & (qq < n_queries) & (grades < 0)
    row = match_index(query, docids, qq[negative], np.asarray(qrels_docids)[negative])
    at = np.flatnonzero((row >= 0)[order])
    negative_query = query[order[at]].astype(np.int64)
    group_start = np.cumsum(n_retrieved) - n_retrieved
    return negative_query, at - group_start[negative_query] + 1


def evaluate_trec(
    run_query: NDArray[Any],
    run_docids: NDArray[Any],
    run_scores: NDArray[Any],
    qrels_query: NDArray[Any],
    qrels_docids: NDArray[Any],
    qrels_grades: NDArray[Any],
    n_queries: int,
    threshold: int,
    measures: Sequence[TrecMeasureKey],
    *,
    missing: Literal["zero", "skip"] = "zero",
) -> TrecEvaluation:
    """Score a run against one qrels variant with trec_eval 9.0.8's measures.

    Inputs are parallel arrays: run lines (query index, ``S`` id, score) and judgments (query
    index, ``S`` id, integer grade). Query indices run over ``0..n_queries-1``; run lines with
    another index (-1: query not in the qrels) are ignored. Each query's lines are ranked by
    float32 score descending, ties by id descending (trec_eval's order). Pairs are unique
    within the run and within the qrels, as the formats enforce. Judgments with a negative
    grade count as unjudged for every measure, as trec_eval treats them. For a query q with n lines: rel_i = 1 iff the line at rank i is judged with
    grade >= ``threshold``; R = number of such judgments; N = number of judgments with
    0 <= grade < threshold; h(i) = sum_{j<=i} rel_j; g_i = the grade at rank i if judged and
    positive, else 0 (nDCG's gains ignore the threshold); g*_i = the query's positive grades
    sorted descending (the ideal ranking); first = min{i : rel_i = 1}:

        map          = (1/R) sum_{i<=n} rel_i h(i)/i          map_cut_k: sum over i <= k
        gm_map       = map per query; mean = exp(mean_q log max(map_q, 0.00001))
        Rprec        = h(min(R, n)) / R
        recip_rank   = 1/first, 0 if nothing relevant is retrieved
        mrr_cut_k    = 1/first if first <= k, else 0 (MS MARCO's MRR@k; no trec_eval name)
        P_k          = h(min(k, n)) / k
        recall_k     = h(min(k, n)) / R
        success_k    = 1 if first <= k, else 0
        ndcg         = DCG / IDCG, DCG = sum_i g_i / log2(i + 1), IDCG = sum_i g*_i / log2(i + 1)
        ndcg_cut_k   = the same with both sums over i <= k
        bpref        = (1/R) sum_{i : rel_i = 1} (1 if n_i = 0 else 1 - min(n_i, R) / min(N, R)),
                       n_i = judged lines at ranks < i with 0 <= grade < threshold
        iprec_at_recall_r = max{h(i)/i : rel_i = 1, h(i) >= max(1, floor(r R + 0.9))}, 0 if
                       the set is empty (9.0.8's rounding: 2 of 3 relevant reach r = 0.70;
                       trec_eval 10 changed it)
        num_ret = n, num_rel = R, num_rel_ret = h(n)

    Further measures follow trec_eval 9.0.8 the same way (see the methods of ``_Ranked``):
    infAP (negative grades are pooled but unjudged), set_P/recall/F[x]/map/relative_P,
    relative_P_k = h(k) / min(k, R), Rprec_mult_x = h(c) / c with c = floor(x R + 0.9),
    11pt_avg = the mean of iprec_at_recall over its levels, gm_bpref, utility (collection size
    0, as trec_eval without -N), G, binG, Rndcg, ndcg_rel (over the positive grades,
    whatever the threshold), num_nonrel_judged_ret, num_q; and Hits@k = h(k), DCG@k, Judged@k (ir_measures:
    judged lines of any grade in the top min(k, n), over min(k, n)). A measure with
    ``judged_only`` is scored on the lines judged with a grade >= 0 only (trec_eval -J); one
    with ``gains`` or ``dcg="exp-log2"`` maps grades to gains (unlisted grades keep their value,
    negative grades gain 0, then 2^g - 1) and sorts its ideal ranking by gain.

    Every ratio with R = 0 (or IDCG = 0) is 0. Means are over the evaluated queries: all
    ``n_queries`` with ``missing="zero"`` (trec_eval ``-c``: a query without lines scores 0,
    its R still counts in num_rel, GMAP floors it at 0.00001), those with at least one line
    with ``missing="skip"`` (trec_eval's default). Counts are summed instead of averaged.
    Threshold <= 0 makes every non-negative judgment relevant (pytrec_eval refuses such levels).
    A query judged only negatively scores 0 (but num_ret): trec_eval's nDCG has undefined
    behaviour there (it reads the gain levels of an earlier query and may loop forever).
    """
    if missing not in ("zero", "skip"):
        raise ValueError(f"missing must be 'zero' or 'skip', not {missing!r}")
    condensed = [m for m in measures if m.judged_only]
    qrels = _Judgments(qrels_query, qrels_docids, qrels_grades, n_queries, threshold)
    if not condensed:
        return _evaluate(run_query, run_docids, run_scores, qrels, measures, missing, None)
    plain = [m for m in measures if not m.judged_only]
    full = _evaluate(run_query, run_docids, run_scores, qrels, plain, missing, None)
    # trec_eval -J: lines without a judgment (or judged with a negative grade) are removed
    # before ranking; the evaluated queries stay those of the whole run.
    query, docids = np.asarray(run_query), np.asarray(run_docids)
    qq = np.asarray(qrels_query)
    inside = (qq >= 0) & (qq < n_queries) & (np.asarray(qrels_grades) >= 0)
    row = match_index(
        np.where((query >= 0) & (query < n_queries), query, 0),
        docids,
        qq[inside],
        np.asarray(qrels_docids)[inside],
    )
    judged = (row >= 0) & (query >= 0) & (query < n_queries)
    scores = np.asarray(run_scores)[judged]
    condensed_run = _evaluate(
        query[judged], docids[judged], scores, qrels, condensed, missing, full.evaluated
    )
    return TrecEvaluation(
        {**full.per_query, **condensed_run.per_query},
        {**full.means, **condensed_run.means},
        full.evaluated,
    )


class _Judgments(NamedTuple):
    """One qrels variant as evaluate_trec takes it: its columns, query count and threshold."""

    query: NDArray[Any]
    docids: NDArray[Any]
    grades: NDArray[Any]
    n_queries: int
    threshold: int


def _evaluate(
    run_query: NDArray[Any],
    run_docids: NDArray[Any],
    run_scores: NDArray[Any],
    qrels: _Judgments,
    measures: Sequence[TrecMeasureKey],
    missing: Literal["zero", "skip"],
    evaluated_queries: NDArray[np.bool_] | None,
) -> TrecEvaluation:
    """Score run lines as evaluate_trec does; ``evaluated_queries`` overrides which count."""
    qrels_query, qrels_docids, qrels_grades, n_queries, threshold = qrels
    query = np.asarray(run_query)
    docids = np.asarray(run_docids)
    scores = np.asarray(run_scores)
    keep = (query >= 0) & (query < n_queries)
    if not keep.all():
        query, docids, scores = query[keep], docids[keep], scores[keep]
    del keep

    qq = np.asarray(qrels_query).astype(np.int64)
    grades = np.asarray(qrels_grades).astype(np.int64)
    qd = np.asarray(qrels_docids)
    judged = (qq >= 0) & (qq < n_queries) & (grades >= 0)
    if not judged.all():
        qq, qd, grades = qq[judged], qd[judged], grades[judged]
    relevant = grades >= threshold
    n_relevant = np.bincount(qq[relevant], minlength=n_queries)[:n_queries]
    n_nonrelevant = np.bincount(qq[~relevant], minlength=n_queries)[:n_queries]

    row = match_index(query, docids, qq, qd)
    n_retrieved = np.bincount(query, minlength=n_queries)[:n_queries]
    order = rank_order(query, docids, scores)
    # Every measure depends on the judged lines only, so ranks are kept at those alone.
    judged_at = np.flatnonzero((row >= 0)[order])
    negatives = None
    if any(m.kind in _NEEDS_NEGATIVES for m in measures):
        negatives = _negative_lines(
            query, docids, order, n_retrieved, qrels_query, qrels_docids, qrels_grades, n_queries
        )
    judged_line = order[judged_at]
    del order
    judged_query = query[judged_line].astype(np.int64)
    group_start = np.cumsum(n_retrieved) - n_retrieved
    judged_rank = judged_at - group_start[judged_query] + 1
    judged_grade = grades[row[judged_line]]

    positive = grades > 0
    ideal = np.lexsort((-grades[positive], qq[positive]))
    ranked = _Ranked(
        n_queries,
        n_relevant,
        n_nonrelevant,
        judged_query,
        judged_rank,
        judged_grade,
        judged_grade >= threshold,
        qq[positive][ideal],
        grades[positive][ideal],
    )
    if negatives is not None:
        ranked.negative_query, ranked.negative_rank = negatives
    if any(m.custom_gains for m in measures):
        ranked.all_query, ranked.all_grade = qq, grades

    if evaluated_queries is not None:
        evaluated = evaluated_queries
    else:
        evaluated = np.ones(n_queries, dtype=bool) if missing == "zero" else n_retrieved > 0
    n_evaluated = int(evaluated.sum())
    per_query: dict[str, NDArray[np.float64]] = {}
    means: dict[str, float] = {}
    for m in measures:
        if m.key in per_query:
            continue
        values = ranked.measure(m, n_retrieved)
        per_query[m.key] = values
        chosen = values[evaluated]
        if m.is_count:
            means[m.key] = float(chosen.sum())
        elif not n_evaluated:
            means[m.key] = 0.0
        elif m.is_geometric:
            means[m.key] = float(np.exp(np.log(np.maximum(chosen, GEO_MEAN_FLOOR)).mean()))
        else:
            means[m.key] = float(chosen.sum() / n_evaluated)
    return TrecEvaluation(per_query, means, evaluated)
