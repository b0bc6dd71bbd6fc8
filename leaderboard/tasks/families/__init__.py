"""Registry of task families by name: the six built-ins and any a caller registers."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from leaderboard.formats.issues import quoted
from leaderboard.tasks.definition import DefinitionError
from leaderboard.tasks.families.base import Family

_FAMILIES: dict[str, Family] = {}
_BUILTINS_LOADED = False


def register_family(family: Family) -> Family:
    """Host ``family`` under its name; raise ValueError if another family has the name."""
    _load_builtins()
    held = _FAMILIES.get(family.name)
    if held is not None and held is not family:
        raise ValueError(f"a family named {family.name!r} is already registered")
    _FAMILIES[family.name] = family
    return family


def unregister_family(name: str) -> None:
    """Stop hosting the family called ``name`` (a test's throw-away family)."""
    _FAMILIES.pop(name, None)


@contextmanager
def registered_family(family: Family) -> Iterator[Family]:
    """Host ``family`` for the duration of a ``with`` block, then unregister it."""
    register_family(family)
    try:
        yield family
    finally:
        unregister_family(family.name)


def all_families() -> list[Family]:
    """Return every hosted family, built-ins first, in registration order."""
    _load_builtins()
    return list(_FAMILIES.values())


def get_family(name: str) -> Family:
    """Return the family called ``name``; raise DefinitionError for an unknown one."""
    _load_builtins()
    try:
        return _FAMILIES[name]
    except KeyError:
        raise DefinitionError(
            "family", f"unknown family {quoted(name)}; known: {sorted(_FAMILIES)}"
        ) from None


def _load_builtins() -> None:
    """Register the six built-in families once, on first use (definitions never load them)."""
    global _BUILTINS_LOADED
    if _BUILTINS_LOADED:
        return
    _BUILTINS_LOADED = True
    from leaderboard.tasks.families.classification import ClassificationFamily
    from leaderboard.tasks.families.cqa import CqaFamily
    from leaderboard.tasks.families.generation import GenerationFamily
    from leaderboard.tasks.families.regression import RegressionFamily
    from leaderboard.tasks.families.sts import StsFamily
    from leaderboard.tasks.families.trec import TrecFamily

    for family in (
        CqaFamily(),
        StsFamily(),
        TrecFamily(),
        ClassificationFamily(),
        RegressionFamily(),
        GenerationFamily(),
    ):
        register_family(family)
