"""The classification family: declared labels, scikit-learn's measures, label baselines."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import numpy as np

from leaderboard.formats import items
from leaderboard.formats.issues import quoted
from leaderboard.scoring.labels import (
    CLASSIFICATION_REGISTRY,
    check_labels,
    check_measure,
    classification_measures,
    measure_values,
    per_item_correct,
)
from leaderboard.scoring.resampling import NotResampled, SummedRows, UnitRows
from leaderboard.tasks.definition import DefinitionError, SetDef, SubtaskDef, TaskDefinition
from leaderboard.tasks.families.base import BaselineRun, Context, MeasureResult, StoredScore
from leaderboard.tasks.families.itemwise import ItemFamily, ItemsGold

#: Why kappa or MCC can have no value.
UNDEFINED_REASON = "undefined when gold and prediction are one same label"
#: Why a part of a weighted set has no values: a gold file of only its items would be refused.
ZERO_WEIGHT = "every item of this part weighs 0"
#: The seed of the random baseline when the subtask names none.
DEFAULT_SEED = 0


def labels_of(definition: TaskDefinition, subtask: SubtaskDef) -> tuple[list[str], dict[str, str]]:
    """Return a subtask's declared labels and aliases (a subtask may override the top level)."""
    labels = subtask.option(definition, "labels")
    aliases = subtask.option(definition, "label_aliases", {})
    return labels, aliases


def weights_of(definition: TaskDefinition, subtask: SubtaskDef, setdef: SetDef) -> bool:
    """Return whether a set's gold has item weights (a set overrides its subtask and the top).

    Raise ValueError unless ``weights`` is true or false.
    """
    value = setdef.options.get("weights", subtask.option(definition, "weights", False))
    if not isinstance(value, bool):
        raise ValueError(f"must be true or false, not {quoted(str(value))}")
    return value


def render(ids: tuple[str, ...], labels: list[str], predicted: np.ndarray) -> bytes:
    """Return a run file: ``id<TAB>label`` per item, in gold order."""
    return "".join(
        f"{item}\t{labels[k]}\n" for item, k in zip(ids, predicted.tolist(), strict=True)
    ).encode()


