"""The TREC table: columns grouped per qrels variant, primary subindices, best values bold."""

from __future__ import annotations

from collections.abc import Sequence

from leaderboard.tables.model import (
    BASELINE_MARKER,
    FLAGGED_CELL_NOTE,
    LATE_MARKER,
    Cell,
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
    opt_mapping,
    opt_str,
    opt_strings,
    rank_value,
    shown_runs,
    team_key,
    team_run_label,
)
from leaderboard.tables.ranking import rank_field, ranked_cells, team_best, value_order
from leaderboard.tables.styles import register_style

STYLE = "trec"
RANKS_NOTE = "Ranks (subscripts) among primary runs only; ties share a rank."
MISSING_QUERIES_NOTE = (
    "Queries for which a run returned nothing count as 0 "
    "(as trec_eval -c; trec_eval's default would skip them)."
)
SKIPPED_QUERIES_NOTE = (
    "Queries for which a run returned nothing are left out of its averages "
    "(trec_eval's default, without -c)."
)
BASELINE_NOTE = "† baseline, listed below the participant runs; never ranked or bold"
LATE_NOTE = "* late run, ranked as if submitted on time without displacing on-time runs"


#: A run by team and run tag, a baseline by its name.
row_label = team_run_label


def variant_of(measure: MeasureSpec) -> str:
    """Return the qrels variant of a measure: the part of its key before "/"."""
    if "/" in measure.key:
        return measure.key.split("/", 1)[0]
    return (measure.group or "").casefold()


def build(ctx: TableContext, entries: Sequence[Entry], measures: Sequence[MeasureSpec]) -> Table:
    """Build the TREC table: the listed measures per qrels variant, primary runs ranked.

    Rows: on-time runs by the sort measure's official string, best first (ties: team, run
    tag), then baselines marked "†". The sort measure is the official one, or with
    ``sort_variant`` the same measure (else MAP) of that variant. Subindex of a primary value
    v among the primary values V of its column: 1 + #{u in V : u better than v} on the official
    strings. Bold: the best value of its column over on-time participant runs (all ties bold).
    Options: ``sort_variant``, ``query_counts`` {variant: n_v}, ``thresholds`` {variant: grade},
    ``doc_noun``, ``missing_topics`` ("zero" or "skip"), ``include_late``.
    """
    specs = _grouped(tuple(measures))
    columns = columns_of(specs)
    sort_measure = _sort_measure(specs, opt_str(ctx.options, "sort_variant", ""))
    include_late = opt_bool(ctx.options, "include_late")

    runs = shown_runs(entries, include_late=include_late)
    timely = [e for e in runs if not e.off_time]
    primaries = [e for e in timely if e.slot == "primary"]
    fields = {m.key: rank_field(primaries, m) for m in specs}
    best = {m.key: rank_field(timely, m).best() for m in specs}

    best_of_team, team_field = team_best(primaries, sort_measure)

    def order(entry: Entry) -> tuple[object, ...]:
        by_value = value_order(entry, sort_measure)
        return (*by_value, entry.off_time, team_key(entry.team), entry.run)

    rows: list[Row] = []
    for entry in sorted(runs, key=order):
        primary = entry.slot == "primary"
        ranked = primary and not entry.off_time
        cells = ranked_cells(entry, specs, fields, ranked=ranked, best=best)
        sort_value = entry.values.get(sort_measure.key)
        sort_key = (
            rank_value(sort_value, sort_measure) if primary and sort_value is not None else None
        )
        rank = fields[sort_measure.key].rank(sort_key) if sort_key is not None else None
        team_rank = None
        if ranked and sort_key is not None and best_of_team.get(entry.team or "") == sort_key:
            # The first primary of the team in display order holds its best value.
            team_rank = team_field.rank(best_of_team.pop(entry.team or ""))
        rows.append(_run_row(entry, cells, rank, team_rank))
    rows.extend(_baseline_row(e, specs) for e in baselines_in_order(entries))
    table_rows = tuple(rows)

    return ctx.table(
        STYLE,
        lead=("team", "run"),
        trail=(),
        columns=columns,
        rows=table_rows,
        footnotes=_footnotes(ctx, specs, table_rows),
    )


def _grouped(specs: tuple[MeasureSpec, ...]) -> tuple[MeasureSpec, ...]:
    """Return the measures with each group's columns adjacent, groups in first-seen order."""
    groups: dict[str | None, list[MeasureSpec]] = {}
    for m in specs:
        groups.setdefault(m.group, []).append(m)
    return tuple(m for members in groups.values() for m in members)


