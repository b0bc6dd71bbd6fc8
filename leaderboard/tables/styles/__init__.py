"""Registry of table styles (one pure build function per style name) and the dispatcher."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from leaderboard.tables.model import NO_OPTIONS, Entry, MeasureSpec, Table, TableContext
from leaderboard.tables.styles import semeval_cqa, sts, trec

StyleFn = Callable[[TableContext, Sequence[Entry], Sequence[MeasureSpec]], Table]

STYLES: Mapping[str, StyleFn] = MappingProxyType(
    {
        semeval_cqa.STYLE: semeval_cqa.build,
        sts.STYLE: sts.build,
        trec.STYLE: trec.build,
    }
)


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
    return build(context, entries, measures)
