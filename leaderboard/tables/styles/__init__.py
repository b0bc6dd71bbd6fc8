"""Registry of table styles (one pure build function per style name) and the dispatcher."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from types import MappingProxyType

from leaderboard.tables.model import (
    NO_OPTIONS,
    Entry,
    MeasureSpec,
    MetaCell,
    Row,
    Table,
    TableContext,
)
from leaderboard.tables.styles import semeval_cqa, sts, trec

StyleFn = Callable[[TableContext, Sequence[Entry], Sequence[MeasureSpec]], Table]

STYLES: Mapping[str, StyleFn] = MappingProxyType(
    {
        semeval_cqa.STYLE: semeval_cqa.build,
        sts.STYLE: sts.build,
        trec.STYLE: trec.build,
    }
)


#: How each style labels one entry's row (before labels are made unique within a table).
LABELS: Mapping[str, Callable[[Entry], str]] = MappingProxyType(
    {
        semeval_cqa.STYLE: semeval_cqa.row_label,
        sts.STYLE: sts.row_label,
        trec.STYLE: trec.row_label,
    }
)


def entry_label(style: str, entry: Entry) -> str:
    """Return the label a style gives an entry's row, as a table of it alone would show it."""
    return LABELS[style](entry)


def build_table(
    style: str,
    *,
    task: str,
    subtask: str,
    set: str,  # the contract's name, as in the Table JSON
    entries: Sequence[Entry],
    measures: Sequence[MeasureSpec],
    official: bool = False,
    frozen_at: str | None = None,
    options: Mapping[str, object] = NO_OPTIONS,
) -> Table:
    """Build the table of ``style`` from stored scores; raise ValueError for an unknown style."""
    try:
        build = STYLES[style]
    except KeyError:
        raise ValueError(f"unknown table style {style!r}; known: {', '.join(STYLES)}") from None
    context = TableContext(task, subtask, set, official, frozen_at, options)
    table = build(context, entries, measures)
    return replace(table, rows=unique_labels(table.rows))


def unique_labels(rows: Sequence[Row]) -> tuple[Row, ...]:
    """Return the rows with every label unique within the table.

    Rows sharing a label are told apart by the first of their run name and slot that differs
    between them ("Team 1-tag (primary)"), else by a counter ("baseline (2)"). A meta cell that
    printed the label prints the new one, so the table, its analysis and its charts agree.
    """
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(row.label, []).append(row)
    taken = set(groups)
    new: dict[int, str] = {}
    for label, group in groups.items():
        if len(group) == 1:
            continue
        suffixes = [str(n) for n in range(1, len(group) + 1)]
        for attribute in ("run", "slot"):
            values = [getattr(row, attribute) or "" for row in group]
            if all(values) and len(set(values)) == len(values):
                suffixes = values
                break
        for row, suffix in zip(group, suffixes, strict=True):
            candidate, n = f"{label} ({suffix})", 1
            while candidate in taken:
                n += 1
                candidate = f"{label} ({suffix}, {n})"
            taken.add(candidate)
            new[id(row)] = candidate
    out: list[Row] = []
    for row in rows:
        unique = new.get(id(row))
        if unique is None:
            out.append(row)
            continue
        meta = {
            name: MetaCell(unique, cell.marker) if cell.text == row.label else cell
            for name, cell in row.meta.items()
        }
        out.append(replace(row, label=unique, meta=meta))
    return tuple(out)
