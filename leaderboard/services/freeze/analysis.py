"""The analysis a freeze stores with the official table, and its recomputation by verify."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from leaderboard.services.common.errors import InvalidInput
from leaderboard.services.results.report_scale import in_table_scale, scales_of
from leaderboard.services.results.significance import (
    Request,
    ScoreLookup,
    Source,
    analyse,
    testing_settings,
)
from leaderboard.services.results.table_analysis import annotate, current_report
from leaderboard.tables.model import Table
from leaderboard.targets import Target
from leaderboard.tasks.families.base import MeasureResult, StoredScore

#: The keys rank intervals added to an analysis: a snapshot frozen before them has neither.
RANK_INTERVAL_KEYS = ("rank_intervals", "interval_samples")


def freeze_request(session: Session, target: Target, official: str) -> Request:
    """Return how a freeze analyses its table: as the set's current analysis, or the defaults."""
    report = current_report(session, target, official)
    return Request() if report is None else request_of_report(report)


def request_of_report(report: Mapping[str, Any]) -> Request:
    """Return the request of the official measure over the ranked runs a report was made with."""
    default = Request()
    return Request(
        method=report["method"],
        # A t-test or Wilcoxon report has no samples; its intervals take the defaults.
        samples=report["samples"] or default.samples,
        seed=report["seed"] if report["seed"] is not None else default.seed,
        alpha=report["alpha"],
        correction=report["correction"],
    )


def analyse_frozen(
    target: Target,
    table: Table,
    gold: Any,
    scores: ScoreLookup,
    request: Request,
    *,
    rank_intervals: bool = True,
) -> tuple[Table, dict[str, Any]]:
    """Return a frozen table with its analysis' clusters and intervals, and the analysis.

    Without one (fewer than two runs, a measure that keeps nothing to resample) the table is
    returned as it is, with the request and why. Without ``rank_intervals`` (verifying a
    snapshot frozen before them) neither the analysis nor the table has rank intervals.
    """
    try:
        analysis = analyse(target, Source(table, gold, scores), request)
    except InvalidInput as exc:
        return table, {**testing_settings(request), "unavailable": exc.message}
    if not rank_intervals:
        for key in RANK_INTERVAL_KEYS:
            analysis.pop(key, None)
    specs = target.family.measure_specs(target.context())
    return annotate(table, analysis, specs), analysis


def describe_analysis(analysis: Mapping[str, Any] | None) -> str:
    """Return one line saying how a frozen table was analysed, or why it was not."""
    if analysis is None:
        return "Frozen before freezes stored an analysis."
    if "unavailable" in analysis:
        return f"No analysis frozen with it: {analysis['unavailable']}"
    how = analysis["method"]
    if analysis["samples"] is not None:
        how += f", {analysis['samples']:,} samples, seed {analysis['seed']}"
    return (
        f"Analysis frozen with it ({how}; {analysis['correction']}-adjusted p < "
        f"{analysis['alpha']}): {compared(analysis)}."
    )


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def compared(analysis: Mapping[str, Any]) -> str:
    """Return "N clusters of R ranked runs and B baselines": runs and baselines counted apart."""
    # Reports from before baselines were listed say nothing of them: all count as runs.
    baselines = len(analysis.get("baselines", ()))
    runs = len(analysis["runs"]) - baselines
    text = f"{_count(len(analysis['clusters']), 'cluster')} of {_count(runs, 'ranked run')}"
    return text + (f" and {_count(baselines, 'baseline')}" if baselines else "")


@dataclass(frozen=True)
class RescoredRun:
    """What verify re-scored of a frozen run: its measures and its per-item predictions."""

    results: Mapping[str, MeasureResult]
    item_values: Mapping[str, Any] | None

    def kept(self, measure: str) -> StoredScore | None:
        """Return what the run would keep of a measure, as stored scores do."""
        result = self.results.get(measure)
        if result is None or result.raw is None:
            return None
        return StoredScore(result.per_query, result.item_stats, self.item_values)


#: How many of an analysis' differing numbers verify lists.
LISTED_DIFFERENCES = 5


def recheck(
    target: Target,
    table: Table,
    gold: Any,
    runs: Mapping[int, RescoredRun],
    stored: dict[str, Any],
) -> tuple[Table, list[str]]:
    """Recompute a frozen analysis from the re-scored runs: the table with it, and what differs."""

    def scores(run_ids: list[int], measure: str) -> dict[int, StoredScore]:
        found = {i: runs[i].kept(measure) for i in run_ids if i in runs}
        return {i: kept for i, kept in found.items() if kept is not None}

    table, again = analyse_frozen(
        target,
        table,
        gold,
        scores,
        request_of_report(stored),
        rank_intervals="unavailable" in stored or "rank_intervals" in stored,
    )
    # A snapshot frozen before analyses were in the table's scale is compared in that scale.
    if "pairs" in stored:
        stored = in_table_scale(stored, scales_of(target))
    return table, analysis_differences(stored, again)


def analysis_differences(stored: dict[str, Any], again: dict[str, Any]) -> list[str]:
    """Return what differs between a frozen analysis and its recomputation, a line each."""
    if "unavailable" in stored or "unavailable" in again:
        if stored.get("unavailable") == again.get("unavailable"):
            return []
        was = stored.get("unavailable") or "computed"
        now = again.get("unavailable") or "computed"
        return [f"analysis: the snapshot's was {was}; recomputed, it is {now}"]
    found: list[str] = []
    for key in ("measure", "method", "samples", "seed", "alpha", "correction", "runs"):
        if stored[key] != again[key]:
            found.append(f"analysis: {key} is {again[key]!r}, the snapshot says {stored[key]!r}")
    old_pairs = {(p["a"], p["b"]): p for p in stored["pairs"]}
    for pair in again["pairs"]:
        old = old_pairs.get((pair["a"], pair["b"]))
        if old is None:
            found.append(f"analysis: the pair {pair['a']} / {pair['b']} is not in the snapshot")
            continue
        for key in ("diff", "p", "p_adjusted", "significant"):
            if pair[key] != old[key]:
                found.append(
                    f"analysis: {key} of {pair['a']} / {pair['b']} is {pair[key]!r}, "
                    f"the snapshot says {old[key]!r}"
                )
    if again["clusters"] != stored["clusters"]:
        found.append(
            f"analysis: the clusters are {again['clusters']}, the snapshot says {stored['clusters']}"
        )
    new_intervals, old_intervals = again["intervals"], stored["intervals"]
    for run_id in sorted({*new_intervals, *old_intervals}, key=int):
        measures = {**new_intervals.get(run_id, {}), **old_intervals.get(run_id, {})}
        for key in measures:
            interval = new_intervals.get(run_id, {}).get(key)
            old_interval = old_intervals.get(run_id, {}).get(key)
            if interval != old_interval:
                found.append(
                    f"analysis: the interval of run {run_id} on {key} is {interval}, "
                    f"the snapshot says {old_interval}"
                )
    new_ranks, old_ranks = again.get("rank_intervals", {}), stored.get("rank_intervals", {})
    for run_id in sorted({*new_ranks, *old_ranks}, key=int):
        if new_ranks.get(run_id) != old_ranks.get(run_id):
            found.append(
                f"analysis: the rank interval of run {run_id} is {new_ranks.get(run_id)}, "
                f"the snapshot says {old_ranks.get(run_id)}"
            )
    if len(found) > LISTED_DIFFERENCES:
        more = len(found) - LISTED_DIFFERENCES
        found = [*found[:LISTED_DIFFERENCES], f"analysis: … and {more:,} more differences"]
    return found
