"""What the classification and regression families share: one value per item, read and bounded.

Gold and runs are ``id<whitespace>value`` lines (``leaderboard.formats.items``); a family
supplies the value parser, its measure registry, the scoring and the baselines.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import IO, Any

import numpy as np

from leaderboard.formats import items
from leaderboard.scoring.registry import MeasureRegistry, UnknownMeasure
from leaderboard.tables.model import MeasureSpec
from leaderboard.tasks.definition import DefinitionError, SubtaskDef, TaskDefinition
from leaderboard.tasks.families.base import (
    Context,
    MeasureResult,
    ReferenceFileError,
    SingleFileFamily,
    Verdict,
    check_units,
    read_all,
)


@dataclass(frozen=True, eq=False)
class ItemsGold:
    """A parsed gold file with what scoring needs: the parser and the measures asked for."""

    gold: items.ItemGold
    parser: items.ValueParser
    measures: tuple[str, ...]
    #: Family data derived from the definition (e.g. the declared labels).
    extra: dict[str, Any] = field(default_factory=dict)


class ItemFamily(SingleFileFamily[ItemsGold, np.ndarray]):
    """A family whose runs give one value per gold item, in any order."""

    file_roles = {"gold": True}
    #: Any family's table can take the subindex style of the overview papers.
    table_styles = ("ranked",)
    unit = "item"
    unit_plural = "items"
    registry: MeasureRegistry
    #: Options a set may carry besides its slug, title and gold (e.g. ``weights``).
    set_option_keys: tuple[str, ...] = ()

    @abstractmethod
    def value_parser(self, definition: TaskDefinition, subtask: SubtaskDef) -> items.ValueParser:
        """Return the parser of a value field for a subtask (raise DefinitionError if wrong)."""

    def check_measure(self, key: str, definition: TaskDefinition, subtask: SubtaskDef) -> None:
        """Raise UnknownMeasure or ValueError unless ``key`` is a measure of this subtask."""
        self.registry.get(key)

    def check_definition(self, definition: TaskDefinition) -> None:
        """Refuse unknown options, set keys, measures and baseline recipes, naming the key."""
        for i, st in enumerate(definition.subtasks):
            where = f"subtasks[{i}]"
            self.check_subtask_keys(st, where)
            self.value_parser(definition, st)
            for j, s in enumerate(st.sets):
                extra = sorted(set(s.options) - set(self.set_option_keys))
                if extra:
                    names = ", ".join(("slug", "title", "gold", *self.set_option_keys))
                    raise DefinitionError(
                        f"{where}.sets[{j}].{extra[0]}",
                        f"unknown key for a {self.name} set; a set names {names}",
                    )
            for key in st.measures:
                try:
                    self.check_measure(key, definition, st)
                except (UnknownMeasure, ValueError) as exc:
                    raise DefinitionError(f"{where}.measures", str(exc)) from None
        self.check_recipes(definition)

    def measure_specs(self, ctx: Context) -> list[MeasureSpec]:
        """Return the subtask's measures as the registry describes them."""
        return self.registry_specs(self.registry, ctx)

    def load_gold(self, files: Mapping[str, bytes], ctx: Context) -> ItemsGold:
        """Parse the gold file with the subtask's value parser."""
        parser = self.value_parser(ctx.definition, ctx.subtask)
        gold, issues = items.parse_gold(files["gold"], parser, weighted=self.weighted_gold(ctx))
        if gold is None:
            raise ReferenceFileError.listing("gold", issues)
        return ItemsGold(gold, parser, tuple(ctx.subtask.measures), self.gold_extra(ctx))

    def weighted_gold(self, ctx: Context) -> bool:
        """Return whether the set's gold lines carry a third field, the item's weight."""
        return False

    def gold_extra(self, ctx: Context) -> dict[str, Any]:
        """Return family data from the definition that scoring needs."""
        return {}

    def describe_gold(self, gold: ItemsGold, role: str) -> list[str]:
        """Report the gold's size (and total weight, when weighted)."""
        if gold.gold.weights is not None:
            return [f"{len(gold.gold):,} items, weights summing to {gold.gold.weights.sum():g}."]
        return [f"{len(gold.gold):,} items."]

    def run_lines(self, gold: ItemsGold, ctx: Context) -> tuple[int, str]:
        """Bound a run by the gold: at most twice its items (comments included) plus 100 lines."""
        n = len(gold.gold)
        return 2 * n + 100, f"a run for {ctx.where} has one line per item, {n:,} lines"

    def validate_file(
        self,
        stream: IO[bytes],
        gold: ItemsGold,
        ctx: Context,
        *,
        lenient: bool,
        options: Mapping[str, Any],
    ) -> Verdict[np.ndarray]:
        """Validate a run strictly (participants) or as historical files were (lenient)."""
        data = read_all(stream)
        if lenient:
            imported = items.import_lenient(data, gold.gold, gold.parser)
            return Verdict(
                imported.errors,
                [],
                imported.values if not imported.errors else None,
                tuple(imported.tolerated),
                {"tolerances": list(imported.tolerated)} if imported.tolerated else {},
            )
        values, errors, warnings = items.validate_run(data, gold.gold, gold.parser)
        return Verdict(errors, warnings, values)

    def result(
        self,
        key: str,
        value: float | None,
        reason: str,
        per_item: np.ndarray | None,
        gold: ItemsGold,
    ) -> MeasureResult:
        """Return a measure's result with its official string, or undefined with ``reason``."""
        if value is None:
            return MeasureResult.undefined(reason)
        return MeasureResult(
            value,
            self.registry.get(key).official(value),
            per_query=None if per_item is None else self.per_item(gold, per_item),
        )

    def item_values(self, parsed: np.ndarray, gold: ItemsGold) -> dict[str, Any]:
        """Return the run's prediction per item id, as the run file gives it."""
        return dict(zip(gold.gold.ids, self.predictions(parsed, gold), strict=True))

    def predictions(self, values: np.ndarray, gold: ItemsGold) -> list[Any]:
        """Return parsed values in gold order as stored (numbers; families may name them)."""
        return list(values.tolist())

    def unit_ids(self, gold: ItemsGold) -> list[str]:
        """Return the item ids in gold order."""
        return list(gold.gold.ids)

    def restrict_gold(self, gold: ItemsGold, units: frozenset[str]) -> ItemsGold:
        """Return the gold on these items; the parser, measures and labels stay the set's."""
        check_units(units, gold.gold.index)
        keep = _rows_of(gold, units)
        whole = gold.gold
        ids = tuple(whole.ids[i] for i in keep.tolist())
        part = items.ItemGold(
            ids,
            whole.values[keep],
            {item: row for row, item in enumerate(ids)},
            None if whole.weights is None else whole.weights[keep],
        )
        return replace(gold, gold=part)

    def restrict_run(
        self, parsed: np.ndarray, gold: ItemsGold, units: frozenset[str]
    ) -> np.ndarray:
        """Return the run's values on these items (a run's values are in gold order)."""
        return parsed[_rows_of(gold, units)]

    def per_item(self, gold: ItemsGold, values: np.ndarray) -> dict[str, float]:
        """Return per-item values keyed by item id."""
        return dict(zip(gold.gold.ids, values.tolist(), strict=True))


def _rows_of(gold: ItemsGold, units: frozenset[str]) -> np.ndarray:
    """Return the gold rows of these items, in gold order (ids the gold lacks are ignored)."""
    index = gold.gold.index
    return np.sort(np.array([index[u] for u in units if u in index], dtype=np.intp))
