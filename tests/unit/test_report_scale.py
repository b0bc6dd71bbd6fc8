"""Analyses stored before their numbers were in the table's scale are read in that scale."""

from __future__ import annotations

import pytest

from leaderboard.services.results.report_scale import in_table_scale

#: An analysis as stored before: MAP and MRR as fractions, shown ×100 by the table.
OLD = {
    "measure": "MAP",
    "runs": ["Kelp-primary", "ConvKN-primary"],
    "run_ids": [7, 3],
    "values": {"7": 0.7919, "3": 0.7766},
    "pairs": [
        {
            "a": "Kelp-primary",
            "b": "ConvKN-primary",
            "diff": 0.0153,
            "p": 0.2,
            "p_adjusted": 0.2,
            "significant": False,
        }
    ],
    "clusters": [["Kelp-primary", "ConvKN-primary"]],
    "intervals": {"7": {"MAP": [0.77, 0.81], "MRR": [0.84, 0.88]}, "3": {"MAP": [0.75, 0.8]}},
}
SCALES = {"MAP": 100.0, "MRR": 100.0, "Acc": 1.0}


def test_an_old_report_is_read_in_the_tables_scale() -> None:
    new = in_table_scale(OLD, SCALES)
    assert new["scale"] == "table"
    assert new["values"] == {"7": pytest.approx(79.19), "3": pytest.approx(77.66)}
    (pair,) = new["pairs"]
    assert pair["diff"] == pytest.approx(1.53)
    assert (pair["p"], pair["p_adjusted"], pair["significant"]) == (0.2, 0.2, False)
    assert new["intervals"]["7"]["MAP"] == pytest.approx([77.0, 81.0])
    assert new["intervals"]["7"]["MRR"] == pytest.approx([84.0, 88.0])
    assert new["clusters"] == OLD["clusters"]
    assert OLD["values"]["7"] == 0.7919  # the stored report itself is left as it was


def test_a_report_in_the_tables_scale_is_read_as_it_is() -> None:
    new = in_table_scale(OLD, SCALES)
    assert in_table_scale(new, SCALES) is new
    unavailable = {"unavailable": "no ranked runs"}
    assert in_table_scale(unavailable, SCALES) is unavailable
