"""The public/private split: the spec's SHA-256 rule on published vectors, listed units, parts."""

from __future__ import annotations

import hashlib
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leaderboard.scoring.splits import (
    Part,
    check_fraction,
    check_seed,
    is_public,
    listed_public_units,
    part_units,
    public_units,
)

#: Published vectors: (seed, unit, fraction, public?). The hash's share of 2**64 is given
#: beside each, so a fraction just below or above it tests the strict "<".
VECTORS = [
    (1234, "q1", 0.3, False),  # 0.62261322552...
    (1234, "q1", 0.6227, True),
    (1234, "q1", 0.6226, False),
    (1234, "q2", 0.8, True),  # 0.79541602703...
    (1234, "q3", 0.96, False),  # 0.96018784308...
    (1234, "q3", 0.9602, True),
    (1234, "Q1", 0.75, True),  # 0.73003376324...: ids are case-sensitive
    (0, "q1", 0.5, False),  # 0.80302785726...
    (-7, "topic 301", 0.3, True),  # 0.29502544622...
    (-7, "topic 301", 0.295, False),
    (42, "SemEval2016-Task3-CQA-QL-test-0001", 0.7, True),  # 0.68266201648...
    (42, "é", 0.01, True),  # 0.00321407330...: UTF-8
    (2**70, "1", 0.6, False),  # 0.60866482960...
    (1234, "", 0.7, True),  # 0.67656421194...
]


def share(seed: int, unit: str) -> float:
    """Return the spec's hash share, written here apart from the module."""
    data = (str(seed) + ":" + unit).encode("utf-8")
    first = hashlib.sha256(data).hexdigest()[:16]
    return int(first, 16) / float(1 << 64)


@pytest.mark.parametrize(("seed", "unit", "fraction", "public"), VECTORS)
def test_published_vectors(seed: int, unit: str, fraction: float, public: bool) -> None:
    assert (share(seed, unit) < fraction) is public  # the table itself is right
    assert is_public(seed, unit, fraction) is public


def test_public_units_selects_the_public_ids() -> None:
    units = ["q1", "q2", "q3", "Q1"]
    assert public_units(units, 0.79, 1234) == {"q1", "Q1"}
    assert public_units(units, 0.8, 1234) == {"q1", "q2", "Q1"}


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(-(2**40), 2**40), fraction=st.floats(0.05, 0.95))
def test_the_public_share_is_near_the_fraction(seed: int, fraction: float) -> None:
    units = [f"unit-{i}" for i in range(4_000)]
    public = public_units(units, fraction, seed)
    # Binomial: within five standard deviations, and the same set when drawn again.
    assert abs(len(public) / len(units) - fraction) <= 5 * math.sqrt(
        fraction * (1 - fraction) / len(units)
    )
    assert public_units(reversed(units), fraction, seed) == public


def test_a_larger_fraction_keeps_every_public_unit() -> None:
    units = [f"u{i}" for i in range(500)]
    assert public_units(units, 0.2, 7) <= public_units(units, 0.5, 7)


@pytest.mark.parametrize("fraction", [0, 1, -0.1, 1.5, math.nan, math.inf])
def test_fractions_outside_the_open_interval_are_refused(fraction: float) -> None:
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        public_units(["a"], fraction, 1)


@pytest.mark.parametrize("fraction", ["0.3", True, None])
def test_a_fraction_must_be_a_number(fraction: object) -> None:
    with pytest.raises(ValueError, match="must be a number"):
        check_fraction(fraction)


@pytest.mark.parametrize("seed", ["1234", 12.0, True, None])
def test_a_seed_must_be_an_integer(seed: object) -> None:
    with pytest.raises(ValueError, match="must be an integer"):
        check_seed(seed)
    with pytest.raises(ValueError, match="must be an integer"):
        public_units(["a"], 0.5, seed)  # type: ignore[arg-type]


def test_check_accepts_valid_values() -> None:
    assert check_fraction(1 / 3) == pytest.approx(1 / 3)
    assert check_seed(-5) == -5


GOLD = ["q1", "q2", "q3", "q4"]


def test_a_listed_file_gives_its_units() -> None:
    public, issues = listed_public_units("q1\n  q3 \r\n", GOLD)
    assert public == {"q1", "q3"}
    assert issues == []


def test_a_listed_file_names_every_unknown_id_blank_and_repeated_line() -> None:
    text = "q1\nq9\n\nq1\nzz\n   \nq2\n"
    public, issues = listed_public_units(text, GOLD)
    assert public == {"q1", "q2"}
    assert issues == [
        (2, "Line 2: 'q9' is not a unit of the gold."),
        (3, "Line 3 is empty; give one unit id per line."),
        (4, "Line 4: unit 'q1' is listed twice (first on line 1)."),
        (5, "Line 5: 'zz' is not a unit of the gold."),
        (6, "Line 6 is empty; give one unit id per line."),
    ]


def test_a_listed_file_lists_every_issue_however_many() -> None:
    text = "\n".join(f"x{i}" for i in range(3_000)) + "\nq1\n"
    public, issues = listed_public_units(text, GOLD)
    assert public == {"q1"}
    assert len(issues) == 3_000
    assert issues[-1] == (3_000, "Line 3000: 'x2999' is not a unit of the gold.")


def test_a_long_unknown_id_is_quoted_cut() -> None:
    _, issues = listed_public_units("x" * 200, GOLD)
    assert issues == [(1, f"Line 1: '{'x' * 79}…' is not a unit of the gold.")]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "The file lists no unit: the public part would be empty."),
        ("\n", "The file lists no unit: the public part would be empty."),
        ("q4\nq3\nq2\nq1\n", "The file lists every unit of the gold: no private part is left."),
    ],
)
def test_a_listed_file_must_leave_both_parts(text: str, message: str) -> None:
    _, issues = listed_public_units(text, GOLD)
    assert issues[-1] == (None, message)


def test_parts_select_units_in_gold_order() -> None:
    public = frozenset({"q3", "q1"})
    assert part_units(GOLD, public, Part.PUBLIC) == ["q1", "q3"]
    assert part_units(GOLD, public, Part.PRIVATE) == ["q2", "q4"]
    assert part_units(GOLD, public, Part.ALL) == GOLD
    assert part_units(GOLD, None, Part("all")) == GOLD
    assert [p.value for p in Part] == ["public", "private", "all"]


def test_a_set_without_a_split_has_only_the_part_all() -> None:
    with pytest.raises(ValueError, match="no public/private split: part 'private'"):
        part_units(GOLD, None, Part.PRIVATE)
