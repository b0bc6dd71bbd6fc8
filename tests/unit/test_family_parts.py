"""The family seam: the few methods a family must write, and the parts it may override."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from leaderboard.tables.model import MeasureSpec
from leaderboard.tasks.definition import TaskDefinition
from leaderboard.tasks.families import all_families
from leaderboard.tasks.families.base import (
    BaselineRun,
    Context,
    DefinitionKeys,
    Diagnostics,
    Family,
    GoldAddressing,
    GoldSlot,
    ImportOptions,
    InputBound,
    MeasureResult,
    RunInputs,
    RunPathError,
    RunUpload,
    SingleFileFamily,
    TableNotes,
    TableOptions,
    UnitParts,
    UnitValues,
    Verdict,
)

PARTS = (
    DefinitionKeys,
    TableNotes,
    TableOptions,
    RunUpload,
    ImportOptions,
    GoldAddressing,
    Diagnostics,
    UnitValues,
    UnitParts,
)


class Bare(Family[int, str]):
    """A family writing only what it must: gold is a count, a run one string."""

    name = "bare"
    file_roles = {"gold": True}

    def check_definition(self, definition: TaskDefinition) -> None:
        """Accept every definition."""

    def measure_specs(self, ctx: Context) -> list[MeasureSpec]:
        """Return no column."""
        return []

    def load_gold(self, files: Mapping[str, bytes], ctx: Context) -> int:
        """Return the gold's size."""
        return len(files["gold"])

    def input_bounds(self, gold: int, ctx: Context) -> dict[str, InputBound]:
        """Bound nothing."""
        return {}

    def validate_inputs(
        self,
        inputs: RunInputs,
        gold: int,
        ctx: Context,
        *,
        lenient: bool,
        options: Mapping[str, Any],
    ) -> Verdict[str]:
        """Accept every run."""
        return Verdict([], [], "run")

    def score(self, parsed: str, gold: int) -> dict[str, MeasureResult]:
        """Score nothing."""
        return {}

    def baselines(self, gold: int, files: Mapping[str, bytes], ctx: Context) -> list[BaselineRun]:
        """Build no baseline."""
        return []


def test_a_family_must_write_the_seven_abstract_methods() -> None:
    assert Family.__abstractmethods__ == {
        "check_definition",
        "measure_specs",
        "load_gold",
        "input_bounds",
        "validate_inputs",
        "score",
        "baselines",
    }


def test_a_single_file_family_writes_the_bound_and_asks_for_lines_and_a_file_check() -> None:
    assert SingleFileFamily.__abstractmethods__ == {
        "check_definition",
        "measure_specs",
        "load_gold",
        "run_lines",
        "validate_file",
        "score",
        "baselines",
    }


def test_a_family_missing_a_method_cannot_be_made() -> None:
    class Half(Family[int, str]):
        name = "half"
        file_roles: dict[str, bool] = {}

    with pytest.raises(TypeError, match="abstract"):
        Half()  # type: ignore[abstract]


def test_every_optional_part_has_its_defaults() -> None:
    family = Bare()
    assert all(isinstance(family, part) for part in PARTS)
    assert family.gold_slots(None) == [GoldSlot("gold", "gold")]  # type: ignore[arg-type]
    assert family.marker_texts() == {}
    assert family.run_notes({"x": 1}) == []
    assert family.kept_options({"x": True}, lenient=True) == {}
    assert family.stored_options({}) == {}
    assert family.describe_gold(3, "gold") == []
    assert family.item_values("run", 3) is None
    assert family.score_file(Path("run.txt")) is None
    assert (family.unit, family.unit_plural) == ("query", "queries")
    assert family.table_reads_gold() is False


def test_a_family_that_writes_no_unit_parts_cannot_be_split() -> None:
    with pytest.raises(NotImplementedError, match="Bare does not split its units"):
        Bare().restrict_gold(3, frozenset(["1"]))
    with pytest.raises(NotImplementedError, match="Bare does not split its units"):
        Bare().score_part("run", 3, 3, frozenset(["1"]))


def test_a_folder_is_refused_as_a_single_file_run(tmp_path: Path) -> None:
    with pytest.raises(RunPathError, match="is a folder; a run of this task is one file"):
        Bare().inputs_from_path(tmp_path, None)  # type: ignore[arg-type]


def test_only_a_family_overriding_table_options_reads_the_gold_for_its_table() -> None:
    class Counting(Bare):
        def table_options(self, gold: int) -> dict[str, Any]:
            return {"count": gold}

    assert Counting().table_reads_gold() is True
    readers = {f.name for f in all_families() if f.table_reads_gold()}
    assert readers == {"trec"}


def test_every_built_in_family_is_made_of_the_parts() -> None:
    for family in all_families():
        assert all(isinstance(family, part) for part in PARTS), family.name
