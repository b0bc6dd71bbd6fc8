"""Flat rows (one record a line, no ranks) written as JSON, CSV, Markdown and LaTeX tables.

The run listing and the participants table of the overview paper are such rows. JSON and CSV
hold every field; Markdown and LaTeX show the columns a paper prints, for the rows it shows.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from leaderboard.tables.exports import csv_safe, latex_escape, md_escape

#: A record of a flat export, keyed by field.
FlatRow = Mapping[str, Any]
#: The formats a flat export is written in, by file extension.
FLAT_FORMATS = ("json", "csv", "md", "latex")
#: The trusted marker a marked cell gets (e.g. a late or corrected run), per format.
MD_MARK = "*"
LATEX_MARK = "$^{*}$"


def _everything(row: FlatRow) -> bool:
    return True


@dataclass(frozen=True)
class FlatColumn:
    """A column Markdown and LaTeX show: its heading, its cell and how it is set.

    A cell that is a string is user text, escaped; any other value (a count) is written as is.
    """

    heading: str
    cell: Callable[[FlatRow], Any]
    #: The LaTeX column type (``l``, ``r``, ``p{…}``); ``r`` also right-aligns in Markdown.
    kind: str = "l"
    #: Whether the row's cell gets the trusted marker; None: never.
    marked: Callable[[FlatRow], bool] | None = None


def _cell_text(value: Any, escape: Callable[[str], str]) -> str:
    return escape(value) if isinstance(value, str) else str(value)


def _csv_cell(value: Any) -> str:
    """Return a CSV field: user text neutralised, a list of slugs joined by spaces, else as is."""
    if isinstance(value, str):
        return csv_safe(value, text=True)
    if isinstance(value, list):
        return " ".join(value)
    return str(value)


@dataclass(frozen=True)
class FlatExport:
    """How a kind of flat rows is exported: its fields, its printed columns and rows."""

    #: The fields of JSON records and CSV columns, in order (the CSV header).
    fields: tuple[str, ...]
    markdown: tuple[FlatColumn, ...]
    latex: tuple[FlatColumn, ...]
    #: Which rows Markdown and LaTeX show (JSON and CSV hold every row).
    included: Callable[[FlatRow], bool] = _everything

    def to_json(self, rows: Sequence[FlatRow]) -> str:
        """Return the rows as a JSON list of records."""
        return json.dumps(rows, ensure_ascii=False, indent=1) + "\n"

    def to_csv(self, rows: Sequence[FlatRow]) -> str:
        """Return the rows as CSV with a header of field names; formula-like text neutralised."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(self.fields)
        for row in rows:
            writer.writerow([_csv_cell(row[f]) for f in self.fields])
        return out.getvalue()

    def to_markdown(self, rows: Sequence[FlatRow]) -> str:
        """Return the included rows as a Markdown pipe table, user text escaped."""
        columns = self.markdown
        lines = [
            "| " + " | ".join(c.heading for c in columns) + " |",
            "| " + " | ".join("---:" if c.kind == "r" else "---" for c in columns) + " |",
        ]
        for row in filter(self.included, rows):
            cells = [
                _cell_text(c.cell(row), md_escape) + (MD_MARK if c.marked and c.marked(row) else "")
                for c in columns
            ]
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines) + "\n"

    def to_latex(self, rows: Sequence[FlatRow]) -> str:
        """Return the included rows as a booktabs table, user text escaped."""
        columns = self.latex
        body = [
            " & ".join(
                _cell_text(c.cell(row), latex_escape)
                + (LATEX_MARK if c.marked and c.marked(row) else "")
                for c in columns
            )
            + " \\\\"
            for row in filter(self.included, rows)
        ]
        return "\n".join(
            [
                "\\begin{table}[t]",
                "\\centering",
                "\\begin{tabular}{" + "".join(c.kind for c in columns) + "}",
                "\\toprule",
                " & ".join(c.heading for c in columns) + " \\\\",
                "\\midrule",
                *body,
                "\\bottomrule",
                "\\end{tabular}",
                "\\end{table}",
                "",
            ]
        )

    def writers(self) -> dict[str, Callable[[Sequence[FlatRow]], str]]:
        """Return the writer of each format by file extension (``FLAT_FORMATS``)."""
        return {
            "json": self.to_json,
            "csv": self.to_csv,
            "md": self.to_markdown,
            "latex": self.to_latex,
        }
