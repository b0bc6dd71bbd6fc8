"""The measure registry, and lower-is-better measures ranked ascending by every table style."""

from __future__ import annotations

import re

import pytest

from leaderboard.scoring import correlation, cqa
from leaderboard.scoring.registry import Measure, MeasureRegistry, UnknownMeasure
from leaderboard.tables import Entry, MeasureSpec, Value, build_table
from leaderboard.tasks.families.sts import style as sts_style  # noqa: F401 (registers "sts")
from leaderboard.tasks.families.trec import style as trec_style  # noqa: F401 (registers "trec")

ERROR = Measure("MAE", "MAE", "score", 3, 4, lower_is_better=True)
GAIN = Measure("Acc", "Acc", "fraction", 3, 4)


def test_official_strings_round_to_the_registry_decimals() -> None:
    assert GAIN.official(0.12345) == "0.1235"  # the double is 0.123450000...04
    assert GAIN.official(0.03125) == "0.0312"  # exactly half: round half to even
    assert cqa.MEASURES.get("MAP").official(0.61425) == "0.6142"
    assert correlation.MEASURES.get("headlines").official(0.508604) == "0.50860"


def test_cqa_registry_holds_the_seven_2016_measures_in_the_scorers_order() -> None:
    assert cqa.CQA_MEASURES == ("MAP", "AvgRec", "MRR", "P", "R", "F1", "Acc")
    assert cqa.MEASURES.get("MAP").factor == 100
    assert cqa.MEASURES.get("MRR").factor == 1  # already x100 by definition
    assert {cqa.MEASURES.get(k).decimals for k in cqa.CQA_MEASURES} == {2}


def test_patterns_build_parameterised_entries_and_unknown_keys_are_named() -> None:
    registry = MeasureRegistry(
        "demo",
        [GAIN],
        patterns=[
            (re.compile(r"P@(\d+)"), lambda m: Measure(m.group(0), m.group(0), "fraction", 4, 4))
        ],
        forms=("P@k",),
    )
    assert registry.get("P@10").key == "P@10"
    assert "P@5" in registry and "Acc" in registry
    with pytest.raises(
        UnknownMeasure, match=r"unknown measure 'nDCG' for family demo; known: Acc, P@k"
    ):
        registry.get("nDCG")
    with pytest.raises(UnknownMeasure, match="unknown measure 'x+' for family demo") as long_key:
        registry.get("x" * 500)
    assert "x" * 81 not in str(long_key.value)


def test_renamed_keeps_everything_but_key_and_label() -> None:
    renamed = ERROR.renamed("dev/MAE")
    assert (renamed.key, renamed.label, renamed.lower_is_better) == ("dev/MAE", "MAE", True)


def entry(team: str, value: str, slot: str | None = "primary", kind: str = "run") -> Entry:
    return Entry(
        kind=kind,  # type: ignore[arg-type]
        team=team if kind == "run" else None,
        run=slot or team,
        slot=slot,
        values={"MAE": Value(float(value), value), "Acc": Value(0.5, "0.5000")},
    )


ENTRIES = [entry("Aurora", "0.9000"), entry("Borealis", "0.2000"), entry("Cobalt", "0.2000")]


@pytest.mark.parametrize("style", ["semeval-cqa", "sts", "trec"])
def test_a_lower_is_better_official_measure_ranks_ascending(style: str) -> None:
    key = "automatic/MAE" if style == "trec" else "MAE"
    measures = [
        MeasureSpec.of(
            ERROR.renamed(key), official=True, group="Auto" if style == "trec" else None
        ),
        MeasureSpec.of(GAIN.renamed("automatic/Acc" if style == "trec" else "Acc")),
    ]
    entries = [
        Entry(
            kind=e.kind,
            team=e.team,
            run=e.run,
            slot=e.slot,
            values={measures[0].key: e.values["MAE"], measures[1].key: e.values["Acc"]},
        )
        for e in ENTRIES
    ]
    table = build_table(
        style,
        task="t",
        subtask="s",
        set="test",
        entries=entries,
        measures=measures,
        options={"sort_variant": "automatic"} if style == "trec" else {},
    )
    order = [row.team for row in table.rows]
    assert order == ["Borealis", "Cobalt", "Aurora"]
    assert [row.rank for row in table.rows] == [1, 1, 3]
    first = table.rows[0].cells[measures[0].key]
    assert first is not None and first.display == "0.200"
    if style != "sts":
        # Subindices follow the direction too: the smallest error is ranked first.
        assert [row.cells[measures[0].key].rank for row in table.rows] == [1, 1, 3]  # type: ignore[union-attr]


def test_sts_summary_best_of_a_lower_is_better_measure_is_the_smallest() -> None:
    measures = [MeasureSpec.of(ERROR, official=True)]
    entries = [
        Entry(kind="run", team=e.team, run=e.run, slot=None, values={"MAE": e.values["MAE"]})
        for e in ENTRIES
    ]
    table = build_table(
        "sts", task="t", subtask="s", set="test", entries=entries, measures=measures
    )
    assert table.extra is not None
    assert table.extra.rows[0][:2] == ("MAE", "0.200")
