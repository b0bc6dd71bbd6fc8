"""Standard competition ranking (1, 1, 3) on stored official values, in each measure's direction."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from decimal import Decimal

from leaderboard.tables.model import Cell, Entry, MeasureSpec, make_cell, rank_value


def competition_ranks(values: Sequence[Decimal]) -> list[int]:
    """Return each value's rank: 1 + the number of values strictly higher (ties share a rank)."""
    ordered = sorted(values)
    return [len(ordered) - bisect_right(ordered, value) + 1 for value in values]


def as_if_rank(value: Decimal, field: Sequence[Decimal]) -> int:
    """Return the rank ``value`` would get without displacing ``field``: 1 + #strictly higher."""
    return 1 + sum(1 for other in field if other > value)


class RankField:
    """The ranked values of one measure, answering competition ranks for members and outsiders."""

    def __init__(self, values: Sequence[Decimal]) -> None:
        self._ordered = sorted(values)

    def __len__(self) -> int:
        return len(self._ordered)

    def rank(self, value: Decimal) -> int:
        """Return 1 + the number of field values strictly higher than ``value``."""
        return len(self._ordered) - bisect_right(self._ordered, value) + 1

    def best(self) -> Decimal | None:
        """Return the highest value of the field, or None when it is empty."""
        return self._ordered[-1] if self._ordered else None


def rank_field(entries: Sequence[Entry], measure: MeasureSpec) -> RankField:
    """Return the rank values (see ``rank_value``) of a measure among ``entries`` as a field."""
    key = measure.key
    return RankField([rank_value(e.values[key], measure) for e in entries if key in e.values])


def team_best(
    entries: Sequence[Entry], measure: MeasureSpec
) -> tuple[dict[str, Decimal], RankField]:
    """Return each team's best rank value of a measure among ``entries``, and their field."""
    key = measure.key
    best: dict[str, Decimal] = {}
    for entry in entries:
        if key in entry.values:
            stored = rank_value(entry.values[key], measure)
            name = entry.team or ""
            best[name] = max(stored, best.get(name, stored))
    return best, RankField(list(best.values()))


def value_order(entry: Entry, measure: MeasureSpec) -> tuple[int, Decimal]:
    """Return the sort key putting entries best value of ``measure`` first, those without last."""
    value = entry.values.get(measure.key)
    return (0, -rank_value(value, measure)) if value is not None else (1, Decimal(0))


def ranked_cells(
    entry: Entry,
    specs: Sequence[MeasureSpec],
    fields: Mapping[str, RankField],
    *,
    ranked: bool,
    best: Mapping[str, Decimal | None] | None = None,
) -> dict[str, Cell | None]:
    """Return a run's cells, with each value's rank in its field when ``ranked``.

    With ``best``, an on-time run's value equal to its column's best is bold.
    """
    cells: dict[str, Cell | None] = {}
    for m in specs:
        value = entry.values.get(m.key)
        if value is None:
            cells[m.key] = None
            continue
        stored = rank_value(value, m)
        rank = fields[m.key].rank(stored) if ranked else None
        bold = best is not None and not entry.off_time and stored == best[m.key]
        cells[m.key] = make_cell(value, m, rank=rank, bold=bold)
    return cells
