"""Reproduce the three table mocks of the task specs exactly from fictional entries.

The expected tables below are copied verbatim from section 8 of the task specs
(/work/shared/spec/tasks/*.md). The entries were derived by hand so that the official strings
display as the mock shows; ranks, bold and order must then come out as in the mock.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from leaderboard.tables import Entry, MeasureSpec, Table, Value, build_table
from leaderboard.tables.exports import to_markdown
from leaderboard.tasks.families.cqa import SCALE_NOTE
from leaderboard.tasks.families.sts import style as sts_style  # noqa: F401 (registers "sts")
from leaderboard.tasks.families.trec import style as trec_style  # noqa: F401 (registers "trec")

# ------------------------------------------------------------------------------------ helpers


def parse_pipe_table(text: str) -> list[list[str]]:
    """Return the cells of every pipe-table line of ``text`` (separator lines dropped)."""
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("|"):
            continue
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line[1:-1])]
        if all(re.fullmatch(r":?-+:?", cell) for cell in cells):
            continue
        rows.append(cells)
    return rows


def first_pipe_table(text: str) -> list[list[str]]:
    """Return the cells of the first pipe table in ``text`` only."""
    block = []
    started = False
    for line in text.splitlines():
        if line.startswith("|"):
            started = True
            block.append(line)
        elif started:
            break
    return parse_pipe_table("\n".join(block))


def vals(official: Mapping[str, str], raw_offset: float = 0.0) -> dict[str, Value]:
    """Return values with the given official strings; raw = official + ``raw_offset``."""
    return {key: Value(float(text) + raw_offset, text) for key, text in official.items()}


# ----------------------------------------------------------------------------------- CQA mock

CQA_MOCK = """
| # | Submission | MAP | AvgRec | MRR | P | R | F1 | Acc |
|---|---|---|---|---|---|---|---|---|
|   | Aurora-contrastive1 | 72.05 | 85.61 | 80.47 | 60.11 | 54.30 | 57.06 | 69.80 |
| **1** | **Aurora-primary** | **71.42₁** | **84.90₂** | **79.88₁** | **61.30₂** | **55.02₃** | **57.99₃** | **70.11₂** |
| **1** | **Borealis-primary** | **71.42₁** | **85.37₁** | **78.40₂** | **58.75₃** | **66.81₁** | **62.52₁** | **69.45₃** |
| **3** | **Cobalt-primary** | **68.90₃** | **84.90₂** | **77.12₃** | **64.02₁** | **57.60₂** | **60.64₂** | **71.33₁** |
|   | Cobalt-contrastive2 | 65.31 | 82.04 | 75.66 | 66.40 | 41.27 | 50.90 | 68.02 |
|   | Baseline 1 (IR) | 60.12 | 73.05 | 68.44 | — | — | — | — |
|   | Baseline 2 (random) | 51.37 | 65.80 | 57.92 | 39.88 | 74.91 | 52.05 | 44.70 |
|   | Baseline 3 (all 'true') | — | — | — | 40.00 | 100.00 | 57.14 | 40.00 |
|   | Baseline 4 (all 'false') | — | — | — | — | — | — | 60.00 |
"""  # noqa: E501

CQA_MEASURES = (
    MeasureSpec("MAP", "MAP", official=True, scale=100),
    MeasureSpec("AvgRec", "AvgRec", scale=100),
    MeasureSpec("MRR", "MRR", scale=1),
    MeasureSpec("P", "P", scale=100),
    MeasureSpec("R", "R", scale=100),
    MeasureSpec("F1", "F1", scale=100),
    MeasureSpec("Acc", "Acc", scale=100),
)


def cqa_run(team: str, slot: str, offset: float, *official: str, **kw: object) -> Entry:
    """Return a CQA run with the 7 official strings in column order."""
    keys = [m.key for m in CQA_MEASURES]
    values = vals(dict(zip(keys, official, strict=True)), offset)
    return Entry(kind="run", team=team, run=slot, slot=slot, values=values, **kw)  # type: ignore[arg-type]


def cqa_baseline(label: str, order: int, **official: str) -> Entry:
    """Return a CQA baseline showing only the given measures."""
    return Entry(
        kind="baseline",
        team=None,
        run=label.lower(),
        slot=None,
        values=vals(official),
        label=label,
        baseline_order=order,
    )


def cqa_entries() -> list[Entry]:
    """Return the mock's entries in a scrambled order, plus a late run that must not show."""
    # MRR strings deliberately not ending in 00: 79.8812 -> 79.88 shows the double rounding.
    # Aurora and Borealis tie on the stored MAP 0.7142 although Borealis' raw value is higher:
    # ties are judged on stored strings, then ordered by team name.
    return [
        cqa_baseline("Baseline 4 (all 'false')", 4, Acc="0.6000"),
        cqa_run("Cobalt", "contrastive2", 0.0, "0.6531", "0.8204", "75.6600", "0.6640",
                "0.4127", "0.5090", "0.6802"),
        cqa_run("Borealis", "primary", 0.00004, "0.7142", "0.8537", "78.4049", "0.5875",
                "0.6681", "0.6252", "0.6945"),
        cqa_baseline("Baseline 2 (random)", 2, MAP="0.5137", AvgRec="0.6580", MRR="57.9180",
                     P="0.3988", R="0.7491", F1="0.5205", Acc="0.4470"),
        cqa_run("Cobalt", "primary", 0.0, "0.6890", "0.8490", "77.1230", "0.6402", "0.5760",
                "0.6064", "0.7133"),
        cqa_run("Dune", "primary", 0.0, "0.9000", "0.9000", "90.0000", "0.9000", "0.9000",
                "0.9000", "0.9000", late=True),
        cqa_run("Aurora", "primary", 0.00001, "0.7142", "0.8490", "79.8812", "0.6130",
                "0.5502", "0.5799", "0.7011"),
        cqa_baseline("Baseline 1 (IR)", 1, MAP="0.6012", AvgRec="0.7305", MRR="68.4400"),
        cqa_run("Aurora", "contrastive1", 0.0, "0.7205", "0.8561", "80.4700", "0.6011",
                "0.5430", "0.5706", "0.6980"),
        cqa_baseline("Baseline 3 (all 'true')", 3, P="0.4000", R="1.0000", F1="0.5714",
                     Acc="0.4000"),
    ]  # fmt: skip


