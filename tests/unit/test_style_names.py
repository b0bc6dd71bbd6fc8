"""The generic table style is 'ranked'; its old name 'semeval-cqa' keeps working everywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from leaderboard.tables import Entry, MeasureSpec, Value, build_table
from leaderboard.tables.styles import register_style, style_name, unregister_style
from leaderboard.tasks.definition import DefinitionError
from leaderboard.tasks.loading import load_definition_file

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "classification"


def _with_style(tmp_path: Path, style: str) -> Path:
    text = (EXAMPLE / "task.toml").read_text()
    folder = tmp_path / "task"
    folder.mkdir()
    for path in EXAMPLE.iterdir():
        if path.is_file():
            (folder / path.name).write_bytes(path.read_bytes())
    (folder / "task.toml").write_text(
        text.replace(
            'family = "classification"', f'family = "classification"\ntable_style = "{style}"'
        )
    )
    return folder / "task.toml"


@pytest.mark.parametrize("style", ["ranked", "semeval-cqa"])
def test_a_generic_family_accepts_the_style_by_either_name(tmp_path: Path, style: str) -> None:
    assert load_definition_file(_with_style(tmp_path, style)).table_style == style


def test_a_style_of_another_family_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DefinitionError, match="uses table style 'ranked', not 'sts'"):
        load_definition_file(_with_style(tmp_path, "sts"))


def test_both_names_build_the_same_table_under_its_old_name() -> None:
    spec = MeasureSpec("Acc", "Acc", official=True)
    entries = [Entry("run", "A", "primary", "primary", {"Acc": Value(0.5, "0.5000")})]
    ranked, old = (
        build_table(name, task="t", subtask="s", set="test", entries=entries, measures=[spec])
        for name in ("ranked", "semeval-cqa")
    )
    assert ranked == old
    assert ranked.style == "semeval-cqa"  # the Table JSON and CSS class keep the old name
    assert style_name("semeval-cqa") == "ranked"


def test_a_registered_style_builds_and_leaves_again() -> None:
    def build(ctx, entries, measures):  # type: ignore[no-untyped-def]
        return build_table("ranked", task=ctx.task, subtask=ctx.subtask, set=ctx.set,
                           entries=entries, measures=measures)  # fmt: skip

    register_style("plain", build, lambda entry: "x", aliases=("old-plain",))
    try:
        with pytest.raises(ValueError, match="already registered"):
            register_style("old-plain", build, lambda entry: "y")
        spec = MeasureSpec("Acc", "Acc", official=True)
        table = build_table(
            "old-plain", task="t", subtask="s", set="x", entries=[], measures=[spec]
        )
        assert table.style == "semeval-cqa"
    finally:
        unregister_style("plain")
    with pytest.raises(ValueError, match="unknown table style 'old-plain'"):
        build_table("old-plain", task="t", subtask="s", set="x", entries=[], measures=[])
