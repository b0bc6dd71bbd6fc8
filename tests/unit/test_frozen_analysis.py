"""What verify says when a frozen analysis and its recomputation differ."""

from __future__ import annotations

import copy
from typing import Any

from leaderboard.services.freeze.analysis import analysis_differences


def report() -> dict[str, Any]:
    return {
        "measure": "MAP",
        "method": "randomization",
        "samples": 1000,
        "seed": 0,
        "alpha": 0.05,
        "correction": "holm",
        "runs": ["A", "B", "C"],
        "pairs": [
            {"a": "A", "b": "B", "diff": 0.1, "p": 0.01, "p_adjusted": 0.03, "significant": True},
            {"a": "A", "b": "C", "diff": 0.2, "p": 0.001, "p_adjusted": 0.003, "significant": True},
            {"a": "B", "b": "C", "diff": 0.1, "p": 0.2, "p_adjusted": 0.2, "significant": False},
        ],
        "clusters": [["A"], ["B", "C"]],
        "intervals": {"1": {"MAP": [0.5, 0.6]}, "2": {"MAP": [0.4, 0.5]}},
    }


def test_the_same_analysis_has_no_difference() -> None:
    assert analysis_differences(report(), report()) == []


def test_each_differing_number_is_named_with_both_values() -> None:
    again = copy.deepcopy(report())
    again["pairs"][2]["p"] = 0.04
    again["clusters"] = [["A"], ["B"], ["C"]]
    again["intervals"]["2"]["MAP"] = [0.41, 0.5]
    del again["intervals"]["1"]
    assert analysis_differences(report(), again) == [
        "analysis: p of B / C is 0.04, the snapshot says 0.2",
        "analysis: the clusters are [['A'], ['B'], ['C']], the snapshot says [['A'], ['B', 'C']]",
        "analysis: the interval of run 1 on MAP is None, the snapshot says [0.5, 0.6]",
        "analysis: the interval of run 2 on MAP is [0.41, 0.5], the snapshot says [0.4, 0.5]",
    ]


def test_a_long_list_is_cut_with_a_count() -> None:
    again = copy.deepcopy(report())
    for pair in again["pairs"]:
        pair["diff"], pair["p"], pair["p_adjusted"] = -1.0, 0.5, 0.5
    found = analysis_differences(report(), again)
    assert len(found) == 6
    assert found[-1] == "analysis: … and 4 more differences"


def test_an_analysis_that_became_unavailable_or_available_is_a_difference() -> None:
    gone = {"method": "randomization", "unavailable": "MAP cannot be resampled: no values"}
    assert analysis_differences(report(), gone) == [
        "analysis: the snapshot's was computed; recomputed, it is MAP cannot be resampled: "
        "no values"
    ]
    assert analysis_differences(gone, dict(gone)) == []
    assert len(analysis_differences(gone, report())) == 1


def test_the_summary_counts_runs_and_baselines_apart() -> None:
    from leaderboard.services.freeze.analysis import describe_analysis

    stored = {**report(), "runs": ["A", "B", "C", "Random", "Majority", "D"]}
    stored["baselines"] = ["Random", "Majority"]
    assert describe_analysis(stored) == (
        "Analysis frozen with it (randomization, 1,000 samples, seed 0; holm-adjusted p < 0.05): "
        "2 clusters of 4 ranked runs and 2 baselines."
    )
    one = {**report(), "runs": ["A", "Random"], "clusters": [["A", "Random"]]}
    one["baselines"] = ["Random"]
    assert describe_analysis(one).endswith("1 cluster of 1 ranked run and 1 baseline.")
