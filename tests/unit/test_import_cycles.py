"""The modules once caught in import circles import alone and no longer reach each other."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

MODULES = [
    "leaderboard.services.common.audit",
    "leaderboard.services.tasks.catalog",
    "leaderboard.targets",
    "leaderboard.web.analysis.routes",
    "leaderboard.web.organizer.routes",
    "leaderboard.web.auth.routes",
]


def _path_of(module: str) -> Path | None:
    base = ROOT.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imports_of(module: str) -> set[str]:
    """Return the leaderboard modules a module imports, wherever the import statement is."""
    path = _path_of(module)
    if path is None:
        return set()
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("leaderboard"))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if not node.module.startswith("leaderboard"):
                continue
            subs = {f"{node.module}.{a.name}" for a in node.names}
            subs = {s for s in subs if _path_of(s) is not None}
            # ``from leaderboard.web import pagecache`` imports a submodule, not the package's
            # names (a package's __init__ runs before any of its modules anyway).
            found.update(subs if len(subs) == len(node.names) else {node.module, *subs})
    return found


def _reaches(start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        for nxt in _imports_of(todo.pop()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


@pytest.mark.parametrize(
    ("lower", "upper"),
    [
        ("leaderboard.services.common.audit", "leaderboard.services.tasks.catalog"),
        ("leaderboard.web.analysis.routes", "leaderboard.web.organizer.routes"),
    ],
)
def test_no_circle(lower: str, upper: str) -> None:
    assert lower in _reaches(upper)
    assert upper not in _reaches(lower)
    assert lower not in _reaches(lower)
    assert upper not in _reaches(upper)


@pytest.mark.parametrize("module", MODULES)
def test_imports_first_in_a_fresh_interpreter(module: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", f"import {module}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
