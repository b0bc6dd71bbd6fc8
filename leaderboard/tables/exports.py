"""Render a Table as JSON, CSV, Markdown and LaTeX; user text is escaped for each format."""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from typing import Any

from leaderboard.tables.model import (
    MISSING,
    SHAKEUP,
    Cell,
    Row,
    SimpleTable,
    Table,
    json_number,
    shake,
    shown_notes,
)

# ------------------------------------------------------------------------------------------ JSON


def table_to_dict(table: Table) -> dict[str, Any]:
    """Return the table as the public Table JSON (columns, rows, cells), plus a few extra keys."""
    return {
        "task": table.task,
        "subtask": table.subtask,
        "set": table.set,
        "official": table.official,
        "frozen_at": table.frozen_at,
        "columns": [
            {"key": c.key, "label": c.label, "group": c.group, "official": c.official}
            for c in table.columns
        ],
        "rows": [_row_dict(row, table) for row in table.rows],
        "style": table.style,
        "title": table.title,
        "footnotes": list(table.footnotes),
        "extra": _simple_dict(table.extra) if table.extra else None,
        "part": table.part,
        "board": table.board,
    }


def _row_dict(row: Row, table: Table) -> dict[str, Any]:
    """Return one row of the Table JSON.

    ``submitted`` is on every row of a table that discloses it (None on baselines); a table
    frozen before it existed rebuilds without it, so that it still verifies.
    """
    columns = table.columns
    return {
        "kind": row.kind,
        "team": row.team,
        "run": row.run,
        "slot": row.slot,
        "label": row.label,
        "rank": row.rank,
        "rank_marker": row.rank_marker,
        "team_rank": row.team_rank,
        "late": row.late,
        "cells": {c.key: _cell_dict(row.cells.get(c.key)) for c in columns},
        "corrected": row.corrected,
        "bold": row.bold,
        "rank_display": row.rank_display,
        "markers": list(row.markers),
        **({"cluster": row.cluster} if row.cluster is not None else {}),
        **({"submitted": row.submitted} if table.discloses_submitted else {}),
        **(
            {"public_rank": row.public_rank, "shakeup": shake(row.public_rank, row.rank)}
            if SHAKEUP in table.trail_columns
            else {}
        ),
        **({"rank_interval": list(row.rank_interval)} if row.rank_interval is not None else {}),
    }


def _cell_dict(cell: Cell | None) -> dict[str, Any] | None:
    """Return one cell of the Table JSON, or None where the measure does not apply."""
    if cell is None:
        return None
    return {
        "value": json_number(cell.value),
        "display": cell.display,
        "rank": cell.rank,
        "bold": cell.bold,
        "note": cell.note,
        **({"ci": [json_number(cell.ci[0]), json_number(cell.ci[1])]} if cell.ci else {}),
    }


def _simple_dict(extra: SimpleTable) -> dict[str, Any]:
    """Return a secondary table as JSON."""
    return {
        "title": extra.title,
        "header": list(extra.header),
        "rows": [list(r) for r in extra.rows],
    }


