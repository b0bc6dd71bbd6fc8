"""The TREC CAR table style: grouped columns, sort variant, subindices, bold, baselines."""

from __future__ import annotations

import pytest

from leaderboard.tables import Entry, Table, Value, build_table
from leaderboard.tasks.families.sts import style as sts_style  # noqa: F401 (registers "sts")
from leaderboard.tasks.families.trec import style as trec_style  # noqa: F401 (registers "trec")
from tests.helpers.tables import TREC_MEASURES, trec_entries, trec_entry, trec_table

AUTOMATIC = tuple(m for m in TREC_MEASURES if m.group == "Automatic")


def auto(team: str | None, tag: str, slot: str | None, map_: str, rprec: str, mrr: str,
         **kw: object) -> Entry:  # fmt: skip
    values = {
        "automatic/MAP": Value(float(map_), map_),
        "automatic/R-Prec": Value(float(rprec), rprec),
        "automatic/MRR": Value(float(mrr), mrr),
    }
    kind = "run" if team is not None else "baseline"
    return Entry(kind=kind, team=team, run=tag, slot=slot, values=values, **kw)  # type: ignore[arg-type]


#: The options the TREC CAR preset's family and definition give its table.
CAR_OPTIONS = {
    "doc_noun": "paragraph",
    "thresholds": {"automatic": 1, "lenient": 0, "manual": 1},
    "sort_variant": "automatic",
}


def build(entries: list[Entry], **options: object) -> Table:
    return build_table(
        "trec",
        task="trec-car-2017",
        subtask="passage",
        set="test",
        entries=entries,
        measures=AUTOMATIC,
        options={**CAR_OPTIONS, **options},
    )


def shown(table: Table) -> list[list[str]]:
    """Return each row as team, run, then cell texts with ** for bold and _n for ranks."""
    out = []
    for row in table.rows:
        cells = [row.meta["team"].plain, row.meta["run"].plain]
        for cell in row.cells.values():
            if cell is None:
                cells.append("—")
                continue
            text = f"**{cell.display}**" if cell.bold else cell.display
            cells.append(text + (f"_{cell.rank}" if cell.rank else ""))
        out.append(cells)
    return out


def test_bold_ties_all_bold_and_baselines_never_bold_or_ranked() -> None:
    table = build(
        [
            auto(None, "bm25", None, "0.9000", "0.9000", "0.9000", label="BM25 (organizers)"),
            auto("A", "a1", "primary", "0.3000", "0.2000", "0.5000"),
            auto("B", "b1", "primary", "0.3000", "0.1000", "0.4000"),
            auto("B", "b2", "contrastive", "0.2000", "0.2000", "0.6000"),
        ]
    )
    assert shown(table) == [
        ["A", "a1 (primary)", "**0.3000**_1", "**0.2000**_1", "0.5000_1"],
        ["B", "b1 (primary)", "**0.3000**_1", "0.1000_2", "0.4000_2"],
        ["B", "b2 (contrastive)", "0.2000", "**0.2000**", "**0.6000**"],
        ["BM25 (organizers)†", "bm25", "0.9000", "0.9000", "0.9000"],
    ]
    baseline = table.rows[-1]
    assert (baseline.kind, baseline.rank, baseline.rank_marker) == ("baseline", None, "")
    assert "† baseline, listed below the participant runs; never ranked or bold" in table.footnotes


def test_baselines_keep_their_order_after_all_runs() -> None:
    table = build(
        [
            auto(None, "second", None, "0.1", "0.1", "0.1", baseline_order=2),
            auto("A", "a1", "primary", "0.0500", "0.1", "0.1"),
            auto(None, "first", None, "0.0100", "0.1", "0.1", baseline_order=1),
        ]
    )
    assert [row.run for row in table.rows] == ["a1", "first", "second"]
    # Two baselines without a label are told apart by their names.
    assert table.rows[1].meta["team"].plain == "baseline (first)†"


def test_sort_variant_selects_the_ordering_map() -> None:
    table = trec_table(sort_variant="manual")
    # Manual MAP: aur-rm3 0.2233, aur-l2r 0.2208, bor-sdm 0.2190, cob-ql 0.1765.
    assert [row.run for row in table.rows] == ["aur-rm3", "aur-l2r", "bor-sdm", "cob-ql"]
    # Row ranks follow the sort variant's MAP among primaries.
    assert [row.rank for row in table.rows] == [1, None, 2, 3]


