"""Split a loaded set into its public and private parts: the units of each and their gold."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from leaderboard.scoring.splits import LineIssue, Part, listed_public_units, public_units
from leaderboard.tasks.definition import PUBLIC_UNITS_ROLE, SplitDef
from leaderboard.tasks.families.base import Family, MeasureResult, PartGold

#: A run's per-unit values of one measure: per-query values by unit id, per-unit statistics.
UnitValues = tuple[dict[str, Any] | None, list[Any] | None]


class SplitRefused(ValueError):
    """A set's split cannot be made: every problem, as (line, message), the first as text."""

    def __init__(self, problems: list[LineIssue]) -> None:
        super().__init__(problems[0][1])
        self.problems = problems


@dataclass(frozen=True)
class SetSplit:
    """A split set: its definition, its units in gold order and the gold of each part."""

    definition: SplitDef
    units: tuple[str, ...]
    public: frozenset[str]
    golds: Mapping[str, PartGold]

    @property
    def counts(self) -> dict[str, int]:
        """Return how many units each part holds (organizer-only, like the units themselves)."""
        return {name: len(part.units) for name, part in self.golds.items()}

    def on_part(
        self,
        part: str,
        per_query: Mapping[str, Any] | None,
        item_stats: Sequence[Any] | None,
    ) -> UnitValues:
        """Return per-unit values kept on all units restricted to a part's, in gold order.

        ``per_query`` is keyed by unit id; ``item_stats`` holds a row per unit in gold order
        (``units``). Stats of another length cannot be restricted: ValueError.
        """
        chosen = self.golds[part].units
        values = None if per_query is None else {u: v for u, v in per_query.items() if u in chosen}
        if item_stats is None:
            return values, None
        if len(item_stats) != len(self.units):
            raise ValueError(f"{len(item_stats)} rows of statistics for {len(self.units)} units")
        return values, [
            row for unit, row in zip(self.units, item_stats, strict=True) if unit in chosen
        ]

    def derives(self, part: str, whole: MeasureResult | None, result: MeasureResult) -> bool:
        """Return whether a part's per-unit values are the whole run's on the part's units."""
        if whole is None or (result.per_query is None and result.item_stats is None):
            return False
        try:
            values, stats = self.on_part(part, whole.per_query, whole.item_stats)
        except ValueError:
            return False
        own = None if result.per_query is None else dict(result.per_query)
        return values == own and stats == result.item_stats


def split_set(
    family: Family[Any, Any], gold: Any, split: SplitDef, files: Mapping[str, bytes]
) -> SetSplit:
    """Return a set's parts from its gold and split; raise SplitRefused naming every problem."""
    try:
        units = tuple(family.unit_ids(gold))
    except NotImplementedError:
        raise SplitRefused(
            [(None, f"Tasks of the {family.name} family have no units to split: remove public.")]
        ) from None
    if split.listed:
        try:
            text = files[PUBLIC_UNITS_ROLE].decode("utf-8")
        except KeyError:
            raise SplitRefused([(None, "The set's public-units file is missing.")]) from None
        except UnicodeDecodeError as exc:
            raise SplitRefused(
                [(None, f"The public-units file is not UTF-8 text (byte {exc.start}).")]
            ) from None
        public, issues = listed_public_units(text, units)
        if issues:
            raise SplitRefused(issues)
    else:
        assert split.fraction is not None and split.seed is not None
        public = public_units(units, split.fraction, split.seed)
    private = frozenset(units) - public
    # A part without units has no score at all: refused rather than shown as an empty board.
    for name, chosen in ((Part.PUBLIC, public), (Part.PRIVATE, private)):
        if not chosen:
            raise SplitRefused(
                [
                    (
                        None,
                        f"The split leaves the {name.value} part without units "
                        f"({len(units)} units in the set); choose another fraction or seed.",
                    )
                ]
            )
    parts = {
        name.value: PartGold(chosen, family.restrict_gold(gold, chosen))
        for name, chosen in ((Part.PUBLIC, public), (Part.PRIVATE, private))
    }
    return SetSplit(split, units, public, parts)


def split_record(split: SetSplit, official_part: str) -> dict[str, Any]:
    """Return what a frozen ranking keeps of a split: its rule and both parts' unit lists."""
    record: dict[str, Any] = {"official_part": official_part}
    if split.definition.listed:
        record["rule"] = "listed"
    else:
        record.update(rule="sha256", fraction=split.definition.fraction, seed=split.definition.seed)
    record["public_units"] = [u for u in split.units if u in split.public]
    record["private_units"] = [u for u in split.units if u not in split.public]
    return record


def split_of_record(record: Mapping[str, Any]) -> SplitDef:
    """Return the split a frozen ranking's record describes."""
    if record.get("rule") == "listed":
        return SplitDef(official_part=str(record["official_part"]))
    return SplitDef(float(record["fraction"]), int(record["seed"]), str(record["official_part"]))
