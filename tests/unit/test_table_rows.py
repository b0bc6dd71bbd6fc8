"""What every style builds rows from: shown runs, baselines, order, cells and rows of entries."""

from __future__ import annotations

from decimal import Decimal

from leaderboard.tables.model import (
    Entry,
    MeasureSpec,
    MetaCell,
    Value,
    baseline_row,
    baselines_in_order,
    entry_row,
    shown_runs,
    team_run_label,
)
from leaderboard.tables.ranking import rank_field, ranked_cells, value_order

MAP = MeasureSpec("MAP", "MAP", official=True, scale=100)
ERR = MeasureSpec("ERR", "Error", lower_is_better=True)


def run(name: str, value: str | None, **kw: object) -> Entry:
    """Return a run of team T with its MAP and Error values (none when ``value`` is None)."""
    values = {} if value is None else {"MAP": Value(float(value), value), "ERR": Value(0, value)}
    return Entry("run", "T", name, "primary", values, **kw)  # type: ignore[arg-type]


def baseline(name: str, order: int) -> Entry:
    """Return a baseline with a MAP value and its listing order."""
    return Entry("baseline", None, name, None, {"MAP": Value(0.1, "0.1000")}, baseline_order=order)


def test_a_table_shows_on_time_runs_and_late_ones_only_when_asked() -> None:
    entries = [run("a", "0.5"), run("b", "0.4", late=True), run("c", "0.3", corrected=True)]
    entries.append(baseline("x", 1))
    assert [e.run for e in shown_runs(entries, include_late=False)] == ["a"]
    assert [e.run for e in shown_runs(entries, include_late=True)] == ["a", "b", "c"]


def test_baselines_come_in_their_listing_order() -> None:
    entries = [baseline("second", 2), run("a", "0.5"), baseline("first", 1)]
    assert [e.run for e in baselines_in_order(entries)] == ["first", "second"]


def test_entries_order_by_value_in_the_measure_direction_those_without_last() -> None:
    entries = [run("none", None), run("low", "0.2000"), run("high", "0.8000")]
    assert [e.run for e in sorted(entries, key=lambda e: value_order(e, MAP))] == [
        "high",
        "low",
        "none",
    ]
    assert [e.run for e in sorted(entries, key=lambda e: value_order(e, ERR))] == [
        "low",
        "high",
        "none",
    ]
    assert value_order(run("none", None), MAP) == (1, Decimal(0))


def test_ranked_cells_rank_only_ranked_runs_and_bold_only_on_time_bests() -> None:
    field = [run("a", "0.8000"), run("b", "0.5000")]
    fields = {"MAP": rank_field(field, MAP)}
    best = {"MAP": fields["MAP"].best()}
    cell = ranked_cells(run("b", "0.5000"), [MAP], fields, ranked=True)["MAP"]
    assert cell is not None and (cell.rank, cell.bold, cell.display) == (2, False, "50.00")
    top = ranked_cells(run("a", "0.8000"), [MAP], fields, ranked=True, best=best)["MAP"]
    assert top is not None and (top.rank, top.bold) == (1, True)
    late = ranked_cells(run("l", "0.8000", late=True), [MAP], fields, ranked=False, best=best)
    assert late["MAP"] is not None and (late["MAP"].rank, late["MAP"].bold) == (None, False)
    assert ranked_cells(run("n", None), [MAP], fields, ranked=True) == {"MAP": None}


def test_an_entry_row_keeps_the_entry_and_shows_its_rank_with_the_marker() -> None:
    entry = run("a", "0.5000", late=True, markers=("‡",), run_id=7)
    row = entry_row(entry, label="T-a", cells={}, meta={}, rank=3, marker="*", rank_marker="*")
    assert (row.kind, row.team, row.run, row.slot, row.late, row.markers, row.run_id) == (
        "run",
        "T",
        "a",
        "primary",
        True,
        ("‡",),
        7,
    )
    assert (row.rank, row.rank_display, row.rank_marker, row.bold) == (3, "3*", "*", False)
    assert entry_row(entry, label="T-a", cells={}, meta={}).rank_display == ""


def test_a_baseline_row_is_never_ranked_nor_bold_and_shows_its_values() -> None:
    meta = {"rank": MetaCell("")}
    row = baseline_row(baseline("x", 1), (MAP, ERR), "x", meta)
    assert (row.kind, row.rank, row.rank_display, row.bold, row.meta) == (
        "baseline",
        None,
        "",
        False,
        meta,
    )
    assert row.cells["ERR"] is None
    cell = row.cells["MAP"]
    assert cell is not None and cell.display == "10.00"


def test_team_run_labels_name_a_run_by_team_and_run_and_a_baseline_by_its_label() -> None:
    assert team_run_label(run("a", None)) == "T-a"
    assert team_run_label(run("a", None, label="Shown")) == "Shown"
    assert team_run_label(baseline("x", 1)) == "baseline"
