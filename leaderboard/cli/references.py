"""Definitions and reference files read from disk, refused with the file and the line or key.

Loads no Flask, SQLAlchemy or service: ``score`` reads its definition and gold through here.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from leaderboard.tasks.definition import DefinitionError, SetDef, SubtaskDef, TaskDefinition
from leaderboard.tasks.families import get_family
from leaderboard.tasks.families.base import Context, ReferenceFileError, reference_problem
from leaderboard.tasks.loading import load_definition_file

#: What a family's ``load_gold`` raises for a reference file it cannot read.
REFERENCE_ERRORS = (ValueError, KeyError, UnicodeDecodeError)


class Refused(Exception):
    """An input file was refused; the message names the file and the line or key, ready to print."""


def read_definition(path: Path) -> TaskDefinition:
    """Return the checked definition in ``path``, or raise Refused naming the file and key."""
    try:
        return load_definition_file(path)
    except OSError as exc:
        raise Refused(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except DefinitionError as exc:
        # A TOML syntax error has no key; its message ends with the line and column.
        what = exc.message if exc.key == "(file)" else f"{exc.key}: {exc.message}"
        raise Refused(f"{path}: the task definition was refused: {what}") from None


def refusal(exc: Exception, names: Mapping[str, str], fallback: str) -> str:
    """Return ``<file name>: <problem>`` for a reference error, the file found by its role.

    Without a role (a plain ValueError), a set's only file is named, or else ``fallback``.
    """
    if isinstance(exc, ReferenceFileError) and exc.role in names:
        name = names[exc.role]
    elif len(set(names.values())) == 1:
        name = next(iter(names.values()))
    else:
        name = fallback
    return f"{name}: {reference_problem(exc)}"


def load_set_gold(
    definition: TaskDefinition, subtask: SubtaskDef, setdef: SetDef, max_decompressed: int
) -> Any:
    """Read and parse a set's reference files named in its definition; raise Refused if one is bad.

    A set without the gold file its family requires has nothing to parse: None is returned.
    """
    family = get_family(definition.family)
    if "gold" not in setdef.files and family.file_roles.get("gold"):
        return None
    paths = {role: definition.file_path(rel) for role, rel in setdef.files.items()}
    contents: dict[str, bytes] = {}
    for role, path in paths.items():
        try:
            contents[role] = path.read_bytes()
        except OSError as exc:
            raise Refused(
                f"{path}: the {role} file of {subtask.slug} ({setdef.slug}) cannot be read "
                f"({exc.strerror or exc})"
            ) from None
    ctx = Context(definition, subtask, setdef.slug, max_decompressed)
    try:
        return family.load_gold(contents, ctx)
    except REFERENCE_ERRORS as exc:
        names = {role: str(path) for role, path in paths.items()}
        fallback = ", ".join(sorted(set(names.values())))
        raise Refused(refusal(exc, names, fallback)) from None


def check_reference_files(definition: TaskDefinition, max_decompressed: int) -> None:
    """Raise Refused unless every set's reference files can be read and parsed."""
    for subtask in definition.subtasks:
        for setdef in subtask.sets:
            load_set_gold(definition, subtask, setdef, max_decompressed)
