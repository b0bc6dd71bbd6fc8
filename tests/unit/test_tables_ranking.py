"""Standard competition ranking on stored official values."""

from __future__ import annotations

from decimal import Decimal

from leaderboard.tables.ranking import RankField, as_if_rank, competition_ranks


def d(*texts: str) -> list[Decimal]:
    return [Decimal(t) for t in texts]


def test_ties_share_a_rank_and_skip_the_next() -> None:
    assert competition_ranks(d("0.7142", "0.7142", "0.6890")) == [1, 1, 3]


def test_ranks_follow_input_order_not_sorted_order() -> None:
    assert competition_ranks(d("0.5", "0.7", "0.7", "0.2", "0.9")) == [4, 2, 2, 5, 1]


def test_no_values_no_ranks() -> None:
    assert competition_ranks([]) == []


def test_decimal_strings_with_different_trailing_zeros_tie() -> None:
    assert competition_ranks(d("0.50", "0.5000", "0.4")) == [1, 1, 3]


def test_negative_values_rank_below_positive_ones() -> None:
    assert competition_ranks(d("-0.01234", "0.00000", "-0.50000")) == [2, 1, 3]


def test_as_if_rank_counts_only_strictly_higher_field_values() -> None:
    field = d("0.77469", "0.76636", "0.76402")
    assert as_if_rank(Decimal("0.76550"), field) == 3
    assert as_if_rank(Decimal("0.76636"), field) == 2  # a tie does not displace
    assert as_if_rank(Decimal("0.9"), field) == 1
    assert as_if_rank(Decimal("0.1"), field) == 4
    assert as_if_rank(Decimal("0.1"), []) == 1


def test_rank_field_matches_competition_ranks_and_knows_its_best() -> None:
    values = d("3", "1", "3", "2")
    field = RankField(values)
    assert [field.rank(v) for v in values] == [1, 4, 1, 3]
    assert field.rank(Decimal("2.5")) == 3
    assert field.best() == Decimal("3")
    assert RankField([]).best() is None
    assert len(field) == 4
