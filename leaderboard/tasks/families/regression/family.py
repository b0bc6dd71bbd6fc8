"""The regression family: one number per item; scipy's correlations and the mean errors."""

from __future__ import annotations

import random
from collections.abc import Mapping

import numpy as np

from leaderboard.formats import items
from leaderboard.scoring.pearson_sums import pearson_from_sums, pearson_rows, sums_accurate
from leaderboard.scoring.regression import (
    REGRESSION_REGISTRY,
    absolute_errors,
    kendall_tau_b,
    pearson,
    regression_measures,
    spearman,
    squared_errors,
)
from leaderboard.scoring.resampling import NotResampled, RecomputedRows, SummedRows, UnitRows
from leaderboard.tasks.definition import SubtaskDef, TaskDefinition
from leaderboard.tasks.families.base import BaselineRun, Context, MeasureResult, StoredScore
from leaderboard.tasks.families.itemwise import ItemFamily, ItemsGold

#: Why a measure can have no value.
UNDEFINED_REASONS = {
    "Pearson": "the prediction (or the gold) is constant",
    "Spearman": "the prediction (or the gold) is constant",
    "Kendall": "the prediction (or the gold) is constant",
}
OVERFLOW_REASON = "the errors exceed the range of a double"
DEFAULT_SEED = 0


def render(ids: tuple[str, ...], values: np.ndarray) -> bytes:
    """Return a run file: ``id<TAB>value`` per item, in gold order, values as Python writes them."""
    return "".join(
        f"{item}\t{value!r}\n" for item, value in zip(ids, values.tolist(), strict=True)
    ).encode()


class RegressionFamily(ItemFamily):
    """Runs give every gold item a finite decimal number."""

    name = "regression"
    option_keys = ("random_seed",)
    registry = REGRESSION_REGISTRY
    recipes = ("mean", "random")

    def value_parser(self, definition: TaskDefinition, subtask: SubtaskDef) -> items.DecimalParser:
        """Return the parser of finite plain decimals."""
        return items.DecimalParser()

    def score(self, values: np.ndarray, gold: ItemsGold) -> dict[str, MeasureResult]:
        """Return each measure; MSE and MAE carry their per-item squared and absolute errors."""
        truth = gold.gold.values
        found = regression_measures(truth, values, gold.measures)
        per_item = {
            "MSE": lambda: squared_errors(truth, values),
            "MAE": lambda: absolute_errors(truth, values),
        }
        return {
            key: self.result(
                key,
                found[key],
                UNDEFINED_REASONS.get(key, OVERFLOW_REASON),
                per_item[key]() if key in per_item and found[key] is not None else None,
                gold,
            )
            for key in gold.measures
        }

    def unit_rows(
        self, key: str, gold: ItemsGold, stored: StoredScore
    ) -> tuple[list[str], UnitRows]:
        """Return per-item rows: errors (MSE, MAE, RMSE), Pearson's sums, or (gold, prediction)."""
        if key in ("MSE", "MAE") and stored.per_query is not None:
            return super().unit_rows(key, gold, stored)
        if stored.item_values is None:
            raise NotResampled(
                f"{key}: the run keeps no predicted values (scored before they were)"
            )
        ids = list(gold.gold.ids)
        if any(i not in stored.item_values for i in ids):
            raise NotResampled(f"{key}: the stored predictions do not cover the gold; re-score")
        truth = np.asarray(gold.gold.values, dtype=np.float64)
        predicted = np.array([float(stored.item_values[i]) for i in ids])
        n = len(ids)
        if key == "RMSE":
            errors = squared_errors(truth, predicted).reshape(-1, 1)
            return ids, SummedRows(errors, lambda s: np.sqrt(s[..., 0] / n))
        correlation = {"Pearson": pearson, "Spearman": spearman, "Kendall": kendall_tau_b}[key]

        def measure(rows: np.ndarray) -> float:
            value = correlation(rows[:, -2], rows[:, -1])
            return float("nan") if value is None else value

        raw = np.column_stack([truth, predicted])
        if key != "Pearson":
            return ids, RecomputedRows(raw, measure)
        # Pearson's sums (offset: the gold mean, which every run shares), then the raw values.
        offset = float(np.mean(truth))
        rows = np.hstack([pearson_rows(predicted, truth, offset), raw])
        if sums_accurate(predicted, offset) and sums_accurate(truth, offset):
            return ids, SummedRows(rows, pearson_from_sums, recompute=measure)
        return ids, RecomputedRows(rows, measure)

    def baselines(
        self, gold: ItemsGold, files: Mapping[str, bytes], ctx: Context
    ) -> list[BaselineRun]:
        """Build the gold-mean and seeded random runs the definition asks for."""
        truth = gold.gold.values
        n = len(gold.gold)
        out: list[BaselineRun] = []
        for order, recipe in enumerate(ctx.definition.baseline_recipes, 1):
            if recipe == "mean":
                mean = float(np.mean(truth))
                predicted = np.full(n, mean)
                label = "Gold mean"
                description = f"Every item predicted as the gold mean, {mean:g}."
            else:
                seed = int(ctx.subtask.option(ctx.definition, "random_seed", DEFAULT_SEED))
                rng = random.Random(seed)
                low, high = float(np.min(truth)), float(np.max(truth))
                predicted = np.array([rng.uniform(low, high) for _ in range(n)])
                label = f"Random (seed {seed})"
                description = f"Uniform draws between the gold's minimum and maximum, seed {seed}."
            out.append(
                BaselineRun(
                    recipe,
                    label,
                    order,
                    tuple(ctx.subtask.measures),
                    {"file": render(gold.gold.ids, predicted)},
                    description,
                )
            )
        return out