def cqa_table(options: Mapping[str, object] | None = None) -> Table:
    """Return the CQA mock table for subtask A."""
    return build_table(
        "semeval-cqa",
        task="semeval2016-task3",
        subtask="A",
        set="test",
        entries=cqa_entries(),
        measures=CQA_MEASURES,
        options=options
        or {
            "footnotes": ["Baseline 1 ranks comments in chronological order."],
            "measure_note": SCALE_NOTE,
        },
    )


def test_cqa_markdown_reproduces_the_spec_mock() -> None:
    expected = parse_pipe_table(CQA_MOCK)
    assert len(expected) == 10 and len(expected[1]) == 9
    assert first_pipe_table(to_markdown(cqa_table())) == expected


def test_cqa_model_ranks_bold_and_order_match_the_mock() -> None:
    table = cqa_table()
    assert [row.label for row in table.rows] == [
        "Aurora-contrastive1",
        "Aurora-primary",
        "Borealis-primary",
        "Cobalt-primary",
        "Cobalt-contrastive2",
        "Baseline 1 (IR)",
        "Baseline 2 (random)",
        "Baseline 3 (all 'true')",
        "Baseline 4 (all 'false')",
    ]
    assert [row.rank for row in table.rows] == [None, 1, 1, 3, None, None, None, None, None]
    assert [row.bold for row in table.rows] == [False, True, True, True] + [False] * 5
    ranks = {
        row.label: [cell.rank if cell else None for cell in row.cells.values()]
        for row in table.rows
    }
    assert ranks["Aurora-primary"] == [1, 2, 1, 2, 3, 3, 2]
    assert ranks["Borealis-primary"] == [1, 1, 2, 3, 1, 1, 3]
    assert ranks["Cobalt-primary"] == [3, 2, 3, 1, 2, 2, 1]
    assert ranks["Aurora-contrastive1"] == [None] * 7
    assert ranks["Baseline 2 (random)"] == [None] * 7
    assert table.footnotes == (
        "Ranks (subscripts) are among primary runs only; ties share a rank.",
        "MAP, AvgRec, P, R, F1, Acc ×100; MRR is ×100 by definition; MAP, AvgRec and MRR use "
        "the top 10 of each question.",
        "Baseline 1 ranks comments in chronological order.",
    )


