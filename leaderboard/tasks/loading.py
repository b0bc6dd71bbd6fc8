"""Read task definitions, from files or from the database, with their family's rules."""

from __future__ import annotations

import copy
import hashlib
import tomllib
from pathlib import Path
from typing import Any

from leaderboard.tables.styles import style_name
from leaderboard.tasks.definition import DefinitionError, TaskDefinition, parse_definition
from leaderboard.tasks.families import get_family
from leaderboard.tasks.families.base import Family


def _parse(raw: dict[str, Any], base_dir: Path | None, sha256: str) -> TaskDefinition:
    family_name = raw.get("family")
    if not isinstance(family_name, str):
        raise DefinitionError("family", "is required (a family name)")
    family = get_family(family_name)
    definition = parse_definition(
        raw,
        base_dir,
        family.file_roles,
        sha256,
        family.group_keys,
        family.option_keys,
        family.list_roles,
    )
    check_style(family, definition)
    family.check_definition(definition)
    return definition


def check_style(family: Family[Any, Any], definition: TaskDefinition) -> None:
    """Raise DefinitionError unless the definition's table style is one of its family's."""
    chosen = style_name(definition.table_style)
    if definition.table_style and chosen not in {style_name(s) for s in family.table_styles}:
        styles = " or ".join(f"'{s}'" for s in family.table_styles)
        raise DefinitionError(
            "table_style",
            f"family {family.name} uses table style {styles}, not {definition.table_style[:80]!r}",
        )


def load_definition_file(path: Path) -> TaskDefinition:
    """Read, parse and check a task definition file, including its family's rules."""
    data = Path(path).read_bytes()
    try:
        raw = tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise DefinitionError("(file)", f"not a valid TOML file: {exc}") from exc
    return _parse(raw, Path(path).resolve().parent, hashlib.sha256(data).hexdigest())


#: Parsed stored definitions by hash: every request resolves its task, and parsing is not free.
_STORED: dict[str, TaskDefinition] = {}
_STORED_MAX = 64


def stored_definition(raw: dict[str, Any], sha256: str) -> TaskDefinition:
    """Rebuild a definition stored in the database (its files live in the file store)."""
    cached = _STORED.get(sha256)
    if cached is not None and cached.raw == raw:
        return cached
    family = get_family(str(raw.get("family", "")))
    # A private copy: the cached definition must not change with the caller's dict.
    definition = parse_definition(
        copy.deepcopy(raw),
        None,
        family.file_roles,
        sha256,
        family.group_keys,
        family.option_keys,
        family.list_roles,
    )
    if len(_STORED) >= _STORED_MAX:
        _STORED.clear()
    _STORED[sha256] = definition
    return definition


def parse_raw_definition(raw: dict[str, Any], base_dir: Path | None) -> TaskDefinition:
    """Check a definition already read from its TOML file, as ``load_definition_file`` does."""
    return _parse(raw, base_dir, "")
