"""The ``ranked`` table: primaries ranked per measure, contrastives and baselines.

SemEval-2016 Task 3 introduced it, and every family without a table of its own uses it. Its
old name ``semeval-cqa`` stays an alias, and its tables keep that name in their JSON and CSS
class (``TABLE_NAME``), so exports and frozen tables read as before.
"""

from __future__ import annotations

from collections.abc import Sequence

from leaderboard.tables.model import (
    FLAGGED_CELL_NOTE,
    LATE_MARKER,
    LATE_OR_CORRECTED_NOTE,
    Entry,
    MeasureSpec,
    MetaCell,
    Row,
    Table,
    TableContext,
    baseline_row,
    baselines_in_order,
    columns_of,
    entry_row,
    marker_footnotes,
    opt_bool,
    opt_str,
    opt_strings,
    rank_value,
    shown_runs,
    team_key,
    the_official_measure,
)
from leaderboard.tables.ranking import RankField, rank_field, ranked_cells, value_order

STYLE = "ranked"
ALIASES = ("semeval-cqa",)
#: The ``style`` its tables carry (Table JSON, CSS class): the name it had when first written.
TABLE_NAME = "semeval-cqa"
SLOT_ORDER = {"primary": 0, "contrastive1": 1, "contrastive2": 2}

RANKS_NOTE = "Ranks (subscripts) are among primary runs only; ties share a rank."


def row_label(entry: Entry) -> str:
    """Return the label of an entry's row: a run by team and slot, a baseline by its name."""
    if entry.kind == "baseline":
        return entry.label or entry.run
    return entry.label or f"{entry.team or ''}-{entry.slot or entry.run}"


def build(ctx: TableContext, entries: Sequence[Entry], measures: Sequence[MeasureSpec]) -> Table:
    """Build the ranked table: on-time runs by MAP, primary runs ranked per measure, baselines last.

    Rows: on-time runs by official MAP string descending (ties: team, then primary < contrastive1
    < contrastive2), then baselines in ``baseline_order``. Rank of a value v among the on-time
    primary values V of its measure: 1 + #{u in V : u > v} on the stored 4-decimal strings.
    Display: format(float(official) * scale, '.2f'). Option ``include_late`` gives the
    post-deadline view, where late or corrected primaries get the "as if" rank marked "*".
    """
    specs = tuple(measures)
    columns = columns_of(specs)
    main = the_official_measure(specs)
    include_late = opt_bool(ctx.options, "include_late")

    runs = shown_runs(entries, include_late=include_late)
    primaries = [e for e in runs if e.slot == "primary" and not e.off_time]
    fields = {m.key: rank_field(primaries, m) for m in specs}

    def order(entry: Entry) -> tuple[object, ...]:
        by_value = value_order(entry, main)
        slot = SLOT_ORDER.get(entry.slot or "", len(SLOT_ORDER))
        return (*by_value, entry.off_time, team_key(entry.team), slot, entry.run)

    rows = [_run_row(e, specs, main, fields) for e in sorted(runs, key=order)]
    rows.extend(_baseline_row(e, specs) for e in baselines_in_order(entries))
    table_rows = tuple(rows)

    footnotes = [RANKS_NOTE]
    # Only a note that tells the reader something: no note when every value is as computed.
    measure_note = opt_str(ctx.options, "measure_note", _scale_note(specs))
    if measure_note:
        footnotes.append(measure_note)
    footnotes.extend(opt_strings(ctx.options, "footnotes"))
    if any(row.rank_marker == LATE_MARKER or row.late or row.corrected for row in table_rows):
        footnotes.append(LATE_OR_CORRECTED_NOTE)
    footnotes.extend(marker_footnotes(table_rows, ctx.options, note_default=FLAGGED_CELL_NOTE))

    title_suffix = ""
    if include_late:
        title_suffix = ", post-deadline view"
    return ctx.table(
        TABLE_NAME,
        lead=("rank", "submission"),
        trail=(),
        columns=columns,
        rows=table_rows,
        footnotes=footnotes,
        title_suffix=title_suffix,
    )


def _scale_note(specs: tuple[MeasureSpec, ...]) -> str:
    """Return a footnote naming the columns shown x100, or "" when none is scaled.

    A family may give its own note (the "measure_note" option).
    """
    scaled = [m.label for m in specs if m.scale != 1]
    return f"{', '.join(scaled)} ×100." if scaled else ""


def _run_row(
    entry: Entry,
    specs: tuple[MeasureSpec, ...],
    main: MeasureSpec,
    fields: dict[str, RankField],
) -> Row:
    """Return the row of a participant run; on-time primaries carry ranks and bold."""
    primary = entry.slot == "primary"
    ranked = primary and not entry.off_time
    cells = ranked_cells(entry, specs, fields, ranked=ranked)
    main_value = entry.values.get(main.key)
    rank: int | None = None
    marker = ""
    if primary and main_value is not None:
        # On-time primaries are members of the field, so this is their competition rank; a late
        # primary gets the rank it would have had, and the on-time ranks stay as they are.
        rank = fields[main.key].rank(rank_value(main_value, main))
        marker = LATE_MARKER if entry.off_time else ""
    label = row_label(entry)
    submission_marker = (LATE_MARKER if entry.off_time else "") + "".join(entry.markers)
    return entry_row(
        entry,
        label=label,
        cells=cells,
        meta={
            "rank": MetaCell(str(rank) if rank else "", marker),
            "submission": MetaCell(label, submission_marker),
        },
        rank=rank,
        marker=marker,
        rank_marker="*" if entry.off_time else "",
        team_rank=rank if ranked else None,
        bold=ranked,
    )


def _baseline_row(entry: Entry, specs: tuple[MeasureSpec, ...]) -> Row:
    """Return a baseline row: no rank, no bold, "—" where a value is not shown."""
    label = row_label(entry)
    meta = {"rank": MetaCell(""), "submission": MetaCell(label, "".join(entry.markers))}
    return baseline_row(entry, specs, label, meta)
