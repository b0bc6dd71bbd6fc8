"""Exports of the table model: JSON shape, CSV, Markdown and LaTeX, with hostile user text."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from leaderboard.tables import Entry, MeasureSpec, Table, Value, build_table
from leaderboard.tables.exports import (
    csv_safe,
    latex_escape,
    md_escape,
    table_to_dict,
    to_csv,
    to_json,
    to_latex,
    to_markdown,
)
from leaderboard.tasks.families.sts import style as sts_style  # noqa: F401 (registers "sts")
from leaderboard.tasks.families.trec import style as trec_style  # noqa: F401 (registers "trec")
from tests.helpers.tables import (
    HOSTILE,
    RLO,
    STS_MEASURES,
    cqa_table,
    hostile_tables,
    sts_table,
    trec_table,
)

# ------------------------------------------------------------------------------------------ JSON

SPEC_TOP = ["task", "subtask", "set", "official", "frozen_at", "columns", "rows"]
SPEC_ROW = [
    "kind",
    "team",
    "run",
    "slot",
    "label",
    "rank",
    "rank_marker",
    "team_rank",
    "late",
    "cells",
]


def test_json_has_the_spec_keys_in_the_spec_order() -> None:
    data = table_to_dict(cqa_table())
    assert list(data)[:7] == SPEC_TOP
    assert data["task"] == "semeval2016-task3"
    assert (data["subtask"], data["set"], data["official"], data["frozen_at"]) == (
        "A",
        "test",
        False,
        None,
    )
    assert data["columns"][0] == {"key": "MAP", "label": "MAP", "group": None, "official": True}
    assert [c["key"] for c in data["columns"]] == ["MAP", "AvgRec", "MRR", "P", "R", "F1", "Acc"]
    for row in data["rows"]:
        assert list(row)[:10] == SPEC_ROW
        assert list(row["cells"]) == ["MAP", "AvgRec", "MRR", "P", "R", "F1", "Acc"]


def test_json_row_and_cell_values() -> None:
    rows = {row["label"]: row for row in table_to_dict(cqa_table())["rows"]}
    aurora = rows["Aurora-primary"]
    assert {k: aurora[k] for k in SPEC_ROW[:-1]} == {
        "kind": "run",
        "team": "Aurora",
        "run": "primary",
        "slot": "primary",
        "label": "Aurora-primary",
        "rank": 1,
        "rank_marker": "",
        "team_rank": 1,
        "late": False,
    }
    cell = aurora["cells"]["MAP"]
    assert {k: cell[k] for k in ("display", "rank")} == {"display": "71.42", "rank": 1}
    assert cell["value"] == pytest.approx(71.421, abs=1e-9)
    baseline = rows["Baseline 1 (IR)"]
    assert (baseline["kind"], baseline["team"], baseline["rank"]) == ("baseline", None, None)
    assert baseline["cells"]["F1"] is None
    assert baseline["cells"]["MAP"]["rank"] is None
    contrastive = rows["Aurora-contrastive1"]
    assert contrastive["rank"] is None and contrastive["cells"]["MAP"]["rank"] is None


def test_json_markers_for_late_and_baseline_rows_sts() -> None:
    rows = table_to_dict(sts_table())["rows"]
    dune = next(r for r in rows if r["team"] == "Dune")
    assert (dune["rank"], dune["rank_marker"], dune["late"], dune["team_rank"]) == (
        3,
        "*",
        True,
        None,
    )
    baseline = rows[-1]
    assert (baseline["kind"], baseline["rank"], baseline["rank_marker"]) == ("baseline", 6, "†")


def test_json_groups_for_trec() -> None:
    data = table_to_dict(trec_table())
    assert data["columns"][3] == {
        "key": "lenient/MAP",
        "label": "MAP",
        "group": "Lenient",
        "official": False,
    }
    first = data["rows"][0]
    assert first["cells"]["automatic/MAP"]["display"] == "0.1902"
    assert first["cells"]["automatic/MAP"]["bold"] is True


def test_json_text_round_trips_and_hides_html_specials() -> None:
    for table in hostile_tables():
        text = to_json(table)
        assert json.loads(text) == table_to_dict(table)
        assert "<" not in text and ">" not in text and "&" not in text
        assert "فريق" in text  # UTF-8 kept, not \u-escaped


def test_json_non_finite_value_becomes_null() -> None:
    measures = (MeasureSpec("MAP", "MAP", official=True),)
    entry = Entry("run", "A", "primary", "primary", {"MAP": Value(float("nan"), "0.0000")})
    table = build_table(
        "semeval-cqa", task="t", subtask="A", set="test", entries=[entry], measures=measures
    )
    data = json.loads(to_json(table))
    assert data["rows"][0]["cells"]["MAP"]["value"] is None


def test_json_extra_summary_for_sts() -> None:
    extra = table_to_dict(sts_table())["extra"]
    assert extra["header"] == ["Set", "Best", "Median", "Δ"]
    assert extra["rows"][0] == ["ALL", "0.77469", "0.76402", "0.01067"]


# ------------------------------------------------------------------------------------------- CSV


def read_csv(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def test_csv_cqa_has_rank_columns_and_empty_missing_cells() -> None:
    rows = read_csv(to_csv(cqa_table()))
    assert rows[0] == [
        "#",
        "Submission",
        *[x for m in ("MAP", "AvgRec", "MRR", "P", "R", "F1", "Acc") for x in (m, f"{m} rank")],
    ]
    assert rows[1][:4] == ["", "Aurora-contrastive1", "72.05", ""]
    assert rows[2] == [
        "1",
        "Aurora-primary",
        *["71.42", "1", "84.90", "2", "79.88", "1", "61.30", "2"],
        *["55.02", "3", "57.99", "3", "70.11", "2"],
    ]
    assert rows[6] == ["", "Baseline 1 (IR)", "60.12", "", "73.05", "", "68.44", ""] + [""] * 8
    assert len(rows) == 10


def test_csv_sts_has_no_rank_columns_and_keeps_markers() -> None:
    rows = read_csv(to_csv(sts_table()))
    assert rows[0] == ["Team", "Run", "ALL", *STS_MEASURES_LABELS, "Run Rank", "Team Rank"]
    assert rows[3] == [
        "Dune",
        "run1*",
        *["0.76550", "0.69904", "0.78560", "0.83322", "0.83971", "0.66118"],
        *["3*", ""],
    ]
    assert rows[7][0] == "baseline†" and rows[7][-2:] == ["6†", ""]


STS_MEASURES_LABELS = [m.label for m in STS_MEASURES[1:]]


def test_csv_trec_labels_every_grouped_column() -> None:
    header = read_csv(to_csv(trec_table()))[0]
    assert header[:6] == [
        "Team",
        "Run",
        "Automatic: MAP",
        "Automatic: MAP rank",
        "Automatic: R-Prec",
        "Automatic: R-Prec rank",
    ]
    assert header[-2:] == ["Manual: MRR", "Manual: MRR rank"]


def test_csv_neutralises_formulas_but_keeps_negative_numbers() -> None:
    assert csv_safe("=cmd") == "'=cmd"
    assert csv_safe("+SUM(A1)") == "'+SUM(A1)"
    assert csv_safe("-1+1") == "'-1+1"
    assert csv_safe("@x") == "'@x"
    assert csv_safe("\tx") == "'\tx"
    assert csv_safe("\rx") == "'\rx"
    assert csv_safe("-0.01234") == "-0.01234"
    assert csv_safe("Aurora") == "Aurora"
    assert csv_safe("") == ""


def test_csv_hostile_names() -> None:
    cqa, sts, _ = hostile_tables()
    rows = read_csv(to_csv(cqa))
    submissions = [row[1] for row in rows[1:]]
    assert "'=cmd|' /C calc'!A0-primary" in submissions
    assert "two\nlines\r\nhere-primary" in submissions  # quoted by the CSV writer, intact
    assert "W" * 10_240 + "-primary" in submissions
    sts_rows = read_csv(to_csv(sts))
    formula = next(r for r in sts_rows if r[0].startswith("'="))
    assert formula[:2] == ["'=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0"]
    assert formula[7] == "-0.01234"  # a number, left as is
    assert all(len(row) == len(sts_rows[0]) for row in sts_rows)


BIDI_CONTROLS = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"


def test_csv_drops_bidi_controls() -> None:
    assert csv_safe(f"abc{RLO}def", text=True) == "abcdef"
    assert csv_safe(f"\u2067{BIDI_CONTROLS}فريق\u2069") == "فريق"
    # Left-to-right and right-to-left marks are no embeddings: they stay.
    assert csv_safe("a\u200fb\u200e") == "a\u200fb\u200e"


def test_csv_bidi_control_cannot_hide_a_formula() -> None:
    assert csv_safe(f"{RLO}=cmd|' /C calc'!A0", text=True) == "'=cmd|' /C calc'!A0"
    assert csv_safe("\u2066-1+1\u2069") == "'-1+1"
    assert csv_safe("\u2066-0.5\u2069") == "-0.5"  # a number once the isolate is gone


def test_csv_hostile_names_lose_their_bidi_controls() -> None:
    for table in hostile_tables():
        text = to_csv(table)
        assert not set(text) & set(BIDI_CONTROLS), table.style
        cells = [cell for row in read_csv(text) for cell in row]
        assert any(cell.startswith("abcdef") for cell in cells), table.style
        assert any("فريق" in cell for cell in cells), table.style


# -------------------------------------------------------------------------------------- Markdown

UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def table_lines(markdown: str) -> list[str]:
    return [line for line in markdown.splitlines() if line.startswith("|")]


def test_markdown_escapes_inline_specials() -> None:
    assert md_escape("a|b") == "a\\|b"
    assert md_escape("<script>") == "\\<script\\>"
    assert md_escape("**x** _y_ `z` [l](u) ~~s~~") == (
        "\\*\\*x\\*\\* \\_y\\_ \\`z\\` \\[l\\](u) \\~\\~s\\~\\~"
    )
    assert md_escape("back\\slash") == "back\\\\slash"
    assert md_escape("R&D $5") == "R\\&D \\$5"
    assert md_escape("two\nlines\r\n  here") == "two lines here"


def test_markdown_drops_bidi_overrides_and_isolates_rtl_text() -> None:
    assert md_escape(f"abc{RLO}def") == "abcdef"
    assert md_escape("فريق") == "\u2068فريق\u2069"
    assert md_escape(f"\u2069{RLO}فريق") == "\u2068فريق\u2069"


def test_markdown_hostile_rows_keep_their_shape() -> None:
    for table in hostile_tables():
        markdown = to_markdown(table)
        lines = table_lines(markdown)
        header_pipes = len(UNESCAPED_PIPE.findall(lines[0]))
        main_rows = lines[: 2 + len(table.rows)]
        assert all(len(UNESCAPED_PIPE.findall(line)) == header_pipes for line in main_rows)
        assert "<script>" not in markdown
        assert RLO not in markdown
        assert "W" * 10_240 in markdown


def test_markdown_footnotes_cannot_become_lists() -> None:
    markdown = to_markdown(sts_table())
    assert (
        "\n\n\\* late or corrected run, ranked as if submitted on time without displacing "
        "on-time runs\n" in markdown
    )
    assert "\n\n† baseline, ranked the same way\n" in markdown


def test_markdown_bold_cell_with_rank_and_bold_row() -> None:
    trec = to_markdown(trec_table())
    assert "| **0.6120**₁ |" in trec
    cqa = to_markdown(cqa_table())
    assert "| **1** | **Aurora-primary** | **71.42₁** |" in cqa


def test_markdown_cell_rank_uses_unicode_subscript_digits_for_two_digit_ranks() -> None:
    measures = (MeasureSpec("MAP", "MAP", official=True, scale=100),)
    entries = [
        Entry("run", f"T{i:02d}", "primary", "primary", {"MAP": Value(i, f"0.{i:02d}00")})
        for i in range(1, 13)
    ]
    table = build_table(
        "semeval-cqa", task="t", subtask="A", set="test", entries=entries, measures=measures
    )
    assert "| **12** | **T01-primary** | **1.00₁₂** |" in to_markdown(table)


# ----------------------------------------------------------------------------------------- LaTeX

LATEX_SPECIALS = set("\\&%$#_{}~^")


def strip_escapes(text: str) -> str:
    """Remove the escape sequences latex_escape produces; what is left must hold no special."""
    for seq in (
        r"\textbackslash{}",
        r"\textasciitilde{}",
        r"\textasciicircum{}",
        r"\textless{}",
        r"\textgreater{}",
        r"\textbar{}",
        r"\dag{}",
        r"\ddag{}",
        r"\&",
        r"\%",
        r"\$",
        r"\#",
        r"\_",
        r"\{",
        r"\}",
        "{[}",
        "{]}",
        "{*}",
        "-{}",
    ):
        text = text.replace(seq, "")
    return text


def split_cells(line: str) -> list[str]:
    """Split a tabular row on & outside braces, ignoring escaped \\&."""
    cells, depth, current, i = [], 0, "", 0
    while i < len(line):
        ch = line[i]
        if ch == "\\" and i + 1 < len(line):
            current += line[i : i + 2]
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "&" and depth == 0:
            cells.append(current)
            current = ""
        else:
            current += ch
        i += 1
    cells.append(current)
    return cells


def column_count(line: str) -> int:
    body = line.removesuffix(r"\\").strip()
    total = 0
    for cell in split_cells(body):
        span = re.match(r"\s*\\multicolumn\{(\d+)\}", cell)
        total += int(span.group(1)) if span else 1
    return total


def brace_balance_ok(text: str) -> bool:
    depth = 0
    i = 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth < 0:
                return False
        i += 1
    return depth == 0


def tabulars(latex: str) -> list[tuple[str, list[str]]]:
    """Return (column spec, row lines) of every tabular in ``latex``."""
    found = []
    for match in re.finditer(r"\\begin\{tabular\}\{([^}]*)\}\n(.*?)\\end\{tabular\}", latex, re.S):
        lines = [
            line
            for line in match.group(2).splitlines()
            if line.endswith(r"\\")  # rows only, not rules
        ]
        found.append((match.group(1), lines))
    return found


def check_structure(latex: str) -> None:
    assert latex.count(r"\begin{table}") == latex.count(r"\end{table}") >= 1
    assert brace_balance_ok(latex)
    assert len(re.findall(r"(?<!\\)\$", latex)) % 2 == 0  # math shifts pair up
    for spec, rows in tabulars(latex):
        assert rows
        assert all(column_count(row) == len(spec) for row in rows), spec
    for rule in (r"\toprule", r"\midrule", r"\bottomrule"):
        assert rule in latex


def test_latex_escape_leaves_no_raw_special() -> None:
    for text in HOSTILE.values():
        escaped = latex_escape(text)
        assert not LATEX_SPECIALS & set(strip_escapes(escaped)), text
        assert "\n" not in escaped and RLO not in escaped
    assert latex_escape("a--b") == "a-{}-b"
    assert latex_escape("x_1 & 50%") == r"x\_1 \& 50\%"


def test_latex_structure_of_the_three_mocks() -> None:
    for table in (cqa_table(), sts_table(), trec_table()):
        check_structure(to_latex(table))


def test_latex_cqa_content() -> None:
    latex = to_latex(cqa_table())
    assert r"\begin{tabular}{rlrrrrrrr}" in latex
    assert r"\# & Submission & MAP & AvgRec & MRR & P & R & F1 & Acc \\" in latex
    assert (
        r"\textbf{1} & \textbf{Aurora-primary} & \textbf{71.42$_{1}$} & \textbf{84.90$_{2}$}"
        in latex
    )
    assert r" & Baseline 1 (IR) & 60.12 & 73.05 & 68.44 & --- & --- & --- & --- \\" in latex
    assert r"MAP, AvgRec, P, R, F1, Acc $\times$100;" in latex


def test_latex_trec_grouped_header() -> None:
    latex = to_latex(trec_table())
    assert (
        r" &  & \multicolumn{3}{c}{Automatic} & \multicolumn{3}{c}{Lenient} & "
        r"\multicolumn{3}{c}{Manual} \\"
    ) in latex
    assert r"\cmidrule(lr){3-5} \cmidrule(lr){6-8} \cmidrule(lr){9-11}" in latex
    assert r"Team & Run & MAP & R-Prec & MRR & MAP & R-Prec & MRR & MAP & R-Prec & MRR \\" in latex
    assert r"\textbf{0.6120}$_{1}$" in latex
    assert r"0.1874$_{1}$" in latex


def test_latex_sts_markers_and_summary_float() -> None:
    latex = to_latex(sts_table())
    assert r"baseline\dag{} & cosine-bow & 0.50977" in latex
    assert r"& 6\dag{} &  \\" in latex
    assert r"Dune & run1* & 0.76550" in latex
    assert r"\caption{Summary}" in latex
    assert r"ALL & 0.77469 & 0.76402 & 0.01067 \\" in latex
    assert r"\{*\}" not in latex


def test_latex_hostile_tables_are_well_formed() -> None:
    for table in hostile_tables():
        latex = to_latex(table)
        check_structure(latex)
        assert "<script>" not in latex
        assert RLO not in latex
        assert r"\textless{}script\textgreater{}" in latex


def test_exports_say_only_what_they_show() -> None:
    from dataclasses import replace

    from leaderboard.tables.model import INTERVAL_NOTE, shown_notes

    cluster = (
        "Rules separate significance clusters (paired bootstrap, holm-adjusted p < 0.05): each "
        "cluster's first run is significantly worse than every run of the cluster above. "
        + INTERVAL_NOTE
    )
    table = replace(cqa_table(), footnotes=("Ranks note.", cluster))
    latex = to_latex(table)
    assert "Rules separate significance clusters" in latex and "bootstrap intervals" not in latex
    markdown = to_markdown(table)
    assert "Rules separate" not in markdown and INTERVAL_NOTE in markdown
    assert shown_notes(table, intervals=True, rules=True) == ["Ranks note.", cluster]
    assert shown_notes(table, intervals=False, rules=False) == ["Ranks note."]


def test_unscaled_measures_get_no_meaningless_note() -> None:
    table = build_table(
        "semeval-cqa",
        task="t",
        subtask="A",
        set="test",
        entries=[Entry("run", "T", "primary", "primary", {"F1": Value(0.5, "0.5000")})],
        measures=(MeasureSpec("F1", "F1", official=True),),
    )
    assert not any("stored" in note for note in table.footnotes)
    assert "stored" not in to_latex(table) and "stored" not in to_markdown(table)


def with_rank_intervals(table: Table) -> Table:
    """Return the table with a rank interval on every ranked row: (rank, rank + 1)."""
    from dataclasses import replace

    rows = tuple(
        replace(row, rank_interval=(row.rank, row.rank + 1)) if row.rank else row
        for row in table.rows
    )
    return replace(table, rows=rows)


def test_rank_intervals_go_beside_the_rank_in_every_export() -> None:
    from leaderboard.tables.html import to_html

    table = with_rank_intervals(cqa_table())
    first = next(row for row in table.rows if row.rank == 1)
    data = table_to_dict(table)
    for row in data["rows"]:
        assert list(row)[:10] == SPEC_ROW
        if row["rank"]:
            # Appended after every other key.
            assert list(row)[-1] == "rank_interval"
            assert row["rank_interval"] == [row["rank"], row["rank"] + 1]
        else:
            assert "rank_interval" not in row
    # In the rank column, after the rank: "1 (1–2)" (the ranked row is bold); LaTeX with "--".
    assert f"| **1 (1–2)** | **{md_escape(first.label)}** |" in to_markdown(table)
    assert rf"\textbf{{1 (1--2)}} & \textbf{{{latex_escape(first.label)}}} &" in to_latex(table)
    html = to_html(table)
    assert (
        '<strong>1</strong> <span class="rank-interval" title="rank interval: 2.5th–97.5th percentile of the '
        'run&#39;s rank over bootstrap resamples of the units">(1–2)</span></td>'
    ) in html
    assert html.count('class="rank-interval"') == sum(1 for r in table.rows if r.rank)
    # Without an analysis nothing is added.
    assert "rank-interval" not in to_html(cqa_table())
    assert "(1–2)" not in to_markdown(cqa_table())


def test_rank_intervals_go_in_the_run_rank_column_or_after_the_official_value() -> None:
    sts = with_rank_intervals(sts_table())
    ranked = next(row for row in sts.rows if row.rank == 1)
    md = to_markdown(sts)
    assert "| 1 (1–2) |" in md and md.count("(1–2)") == sum(1 for r in sts.rows if r.rank == 1)
    # TREC shows ranks as subscripts only: the interval follows the official value's.
    trec = with_rank_intervals(trec_table())
    top = next(row for row in trec.rows if row.rank == 1)
    cell = top.cells[trec.official_key]
    assert cell is not None and cell.rank == 1
    assert f"{cell.display}₁ (1–2)" in to_markdown(trec)
    assert f"{latex_escape(cell.display)}$_{{1}}$ (1--2)" in to_latex(trec)
    assert ranked.meta["run_rank"].text == "1"
