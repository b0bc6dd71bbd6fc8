"""Mock result tables (CQA, STS, TREC) and tables whose names are hostile strings."""

from __future__ import annotations

from collections.abc import Mapping

from leaderboard.tables import Entry, MeasureSpec, Table, Value, build_table
from leaderboard.tasks.families.cqa import SCALE_NOTE
from leaderboard.tasks.families.sts import style as sts_style  # noqa: F401 (registers "sts")
from leaderboard.tasks.families.trec import style as trec_style  # noqa: F401 (registers "trec")


def vals(official: Mapping[str, str], raw_offset: float = 0.0) -> dict[str, Value]:
    """Return values with the given official strings; raw = official + ``raw_offset``."""
    return {key: Value(float(text) + raw_offset, text) for key, text in official.items()}


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


STS_SETS = ("answer-answer", "headlines", "plagiarism", "postediting", "question-question")


STS_MEASURES = (
    MeasureSpec("ALL", "ALL", official=True, display_decimals=5),
    *(MeasureSpec(s, s, display_decimals=5) for s in STS_SETS),
)


def measured_entry(
    measures: tuple[MeasureSpec, ...],
    team: str | None,
    run: str,
    slot: str | None,
    official: tuple[str, ...],
    **kw: object,
) -> Entry:
    """Return a run (or baseline when team is None) with one value per measure, in order."""
    values = vals(dict(zip([m.key for m in measures], official, strict=True)))
    kind = "run" if team is not None else "baseline"
    return Entry(kind=kind, team=team, run=run, slot=slot, values=values, **kw)  # type: ignore[arg-type]


def sts_entry(team: str | None, run: str, *official: str, **kw: object) -> Entry:
    """Return an STS run (or baseline when team is None) with ALL then the five sets."""
    return measured_entry(STS_MEASURES, team, run, None, official, **kw)


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
    return measured_entry(TREC_MEASURES, team, tag, slot, official, **kw)


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


RLO = "\u202e"


HOSTILE = {
    "script": "<script>alert('x')</script>",
    "quotes": 'O\'Brien "the" team',
    "formula": "=cmd|' /C calc'!A0",
    "pipe": "a|b",
    "backslash": "back\\slash\\",
    "amp": "R&D 100% $5 #1 _x_ {y} ~z^",
    "rlo": f"abc{RLO}def",
    "newline": "two\nlines\r\nhere",
    "markdown": "**bold** [link](javascript:x) `code` ~~s~~",
    "brackets": "[opt]*star",
    "big": "W" * 10_240,
    "arabic": "فريق",
}


def hostile_tables() -> list[Table]:
    """Return one table per style whose team and run names are all the hostile strings."""
    cqa_measures = (MeasureSpec("MAP", "MAP", official=True, scale=100),)
    cqa = build_table(
        "semeval-cqa",
        task="t",
        subtask="A",
        set="test",
        entries=[
            Entry("run", name, "primary", "primary", {"MAP": Value(0.5, "0.5000")})
            for name in HOSTILE.values()
        ],
        measures=cqa_measures,
    )
    sts = sts_table(
        [
            sts_entry(name, name, "0.50000", "0.1", "0.1", "0.1", "0.1", "-0.01234")
            for name in HOSTILE.values()
        ]
    )
    trec = trec_table(
        [trec_entry(name, name, "primary", *["0.1000"] * 9) for name in HOSTILE.values()]
    )
    return [cqa, sts, trec]
