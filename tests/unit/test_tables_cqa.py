"""The SemEval-2016 Task 3 (CQA) table style: ranks, ties, order, late view, baselines, notes."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from leaderboard.tables import Entry, MeasureSpec, Table, Value, build_table
from leaderboard.tasks.families.cqa import CqaFamily
from tests.helpers.tables import CQA_MEASURES, cqa_entries, cqa_table

SMALL = (
    MeasureSpec("MAP", "MAP", official=True, scale=100),
    MeasureSpec("MRR", "MRR", scale=1),
)


def run(team: str, slot: str, map_: str, mrr: str = "50.0000", **kw: object) -> Entry:
    values = {"MAP": Value(float(map_), map_), "MRR": Value(float(mrr), mrr)}
    return Entry(kind="run", team=team, run=slot, slot=slot, values=values, **kw)  # type: ignore[arg-type]


def build(entries: list[Entry], options: Mapping[str, object] | None = None) -> Table:
    return build_table(
        "semeval-cqa",
        task="semeval2016-task3",
        subtask="B",
        set="test",
        entries=entries,
        measures=SMALL,
        options=options or {},
    )


def test_ties_are_judged_on_the_stored_string_not_the_display() -> None:
    # 79.8812 and 79.8790 both show 79.88 but differ in the stored 4 decimals.
    table = build(
        [run("A", "primary", "0.5000", "79.8790"), run("B", "primary", "0.4000", "79.8812")]
    )
    mrr = {row.label: row.cells["MRR"] for row in table.rows}
    assert mrr["A-primary"] is not None and mrr["B-primary"] is not None
    assert (mrr["A-primary"].display, mrr["A-primary"].rank) == ("79.88", 2)
    assert (mrr["B-primary"].display, mrr["B-primary"].rank) == ("79.88", 1)


def test_display_is_the_official_string_times_scale_to_two_decimals() -> None:
    table = build([run("A", "primary", "0.0115", "70.4952")])
    cells = table.rows[0].cells
    assert cells["MAP"] is not None and cells["MAP"].display == "1.15"
    assert cells["MRR"] is not None and cells["MRR"].display == "70.50"


def test_equal_map_orders_by_team_then_slot() -> None:
    entries = [
        run("Borealis", "primary", "0.6000"),
        run("Aurora", "contrastive2", "0.6000"),
        run("Aurora", "contrastive1", "0.6000"),
        run("Aurora", "primary", "0.6000"),
        run("Cobalt", "primary", "0.7000"),
    ]
    table = build(entries)
    assert [row.label for row in table.rows] == [
        "Cobalt-primary",
        "Aurora-primary",
        "Aurora-contrastive1",
        "Aurora-contrastive2",
        "Borealis-primary",
    ]
    assert [row.rank_display for row in table.rows] == ["1", "2", "", "", "2"]


def test_three_way_tie_then_gap() -> None:
    entries = [run(t, "primary", "0.5000") for t in ("C", "A", "B")] + [run("D", "primary", "0.1")]
    table = build(entries)
    assert [(row.label, row.rank) for row in table.rows] == [
        ("A-primary", 1),
        ("B-primary", 1),
        ("C-primary", 1),
        ("D-primary", 4),
    ]


def test_late_and_corrected_runs_are_not_in_the_official_table() -> None:
    entries = [
        run("A", "primary", "0.5000"),
        run("B", "primary", "0.9000", late=True),
        run("C", "primary", "0.8000", corrected=True),
    ]
    table = build(entries)
    assert [row.label for row in table.rows] == ["A-primary"]
    assert table.rows[0].rank == 1
    assert not any("late" in note for note in table.footnotes)


def test_post_deadline_view_ranks_late_runs_as_if_without_displacing() -> None:
    entries = [
        run("A", "primary", "0.5000", "60.0000"),
        run("B", "primary", "0.4000", "70.0000"),
        run("Late", "primary", "0.9000", "10.0000", late=True),
        run("Fix", "primary", "0.4000", "10.0000", corrected=True),
        run("Late", "contrastive1", "0.9500", late=True),
    ]
    table = build(entries, {"include_late": True})
    by_label = {row.label: row for row in table.rows}
    assert [row.label for row in table.rows] == [
        "Late-contrastive1",
        "Late-primary",
        "A-primary",
        "B-primary",  # on tie, the on-time run comes before the corrected one
        "Fix-primary",
    ]
    assert by_label["A-primary"].rank_display == "1"
    assert by_label["B-primary"].rank_display == "2"
    assert by_label["Late-primary"].rank_display == "1*"
    assert by_label["Fix-primary"].rank_display == "2*"
    assert by_label["Late-contrastive1"].rank_display == ""
    late = by_label["Late-primary"]
    assert (late.rank, late.rank_marker, late.bold, late.team_rank) == (1, "*", False, None)
    assert all(cell is None or cell.rank is None for cell in late.cells.values())
    # The on-time subindices ignore late values: A's MRR 60 stays second behind B's 70.
    a_mrr = by_label["A-primary"].cells["MRR"]
    assert a_mrr is not None and a_mrr.rank == 2
    assert late.meta["submission"].plain == "Late-primary*"
    assert table.title == "semeval2016-task3 B (test), post-deadline view"
    assert (
        "* late or corrected run, ranked as if submitted on time without displacing on-time runs"
        in table.footnotes
    )


def test_baselines_come_last_in_their_order_unranked_with_missing_cells() -> None:
    table = cqa_table()
    baselines = [row for row in table.rows if row.kind == "baseline"]
    assert [row.label for row in table.rows[-4:]] == [row.label for row in baselines]
    assert [row.label for row in baselines] == [
        "Baseline 1 (IR)",
        "Baseline 2 (random)",
        "Baseline 3 (all 'true')",
        "Baseline 4 (all 'false')",
    ]
    assert all(row.rank is None and not row.bold for row in baselines)
    assert baselines[0].cells["F1"] is None
    assert baselines[3].cells["MAP"] is None
    acc = baselines[3].cells["Acc"]
    assert acc is not None and acc.display == "60.00" and acc.rank is None


def test_baselines_never_enter_the_rank_field() -> None:
    entries = [
        run("A", "primary", "0.5000"),
        Entry("baseline", None, "ir", None, {"MAP": Value(0.9, "0.9000")}, label="Baseline 1 (IR)"),
    ]
    table = build(entries)
    assert [(row.label, row.rank) for row in table.rows] == [
        ("A-primary", 1),
        ("Baseline 1 (IR)", None),
    ]


def test_truncation_marker_and_its_note() -> None:
    entries = [
        run("ConvKN", "primary", "0.5000"),
        run("ConvKN", "contrastive1", "0.4000", markers=("‡",)),
    ]
    # The cqa family declares the marker's general note; a run's own note comes per row label.
    texts = CqaFamily().marker_texts()
    notes = {"ConvKN-contrastive1": [["‡", "scored on 249 of 250 questions (truncated file)"]]}
    table = build(entries, {"row_notes": notes, "note_texts": texts})
    assert table.rows[1].meta["submission"].plain == "ConvKN-contrastive1‡"
    assert table.footnotes[-1] == (
        "‡ ConvKN-contrastive1: scored on 249 of 250 questions (truncated file)"
    )
    generic = build(entries, {"note_texts": texts})
    assert generic.footnotes[-1] == "‡ legacy run with a truncated file, scored on the part present"


def test_no_truncation_note_without_marker() -> None:
    table = build([run("A", "primary", "0.5")], {"row_notes": {"A-primary": [["‡", "x"]]}})
    assert not any(note.startswith("‡") for note in table.footnotes)


def test_cell_note_marker_gets_a_footnote() -> None:
    values = {"MAP": Value(0.5, "0.5000"), "MRR": Value(0.0, "0.0000", note="a")}
    entry = Entry("run", "A", "primary", "primary", values)
    table = build([entry], {"note_texts": {"a": "AvgRec undefined, recorded as 0"}})
    cell = table.rows[0].cells["MRR"]
    assert cell is not None and cell.note == "a"
    assert table.footnotes[-1] == "a AvgRec undefined, recorded as 0"


def test_explicit_label_is_used() -> None:
    entry = Entry(
        "run", "A", "primary", "primary", {"MAP": Value(0.5, "0.5000")}, label="Alpha (main)"
    )
    assert build([entry]).rows[0].label == "Alpha (main)"


def test_non_standard_measures_get_a_derived_scale_note() -> None:
    table = build([run("A", "primary", "0.5")])
    assert table.footnotes[1] == "MAP ×100."


def test_subtask_footnotes_come_after_the_standard_ones() -> None:
    table = cqa_table({"footnotes": ["Extra one.", "Extra two."]})
    assert table.footnotes[2:] == ("Extra one.", "Extra two.")


def test_requires_exactly_one_official_measure() -> None:
    twice = (MeasureSpec("MAP", "MAP", official=True), MeasureSpec("MRR", "MRR", official=True))
    with pytest.raises(ValueError, match="exactly one official"):
        build_table(
            "semeval-cqa", task="t", subtask="A", set="test", entries=cqa_entries(), measures=twice
        )


def test_unknown_style_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown table style"):
        build_table("nope", task="t", subtask="A", set="test", entries=[], measures=CQA_MEASURES)


def test_bad_option_type_is_refused() -> None:
    with pytest.raises(TypeError, match="include_late"):
        build([run("A", "primary", "0.5")], {"include_late": "yes"})


def test_empty_table_has_header_and_footnotes_only() -> None:
    table = build([])
    assert table.rows == ()
    assert [c.key for c in table.columns] == ["MAP", "MRR"]
    assert table.lead_columns == ("rank", "submission")


def test_a_table_frozen_with_the_old_truncation_option_reads_the_same() -> None:
    # Tables frozen before run notes were generic stored "truncation_notes" and no ‡ text.
    entries = [
        run("ConvKN", "primary", "0.5000", markers=("‡",)),
        Entry("baseline", None, "ir", None, {"MAP": Value(0.4, "0.4000")}, markers=("‡",)),
    ]
    old = {"truncation_notes": {"ConvKN-primary": "249 of 250 questions"}, "note_texts": {}}
    table = build(entries, CqaFamily().stored_table_options(old))
    assert list(table.footnotes[-2:]) == [
        "‡ ConvKN-primary: 249 of 250 questions",
        "‡ legacy run with a truncated file, scored on the part present",
    ]