#: Characters that are harmless in JSON but dangerous if the JSON is pasted into HTML or JS.
_JSON_HTML_UNSAFE = str.maketrans(
    {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
)


def to_json(table: Table) -> str:
    """Return the Table JSON as text (UTF-8 characters kept; <, >, & as \\u escapes)."""
    text = json.dumps(table_to_dict(table), ensure_ascii=False, indent=2, allow_nan=False)
    # These characters only occur inside JSON strings, where the \\u form means the same.
    return text.translate(_JSON_HTML_UNSAFE) + "\n"


# ------------------------------------------------------------------------------------- shared

#: Explicit bidi embeddings, overrides and isolates: removed from plain-text exports because an
#: unbalanced one reorders the rest of the line (e.g. U+202E RIGHT-TO-LEFT OVERRIDE).
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_FSI, _PDI = "\u2068", "\u2069"


def _clean_text(text: str) -> str:
    """Return ``text`` on one line: controls and bidi controls dropped, whitespace collapsed."""
    kept = []
    for ch in text:
        if ch.isspace():
            kept.append(" ")
        elif ch in _BIDI_CONTROLS or unicodedata.category(ch) == "Cc":
            continue
        else:
            kept.append(ch)
    return " ".join("".join(kept).split())


def _has_rtl(text: str) -> bool:
    """Return whether ``text`` holds a right-to-left letter."""
    return any(unicodedata.bidirectional(ch) in ("R", "AL") for ch in text)


def _header_labels(table: Table, *, every: bool = False) -> tuple[list[str], list[str], list[str]]:
    """Return the lead, measure and trail header labels.

    A grouped measure is labelled "Group: label" on its group's first column, or on every
    column with ``every`` (so that each CSV header names its column alone).
    """
    measure_labels = []
    previous: str | None = None
    for column in table.columns:
        named = column.group is not None and (every or column.group != previous)
        measure_labels.append(f"{column.group}: {column.label}" if named else column.label)
        previous = column.group
    return (
        [table.meta_label(name) for name in table.lead_columns],
        measure_labels,
        [table.meta_label(name) for name in table.trail_columns],
    )


# ------------------------------------------------------------------------------------------- CSV

_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")


_NO_BIDI = str.maketrans(dict.fromkeys(map(ord, _BIDI_CONTROLS)))


def csv_safe(field: str, *, text: bool = False) -> str:
    """Return ``field`` without bidi controls, and quoted if it could be read as a formula.

    Bidi embeddings, overrides and isolates are dropped as in the other plain-text exports (an
    unbalanced U+202E reverses the rest of the line). A leading apostrophe neutralises what a
    spreadsheet would read as a formula; numbers (e.g. -0.01234) stay as they are, except in
    user ``text``: a team named "+1" or "-1" must not turn into a number either.
    """
    # Dropped first, so that a control cannot hide a formula's "=" from the check below.
    field = field.translate(_NO_BIDI)
    if not text and _NUMBER.fullmatch(field):
        return field
    return "'" + field if field.startswith(_FORMULA_STARTS) else field


def to_csv(table: Table) -> str:
    """Return the table as CSV with one header row.

    Fields are the display strings; each ranked measure gets a "<label> rank" column after it;
    a measure that does not apply gives an empty field. Formula-like text is neutralised.
    """
    ranked = table.ranked_keys
    lead, measures, trail = _header_labels(table, every=True)
    header = list(lead)
    for column, label in zip(table.columns, measures, strict=True):
        header.append(label)
        if column.key in ranked:
            header.append(f"{label} rank")
    header.extend(trail)

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow([csv_safe(h) for h in header])
    for row in table.rows:
        fields = [_meta_csv(table, row, name) for name in table.lead_columns]
        for column in table.columns:
            cell = row.cells.get(column.key)
            fields.append(csv_safe(cell.display) if cell else "")
            if column.key in ranked:
                fields.append(str(cell.rank) if cell and cell.rank else "")
        fields.extend(_meta_csv(table, row, name) for name in table.trail_columns)
        writer.writerow(fields)
    return out.getvalue()


def _meta_csv(table: Table, row: Row, name: str) -> str:
    """Return a meta column's CSV field, neutralised as user text where it holds some."""
    return csv_safe(_meta_plain(row, name), text=table.is_user_text(name))


def _meta_plain(row: Row, name: str) -> str:
    """Return a meta column's text with its marker."""
    meta = row.meta.get(name)
    return meta.plain if meta else ""


# -------------------------------------------------------------------------------------- Markdown

_MD_SPECIAL = frozenset("\\`*_[]<>|~$&")
_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def md_escape(text: str) -> str:
    """Return user text safe inside a GFM table cell.

    Inline specials are backslashed, the text is put on one line, and right-to-left text is
    wrapped in a first-strong isolate so it cannot reorder the rest of the row.
    """
    cleaned = _clean_text(text)
    escaped = "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in cleaned)
    return f"{_FSI}{escaped}{_PDI}" if _has_rtl(escaped) else escaped


def _md_paragraph(text: str) -> str:
    """Return a footnote as one Markdown paragraph that cannot start a list, heading or quote."""
    escaped = md_escape(text)
    if escaped.startswith(("-", "+", "#", ">", "=")):
        return "\\" + escaped
    # "1. text" or "1) text" would start an ordered list.
    return re.sub(r"^(\d+)([.)])", r"\1\\\2", escaped)


def _md_row(cells: list[str]) -> str:
    """Return one pipe-table line."""
    return "| " + " | ".join(cells) + " |"


def _md_value(row: Row, cell: Cell | None, *, rank_interval: bool = False) -> str:
    """Return a measure cell: **bold**, subindex as Unicode subscript digits, "—" if missing.

    With ``rank_interval`` the row's rank interval follows the rank (a table without a rank
    column shows it in the official measure's cell).
    """
    if cell is None:
        return MISSING
    text = md_escape(cell.display)
    if cell.bold and not row.bold:
        text = f"**{text}**"
    if cell.rank:
        text += str(cell.rank).translate(_SUBSCRIPTS)
    if cell.note:
        text += md_escape(cell.note)
    if rank_interval:
        text += " " + md_escape(row.rank_interval_display)
    if cell.ci_display:
        text += " " + md_escape(cell.ci_display)
    return text


def _md_meta(table: Table, row: Row, name: str) -> str:
    """Return a meta cell: escaped user text followed by its (trusted) marker and rank interval."""
    meta = row.meta.get(name)
    text = md_escape(meta.text) + meta.marker if meta else ""
    if table.rank_interval_in_meta(row, name):
        text = f"{text} {md_escape(row.rank_interval_display)}".lstrip()
    return text


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """Return the lines of a pipe table."""
    return [_md_row(header), _md_row(["---"] * len(header)), *(_md_row(r) for r in rows)]


def to_markdown(table: Table) -> str:
    """Return the table as a GitHub pipe table with its title and footnotes."""
    lead, measures, trail = _header_labels(table)
    header = [md_escape(label) for label in (*lead, *measures, *trail)]
    body = []
    for row in table.rows:
        cells = [_md_meta(table, row, name) for name in table.lead_columns]
        cells.extend(
            _md_value(
                row, row.cells.get(c.key), rank_interval=table.rank_interval_in_cell(row, c.key)
            )
            for c in table.columns
        )
        cells.extend(_md_meta(table, row, name) for name in table.trail_columns)
        if row.bold:
            cells = [f"**{c}**" if c else c for c in cells]
        body.append(cells)
    lines = [f"**{md_escape(table.title)}**", "", *_md_table(header, body)]
    # A pipe table has no rules between clusters, so their note goes; it shows the intervals.
    for note in shown_notes(table, intervals=True, rules=False):
        lines.extend(["", _md_paragraph(note)])
    if table.extra is not None:
        extra = table.extra
        lines.extend(["", f"**{md_escape(extra.title)}**", ""])
        lines.extend(
            _md_table(
                [md_escape(h) for h in extra.header],
                [[md_escape(v) for v in r] for r in extra.rows],
            )
        )
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------- LaTeX

_LATEX_MAP = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    # "[" and "*" right after a row's \\ would be read as its optional argument or star.
    "[": "{[}",
    "]": "{]}",
    "*": "{*}",
    "†": r"\dag{}",
    "‡": r"\ddag{}",
    "§": r"\S{}",
    "—": "---",
    "–": "--",
    "…": r"\ldots{}",
    "×": r"$\times$",
    "≥": r"$\geq$",
    "≤": r"$\leq$",
    "Δ": r"$\Delta$",
    "−": r"$-$",
}
_LATEX_MARKERS = {"*": "*", "†": r"\dag{}", "‡": r"\ddag{}"}