def test_cqa_cell_value_is_unrounded_raw_times_scale() -> None:
    aurora = next(row for row in cqa_table().rows if row.label == "Aurora-primary")
    cell = aurora.cells["MAP"]
    assert cell is not None
    assert abs(cell.value - 71.421) < 1e-9  # raw 0.71421 = official + 0.00001, times 100
    mrr = aurora.cells["MRR"]
    assert mrr is not None and abs(mrr.value - 79.88121) < 1e-9 and mrr.display == "79.88"


# ----------------------------------------------------------------------------------- STS mock

STS_MOCK = """
| Team | Run | ALL | answer-answer | headlines | plagiarism | postediting | question-question | Run Rank | Team Rank |
|---|---|---|---|---|---|---|---|---|---|
| Aurora | run1 | 0.77469 | 0.71234 | 0.79911 | 0.82467 | 0.84105 | 0.68890 | 1 | 1 |
| Aurora | run2 | 0.76636 | 0.70118 | 0.80342 | 0.81020 | 0.83577 | 0.67213 | 2 | |
| Dune | run1* | 0.76550 | 0.69904 | 0.78560 | 0.83322 | 0.83971 | 0.66118 | 3* | |
| Borealis | run1 | 0.76402 | 0.66502 | 0.77893 | 0.84911 | 0.82260 | 0.70457 | 3 | 2 |
| Cobalt | run1 | 0.71485 | 0.60271 | 0.74418 | 0.79032 | 0.81944 | 0.61105 | 4 | 3 |
| Cobalt | run2 | 0.70166 | 0.58810 | 0.73002 | 0.78115 | 0.80870 | 0.59346 | 5 | |
| baseline† | cosine-bow | 0.50977 | 0.39870 | 0.57211 | 0.66804 | 0.80193 | 0.05522 | 6† | |
"""  # noqa: E501

STS_SUMMARY_MOCK = """
| Set | Best | Median | Δ |
|---|---|---|---|
| ALL | 0.77469 | 0.76402 | 0.01067 |
| answer-answer | 0.71234 | 0.66502 | 0.04732 |
| headlines | 0.80342 | 0.77893 | 0.02449 |
| plagiarism | 0.84911 | 0.81020 | 0.03891 |
| postediting | 0.84105 | 0.82260 | 0.01845 |
| question-question | 0.70457 | 0.67213 | 0.03244 |
"""

STS_SETS = ("answer-answer", "headlines", "plagiarism", "postediting", "question-question")
STS_MEASURES = (
    MeasureSpec("ALL", "ALL", official=True, display_decimals=5),
    *(MeasureSpec(s, s, display_decimals=5) for s in STS_SETS),
)


def sts_entry(team: str | None, run: str, *official: str, **kw: object) -> Entry:
    """Return an STS run (or baseline when team is None) with ALL then the five sets."""
    keys = [m.key for m in STS_MEASURES]
    values = vals(dict(zip(keys, official, strict=True)))
    kind = "run" if team is not None else "baseline"
    return Entry(kind=kind, team=team, run=run, slot=None, values=values, **kw)  # type: ignore[arg-type]


def sts_entries() -> list[Entry]:
    """Return the STS mock's entries, scrambled."""
    return [
        sts_entry("Cobalt", "run2", "0.70166", "0.58810", "0.73002", "0.78115", "0.80870",
                  "0.59346"),
        sts_entry(None, "cosine-bow", "0.50977", "0.39870", "0.57211", "0.66804", "0.80193",
                  "0.05522"),
        sts_entry("Dune", "run1", "0.76550", "0.69904", "0.78560", "0.83322", "0.83971",
                  "0.66118", late=True),
        sts_entry("Borealis", "run1", "0.76402", "0.66502", "0.77893", "0.84911", "0.82260",
                  "0.70457"),
        sts_entry("Aurora", "run2", "0.76636", "0.70118", "0.80342", "0.81020", "0.83577",
                  "0.67213"),
        sts_entry("Cobalt", "run1", "0.71485", "0.60271", "0.74418", "0.79032", "0.81944",
                  "0.61105"),
        sts_entry("Aurora", "run1", "0.77469", "0.71234", "0.79911", "0.82467", "0.84105",
                  "0.68890"),
    ]  # fmt: skip


