"""The STS table: every run ranked on the overall value, team ranks, and the Best/Median summary."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from leaderboard.tables.model import (
    BASELINE_MARKER,
    LATE_MARKER,
    LATE_OR_CORRECTED_NOTE,
    MISSING,
    Entry,
    MeasureSpec,
    MetaCell,
    Row,
    SimpleTable,
    Table,
    TableContext,
    columns_of,
    entry_cells,
    entry_row,
    marker_footnotes,
    opt_str,
    opt_strings,
    rank_value,
    team_key,
    team_run_label,
    the_official_measure,
)
from leaderboard.tables.ranking import rank_field, team_best, value_order
from leaderboard.tables.styles import register_style

STYLE = "sts"
BASELINE_NOTE = "† baseline, ranked the same way"
OVERALL_NOTE = (
    "Overall = mean of the per-set Pearson correlations weighted by the number of scored pairs"
)
CONSTANT_NOTE = "system output constant on the scored pairs; counted as 0"


#: A run by team and run name, a baseline by its name.
row_label = team_run_label


def build(ctx: TableContext, entries: Sequence[Entry], measures: Sequence[MeasureSpec]) -> Table:
    """Build the STS table of all runs, with the Best | Median | Δ summary in ``Table.extra``.

    Run Rank of an on-time run with overall value v among on-time values V: 1 + #{u in V : u > v}
    on the 5-decimal strings; late or corrected runs ("*") and baselines ("†") get the same
    count against V only. Team Rank: the same formula over each team's best on-time value.
    Rows: overall value descending; ties on-time, late, baseline, then team, then run.
    """
    specs = tuple(measures)
    columns = columns_of(specs)
    main = the_official_measure(specs)
    participants = [e for e in entries if e.kind == "run"]
    on_time = [e for e in participants if not e.off_time]
    field = rank_field(on_time, main)

    best_of_team, team_field = team_best(on_time, main)

    def order(entry: Entry) -> tuple[object, ...]:
        by_value = value_order(entry, main)
        group = 2 if entry.kind == "baseline" else int(entry.off_time)
        return (*by_value, group, team_key(entry.team), entry.run)

    rows: list[Row] = []
    for entry in sorted(entries, key=order):
        value = entry.values.get(main.key)
        rank = field.rank(rank_value(value, main)) if value is not None else None
        team_rank: int | None = None
        name = entry.team or ""
        # The first on-time row of a team in display order holds its best value.
        timely = entry.kind == "run" and not entry.off_time and value is not None
        if timely and name in best_of_team:
            team_rank = team_field.rank(best_of_team.pop(name))
        rows.append(_row(entry, specs, rank, team_rank))
    table_rows = tuple(rows)

    footnotes: list[str] = []
    if any(row.rank_marker == LATE_MARKER for row in table_rows):
        footnotes.append(LATE_OR_CORRECTED_NOTE)
    if any(row.kind == "baseline" for row in table_rows):
        footnotes.append(BASELINE_NOTE)
    footnotes.append(opt_str(ctx.options, "overall_note", OVERALL_NOTE))
    footnotes.extend(opt_strings(ctx.options, "footnotes"))
    footnotes.extend(marker_footnotes(table_rows, ctx.options, note_default=CONSTANT_NOTE))

    return ctx.table(
        STYLE,
        lead=("team", "run"),
        trail=("run_rank", "team_rank"),
        columns=columns,
        rows=table_rows,
        footnotes=footnotes,
        extra=summary(participants, specs, main, opt_str(ctx.options, "summary_title", "Summary")),
    )


def _row(
    entry: Entry, specs: tuple[MeasureSpec, ...], rank: int | None, team_rank: int | None
) -> Row:
    """Return one main-table row; ``rank`` is the run rank or the "as if" rank."""
    baseline = entry.kind == "baseline"
    marker = BASELINE_MARKER if baseline else LATE_MARKER if entry.off_time else ""
    if rank is None:
        marker = ""
    label = row_label(entry)
    team_cell = MetaCell(label, BASELINE_MARKER) if baseline else MetaCell(entry.team or "")
    run_marker = (LATE_MARKER if entry.off_time and not baseline else "") + "".join(entry.markers)
    return entry_row(
        entry,
        label=label,
        cells=entry_cells(entry, specs),
        meta={
            "team": team_cell,
            "run": MetaCell(entry.run, run_marker),
            "run_rank": MetaCell(str(rank) if rank is not None else "", marker),
            "team_rank": MetaCell(str(team_rank) if team_rank is not None else ""),
        },
        rank=rank,
        marker=marker,
        rank_marker="†" if marker == BASELINE_MARKER else "*" if marker else "",
        team_rank=team_rank,
    )


def summary(
    participants: Sequence[Entry],
    specs: tuple[MeasureSpec, ...],
    main: MeasureSpec,
    title: str = "Summary",
) -> SimpleTable:
    """Return the Best | Median | Δ table, overall measure first, from unrounded values.

    Best = max over all participant runs, min for a lower-is-better measure (marked "*" if only
    a late or corrected run reaches it);
    Median = median over on-time runs (mean of the two middle values for an even count);
    Δ = Best − Median; shown to the measure's display decimals.
    """
    ordered = (main, *(m for m in specs if m is not main))
    rows: list[tuple[str, ...]] = []
    for m in ordered:
        scored = [
            (e.values[m.key].raw * m.scale, e.off_time) for e in participants if m.key in e.values
        ]
        timely = [raw for raw, off_time in scored if not off_time]
        pick = min if m.lower_is_better else max
        best = pick((raw for raw, _ in scored), default=None)
        median = float(np.median(timely)) if timely else None
        fmt = f".{m.display_decimals}f"
        best_text = MISSING
        if best is not None:
            late_only = all(off_time for raw, off_time in scored if raw == best)
            best_text = format(best, fmt) + (LATE_MARKER if late_only else "")
        median_text = format(median, fmt) if median is not None else MISSING
        delta_text = MISSING
        if best is not None and median is not None:
            delta_text = format(best - median, fmt)
        rows.append((m.label, best_text, median_text, delta_text))
    return SimpleTable(title=title, header=("Set", "Best", "Median", "Δ"), rows=tuple(rows))


register_style(STYLE, build, row_label)
