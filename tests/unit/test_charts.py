"""Analysis charts: valid SVG and PDF, the same bytes for the same numbers, user text escaped."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from leaderboard import charts

HOSTILE = '<script>alert("x")</script> & Ω'


def test_measure_chart_is_reproducible_svg_with_every_label() -> None:
    labels = ["Aurora-primary", HOSTILE, "Baseline"]
    args = (labels, [0.8, 0.7, 0.5], [(0.75, 0.85), None, (0.45, 0.55)], [1, 1, 2])
    svg = charts.measure_chart(*args, measure="MAP")
    assert svg == charts.measure_chart(*args, measure="MAP")
    root = ET.fromstring(svg)  # well-formed XML
    text = "".join(root.itertext())
    for label in labels:
        assert label in text
    assert b"<script" not in svg
    assert "MAP (95 % bootstrap interval)" in text


def test_pdf_downloads_are_pdf_and_reproducible() -> None:
    pdf = charts.difference_chart(["q1", "q2"], [-0.2, 0.1], measure="AP", fmt="pdf")
    assert pdf.startswith(b"%PDF-")
    assert pdf == charts.difference_chart(["q1", "q2"], [-0.2, 0.1], measure="AP", fmt="pdf")
    with pytest.raises(ValueError, match="unknown chart format"):
        charts.difference_chart(["q1"], [0.0], measure="AP", fmt="png")


def test_pvalue_matrix_marks_significant_cells() -> None:
    labels = ["A", "B", "C"]
    matrix = [[None, 0.01, 0.2], [None, None, 0.04], [None, None, None]]
    svg = charts.pvalue_matrix(labels, matrix, alpha=0.05)
    text = "".join(ET.fromstring(svg).itertext())
    assert "0.01" in text and "0.2" in text and "0.04" in text
    assert "adjusted p (outlined: < 0.05)" in text
    # Two cells below alpha get an outline each (red rectangles).
    assert svg.count(b"stroke: #b03a2e") == 2


MATH = ["$\\undefinedcmd$", "{" * 50 + "x", "a $x^2$ b", "50 $ and 20 $"]


@pytest.mark.parametrize("fmt", charts.FORMATS)
def test_labels_are_plain_text_never_mathtext(fmt: str) -> None:
    # matplotlib parses "$...$" as mathtext: an unknown command raised, 50 "{" recursed.
    labels = [*MATH, "plain"]
    intervals: list[tuple[float, float] | None] = [None] * len(labels)
    measure = charts.measure_chart(
        labels, [0.1 * i for i in range(5)], intervals, [1, 1, 2, 2, 3], measure="$M$", fmt=fmt
    )
    matrix = charts.pvalue_matrix(labels, [[None, *[0.5] * 4] for _ in labels], alpha=0.05, fmt=fmt)
    diff = charts.difference_chart(labels, [0.1, -0.1, 0.2, 0.0, 0.3], measure="$M$", fmt=fmt)
    if fmt == "svg":
        for svg in (measure, matrix, diff):
            text = "".join(ET.fromstring(svg).itertext())
            for label in labels:
                assert label in text
        assert "$M$ (95 % bootstrap interval)" in "".join(ET.fromstring(measure).itertext())


def test_progress_chart_names_teams_as_plain_text_and_is_reproducible() -> None:
    teams = [
        (HOSTILE, [("2016-01-05T12:00:00Z", 0.4), ("2016-01-07T12:00:00Z", 0.6)]),
        (MATH[0], [("2016-01-06T12:00:00Z", 0.5)]),
        *((f"Team {n}", [("2016-01-06T00:00:00Z", 0.1 * n)]) for n in range(3, 16)),
    ]
    svg = charts.progress_chart(teams, measure="MAP")
    assert svg == charts.progress_chart(teams, measure="MAP")
    text = "".join(ET.fromstring(svg).itertext())
    assert HOSTILE in text and MATH[0] in text and b"<script" not in svg
    assert "best MAP so far (higher is better)" in text
    # Twelve teams are named; the other three are one grey entry of the legend.
    assert "Team 12" in text and "Team 13" not in text and "3 more teams" in text
    lower = charts.progress_chart(teams[:1], measure="MAE", lower_is_better=True, fmt="pdf")
    assert lower.startswith(b"%PDF-")
