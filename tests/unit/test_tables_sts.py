"""The STS table style: run ranks, "as if" ranks, team ranks, sort rules and the summary."""

from __future__ import annotations

from leaderboard.tables import Entry, MeasureSpec, Table, Value, build_table
from leaderboard.tasks.families.sts import style as sts_style  # noqa: F401 (registers "sts")
from leaderboard.tasks.families.trec import style as trec_style  # noqa: F401 (registers "trec")
from tests.helpers.tables import sts_entries, sts_entry, sts_table

MEASURES = (
    MeasureSpec("ALL", "ALL", official=True, display_decimals=5),
    MeasureSpec("a", "set-a", display_decimals=5),
)


def entry(team: str | None, run: str, overall: str, a: str = "0.50000", **kw: object) -> Entry:
    values = {"ALL": Value(float(overall), overall), "a": Value(float(a), a)}
    kind = "run" if team is not None else "baseline"
    return Entry(kind=kind, team=team, run=run, slot=None, values=values, **kw)  # type: ignore[arg-type]


def build(entries: list[Entry]) -> Table:
    return build_table(
        "sts",
        task="semeval2016-task1",
        subtask="en",
        set="test",
        entries=entries,
        measures=MEASURES,
    )


def ranks(table: Table) -> list[tuple[str, str, str, str]]:
    """Return (team cell, run cell, run rank cell, team rank cell) as shown."""
    return [
        tuple(row.meta[name].plain for name in ("team", "run", "run_rank", "team_rank"))  # type: ignore[misc]
        for row in table.rows
    ]


def test_ties_sort_on_time_then_late_then_baseline_then_team_then_run() -> None:
    table = build(
        [
            entry(None, "cosine-bow", "0.70000"),
            entry("Zed", "run1", "0.70000", late=True),
            entry("Beta", "run2", "0.70000"),
            entry("Alpha", "run1", "0.70000", corrected=True),
            entry("Beta", "run1", "0.70000"),
            entry("Gamma", "run1", "0.80000"),
        ]
    )
    assert ranks(table) == [
        ("Gamma", "run1", "1", "1"),
        ("Beta", "run1", "2", "2"),
        ("Beta", "run2", "2", ""),  # a team's tie: the team rank goes on the first row
        ("Alpha", "run1*", "2*", ""),
        ("Zed", "run1*", "2*", ""),
        ("baseline†", "cosine-bow", "2†", ""),
    ]


def test_as_if_rank_never_displaces_on_time_runs() -> None:
    table = build(
        [
            entry("A", "run1", "0.60000"),
            entry("B", "run1", "0.50000"),
            entry("Late", "run1", "0.90000", late=True),
            entry(None, "bl", "0.55000"),
        ]
    )
    assert ranks(table) == [
        ("Late", "run1*", "1*", ""),
        ("A", "run1", "1", "1"),
        ("baseline†", "bl", "2†", ""),
        ("B", "run1", "2", "2"),
    ]
    late = table.rows[0]
    assert (late.rank, late.rank_marker, late.late, late.team_rank) == (1, "*", True, None)
    baseline = table.rows[2]
    assert (baseline.rank, baseline.rank_marker, baseline.kind) == (2, "†", "baseline")


def test_team_ranks_use_competition_ranking_on_best_on_time_runs() -> None:
    table = build(
        [
            entry("A", "run1", "0.70000"),
            entry("B", "run2", "0.70000"),
            entry("B", "run1", "0.60000"),
            entry("C", "run1", "0.65000"),
            entry("C", "run2", "0.99000", late=True),
        ]
    )
    assert [(r.label, r.rank, r.team_rank) for r in table.rows] == [
        ("C-run2", 1, None),
        ("A-run1", 1, 1),
        ("B-run2", 1, 1),
        ("C-run1", 3, 3),
        ("B-run1", 4, None),
    ]


def test_ranks_are_judged_on_five_decimal_strings() -> None:
    # Raw values differ beyond the 5th decimal; the stored strings tie.
    a = Entry("run", "A", "run1", None, {"ALL": Value(0.700004, "0.70000")})
    b = Entry("run", "B", "run1", None, {"ALL": Value(0.699996, "0.70000")})
    table = build([b, a])
    assert [(r.label, r.rank, r.team_rank) for r in table.rows] == [
        ("A-run1", 1, 1),
        ("B-run1", 1, 1),
    ]


