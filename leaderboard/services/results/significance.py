"""Paired significance between the runs of a live table, from the values their scores keep.

Every number of a report is in the scale the table shows (CQA's MAP in percent): run values,
differences and intervals are the stored values times the column's factor, and the report says
so with ``"scale": "table"`` (reports stored before it hold stored-scale numbers, see
``report_scale``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np
from sqlalchemy import select
from sqlalchemy.orm import Session, selectinload, undefer

from leaderboard.formats.issues import quoted
from leaderboard.models import Run, Score
from leaderboard.scoring.rank_intervals import rank_intervals
from leaderboard.scoring.resampling import (
    FloatArray,
    NotResampled,
    SummedRows,
    UnitRows,
    bootstrap_values,
)
from leaderboard.scoring.significance import (
    METHODS,
    PER_QUERY_METHODS,
    NotTestable,
    adjust,
    clusters,
    compare_pairs,
    intervals_of,
)
from leaderboard.services.common.errors import InvalidInput
from leaderboard.services.results.anonymity import ALL_NAMES
from leaderboard.services.results.parts import default_part
from leaderboard.services.results.report_scale import TABLE_SCALE
from leaderboard.services.results.tables import live_table
from leaderboard.services.results.unit_values import kept_values
from leaderboard.services.tasks.catalog import load_set
from leaderboard.storage import Store
from leaderboard.tables.model import MeasureSpec, Row, Table
from leaderboard.targets import Target
from leaderboard.tasks.families.base import StoredScore
from leaderboard.tasks.splitting import SetSplit

CORRECTIONS = ("holm", "none")
RUN_CHOICES = ("ranked", "all")
#: Differences within this fraction of the measure's magnitude count as ties.
RELATIVE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Request:
    """What to test: the measure (None: the official one), method, samples, seed and rules."""

    measure: str | None = None
    method: str = "randomization"
    samples: int = 10_000
    seed: int = 0
    alpha: float = 0.05
    correction: str = "holm"
    runs: str = "ranked"


#: The fields of a request that say how it tests, as a job row and a frozen record name them.
TESTING_FIELDS = ("method", "samples", "seed", "alpha", "correction")


def testing_settings(request: Request) -> dict[str, Any]:
    """Return how a request tests (its ``TESTING_FIELDS``), by field name."""
    return {name: getattr(request, name) for name in TESTING_FIELDS}


def check_request(request: Request) -> None:
    """Raise InvalidInput naming the first setting of a request that is out of range."""
    if request.method not in METHODS:
        raise InvalidInput(
            f"Unknown method {quoted(request.method)}; methods: {', '.join(METHODS)}."
        )
    if request.correction not in CORRECTIONS:
        raise InvalidInput(
            f"Unknown correction {quoted(request.correction)}; use {' or '.join(CORRECTIONS)}."
        )
    if request.runs not in RUN_CHOICES:
        raise InvalidInput(f"--runs is ranked or all, not {quoted(request.runs)}.")
    if not 1 <= request.samples <= 1_000_000:
        raise InvalidInput(f"samples must be between 1 and 1,000,000, not {request.samples}.")
    if not 0 < request.alpha < 1:
        raise InvalidInput(f"alpha must be between 0 and 1, not {request.alpha}.")
    if not 0 <= request.seed < 2**63:
        raise InvalidInput(f"seed must be a non-negative integer below 2^63, not {request.seed}.")


def stored_scores(
    session: Session,
    run_ids: list[int],
    measure: str,
    part: str = "all",
    split: SetSplit | None = None,
) -> dict[int, StoredScore]:
    """Return each run's kept values of one measure on one part (current scores only).

    ``split`` is the set's split, from which a part's values kept on all units are derived.
    """
    runs = session.scalars(
        select(Run)
        .where(Run.id.in_(run_ids))
        .options(
            undefer(Run.item_values),
            selectinload(Run.scores).options(undefer(Score.per_query), undefer(Score.item_stats)),
        )
    ).all()
    out: dict[int, StoredScore] = {}
    for run in runs:
        score = run.current_score(measure, part)
        if score is None:
            continue
        whole = run.current_score(measure, "all") if score.units_from_all else None
        per_query, item_stats = kept_values(score, whole, split)
        out[run.id] = StoredScore(per_query, item_stats, run.item_values)
    return out


def _aligned(units: list[list[str]], rows: list[UnitRows], labels: list[str]) -> list[UnitRows]:
    """Return every run's rows in the first run's unit order; refuse runs on other units."""
    first = units[0]
    position = {u: i for i, u in enumerate(first)}
    out: list[UnitRows] = []
    for ids, run_rows, label in zip(units, rows, labels, strict=True):
        if ids == first:
            out.append(run_rows)
            continue
        if set(ids) != set(first) or len(ids) != len(first):
            raise InvalidInput(
                f"{quoted(label)} was scored on other queries or items than {quoted(labels[0])}; "
                "re-score the set so that every run covers the same ones."
            )
        order = np.argsort([position[u] for u in ids])
        if isinstance(run_rows, SummedRows) and run_rows.mean_of is not None:
            out.append(
                replace(run_rows, rows=run_rows.rows[order], mean_of=run_rows.mean_of[order])
            )
        else:
            out.append(replace(run_rows, rows=run_rows.rows[order]))
    return out


def resampling_rows(
    target: Target, source: Source, chosen: list[Row], measure: str
) -> tuple[list[str], list[UnitRows]]:
    """Return the chosen rows' labels and their resampling rows of one measure, aligned."""
    labels = [row.label for row in chosen]
    stored = source.scores([r.run_id for r in chosen if r.run_id is not None], measure)
    units: list[list[str]] = []
    rows: list[UnitRows] = []
    try:
        for row in chosen:
            assert row.run_id is not None
            if row.run_id not in stored:
                raise NotResampled(f"{row.label} keeps no value of {measure}")
            ids, run_rows = target.family.unit_rows(measure, source.gold, stored[row.run_id])
            units.append(ids)
            rows.append(run_rows)
    except NotResampled as exc:
        raise InvalidInput(f"{measure} cannot be resampled: {exc}") from None
    return labels, _aligned(units, rows, labels)