class ClassificationFamily(ItemFamily):
    """Runs label every gold item with a declared label (aliases allowed)."""

    name = "classification"
    option_keys = ("labels", "label_aliases", "random_seed", "weights")
    set_option_keys = ("weights",)
    registry = CLASSIFICATION_REGISTRY
    recipes = ("majority", "random", "all:<label>")

    def value_parser(self, definition: TaskDefinition, subtask: SubtaskDef) -> items.LabelParser:
        """Return the parser of the subtask's declared labels and aliases."""
        labels, aliases = labels_of(definition, subtask)
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
            raise DefinitionError("labels", "is required: the list of declared labels")
        if not isinstance(aliases, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in aliases.items()
        ):
            raise DefinitionError("label_aliases", "must be a table of alias = label")
        try:
            check_labels(labels)
            return items.LabelParser(labels, aliases)
        except ValueError as exc:
            key = "label_aliases" if "alias" in str(exc) else "labels"
            raise DefinitionError(key, str(exc)) from None

    def check_definition(self, definition: TaskDefinition) -> None:
        """Refuse what ItemFamily refuses, and a ``weights`` that is not true or false."""
        super().check_definition(definition)
        for i, st in enumerate(definition.subtasks):
            for j, s in enumerate(st.sets):
                if "weights" in s.options:
                    where = f"subtasks[{i}].sets[{j}].weights"
                elif "weights" in st.options:
                    where = f"subtasks[{i}].weights"
                else:
                    where = "weights"
                try:
                    weights_of(definition, st, s)
                except ValueError as exc:
                    raise DefinitionError(where, str(exc)) from None

    def check_measure(self, key: str, definition: TaskDefinition, subtask: SubtaskDef) -> None:
        """Raise unless ``key`` is a measure whose labels the subtask declares."""
        check_measure(key, labels_of(definition, subtask)[0])

    def check_recipe(self, recipe: str, definition: TaskDefinition) -> bool:
        """Accept majority, random and all:<label> for a label every subtask declares."""
        if recipe in ("majority", "random"):
            return True
        name, sep, label = recipe.partition(":")
        if name != "all" or not sep:
            return False
        for st in definition.subtasks:
            if label not in labels_of(definition, st)[0]:
                raise DefinitionError(
                    "baselines.recipes",
                    f"{quoted(recipe)} names a label that subtask {st.slug} does not declare",
                )
        return True

    def weighted_gold(self, ctx: Context) -> bool:
        """Return whether the set's gold lines carry item weights (``weights = true``)."""
        return weights_of(ctx.definition, ctx.subtask, ctx.set)

    def gold_extra(self, ctx: Context) -> dict[str, Any]:
        """Return the declared labels."""
        return {"labels": labels_of(ctx.definition, ctx.subtask)[0]}

    def score(self, values: np.ndarray, gold: ItemsGold) -> dict[str, MeasureResult]:
        """Return each measure; unweighted Acc carries its per-item values (1 correct, 0 wrong).

        With item weights Acc is a weighted mean, not the mean of per-item values: like the
        other measures it is resampled from the stored predictions.
        """
        labels = gold.extra["labels"]
        weights = gold.gold.weights
        found = classification_measures(gold.gold.values, values, labels, gold.measures, weights)
        return {
            key: self.result(
                key,
                value,
                UNDEFINED_REASON,
                per_item_correct(gold.gold.values, values)
                if key == "Acc" and weights is None
                else None,
                gold,
            )
            for key, value in found.items()
        }

    def score_part(
        self, parsed: np.ndarray, gold: ItemsGold, part_gold: ItemsGold, units: frozenset[str]
    ) -> dict[str, MeasureResult]:
        """Score a run on a part of the items; a part whose items all weigh 0 has no values."""
        weights = part_gold.gold.weights
        if weights is not None and not (weights > 0).any():
            return {key: MeasureResult.undefined(ZERO_WEIGHT) for key in part_gold.measures}
        return super().score_part(parsed, gold, part_gold, units)

    def unit_rows(
        self, key: str, gold: ItemsGold, stored: StoredScore
    ) -> tuple[list[str], UnitRows]:
        """Return one confusion cell per item (one-hot rows), the measure from their sums."""
        weights = gold.gold.weights
        if key == "Acc" and stored.per_query is not None and weights is None:
            return super().unit_rows(key, gold, stored)  # a mean of per-item 0/1
        labels = gold.extra["labels"]
        if stored.item_values is None:
            raise NotResampled(
                f"{key}: the run keeps no predicted labels (scored before they were)"
            )
        index = {label: i for i, label in enumerate(labels)}
        ids = list(gold.gold.ids)
        predicted = np.array(
            [index.get(stored.item_values.get(i), -1) for i in ids], dtype=np.int64
        )
        if (predicted < 0).any():
            raise NotResampled(f"{key}: the stored predictions do not cover the gold; re-score")
        n = len(labels)
        rows = np.zeros((len(ids), n * n))
        # Each item counts its weight (scikit-learn's sample_weight), or 1.
        rows[np.arange(len(ids)), gold.gold.values * n + predicted] = (
            1.0 if weights is None else weights
        )
        measure = check_measure(key, labels)
        return ids, SummedRows(
            rows, lambda sums: measure_values(sums.reshape(*sums.shape[:-1], n, n), measure)
        )

    def predictions(self, values: np.ndarray, gold: ItemsGold) -> list[Any]:
        """Return the predicted labels by their declared names (aliases resolved)."""
        labels = gold.extra["labels"]
        return [labels[i] for i in values.tolist()]

    def baselines(
        self, gold: ItemsGold, files: Mapping[str, bytes], ctx: Context
    ) -> list[BaselineRun]:
        """Build the majority, seeded random and all:<label> runs the definition asks for."""
        labels = gold.extra["labels"]
        truth = gold.gold.values
        n = len(gold.gold)
        out: list[BaselineRun] = []
        for order, recipe in enumerate(ctx.definition.baseline_recipes, 1):
            if recipe == "majority":
                # With item weights the most frequent label is the one of most weight.
                counts = np.bincount(truth, weights=gold.gold.weights, minlength=len(labels))
                # argmax takes the first of equal counts: ties go by declared order.
                k = int(np.argmax(counts))
                predicted = np.full(n, k, dtype=np.int64)
                label = f"Majority ({labels[k]})"
                description = f"Every item labelled {labels[k]!r}, the most frequent gold label."
            elif recipe == "random":
                seed = int(ctx.subtask.option(ctx.definition, "random_seed", DEFAULT_SEED))
                rng = random.Random(seed)
                predicted = np.array([rng.randrange(len(labels)) for _ in range(n)])
                label = f"Random (seed {seed})"
                description = f"Labels drawn uniformly with seed {seed}."
            else:
                name = recipe.partition(":")[2]
                predicted = np.full(n, labels.index(name), dtype=np.int64)
                label = f"All {name}"
                description = f"Every item labelled {name!r}."
            out.append(
                BaselineRun(
                    recipe.replace(":", "-"),
                    label,
                    order,
                    tuple(ctx.subtask.measures),
                    {"file": render(gold.gold.ids, labels, predicted)},
                    description,
                )
            )
        return out
