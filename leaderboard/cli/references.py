"""Definitions and reference files read from disk, refused with the file and the line or key.

Loads no Flask, SQLAlchemy or service: ``score`` reads its definition and gold through here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import click

from leaderboard.cli.common import fail
from leaderboard.tasks.checking import (
    Problem,
    SetRefused,
    check_task_folder,
    read_set,
    read_set_gold,
)
from leaderboard.tasks.definition import DefinitionError, SetDef, SubtaskDef, TaskDefinition
from leaderboard.tasks.loading import load_definition_file
from leaderboard.tasks.splitting import SetSplit


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


def load_set_gold(
    definition: TaskDefinition, subtask: SubtaskDef, setdef: SetDef, max_decompressed: int
) -> Any:
    """Read and parse a set's reference files named in its definition; raise Refused if one is bad.

    A set without the gold file its family requires has nothing to parse: None is returned.
    """
    try:
        return read_set_gold(definition, subtask, setdef, max_decompressed)
    except SetRefused as exc:
        raise Refused(exc.first) from None


def load_set_split(
    definition: TaskDefinition, subtask: SubtaskDef, setdef: SetDef, max_decompressed: int
) -> tuple[Any, SetSplit | None]:
    """Return a set's parsed gold and its split, if it declares one (as ``load_set_gold``)."""
    try:
        return read_set(definition, subtask, setdef, max_decompressed)
    except SetRefused as exc:
        raise Refused(exc.first) from None


def every_problem(path: Path, max_decompressed: int) -> list[str]:
    """Return every problem of a definition file and of the files it names, one line each.

    A line reads ``FILE:LINE: message``, ``FILE: KEY: message`` or ``FILE: message``.
    """
    checked = check_task_folder(path, None, max_decompressed)
    return [_line(p) for p in checked.problems]


def fail_every(first: str, path: Path, max_decompressed: int) -> NoReturn:
    """Print ``Error: first``, then every further problem of the definition at ``path``; exit 1.

    The first line reads as it always did, so scripts matching it still match.
    """
    further = every_problem(path, max_decompressed)[1:]
    for line in [first, *further][:-1]:
        click.echo(f"Error: {line}", err=True)
    fail([first, *further][-1])


def _line(problem: Problem) -> str:
    if problem.line is not None:
        return f"{problem.file}:{problem.line}: {problem.message}"
    if problem.key:
        return f"{problem.file}: {problem.key}: {problem.message}"
    return f"{problem.file}: {problem.message}"


def check_reference_files(definition: TaskDefinition, max_decompressed: int) -> None:
    """Raise Refused unless every set's reference files can be read and parsed."""
    for subtask in definition.subtasks:
        for setdef in subtask.sets:
            load_set_gold(definition, subtask, setdef, max_decompressed)