def sts_table(entries: list[Entry] | None = None) -> Table:
    """Return the STS en mock table."""
    return build_table(
        "sts",
        task="semeval2016-task1",
        subtask="en",
        set="test",
        entries=sts_entries() if entries is None else entries,
        measures=STS_MEASURES,
    )


def test_sts_markdown_reproduces_the_main_and_summary_mocks() -> None:
    markdown = to_markdown(sts_table())
    main, _, rest = markdown.partition("**Summary**")
    assert len(parse_pipe_table(STS_MOCK)) == 8 and len(parse_pipe_table(STS_SUMMARY_MOCK)) == 7
    assert first_pipe_table(main) == parse_pipe_table(STS_MOCK)
    assert first_pipe_table(rest) == parse_pipe_table(STS_SUMMARY_MOCK)


def test_sts_model_ranks_and_markers() -> None:
    table = sts_table()
    assert [(r.rank, r.rank_marker, r.team_rank) for r in table.rows] == [
        (1, "", 1),
        (2, "", None),
        (3, "*", None),
        (3, "", 2),
        (4, "", 3),
        (5, "", None),
        (6, "†", None),
    ]
    assert not any(row.bold for row in table.rows)
    assert all(c is None or c.rank is None for row in table.rows for c in row.cells.values())
    assert table.footnotes == (
        "* late or corrected run, ranked as if submitted on time without displacing on-time runs",
        "† baseline, ranked the same way",
        "Overall = mean of the per-set Pearson correlations weighted by the number of scored pairs",
    )


ES_EN_MOCK = """
| Team | Run | Mean | News | Multi-source | Run Rank | Team Rank |
|---|---|---|---|---|---|---|
| Aurora | run1 | 0.84312 | 0.88120 | 0.80414 | 1 | 1 |
| Borealis | run1 | 0.83917 | 0.85507 | 0.82290 | 2 | 2 |
| Borealis | run2 | 0.82477 | 0.83911 | 0.81008 | 3 | |
| Cobalt | run1 | 0.70560 | 0.71230 | 0.69875 | 4 | 3 |
"""


def test_sts_es_en_mock() -> None:
    measures = (
        MeasureSpec("Mean", "Mean", official=True, display_decimals=5),
        MeasureSpec("news", "News", display_decimals=5),
        MeasureSpec("multisource", "Multi-source", display_decimals=5),
    )

    def run(team: str, name: str, mean: str, news: str, multi: str) -> Entry:
        values = vals({"Mean": mean, "news": news, "multisource": multi})
        return Entry(kind="run", team=team, run=name, slot=None, values=values)

    entries = [
        run("Cobalt", "run1", "0.70560", "0.71230", "0.69875"),
        run("Borealis", "run2", "0.82477", "0.83911", "0.81008"),
        run("Aurora", "run1", "0.84312", "0.88120", "0.80414"),
        run("Borealis", "run1", "0.83917", "0.85507", "0.82290"),
    ]
    table = build_table(
        "sts", task="semeval2016-task1", subtask="es-en", set="test", entries=entries,
        measures=measures,
    )  # fmt: skip
    assert first_pipe_table(to_markdown(table)) == parse_pipe_table(ES_EN_MOCK)
    # No late run and no baseline: their footnotes would explain marks that are not there.
    assert table.footnotes == (
        "Overall = mean of the per-set Pearson correlations weighted by the number of scored pairs",
    )


# ---------------------------------------------------------------------------------- TREC mock