#: Each listed run's kept values of one measure, by run id.
ScoreLookup = Callable[[list[int], str], dict[int, StoredScore]]


@dataclass(frozen=True)
class Source:
    """What an analysis reads: a table, the set's parsed gold and its runs' kept values."""

    table: Table
    gold: Any
    scores: ScoreLookup


def source_of(session: Session, store: Store, target: Target) -> Source:
    """Build the live table and load the gold an analysis of the set reads, once for all parts."""
    # Analyses are the organizers' own: computed and stored with every team's name.
    # On a split set, on the part every reader sees, with that part's own gold.
    part = default_part(session, target)
    table = live_table(session, store, target, ALL_NAMES, analysed=False, part=part)
    loaded = load_set(session, store, target)
    return Source(
        table,
        loaded.gold_of(part),
        partial(stored_scores, session, part=part, split=loaded.split),
    )


def intervals(
    target: Target, source: Source, *, samples: int, seed: int, ranked_on: str | None = None
) -> tuple[dict[str, dict[str, list[float]]], dict[str, list[int]]]:
    """Return every run's 95 % bootstrap interval of each resampled measure, and rank intervals.

    Both by run id. The rank intervals are those of the table's ranked rows on measure
    ``ranked_on``, from the very bootstrap samples of that measure's intervals.
    """
    table = source.table
    specs = {s.key: s for s in target.family.measure_specs(target.context())}
    out: dict[str, dict[str, list[float]]] = {}
    ranks: dict[str, list[int]] = {}
    for column in table.columns:
        chosen = table.run_rows(column.key, "all")
        if not chosen:
            continue
        try:
            _labels, rows = resampling_rows(target, source, chosen, column.key)
        except InvalidInput:
            continue  # a measure that keeps nothing to resample has no interval
        boot = bootstrap_values(rows, seed, samples)
        scale = specs[column.key].scale
        for row, (low, high) in zip(chosen, intervals_of(boot), strict=True):
            if np.isfinite(low) and np.isfinite(high):
                out.setdefault(str(row.run_id), {})[column.key] = [low * scale, high * scale]
        if column.key == ranked_on:
            ranks = _rank_intervals(table, chosen, boot, specs[column.key])
    return out, ranks


