"""Registry of table styles (one pure build function per style name) and the dispatcher.

The generic ``ranked`` style is registered here; a family registers its own styles when its
package is imported (``register_style``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import MappingProxyType

from leaderboard.tables.model import (
    NO_OPTIONS,
    Entry,
    MeasureSpec,
    MetaCell,
    Row,
    Table,
    TableContext,
    with_submitted,
)
from leaderboard.tables.styles import ranked

StyleFn = Callable[[TableContext, Sequence[Entry], Sequence[MeasureSpec]], Table]
LabelFn = Callable[[Entry], str]


@dataclass(frozen=True)
class Style:
    """A registered table style: its build function and how it labels one entry's row."""

    name: str
    build: StyleFn
    row_label: LabelFn


_STYLES: dict[str, Style] = {}
#: Other names a definition may give a style by (old names kept working), to the style's name.
_ALIASES: dict[str, str] = {}
#: The registered styles by name (aliases excluded); a live view of the registry.
STYLES: Mapping[str, Style] = MappingProxyType(_STYLES)


def register_style(
    name: str, build: StyleFn, row_label: LabelFn, aliases: Sequence[str] = ()
) -> Style:
    """Register a table style under ``name`` and its ``aliases``; return it.

    Registering the same function again (a module imported twice) is harmless; another style
    under a taken name raises ValueError.
    """
    style = Style(name, build, row_label)
    for taken in (name, *aliases):
        held = _STYLES.get(style_name(taken))
        if held is not None and held != style:
            raise ValueError(f"a table style named {taken!r} is already registered")
    _STYLES[name] = style
    for alias in aliases:
        _ALIASES[alias] = name
    return style


def unregister_style(name: str) -> None:
    """Remove the style called ``name`` and its aliases (a test's throw-away style)."""
    _STYLES.pop(name, None)
    for alias in [a for a, target in _ALIASES.items() if target == name]:
        del _ALIASES[alias]


def style_name(name: str) -> str:
    """Return the registered name of a style given by its name or an alias."""
    return _ALIASES.get(name, name)


def get_style(name: str) -> Style:
    """Return the style called ``name`` (or an alias); raise ValueError for an unknown one."""
    try:
        return _STYLES[style_name(name)]
    except KeyError:
        raise ValueError(f"unknown table style {name!r}; known: {', '.join(_STYLES)}") from None


def entry_label(style: str, entry: Entry) -> str:
    """Return the label a style gives an entry's row, as a table of it alone would show it."""
    return get_style(style).row_label(entry)


register_style(ranked.STYLE, ranked.build, ranked.row_label, ranked.ALIASES)


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
    """Build the table of ``style`` from stored scores; raise ValueError for an unknown style.

    Whatever the style, the table ends with the teams' upload counts when entries carry them.
    """
    build = get_style(style).build
    context = TableContext(task, subtask, set, official, frozen_at, options)
    table = build(context, entries, measures)
    return with_submitted(replace(table, rows=unique_labels(table.rows)))


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
