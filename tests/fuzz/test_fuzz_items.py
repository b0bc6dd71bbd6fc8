"""Fuzz the item-per-line format: gold parser, strict validator and lenient importer."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from hypothesis import event, example, given

from leaderboard.formats.issues import MAX_KEPT_ERRORS, Issue
from leaderboard.formats.items import (
    DecimalParser,
    ItemGold,
    LabelParser,
    ValueParser,
    import_lenient,
    parse_gold,
    validate_run,
)
from leaderboard.scoring.labels import classification_measures
from leaderboard.scoring.regression import regression_measures
from tests.fuzz import FUZZ, check_issues, fuzz_input, per_case

LABELS = ["positive", "negative", "neutral"]


@dataclass(frozen=True)
class Case:
    """A small gold file, its parser and a valid run (shuffled, with a header line)."""

    name: str
    parser: ValueParser
    gold_data: bytes
    gold: ItemGold
    run: bytes


def _case(name: str, parser: ValueParser, gold_data: bytes, run: bytes) -> Case:
    gold, errors = parse_gold(gold_data, parser)
    assert gold is not None, errors
    return Case(name, parser, gold_data, gold, run)


CLASSES = _case(
    "classification",
    LabelParser(LABELS, {"pos": "positive"}),
    b"# id label\nt1\tpositive\nt2\tnegative\nt3\tneutral\nt4\tpositive\n\nt5\tnegative\n",
    b"# header\nt3\tneutral\nt1\tpos\nt5\tpositive\nt2 negative\nt4\tneutral\n",
)
NUMBERS = _case(
    "regression",
    DecimalParser(),
    b"p1 1.5\np2 -2\np3 4e-1\np4 3.25\n",
    b"p4\t3.0\np1\t1.25\np3\t.5\np2\t-1e0\n",
)
# Space-separated, no TAB: the other layout the bulk reader takes.
SPACED = _case(
    "regression, spaces", DecimalParser(), NUMBERS.gold_data, b"p2 -1\np4 3.0\np1 1.25\np3 .5\n"
)
CASES = (CLASSES, NUMBERS, SPACED)


class LineByLine:
    """The same value parser without its bulk reader: every file is read line by line."""

    def __init__(self, parser: ValueParser) -> None:
        self.parser = parser
        self.dtype = parser.dtype

    def __call__(self, text: str) -> float | int:
        return self.parser(text)


def same_values(a: np.ndarray | None, b: np.ndarray | None) -> bool:
    """Return whether two optional value arrays are both None or equal with one dtype."""
    if a is None or b is None:
        return a is b
    return a.dtype == b.dtype and np.array_equal(a, b)


def last_line(data: bytes) -> int:
    """Return the number of the last line of ``data`` (CR and CRLF count as one line break)."""
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").count(b"\n") + 1


def check_located(issues: list[Issue], data: bytes) -> None:
    """Assert the issues are well formed and their lines exist in ``data``."""
    check_issues(issues)
    top = last_line(data)
    for issue in issues:
        assert issue.line is None or issue.line <= top, (issue, top)
        assert len(issue.message) < 1000, issue
    assert len(issues) <= MAX_KEPT_ERRORS + 2  # kept, the missing ids, the count of the rest


def check_scores(case: Case, values: np.ndarray) -> None:
    """Score accepted values: every measure a finite float or None."""
    assert values.shape == case.gold.values.shape and values.dtype == case.gold.values.dtype
    if case is CLASSES:
        scores = classification_measures(case.gold.values, values, LABELS)
    else:
        assert np.all(np.isfinite(values))
        scores = regression_measures(case.gold.values, values)
    for key, value in scores.items():
        assert value is None or (isinstance(value, float) and math.isfinite(value)), (key, value)


@FUZZ
@given(per_case(CASES, lambda c: fuzz_input(c.run)))
@example((NUMBERS, b"p1 1e308\np2 -1e308\np3 0\np4 5\n"))
@example(
    (CLASSES, b"\xef\xbb\xbft1 pos\r\nt2 negative\r\nt3\xc2\xa0neutral\r\nt4 neutral\r\nt5 pos")
)
@example((CLASSES, b"t1 pos\n" * 3000))
@example((CLASSES, b"#h\nt1\tpos\nt2\tnegative\nt3\tneutral\nt4\tneutral\nt1\tneutral\n"))
@example((NUMBERS, b"p1\t1\np2\t2\np3\t3\np4\t1e999\n"))
@example((NUMBERS, b"p1\t1\np2\t2\np3\t3\nq4\t4\n"))
def test_run_readers_give_a_verdict(drawn: tuple[Case, bytes]) -> None:
    case, data = drawn
    values, errors, warnings = validate_run(data, case.gold, case.parser)
    check_located(errors, data)
    check_located(warnings, data)
    assert all(e.severity == "error" for e in errors)
    assert all(w.severity == "warning" for w in warnings)
    assert (values is None) == bool(errors)
    event(f"strict: {'accepted' if values is not None else 'refused'}")
    if values is not None:
        check_scores(case, values)

    result = import_lenient(data, case.gold, case.parser)
    check_located(result.errors, data)
    assert all(isinstance(t, str) and t.strip() for t in result.tolerated)
    assert (result.values is None) == bool(result.errors)
    event(f"lenient: {'accepted' if result.values is not None else 'refused'}")
    if values is not None:
        # What the strict validator accepts, the lenient importer reads to the same values.
        assert result.values is not None and np.array_equal(result.values, values)
    if result.values is not None:
        check_scores(case, result.values)

    # The bulk reader of clean files changes nothing but the speed.
    slow = LineByLine(case.parser)
    slow_values, slow_errors, slow_warnings = validate_run(data, case.gold, slow)  # type: ignore[arg-type]
    assert same_values(slow_values, values)
    assert (slow_errors, slow_warnings) == (errors, warnings)
    slow_result = import_lenient(data, case.gold, slow)  # type: ignore[arg-type]
    assert same_values(slow_result.values, result.values)
    assert (slow_result.errors, slow_result.tolerated) == (result.errors, result.tolerated)


@FUZZ
@given(per_case(CASES, lambda c: fuzz_input(c.gold_data)))
@example((NUMBERS, b"a 1\na 2\n"))
@example((NUMBERS, b"a\t1\tb\n2\n"))
@example((CLASSES, b""))
def test_gold_parser_gives_a_gold_or_located_errors(drawn: tuple[Case, bytes]) -> None:
    case, data = drawn
    gold, errors = parse_gold(data, case.parser)
    check_located(errors, data)
    slow_gold, slow_errors = parse_gold(data, LineByLine(case.parser))  # type: ignore[arg-type]
    assert slow_errors == errors and (slow_gold is None) == (gold is None)
    if gold is not None and slow_gold is not None:
        assert slow_gold.ids == gold.ids and same_values(slow_gold.values, gold.values)
    event(f"gold: {'accepted' if gold is not None else 'refused'}")
    if gold is None:
        assert errors
        return
    assert not errors and len(gold) >= 1
    assert len(set(gold.ids)) == len(gold.ids) == gold.values.size
    assert gold.index == {item: row for row, item in enumerate(gold.ids)}
    assert all(item and not any(c in " \t\n\r" for c in item) for item in gold.ids)
    if case is not CLASSES:
        assert np.all(np.isfinite(gold.values))
    else:
        assert set(gold.values.tolist()) <= {0, 1, 2}


WEIGHTED_GOLD = (
    b"# id label weight\nt1\tpositive\t1\nt2\tnegative\t0\nt3\tneutral\t2.5\nt4\tpositive\t.5\n"
)


@FUZZ
@given(fuzz_input(WEIGHTED_GOLD))
@example(b"t1 positive 1\nt2 negative -0\n")
@example(b"t1\tpositive\t0\nt2\tnegative\t0\n")
@example(b"t1\tpositive\t-1\nt2\tnegative\t1e999\n")
@example(b"t1\tpositive\t1e300\nt2\tnegative\t1e12\n")
@example(b"\x00\tpositive\t0\t\x00\n\x00\n0\tneutral\t1\n")
def test_weighted_gold_gives_weights_or_located_errors(data: bytes) -> None:
    parser = CLASSES.parser
    gold, errors = parse_gold(data, parser, weighted=True)
    check_located(errors, data)
    slow_gold, slow_errors = parse_gold(data, LineByLine(parser), weighted=True)  # type: ignore[arg-type]
    assert slow_errors == errors and (slow_gold is None) == (gold is None)
    event(f"weighted gold: {'accepted' if gold is not None else 'refused'}")
    if gold is None or slow_gold is None:
        assert errors
        return
    assert gold.weights is not None and slow_gold.weights is not None
    assert np.array_equal(gold.weights, slow_gold.weights) and slow_gold.ids == gold.ids
    assert gold.weights.shape == gold.values.shape
    assert np.all(np.isfinite(gold.weights)) and (gold.weights >= 0).all()
    assert (gold.weights > 0).any()
    keys = ["Acc", "weighted-F2", "micro-R", "MCC", "kappa[quadratic]"]
    scores = classification_measures(
        gold.values, gold.values[::-1].copy(), LABELS, keys, gold.weights
    )
    for key, value in scores.items():
        assert value is None or math.isfinite(value), (key, value)
