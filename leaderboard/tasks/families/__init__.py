"""Registry of task families by name: the six built-ins and any a caller registers."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from leaderboard.formats.issues import quoted
from leaderboard.tasks.definition import DefinitionError
from leaderboard.tasks.families.base import Family

#: The built-in families, in their listing order: the module and class of each, by name. A
#: command on one task imports its family alone; listing them all imports them all.
BUILTINS = {
    "cqa": ("leaderboard.tasks.families.cqa", "CqaFamily"),
    "sts": ("leaderboard.tasks.families.sts", "StsFamily"),
    "trec": ("leaderboard.tasks.families.trec", "TrecFamily"),
    "classification": ("leaderboard.tasks.families.classification", "ClassificationFamily"),
    "regression": ("leaderboard.tasks.families.regression", "RegressionFamily"),
    "generation": ("leaderboard.tasks.families.generation", "GenerationFamily"),
}

_FAMILIES: dict[str, Family[Any, Any]] = {}


def register_family(family: Family[Any, Any]) -> Family[Any, Any]:
    """Host ``family`` under its name; raise ValueError if another family has the name."""
    if family.name in BUILTINS:
        _load_builtin(family.name)
    held = _FAMILIES.get(family.name)
    if held is not None and held is not family:
        raise ValueError(f"a family named {family.name!r} is already registered")
    _FAMILIES[family.name] = family
    return family


def unregister_family(name: str) -> None:
    """Stop hosting the family called ``name`` (a test's throw-away family)."""
    _FAMILIES.pop(name, None)


@contextmanager
def registered_family(family: Family[Any, Any]) -> Iterator[Family[Any, Any]]:
    """Host ``family`` for the duration of a ``with`` block, then unregister it."""
    register_family(family)
    try:
        yield family
    finally:
        unregister_family(family.name)


def all_families() -> list[Family[Any, Any]]:
    """Return every hosted family, built-ins first, in registration order."""
    for name in BUILTINS:
        _load_builtin(name)
    builtins = [_FAMILIES[name] for name in BUILTINS if name in _FAMILIES]
    return builtins + [f for name, f in _FAMILIES.items() if name not in BUILTINS]


def get_family(name: str) -> Family[Any, Any]:
    """Return the family called ``name``; raise DefinitionError for an unknown one."""
    if name in BUILTINS:
        _load_builtin(name)
    try:
        return _FAMILIES[name]
    except KeyError:
        for builtin in BUILTINS:  # the message lists every family
            _load_builtin(builtin)
        raise DefinitionError(
            "family", f"unknown family {quoted(name)}; known: {sorted(_FAMILIES)}"
        ) from None


_LOADED: set[str] = set()
# Web workers run threads: one loads a family while the others wait for it, not find it missing.
_LOADING = threading.RLock()


def _load_builtin(name: str) -> None:
    """Register the built-in family ``name`` once, on first use (definitions never load it)."""
    if name in _LOADED:
        return
    with _LOADING:
        if name in _LOADED:
            return
        module, cls = BUILTINS[name]
        family: Family[Any, Any] = getattr(importlib.import_module(module), cls)()
        _FAMILIES.setdefault(name, family)
        _LOADED.add(name)