def latex_escape(text: str) -> str:
    """Return user text safe in LaTeX text mode.

    Every special is escaped, the text is put on one line, format characters (bidi overrides)
    are dropped, and "--" is kept from turning into a dash.
    """
    cleaned = "".join(ch for ch in _clean_text(text) if unicodedata.category(ch) != "Cf")
    out = []
    for i, ch in enumerate(cleaned):
        out.append(_LATEX_MAP.get(ch, ch))
        if ch == "-" and cleaned[i + 1 : i + 2] == "-":
            out.append("{}")
    return "".join(out)


def _latex_marker(marker: str) -> str:
    """Return a trusted row marker ("*", "†", "‡") in LaTeX."""
    return "".join(_LATEX_MARKERS.get(ch, latex_escape(ch)) for ch in marker)


def _latex_meta(table: Table, row: Row, name: str) -> str:
    """Return a meta cell in LaTeX, with the row's rank interval where it goes."""
    meta = row.meta.get(name)
    text = latex_escape(meta.text) + _latex_marker(meta.marker) if meta else ""
    if table.rank_interval_in_meta(row, name):
        text = f"{text} {_latex_rank_interval(row)}".lstrip()
    return text


def _latex_rank_interval(row: Row) -> str:
    """Return a row's rank interval as "(1--3)" (an en-dash in LaTeX)."""
    return latex_escape(row.rank_interval_display)