def _sort_measure(specs: tuple[MeasureSpec, ...], variant: str) -> MeasureSpec:
    """Return the column rows are sorted by, or raise ValueError when there is none.

    Without ``variant``: the official column (else the first). With it: that variant's column
    of the official measure, else its MAP, else its official or first column.
    """
    if not specs:
        raise ValueError("the table has no measure column")
    official = next((m for m in specs if m.official), None)
    if not variant:
        return official or specs[0]
    of_variant = [m for m in specs if variant_of(m) == variant]
    for candidates in (
        [m for m in of_variant if official is not None and m.label == official.label],
        [m for m in of_variant if m.label == "MAP"],
        [m for m in of_variant if m.official],
        of_variant,
    ):
        if candidates:
            return candidates[0]
    raise ValueError(f"sort variant {variant!r} has no column")


def _run_row(
    entry: Entry, cells: dict[str, Cell | None], rank: int | None, team_rank: int | None
) -> Row:
    """Return the row of a participant run; a late primary's ``rank`` is its "as if" rank."""
    primary = entry.slot == "primary"
    marker = LATE_MARKER if entry.off_time and rank is not None else ""
    kind_text = "primary" if primary else "contrastive"
    run_marker = (LATE_MARKER if entry.off_time else "") + "".join(entry.markers)
    return entry_row(
        entry,
        label=row_label(entry),
        cells=cells,
        meta={
            "team": MetaCell(entry.team or ""),
            "run": MetaCell(f"{entry.run} ({kind_text})", run_marker),
        },
        rank=rank,
        marker=marker,
        rank_marker="*" if entry.off_time else "",
        team_rank=team_rank,
    )


def _baseline_row(entry: Entry, specs: tuple[MeasureSpec, ...]) -> Row:
    """Return a baseline row: marked "†", never ranked, never bold."""
    label = row_label(entry)
    meta = {
        "team": MetaCell(label, BASELINE_MARKER),
        "run": MetaCell(entry.run, "".join(entry.markers)),
    }
    return baseline_row(entry, specs, label, meta)


def _footnotes(
    ctx: TableContext, specs: tuple[MeasureSpec, ...], rows: tuple[Row, ...]
) -> list[str]:
    """Return the spec's footnotes for the variants shown, plus marker notes."""
    variants: dict[str, str] = {}
    for m in specs:
        variants.setdefault(variant_of(m), m.group or variant_of(m).capitalize())
    thresholds = opt_mapping(ctx.options, "thresholds")
    relevant = "; ".join(
        f"{name} grade ≥ {thresholds.get(v, 1)}".lstrip() for v, name in variants.items()
    )
    counts = opt_mapping(ctx.options, "query_counts")
    known = {v: counts[v] for v in variants if isinstance(counts.get(v), int)}
    if known and set(variants) == {""}:
        n_text = f"all {next(iter(known.values())):,} queries of the qrels"
    elif known and len(known) == len(variants) and len(set(known.values())) == 1:
        n_text = f"all {next(iter(known.values())):,} queries of each qrels variant"
    elif known:
        listed = ", ".join(f"{variants[v]} {n:,}" for v, n in known.items())
        n_text = f"all queries of each qrels variant ({listed})"
    else:
        n_text = "all queries of each qrels variant"
    noun = opt_str(ctx.options, "doc_noun", "document")
    if opt_str(ctx.options, "missing_topics", "zero") == "skip":
        averages = f"Averages over the queries of each qrels variant a run answered. {SKIPPED_QUERIES_NOTE}"
    else:
        averages = f"Averages over {n_text}. {MISSING_QUERIES_NOTE}"
    notes = [
        f"Relevant: {relevant}. Unjudged {noun}s are non-relevant.",
        averages,
        RANKS_NOTE,
    ]
    if any(row.kind == "baseline" for row in rows):
        notes.append(BASELINE_NOTE)
    if any(row.kind == "run" and (row.late or row.corrected) for row in rows):
        notes.append(LATE_NOTE)
    notes.extend(opt_strings(ctx.options, "footnotes"))
    notes.extend(marker_footnotes(rows, ctx.options, note_default=FLAGGED_CELL_NOTE))
    return notes


register_style(STYLE, build, row_label)
