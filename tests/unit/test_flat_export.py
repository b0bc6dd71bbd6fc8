"""Flat rows are written as JSON, CSV, Markdown and LaTeX by one exporter."""

from __future__ import annotations

from leaderboard.tables.flat import FLAT_FORMATS, FlatColumn, FlatExport

ROWS = [
    {"team": "=Evil|Team", "size": 3, "tags": ["a/b", "-c/d"], "late": True, "kept": True},
    {"team": "Hidden", "size": 1, "tags": [], "late": False, "kept": False},
    {"team": "a--b_c", "size": 12, "tags": ["x/y"], "late": False, "kept": True},
]
EXPORT = FlatExport(
    fields=("team", "size", "tags", "late"),
    markdown=(
        FlatColumn("Team", lambda r: r["team"], marked=lambda r: r["late"]),
        FlatColumn("Size", lambda r: r["size"], "r"),
    ),
    latex=(
        FlatColumn("Team", lambda r: r["team"], marked=lambda r: r["late"]),
        FlatColumn("Tags", lambda r: ", ".join(r["tags"]), "p{3cm}"),
        FlatColumn("Size", lambda r: r["size"], "r"),
    ),
    included=lambda r: r["kept"],
)


def test_csv_holds_every_row_and_field_with_formulas_neutralised() -> None:
    assert EXPORT.to_csv(ROWS) == (
        "team,size,tags,late\n'=Evil|Team,3,a/b -c/d,True\nHidden,1,,False\na--b_c,12,x/y,False\n"
    )


def test_json_holds_every_row_as_given() -> None:
    assert EXPORT.to_json(ROWS[1:2]) == (
        '[\n {\n  "team": "Hidden",\n  "size": 1,\n  "tags": [],\n  "late": false,\n'
        '  "kept": false\n }\n]\n'
    )


def test_markdown_shows_the_kept_rows_escaped_marked_and_aligned() -> None:
    assert EXPORT.to_markdown(ROWS) == (
        "| Team | Size |\n| --- | ---: |\n| =Evil\\|Team* | 3 |\n| a--b\\_c | 12 |\n"
    )


def test_latex_shows_the_kept_rows_escaped_and_marked_in_a_booktabs_table() -> None:
    assert EXPORT.to_latex(ROWS) == "\n".join(
        [
            "\\begin{table}[t]",
            "\\centering",
            "\\begin{tabular}{lp{3cm}r}",
            "\\toprule",
            "Team & Tags & Size \\\\",
            "\\midrule",
            "=Evil\\textbar{}Team$^{*}$ & a/b, -c/d & 3 \\\\",
            "a-{}-b\\_c & x/y & 12 \\\\",
            "\\bottomrule",
            "\\end{tabular}",
            "\\end{table}",
            "",
        ]
    )


def test_writers_are_keyed_by_every_format() -> None:
    writers = EXPORT.writers()
    assert tuple(writers) == FLAT_FORMATS
    assert writers["md"](ROWS[1:2]) == "| Team | Size |\n| --- | ---: |\n"