TREC_MOCK = """
| Team | Run | Automatic: MAP | R-Prec | MRR | Lenient: MAP | R-Prec | MRR | Manual: MAP | R-Prec | MRR |
|---|---|---|---|---|---|---|---|---|---|---|
| Aurora | aur-l2r (contrastive) | **0.1902** | **0.1655** | **0.2549** | **0.3120** | 0.2897 | 0.6033 | 0.2208 | **0.2150** | 0.4871 |
| Aurora | aur-rm3 (primary) | 0.1874₁ | 0.1629₁ | 0.2512₂ | 0.3011₂ | 0.2840₂ | **0.6120**₁ | **0.2233**₁ | 0.2101₂ | **0.4987**₁ |
| Borealis | bor-sdm (primary) | 0.1874₁ | 0.1588₂ | 0.2530₁ | 0.3066₁ | **0.2911**₁ | 0.5940₂ | 0.2190₂ | 0.2133₁ | **0.4987**₁ |
| Cobalt | cob-ql (primary) | 0.1409₃ | 0.1217₃ | 0.1986₃ | 0.2512₃ | 0.2395₃ | 0.5311₃ | 0.1765₃ | 0.1698₃ | 0.4402₃ |
"""  # noqa: E501

TREC_VARIANTS = (("automatic", "Automatic"), ("lenient", "Lenient"), ("manual", "Manual"))
TREC_MEASURES = tuple(
    MeasureSpec(
        f"{variant}/{label}",
        label,
        group=group,
        official=(variant, label) == ("automatic", "MAP"),
        display_decimals=4,
    )
    for variant, group in TREC_VARIANTS
    for label in ("MAP", "R-Prec", "MRR")
)


def trec_entry(team: str | None, tag: str, slot: str | None, *official: str, **kw: object) -> Entry:
    """Return a TREC run (or baseline when team is None) with the 9 values in column order."""
    keys = [m.key for m in TREC_MEASURES]
    values = vals(dict(zip(keys, official, strict=True)))
    kind = "run" if team is not None else "baseline"
    return Entry(kind=kind, team=team, run=tag, slot=slot, values=values, **kw)  # type: ignore[arg-type]


def trec_entries() -> list[Entry]:
    """Return the TREC mock's entries, scrambled."""
    return [
        trec_entry("Cobalt", "cob-ql", "primary", "0.1409", "0.1217", "0.1986", "0.2512",
                   "0.2395", "0.5311", "0.1765", "0.1698", "0.4402"),
        trec_entry("Borealis", "bor-sdm", "primary", "0.1874", "0.1588", "0.2530", "0.3066",
                   "0.2911", "0.5940", "0.2190", "0.2133", "0.4987"),
        trec_entry("Aurora", "aur-rm3", "primary", "0.1874", "0.1629", "0.2512", "0.3011",
                   "0.2840", "0.6120", "0.2233", "0.2101", "0.4987"),
        trec_entry("Aurora", "aur-l2r", "contrastive", "0.1902", "0.1655", "0.2549", "0.3120",
                   "0.2897", "0.6033", "0.2208", "0.2150", "0.4871"),
    ]  # fmt: skip


def trec_table(entries: list[Entry] | None = None, **options: object) -> Table:
    """Return the TREC mock table."""
    return build_table(
        "trec",
        task="trec-car-2017",
        subtask="passage",
        set="test",
        entries=trec_entries() if entries is None else entries,
        measures=TREC_MEASURES,
        options={
            "query_counts": {"automatic": 2125, "lenient": 2125, "manual": 2125},
            # What the TREC CAR preset's family and definition give its table.
            "doc_noun": "paragraph",
            "thresholds": {"automatic": 1, "lenient": 0, "manual": 1},
            "sort_variant": "automatic",
            **options,
        },
    )


def test_trec_markdown_reproduces_the_spec_mock() -> None:
    expected = parse_pipe_table(TREC_MOCK)
    assert len(expected) == 5 and len(expected[1]) == 11
    assert first_pipe_table(to_markdown(trec_table())) == expected


def test_trec_model_groups_and_footnotes() -> None:
    table = trec_table()
    assert table.column_groups == (("Automatic", 3), ("Lenient", 3), ("Manual", 3))
    assert [row.rank for row in table.rows] == [None, 1, 1, 3]
    assert table.footnotes == (
        "Relevant: Automatic grade ≥ 1; Lenient grade ≥ 0; Manual grade ≥ 1. Unjudged "
        "paragraphs are non-relevant.",
        "Averages over all 2,125 queries of each qrels variant. Queries for which a run "
        "returned nothing count as 0 (as trec_eval -c; trec_eval's default would skip them).",
        "Ranks (subscripts) among primary runs only; ties share a rank.",
    )
