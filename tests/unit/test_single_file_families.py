"""The single-file families refuse a missing file, an archive and an unknown recipe alike."""

from __future__ import annotations

import dataclasses
import io
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest

from leaderboard.tasks.definition import PRESETS_DIR, DefinitionError
from leaderboard.tasks.families import get_family
from leaderboard.tasks.families.base import Context, Family, SingleFileFamily
from leaderboard.tasks.loading import load_definition_file

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
#: One definition per family, the run files of its first subtask's first set.
DEFINITIONS = {
    "cqa": PRESETS_DIR / "semeval2016-task3" / "task.toml",
    "trec": EXAMPLES / "trec" / "task.toml",
    "classification": EXAMPLES / "classification" / "task.toml",
    "regression": EXAMPLES / "regression" / "task.toml",
    "generation": EXAMPLES / "generation" / "task.toml",
    "sts": PRESETS_DIR / "semeval2016-task1" / "task.toml",
}
SINGLE_FILE = ["cqa", "trec", "classification", "regression", "generation"]


def first_set(path: Path) -> tuple[Family, Context, Any]:
    """Return a definition's family, the context of its first set and that set's gold."""
    definition = load_definition_file(path)
    sub = definition.subtasks[0]
    setdef = sub.sets[0]
    family = get_family(definition.family)
    ctx = Context(definition, sub, setdef.slug)
    files = {role: definition.file_path(p).read_bytes() for role, p in setdef.files.items()}
    return family, ctx, family.load_gold(files, ctx)


def zipped() -> bytes:
    """Return a zip archive holding one run file."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("run.txt", "q1\t1\n")
    return out.getvalue()


@pytest.mark.parametrize("name", SINGLE_FILE)
def test_a_single_file_family_refuses_a_missing_file_and_an_archive(name: str) -> None:
    family, ctx, gold = first_set(DEFINITIONS[name])
    assert isinstance(family, SingleFileFamily)
    for lenient in (False, True):
        missing = family.validate({}, gold, ctx, lenient=lenient, options={})
        assert [e.message for e in missing.errors] == ["No run file was given."]
        archive = family.validate(
            {"file": io.BytesIO(zipped())}, gold, ctx, lenient=lenient, options={}
        )
        assert [e.message for e in archive.errors] == [
            "Archives (zip, tar) are not accepted; upload the plain-text run file or a .gz of it."
        ]
        assert not missing.ok and not archive.ok


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("cqa", "unknown recipe 'oracle'; known: ir, random, true, false"),
        ("sts", "unknown recipe 'oracle'; known: cosine-bow"),
        ("classification", "unknown recipe 'oracle'; known: majority, random, all:<label>"),
        ("regression", "unknown recipe 'oracle'; known: mean, random"),
        ("generation", "unknown recipe 'oracle'; known: copy-source"),
        ("trec", "unknown recipe 'oracle'; the trec family has no generated baselines"),
    ],
)
def test_every_family_refuses_an_unknown_recipe_in_one_wording(name: str, message: str) -> None:
    definition = load_definition_file(DEFINITIONS[name])
    wrong = dataclasses.replace(definition, baseline_recipes=("oracle",))
    with pytest.raises(DefinitionError, match=re.escape(message)) as refused:
        get_family(definition.family).check_definition(wrong)
    assert (refused.value.key, refused.value.message) == ("baselines.recipes", message)