def test_unknown_sort_variant_is_refused() -> None:
    with pytest.raises(ValueError, match="sort variant 'nope'"):
        trec_table(sort_variant="nope")


def test_equal_map_orders_by_team_then_run_tag() -> None:
    table = build(
        [
            auto("B", "b1", "primary", "0.5000", "0.1", "0.1"),
            auto("A", "z9", "contrastive", "0.5000", "0.1", "0.1"),
            auto("A", "a1", "primary", "0.5000", "0.1", "0.1"),
        ]
    )
    assert [row.run for row in table.rows] == ["a1", "z9", "b1"]


def test_only_shown_variants_in_the_footnotes_and_query_counts() -> None:
    table = build(
        [auto("A", "a1", "primary", "0.1", "0.1", "0.1")], query_counts={"automatic": 2125}
    )
    assert table.footnotes[:2] == (
        "Relevant: Automatic grade ≥ 1. Unjudged paragraphs are non-relevant.",
        "Averages over all 2,125 queries of each qrels variant. Queries for which a run "
        "returned nothing count as 0 (as trec_eval -c; trec_eval's default would skip them).",
    )
    assert table.column_groups == (("Automatic", 3),)
    assert table.grouped


def test_different_query_counts_are_listed_per_variant() -> None:
    table = trec_table(query_counts={"automatic": 2125, "lenient": 1900, "manual": 1900})
    assert table.footnotes[1].startswith(
        "Averages over all queries of each qrels variant (Automatic 2,125, Lenient 1,900, "
        "Manual 1,900). "
    )


def test_late_runs_only_in_the_post_deadline_view() -> None:
    entries = [*trec_entries(), trec_entry("Dune", "dun-x", "primary", *["0.5000"] * 9, late=True)]
    official = trec_table(entries)
    assert "dun-x" not in [row.run for row in official.rows]
    view = trec_table(entries, include_late=True)
    late = view.rows[0]
    assert (late.run, late.rank, late.rank_marker, late.late) == ("dun-x", 1, "*", True)
    assert late.meta["run"].plain == "dun-x (primary)*"
    # The late run is neither bold nor subindexed, and displaces nobody's bold or rank.
    assert all(c is not None and not c.bold and c.rank is None for c in late.cells.values())
    assert shown(view)[1:] == shown(official)


def test_grouped_columns_are_made_adjacent() -> None:
    scrambled = (TREC_MEASURES[0], TREC_MEASURES[3], TREC_MEASURES[1], TREC_MEASURES[4])
    table = build_table("trec", task="t", subtask="p", set="test", entries=[], measures=scrambled)
    assert [c.key for c in table.columns] == [
        "automatic/MAP",
        "automatic/R-Prec",
        "lenient/MAP",
        "lenient/R-Prec",
    ]
    assert table.column_groups == (("Automatic", 2), ("Lenient", 2))


def test_team_rank_on_the_best_primary() -> None:
    table = trec_table()
    assert [(row.run, row.team_rank) for row in table.rows] == [
        ("aur-l2r", None),
        ("aur-rm3", 1),
        ("bor-sdm", 1),
        ("cob-ql", 3),
    ]


def test_mock_bold_and_ranks_in_the_model() -> None:
    rows = {row.run: row for row in trec_table().rows}
    lenient_mrr = {run: rows[run].cells["lenient/MRR"] for run in rows}
    assert {run: (c.bold, c.rank) for run, c in lenient_mrr.items() if c is not None} == {
        "aur-l2r": (False, None),
        "aur-rm3": (True, 1),
        "bor-sdm": (False, 2),
        "cob-ql": (False, 3),
    }
    manual_mrr = [rows[run].cells["manual/MRR"] for run in ("aur-rm3", "bor-sdm")]
    assert all(c is not None and c.bold and c.rank == 1 for c in manual_mrr)


def test_labels_are_unique_within_a_table() -> None:
    # Two runs of one team with one run tag were both labelled "Team 1-contrastive2".
    table = build(
        [
            auto("Team 1", "contrastive2", "primary", "0.30", "0.30", "0.30", run_id=1),
            auto("Team 1", "contrastive2", "contrastive1", "0.20", "0.20", "0.20", run_id=2),
            auto("Team 2", "x", "primary", "0.10", "0.10", "0.10", run_id=3),
        ]
    )
    labels = [row.label for row in table.rows]
    assert labels == [
        "Team 1-contrastive2 (primary)",
        "Team 1-contrastive2 (contrastive1)",
        "Team 2-x",
    ]