def test_negative_correlations_display_with_sign() -> None:
    table = build([entry("A", "run1", "-0.01234", "-0.50000")])
    cells = table.rows[0].cells
    assert cells["ALL"] is not None and cells["ALL"].display == "-0.01234"
    assert cells["a"] is not None and cells["a"].display == "-0.50000"


def test_summary_marks_a_late_best_and_uses_on_time_median() -> None:
    table = build(
        [
            entry("A", "run1", "0.60000", "0.10000"),
            entry("B", "run1", "0.50000", "0.30000"),
            entry("C", "run1", "0.40000", "0.20000"),
            entry("D", "run1", "0.30000", "0.40000"),
            entry("Late", "run1", "0.90000", "0.40000", late=True),
            entry(None, "bl", "0.95000", "0.99000"),
        ]
    )
    assert table.extra is not None
    assert table.extra.header == ("Set", "Best", "Median", "Δ")
    # Even count of on-time values: median = mean of the middle two, 0.45 and 0.25.
    # set-a: the late run ties the on-time best 0.4, so the best is not marked.
    assert table.extra.rows == (
        ("ALL", "0.90000*", "0.45000", "0.45000"),
        ("set-a", "0.40000", "0.25000", "0.15000"),
    )


def test_summary_computes_from_unrounded_values() -> None:
    runs = [
        Entry("run", "A", "run1", None, {"ALL": Value(0.1234649, "0.12346")}),
        Entry("run", "B", "run1", None, {"ALL": Value(0.1000051, "0.10001")}),
        Entry("run", "C", "run1", None, {"ALL": Value(0.05, "0.05000")}),
    ]
    table = build(runs)
    assert table.extra is not None
    # Unrounded: 0.1234649 - 0.1000051 = 0.0234598 -> 0.02346 (rounded strings would give
    # 0.12346 - 0.10001 = 0.02345).
    assert table.extra.rows[0] == ("ALL", "0.12346", "0.10001", "0.02346")


def test_summary_without_on_time_runs_shows_dashes() -> None:
    table = build([entry("Late", "run1", "0.50000", late=True), entry(None, "bl", "0.4")])
    assert table.extra is not None
    assert table.extra.rows[0] == ("ALL", "0.50000*", "—", "—")
    empty = build([])
    assert empty.extra is not None and empty.extra.rows[0] == ("ALL", "—", "—", "—")


def test_constant_output_note_on_a_cell() -> None:
    values = {"ALL": Value(0.3, "0.30000"), "a": Value(0.0, "0.00000", note="c")}
    table = build([Entry("run", "A", "run1", None, values)])
    cell = table.rows[0].cells["a"]
    assert cell is not None and cell.note == "c"
    assert table.footnotes[-1] == "c system output constant on the scored pairs; counted as 0"


def test_missing_set_value_is_a_null_cell() -> None:
    table = build([Entry("run", "A", "run1", None, {"ALL": Value(0.3, "0.30000")})])
    assert table.rows[0].cells["a"] is None


def test_mock_summary_best_median_delta() -> None:
    table = sts_table()
    assert table.extra is not None
    assert table.extra.rows[0] == ("ALL", "0.77469", "0.76402", "0.01067")
    assert table.extra.rows[2] == ("headlines", "0.80342", "0.77893", "0.02449")


def test_late_best_in_mock_is_marked() -> None:
    entries = sts_entries()
    entries.append(
        sts_entry("Echo", "run1", "0.60000", "0.90000", "0.10000", "0.10000", "0.10000",
                  "0.10000", corrected=True)
    )  # fmt: skip
    table = sts_table(entries)
    assert table.extra is not None
    # On-time answer-answer values are unchanged, so the median stays 0.66502.
    assert table.extra.rows[1] == ("answer-answer", "0.90000*", "0.66502", "0.23498")


def test_unofficial_baseline_footnote_passes_through() -> None:
    table = build_table(
        "sts",
        task="semeval2016-task1",
        subtask="es-en",
        set="test",
        entries=[entry(None, "cosine-bow", "0.3")],
        measures=MEASURES,
        options={"footnotes": ["unofficial baseline"]},
    )
    assert table.footnotes == (
        "† baseline, ranked the same way",
        "Overall = mean of the per-set Pearson correlations weighted by the number of scored pairs",
        "unofficial baseline",
    )
    assert table.rows[0].rank_display == "1†"
