"""Check a task definition file and every reference file it names, collecting all problems.

The same reading as ``leaderboard add-task`` (``load_definition_file``, then each set's
``load_gold``), but every problem found is kept (each set's files, each bad line of a gold
file) instead of stopping at the first. Loads no Flask, SQLAlchemy or service.
"""

from __future__ import annotations

import copy
import dataclasses
import re
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from leaderboard.formats.issues import quoted
from leaderboard.tasks.definition import (
    PUBLIC_UNITS_ROLE,
    DefinitionError,
    FileRefused,
    SetDef,
    SubtaskDef,
    TaskDefinition,
)
from leaderboard.tasks.families import get_family
from leaderboard.tasks.families.base import (
    Context,
    Family,
    ReferenceFileError,
    reference_problem,
)
from leaderboard.tasks.loading import load_definition_file, parse_raw_definition
from leaderboard.tasks.splitting import SetSplit, SplitRefused, split_set

#: What a family's ``load_gold`` raises for a reference file it cannot read.
REFERENCE_ERRORS = (ValueError, KeyError, UnicodeDecodeError)
_TOML_LINE = re.compile(r"at line (\d+)")
_LINE = re.compile(r"^Line (\d+):\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Problem:
    """One problem of an uploaded task: the file, and the line or the key where known."""

    file: str
    message: str
    line: int | None = None
    key: str | None = None

    @property
    def where(self) -> str:
        """Return "file, line N", "file, key K" or the file alone."""
        if self.line is not None:
            return f"{self.file}, line {self.line}"
        if self.key:
            return f"{self.file}, key {self.key}"
        return self.file

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@dataclass(frozen=True)
class Checked:
    """The definition read from a folder (None when refused) and every problem found."""

    definition: TaskDefinition | None
    problems: list[Problem]


def check_task_folder(path: Path, root: Path | None, max_decompressed: int) -> Checked:
    """Read the definition at ``path`` and every reference file it names, inside ``root`` only.

    File names in problems are relative to ``root``; a file named outside it (``../x``, an
    absolute path) is refused, as a missing one is, before anything is read from it. Without
    ``root`` (a definition on the operator's own disk) files are named by their full path and
    may lie anywhere.
    """
    name = _relative(path, root)
    # The loading reads Markdown section files only inside the definition's folder, ``root``.
    try:
        definition = load_definition_file(path)
    except OSError as exc:
        return Checked(None, [Problem(name, f"cannot be read ({exc.strerror or exc})")])
    except DefinitionError as exc:
        further = _further_problems(_raw_toml(path), path.parent, root, name, exc, max_decompressed)
        return Checked(None, [_definition_problem(name, exc, root), *further])
    problems = _files_problems(definition, path.parent, root, name, max_decompressed)
    return Checked(None if problems else definition, problems)


def not_in_upload(rel: str) -> str:
    """Return the one message for a named file that is missing or lies outside the upload.

    Both read alike so that an upload cannot probe which files exist on the server.
    """
    return f"file {quoted(rel)} is not in the upload"


def _files_problems(
    definition: TaskDefinition, base: Path, root: Path | None, name: str, max_decompressed: int
) -> list[Problem]:
    """Return the problems of the files a parsed definition names: outside ones, bad lines."""
    problems = _outside(name, named_files(definition), base, root)
    refused = {p.key for p in problems}
    for i, subtask in enumerate(definition.subtasks):
        for j, setdef in enumerate(subtask.sets):
            # A set naming a file outside the upload is never read.
            if any(f"subtasks[{i}].sets[{j}].{role}" in refused for role in setdef.files):
                continue
            problems.extend(_set_problems(definition, subtask, setdef, root, max_decompressed))
    return problems


def named_files(definition: TaskDefinition) -> Iterator[tuple[str, str]]:
    """Yield (key, relative path) of every file the definition names.

    Set files by role, and any ``{ file = "..." }`` table anywhere in the definition (the
    Markdown sections read from files).
    """
    for i, subtask in enumerate(definition.subtasks):
        for j, setdef in enumerate(subtask.sets):
            for role, rel in setdef.files.items():
                yield f"subtasks[{i}].sets[{j}].{role}", rel
    yield from _file_tables(definition.raw, "")


def _file_tables(value: Any, where: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        if isinstance(value.get("file"), str):
            yield where or "file", value["file"]
        for k, v in value.items():
            yield from _file_tables(v, f"{where}.{k}" if where else str(k))
    elif isinstance(value, list):
        for n, v in enumerate(value):
            yield from _file_tables(v, f"{where}[{n}]")


def _raw_toml(path: Path) -> dict[str, Any]:
    """Return the TOML table in ``path``, or {} when unreadable (the loading says why)."""
    try:
        return tomllib.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}


def _outside(
    name: str, files: Iterable[tuple[str, str]], base: Path, root: Path | None
) -> list[Problem]:
    """Return a problem for each file named outside ``root`` (``../x``, an absolute path)."""
    if root is None:
        return []
    return [
        Problem(name, not_in_upload(rel), key=key)
        for key, rel in files
        if "\x00" in rel or not (base / rel).resolve().is_relative_to(root.resolve())
    ]


def _relative(path: Path, root: Path | None) -> str:
    if root is None:
        return str(path)
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return path.name


def _definition_problem(
    name: str, exc: DefinitionError, root: Path | None, key: str | None = None
) -> Problem:
    if isinstance(exc, FileRefused) and root is not None:
        return Problem(name, not_in_upload(exc.name), key=key or exc.key)
    if exc.key == "(file)":
        # A TOML syntax error has no key; its message ends with the line and column.
        found = _TOML_LINE.search(exc.message)
        return Problem(name, exc.message, line=int(found.group(1)) if found else None)
    return Problem(name, exc.message, key=key or exc.key)


#: The most problems of a refused definition looked for beyond its first one.
MAX_FURTHER = 50
_WHERE = re.compile(r"^subtasks\[(\d+)\](?:\.sets\[(\d+)\])?")


def _further_problems(
    raw: dict[str, Any],
    base: Path,
    root: Path | None,
    name: str,
    first: DefinitionError,
    max_decompressed: int,
) -> list[Problem]:
    """Return the problems of a refused definition beyond ``first``, found by setting aside
    what each problem is in (an unknown top-level key, a set, a subtask) and checking again.

    Whether the definition is refused is decided by its first problem alone, as add-task
    decides it; this only lists more of what needs correcting (the remaining sets' files too).
    """
    raw = copy.deepcopy(raw)
    subtasks = raw.get("subtasks")
    if not isinstance(subtasks, list):
        return []
    index = _Index(subtasks)
    problems: list[Problem] = []
    repaired: list[str] = []
    exc = first
    for _ in range(MAX_FURTHER):
        if _set_aside(raw, exc, index):
            pass
        elif (key := _repair(raw, exc)) is not None:
            repaired.append(key)
        else:
            return problems
        try:
            definition = parse_raw_definition(raw, base)
        except DefinitionError as found:
            if any(_related(found.key, key) for key in repaired):
                # A problem the repair itself made (the key it removed is now missing).
                return problems
            problems.append(_definition_problem(name, found, root, index.original(found.key)))
            exc = found
            continue
        except (ValueError, TypeError, KeyError):
            return problems
        for found_problem in _files_problems(definition, base, root, name, max_decompressed):
            key = found_problem.key and index.original(found_problem.key)
            problems.append(dataclasses.replace(found_problem, key=key))
        return problems
    return problems


class _Index:
    """The original positions of the subtasks and sets still in a pruned definition."""

    def __init__(self, subtasks: list[Any]) -> None:
        self.subtasks = list(range(len(subtasks)))
        self.sets = [
            list(range(len(st["sets"])))
            if isinstance(st, dict) and isinstance(st.get("sets"), list)
            else []
            for st in subtasks
        ]

    def original(self, key: str) -> str:
        """Return ``key`` with the positions it names in the pruned definition made original."""
        found = _WHERE.match(key)
        if found is None:
            return key
        i = int(found.group(1))
        if i >= len(self.subtasks):
            return key
        out = f"subtasks[{self.subtasks[i]}]"
        if found.group(2) is not None:
            j = int(found.group(2))
            out += f".sets[{self.sets[i][j] if j < len(self.sets[i]) else j}]"
        return out + key[found.end() :]


def _set_aside(raw: dict[str, Any], exc: DefinitionError, index: _Index) -> bool:
    """Remove from ``raw`` what ``exc`` is about, if that leaves something to check."""
    if _drop_unknown_measure(raw, exc):
        return True
    found = _WHERE.match(exc.key)
    if found is None:
        if exc.message == "unknown key" and exc.key in raw:
            del raw[exc.key]
            return True
        return False
    subtasks = raw["subtasks"]
    i = int(found.group(1))
    if i >= len(subtasks):
        return False
    st = subtasks[i]
    if found.group(2) is not None and isinstance(st, dict):
        j = int(found.group(2))
        sets = st.get("sets")
        # A set that is the subtask's last or its default is set aside with its subtask.
        if isinstance(sets, list) and len(sets) > 1 and j < len(sets):
            chosen = st.get("default_set")
            if not (
                isinstance(sets[j], dict) and chosen is not None and sets[j].get("slug") == chosen
            ):
                del sets[j]
                del index.sets[i][j]
                return True
    if len(subtasks) < 2:
        return False
    del subtasks[i]
    del index.subtasks[i]
    del index.sets[i]
    return True


_PART = re.compile(r"([^.\[\]]+)((?:\[\d+\])*)")


def _repair(raw: dict[str, Any], exc: DefinitionError) -> str | None:
    """Mend or remove the one key ``exc`` is about, where nothing larger can be set aside.

    A wrong official measure becomes the first of its measures; any other key is removed, so
    that its default (or the refusal of its absence, which ends the listing) takes its place.
    Return the key, or None when it names nothing in ``raw``.
    """
    parts = _PART.findall(exc.key) if exc.key not in ("", "(file)") else []
    if not parts or "".join(f"{n}{i}" for n, i in parts).replace(".", "") != exc.key.replace(
        ".", ""
    ):
        return None
    table: Any = raw
    for name, indexes in parts[:-1]:
        table = table.get(name) if isinstance(table, dict) else None
        for i in re.findall(r"\d+", indexes):
            table = table[int(i)] if isinstance(table, list) and int(i) < len(table) else None
    last, indexes = parts[-1]
    if indexes or not isinstance(table, dict) or last not in table:
        return None
    measures = table.get("measures", raw.get("measures"))
    if last == "official_measure" and isinstance(measures, list) and measures:
        if table[last] == measures[0]:
            return None
        table[last] = measures[0]
    else:
        del table[last]
    return exc.key


def _related(key: str, repaired: str) -> bool:
    """Return whether ``key`` names the repaired key, a key inside it, or the table holding it."""
    return key == repaired or key.startswith(f"{repaired}.") or repaired.startswith(f"{key}.")


class SetRefused(ValueError):
    """A set's reference files were refused: every problem, and the first as one line."""

    def __init__(self, first: str, problems: list[Problem]) -> None:
        super().__init__(first)
        self.first = first
        self.problems = problems


def read_set_gold(
    definition: TaskDefinition,
    subtask: SubtaskDef,
    setdef: SetDef,
    max_decompressed: int,
    root: Path | None = None,
) -> Any:
    """Read and parse a set's reference files; raise SetRefused listing every problem found.

    Files are named relative to ``root``, or by their full path without it. A set without the
    gold file its family requires has nothing to parse: None is returned.
    """
    return read_set(definition, subtask, setdef, max_decompressed, root)[0]


def read_set(
    definition: TaskDefinition,
    subtask: SubtaskDef,
    setdef: SetDef,
    max_decompressed: int,
    root: Path | None = None,
) -> tuple[Any, SetSplit | None]:
    """Return a set's parsed gold and, when it declares one, its split (as ``read_set_gold``).

    A set without the gold file its family requires has neither: (None, None) is returned.
    """
    family = get_family(definition.family)
    if "gold" not in setdef.files and family.file_roles.get("gold"):
        return None, None
    paths = {role: definition.file_path(rel) for role, rel in setdef.files.items()}
    names = {role: _relative(path, root) for role, path in paths.items()}
    contents: dict[str, bytes] = {}
    problems: list[Problem] = []
    first = ""
    for role, path in paths.items():
        try:
            contents[role] = path.read_bytes()
        except OSError as exc:
            message = (
                f"the {role} file of {subtask.slug} ({setdef.slug}) cannot be read "
                f"({exc.strerror or exc})"
            )
            first = first or f"{names[role]}: {message}"
            problems.append(Problem(names[role], message))
    if problems:
        raise SetRefused(first, problems)
    try:
        gold = family.load_gold(
            contents, Context(definition, subtask, setdef.slug, max_decompressed)
        )
    except REFERENCE_ERRORS as exc:
        name = _file_of(exc, names)
        where = f"subtask {subtask.slug} ({setdef.slug})"
        message = reference_problem(exc)
        if isinstance(exc, ReferenceFileError) and exc.problems:
            problems = [
                Problem(name, f"{where}: {_LINE.sub('', issue.message)}", line=issue.line)
                for issue in exc.problems
            ]
        else:
            found = _LINE.match(message)
            line = int(found.group(1)) if found else None
            problems = [Problem(name, f"{where}: {_LINE.sub('', message)}", line=line)]
        raise SetRefused(f"{name}: {message}", problems) from None
    if setdef.split is None:
        return gold, None
    return gold, _check_split(family, gold, setdef, contents, names, subtask)


def _check_split(
    family: Family[Any, Any],
    gold: Any,
    setdef: SetDef,
    contents: dict[str, bytes],
    names: dict[str, str],
    subtask: SubtaskDef,
) -> SetSplit:
    """Return a set's split; refuse one that leaves a part empty or lists ids the gold lacks."""
    assert setdef.split is not None
    try:
        return split_set(family, gold, setdef.split, contents)
    except SplitRefused as exc:
        name = names.get(PUBLIC_UNITS_ROLE, "the definition")
        where = f"subtask {subtask.slug} ({setdef.slug})"
        problems = [
            Problem(name, f"{where}: {message}", line=line) for line, message in exc.problems
        ]
        raise SetRefused(f"{name}: {where}: {exc.problems[0][1]}", problems) from None


def _drop_unknown_measure(raw: dict[str, Any], exc: DefinitionError) -> bool:
    """Remove an unknown measure from the list naming it (the subtask's, else the task's).

    The official measure is kept: without it the rest would be refused for that alone.
    """
    if not exc.message.startswith("unknown measure "):
        return False
    found = _WHERE.match(exc.key)
    table: Any = raw
    subtasks = raw.get("subtasks")
    if found is not None and found.group(2) is None and isinstance(subtasks, list):
        i = int(found.group(1))
        subtask = subtasks[i] if i < len(subtasks) else None
        if isinstance(subtask, dict) and isinstance(subtask.get("measures"), list):
            table = subtask
    measures = table.get("measures")
    if not isinstance(measures, list):
        return False
    official = table.get("official_measure", raw.get("official_measure"))
    for measure in measures:
        if (
            isinstance(measure, str)
            and measure != official
            and exc.message.startswith(f"unknown measure {quoted(measure)}")
        ):
            measures.remove(measure)
            return True
    return False


def _set_problems(
    definition: TaskDefinition,
    subtask: SubtaskDef,
    setdef: SetDef,
    root: Path | None,
    max_decompressed: int,
) -> list[Problem]:
    """Return the problems of one set's reference files (none when they parse)."""
    try:
        read_set_gold(definition, subtask, setdef, max_decompressed, root)
    except SetRefused as exc:
        return exc.problems
    return []


def _file_of(exc: Exception, names: dict[str, str]) -> str:
    """Return the file a reference error is about: by its role, or the set's only file."""
    if isinstance(exc, ReferenceFileError) and exc.role in names:
        return names[exc.role]
    unique = sorted(set(names.values()))
    return unique[0] if len(unique) == 1 else ", ".join(unique)