def _latex_value(row: Row, cell: Cell | None, *, rank_interval: bool = False) -> str:
    """Return a measure cell: \\textbf for bold, ``$_{n}$`` subindex, ``---`` if missing."""
    if cell is None:
        return "---"
    text = latex_escape(cell.display)
    if cell.bold and not row.bold:
        text = rf"\textbf{{{text}}}"
    if cell.rank:
        text += f"$_{{{cell.rank}}}$"
    if cell.note:
        text += rf"\textsuperscript{{{latex_escape(cell.note)}}}"
    if rank_interval:
        text += " " + _latex_rank_interval(row)
    return text


def _latex_lines(cells: list[str]) -> str:
    """Return one tabular row."""
    return " & ".join(cells) + r" \\"


def _latex_float(spec: str, head: list[str], body: list[str], title: str, notes: list[str]) -> str:
    """Return a complete booktabs ``table`` float."""
    lines = [
        r"\begin{table}[htbp]",
        r"\centering",
        rf"\caption{{{latex_escape(title)}}}",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        *head,
        r"\midrule",
        *body,
        r"\bottomrule",
        r"\end{tabular}",
    ]
    if notes:
        lines.append(r"\par\smallskip{\footnotesize\raggedright")
        lines.extend(latex_escape(note) + r"\par" for note in notes)
        lines.append("}")
    lines.append(r"\end{table}")
    return "\n".join(lines)


def to_latex(table: Table) -> str:
    """Return the table as a LaTeX ``table`` float (needs ``\\usepackage{booktabs}``)."""
    aligns = {"submission": "l", "team": "l", "run": "l"}
    spec = "".join(aligns.get(name, "r") for name in table.lead_columns)
    spec += "r" * len(table.columns)
    spec += "".join(aligns.get(name, "r") for name in table.trail_columns)

    head: list[str] = []
    lead, measures, trail = _header_labels(table)
    if table.grouped:
        groups = [""] * len(table.lead_columns)
        rules = []
        start = len(table.lead_columns) + 1
        for group, span in table.column_groups:
            if group is None:
                groups.extend([""] * span)
            else:
                groups.append(rf"\multicolumn{{{span}}}{{c}}{{{latex_escape(group)}}}")
                rules.append(rf"\cmidrule(lr){{{start}-{start + span - 1}}}")
            start += span
        groups.extend([""] * len(table.trail_columns))
        head.append(_latex_lines(groups))
        head.append(" ".join(rules))
        measures = [c.label for c in table.columns]
    head.append(_latex_lines([latex_escape(label) for label in (*lead, *measures, *trail)]))

    body = []
    previous = None
    for row in table.rows:
        if row.starts_cluster(previous):
            body.append(r"\midrule")  # a significance cluster starts
        previous = row
        cells = [_latex_meta(table, row, name) for name in table.lead_columns]
        cells.extend(
            _latex_value(
                row, row.cells.get(c.key), rank_interval=table.rank_interval_in_cell(row, c.key)
            )
            for c in table.columns
        )
        cells.extend(_latex_meta(table, row, name) for name in table.trail_columns)
        if row.bold:
            cells = [rf"\textbf{{{c}}}" if c else c for c in cells]
        body.append(_latex_lines(cells))

    parts = [
        "% requires \\usepackage{booktabs}",
        # The LaTeX table has rules between clusters but no intervals: say only what it shows.
        _latex_float(
            spec, head, body, table.title, shown_notes(table, intervals=False, rules=True)
        ),
    ]
    if table.extra is not None:
        extra = table.extra
        parts.append(
            _latex_float(
                "l" + "r" * (len(extra.header) - 1),
                [_latex_lines([latex_escape(h) for h in extra.header])],
                [_latex_lines([latex_escape(v) for v in r]) for r in extra.rows],
                extra.title,
                [],
            )
        )
    return "\n\n".join(parts) + "\n"
