"""Meta-evaluation of a set: which ranked pairs it separates, and how its halves agree on the order.

On the ranked runs of the live table, on the part every reader sees: the fractions of pairs and
of adjacent pairs that the set's latest analysis found significant, and Kendall's tau-b and the
top row's stability over seeded half-splits of the units (``scoring.meta_evaluation``).
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from sqlalchemy.orm import Session

from leaderboard.formats.issues import quoted
from leaderboard.scoring.meta_evaluation import meta_evaluate
from leaderboard.services.common.errors import InvalidInput
from leaderboard.services.results.significance import in_rank_order, resampling_rows, source_of
from leaderboard.services.results.table_analysis import current_report
from leaderboard.storage import Store
from leaderboard.targets import Target

#: The most splits a request may ask for (each costs every run's measure on two halves).
MAX_SPLITS = 100_000


class UnknownMeasure(InvalidInput):
    """The measure asked for is not a column of the set's table."""


def check_settings(splits: int, seed: int) -> None:
    """Raise InvalidInput naming the first setting out of range."""
    if not 1 <= splits <= MAX_SPLITS:
        raise InvalidInput(f"splits must be between 1 and {MAX_SPLITS:,}, not {splits}.")
    if not 0 <= seed < 2**63:
        raise InvalidInput(f"seed must be a non-negative integer below 2^63, not {seed}.")


def separated(report: dict[str, Any] | None) -> tuple[float | None, float | None]:
    """Return the fractions of all pairs and of adjacent pairs significant in an analysis.

    Significant: ``p_adjusted < alpha``, the report's own alpha and correction. Adjacent pairs
    are consecutive runs of the report's rank order (``runs``). None, None without a report.
    """
    if report is None:
        return None, None
    alpha = report["alpha"]
    significant = {frozenset((p["a"], p["b"])): p["p_adjusted"] < alpha for p in report["pairs"]}
    adjacent = [significant.get(frozenset(pair), False) for pair in pairwise(report["runs"])]
    return (
        sum(significant.values()) / len(significant) if significant else None,
        sum(adjacent) / len(adjacent) if adjacent else None,
    )


def meta_evaluation(
    session: Session,
    store: Store,
    target: Target,
    measure: str | None = None,
    splits: int = 200,
    seed: int = 0,
) -> dict[str, Any]:
    """Return the meta-evaluation of the set's ranked runs on a measure (the spec's JSON)."""
    check_settings(splits, seed)
    source = source_of(session, store, target)
    table = source.table
    official = table.official_key
    key = measure or official
    if key not in {c.key for c in table.columns}:
        keys = ", ".join(c.key for c in table.columns)
        raise UnknownMeasure(f"{quoted(target.task.slug)} has no measure {quoted(key)}; {keys}.")
    spec = next(s for s in target.family.measure_specs(target.context()) if s.key == key)
    chosen = in_rank_order(table.run_rows(key, "ranked"), key, spec.lower_is_better)
    if len(chosen) < 2:
        raise InvalidInput("At least two ranked runs with a value of the measure are needed.")
    _labels, rows = resampling_rows(target, source, chosen, key)
    units = len(rows[0].rows)
    if units < 2:
        raise InvalidInput("At least two units (queries or items) are needed to split the set.")
    found = meta_evaluate(rows, seed=seed, splits=splits, lower_is_better=spec.lower_is_better)
    pairs, adjacent = separated(current_report(session, target, official, key))
    return {
        "runs": len(rows),
        "units": units,
        "pairs_significant": pairs,
        "adjacent_significant": adjacent,
        "splits": found.splits,
        "tau_mean": found.tau_mean,
        "tau_p05": found.tau_p05,
        "top_stable": found.top_stable,
    }


def _signed(value: float) -> str:
    return f"{value:.2f}".replace("-", "−")


def sentence(report: dict[str, Any]) -> str:
    """Return the meta-evaluation in one sentence, as the results page and the caption state it."""
    agree = f"agree on the order with τ = {_signed(report['tau_mean'])}"
    pairs = report["pairs_significant"]
    if pairs is None:
        return (
            f"halves of this test set {agree} "
            "(no analysis yet says which pairs of runs it separates)"
        )
    return f"this test set separates {pairs:.0%} of the pairs; halves of it {agree}".replace(
        "%", " %"
    )


def to_markdown(report: dict[str, Any], caption: str, measure: str) -> str:
    """Return the meta-evaluation as Markdown: a caption, a table of its numbers, the sentence."""

    def share(value: float | None) -> str:
        return "no analysis yet" if value is None else f"{value:.0%}".replace("%", " %")

    lines = [
        f"Meta-evaluation of {caption}, {measure}",
        "",
        "| | |",
        "|---|---|",
        f"| Ranked runs | {report['runs']} |",
        f"| Units | {report['units']} |",
        f"| Pairs significant | {share(report['pairs_significant'])} |",
        f"| Adjacent pairs significant | {share(report['adjacent_significant'])} |",
        f"| Half-splits | {report['splits']} |",
        f"| Kendall's τ_b, mean | {_signed(report['tau_mean'])} |",
        f"| Kendall's τ_b, 5th percentile | {_signed(report['tau_p05'])} |",
        f"| Same top run on both halves | {share(report['top_stable'])} |",
        "",
        sentence(report)[0].upper() + sentence(report)[1:] + ".",
        "",
    ]
    return "\n".join(lines)