def _rank_intervals(
    table: Table, chosen: list[Row], boot: FloatArray, spec: MeasureSpec
) -> dict[str, list[int]]:
    """Return the rank interval of each ranked row among ``chosen`` (the columns of ``boot``).

    On-time runs displace each other; baselines and late or corrected runs are ranked "as if",
    as the table ranks them, without displacing anyone.
    """
    ranked = {row.run_id for row in table.run_rows(spec.key, "ranked")}
    columns = [k for k, row in enumerate(chosen) if row.run_id in ranked]
    if not columns:
        return {}
    field = [
        chosen[k].kind == "run" and not (chosen[k].late or chosen[k].corrected) for k in columns
    ]
    found = rank_intervals(boot[:, columns], lower_is_better=spec.lower_is_better, field=field)
    return {
        str(chosen[k].run_id): [low, high] for k, (low, high) in zip(columns, found, strict=True)
    }


def in_rank_order(rows: list[Row], measure: str, lower_is_better: bool) -> list[Row]:
    """Return rows best first by a measure (ties in table order), wherever the layout prints them.

    A style may print baselines below the runs; the analysis places them "as if" they took part.
    """

    def value(row: Row) -> float:
        cell = row.cells[measure]
        assert cell is not None
        return cell.value if lower_is_better else -cell.value

    return sorted(rows, key=value)


def significance(target: Target, source: Source, request: Request) -> dict[str, Any]:
    """Test every pair of the table's runs on one measure; return the report (JSON-ready)."""
    check_request(request)
    table = source.table
    official = table.official_key
    measure = request.measure or official
    if measure not in {c.key for c in table.columns}:
        keys = ", ".join(c.key for c in table.columns)
        raise InvalidInput(f"{quoted(target.task.slug)} has no measure {quoted(measure)}; {keys}.")
    spec = next(s for s in target.family.measure_specs(target.context()) if s.key == measure)
    scale = spec.scale
    chosen = in_rank_order(table.run_rows(measure, request.runs), measure, spec.lower_is_better)
    if len(chosen) < 2:
        raise InvalidInput("At least two runs with a value of the measure are needed.")
    labels, rows = resampling_rows(target, source, chosen, measure)
    values = [r.value() for r in rows]
    tolerance = RELATIVE_TOLERANCE * max(1.0, *(abs(v) for v in values))
    per_query = None
    if request.method in PER_QUERY_METHODS:
        if not all(isinstance(r, SummedRows) and r.mean_of is not None for r in rows):
            raise InvalidInput(
                f"The {request.method} tests per-query values; {measure} is not their mean."
            )
        per_query = [r.mean_of for r in rows if isinstance(r, SummedRows) and r.mean_of is not None]
    pairs = [(i, j) for i in range(len(rows)) for j in range(i + 1, len(rows))]
    try:
        results = compare_pairs(
            rows,
            pairs,
            method=request.method,
            seed=request.seed,
            samples=request.samples,
            tolerance=tolerance,
            per_query=per_query,
            scale=scale,
        )
    except NotTestable as exc:
        raise InvalidInput(str(exc)) from None
    results = adjust(results, request.correction)
    groups = clusters(
        range(len(rows)), results, request.alpha, lower_is_better=spec.lower_is_better
    )
    resampled = request.method not in PER_QUERY_METHODS
    return {
        "task": target.task.slug,
        "subtask": target.subtask.slug,
        "set": target.eval_set.slug,
        "measure": measure,
        "method": request.method,
        "samples": request.samples if resampled else None,
        "seed": request.seed if resampled else None,
        "alpha": request.alpha,
        "correction": request.correction,
        "runs": labels,
        "run_ids": [row.run_id for row in chosen],
        "baselines": [row.label for row in chosen if row.kind == "baseline"],
        "scale": TABLE_SCALE,
        "values": {str(r.run_id): v * scale for r, v in zip(chosen, values, strict=True)},
        "pairs": [
            {
                "a": labels[r.a],
                "b": labels[r.b],
                "diff": r.diff,
                "p": r.p,
                "p_adjusted": r.p_adjusted,
                "significant": r.p_adjusted < request.alpha,
            }
            for r in results
        ],
        "clusters": [[labels[i] for i in group] for group in groups],
    }


def analyse(target: Target, source: Source, request: Request) -> dict[str, Any]:
    """Return the report of a request on a source, with every run's intervals and rank intervals."""
    report = significance(target, source, request)
    report["intervals"], report["rank_intervals"] = intervals(
        target, source, samples=request.samples, seed=request.seed, ranked_on=report["measure"]
    )
    # The resamples behind both (a t-test's report has no "samples" of its own).
    report["interval_samples"] = request.samples
    return report
