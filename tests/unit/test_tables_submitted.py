"""Every style's table discloses each team's number of uploads ("best of N") in every export."""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import replace

import pytest

from leaderboard.tables import Entry, MeasureSpec, Table, Value, build_table
from leaderboard.tables.exports import to_csv, to_json, to_latex, to_markdown
from leaderboard.tables.html import to_html
from leaderboard.tasks.families.sts import style as sts_style  # noqa: F401 (registers "sts")
from leaderboard.tasks.families.trec import style as trec_style  # noqa: F401 (registers "trec")

MEASURES = (
    MeasureSpec("MAP", "MAP", official=True, display_decimals=4),
    MeasureSpec("MRR", "MRR", display_decimals=4),
)
STYLES = ("ranked", "trec", "sts")
TOOLTIP = "runs the team submitted to this set, replaced and withdrawn included"


def entry(team: str | None, run: str, slot: str | None, map_: str, submitted: int | None) -> Entry:
    values = {"MAP": Value(float(map_), map_), "MRR": Value(0.5, "0.5000")}
    kind = "run" if team is not None else "baseline"
    return Entry(
        kind=kind,
        team=team,
        run=run,
        slot=slot,
        values=values,
        label=f"{team}-{run}" if team else run,
        run_id=hash(run) % 1000,
        submitted=submitted,
    )


ENTRIES = [
    entry("Aurora", "a1", "primary", "0.7000", 4),
    entry("Aurora", "a2", "contrastive1", "0.6000", 4),
    entry("Borealis", "b1", "primary", "0.6500", 2),
    entry(None, "bm25", None, "0.5000", None),
]
#: What the "Runs" column shows on each row, by label (a baseline shows nothing).
SHOWN = {"Aurora-a1": "4", "Aurora-a2": "4", "Borealis-b1": "2", "bm25": ""}


def build(style: str, entries: list[Entry]) -> Table:
    return build_table(style, task="t", subtask="s", set="test", entries=entries, measures=MEASURES)


@pytest.mark.parametrize("style", STYLES)
def test_every_style_ends_with_the_runs_column(style: str) -> None:
    table = build(style, ENTRIES)
    assert table.trail_columns[-1] == "submitted"
    assert table.meta_label("submitted") == "Runs"
    assert {row.label: row.meta["submitted"].plain for row in table.rows} == SHOWN


@pytest.mark.parametrize("style", STYLES)
def test_the_json_rows_carry_the_count_and_baselines_none(style: str) -> None:
    rows = json.loads(to_json(build(style, ENTRIES)))["rows"]
    assert {r["label"]: r["submitted"] for r in rows} == {
        "Aurora-a1": 4,
        "Aurora-a2": 4,
        "Borealis-b1": 2,
        "bm25": None,
    }


@pytest.mark.parametrize("style", STYLES)
def test_csv_markdown_and_latex_end_with_the_count(style: str) -> None:
    table = build(style, ENTRIES)
    header, *body = list(csv.reader(io.StringIO(to_csv(table))))
    assert header[-1] == "Runs"
    labels = [row.label for row in table.rows]
    assert [line[-1] for line in body] == [SHOWN[label] for label in labels]

    # The first pipe table (STS adds a summary table after the ranking).
    block = next(b for b in to_markdown(table).split("\n\n") if b.startswith("|"))
    md = block.splitlines()
    assert md[0].endswith("| Runs |")
    assert [line.split("|")[-2].strip().strip("*") for line in md[2:]] == [
        SHOWN[label] for label in labels
    ]

    latex = to_latex(table)
    head = next(line for line in latex.splitlines() if line.endswith("Runs \\\\"))
    body_tex = latex.split("\\midrule", 1)[1].split("\\bottomrule", 1)[0]
    rows_tex = [line for line in body_tex.splitlines() if line.endswith("\\\\")]
    last = [re.sub(r"\\textbf\{(.*)\}", r"\1", r.rsplit("&", 1)[1][:-2].strip()) for r in rows_tex]
    assert last == [SHOWN[label] for label in labels]
    assert head.count("&") == rows_tex[0].count("&")
    # A count is a number: right-aligned, like the measures.
    spec = re.search(r"\\begin\{tabular\}\{(\w+)\}", latex)
    assert spec is not None and spec.group(1).endswith("r")


@pytest.mark.parametrize("style", STYLES)
def test_html_shows_the_column_with_its_tooltip(style: str) -> None:
    table = build(style, ENTRIES)
    html = to_html(table)
    assert f'<th scope="col" class="meta meta-submitted" title="{TOOLTIP}">Runs</th>' in html
    cells = re.findall(r'<td class="meta meta-submitted">(?:<strong>)?([^<]*)', html)
    assert cells == [SHOWN[row.label] for row in table.rows]


@pytest.mark.parametrize("style", STYLES)
def test_a_table_built_without_counts_is_as_before(style: str) -> None:
    table = build(style, [replace(e, submitted=None) for e in ENTRIES])
    assert "submitted" not in table.trail_columns
    assert all("submitted" not in row for row in json.loads(to_json(table))["rows"])
    assert "Runs" not in to_csv(table) and "meta-submitted" not in to_html(table)
