"""Services never commit: the entry point that calls them owns the unit of work.

Walks ``leaderboard/services`` and counts every ``.commit()``, ``.rollback()`` and
``transaction(`` use; only the allow-listed ones, each with its reason, may remain.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import leaderboard.services

SERVICES = Path(leaderboard.services.__file__).parent

#: Modules that still end transactions themselves: how many sites each, and why.
ALLOWED: dict[str, tuple[int, str]] = {
    "campaign/phases.py": (
        1,
        "prepare_quota creates a team's quota counters in a transaction of their own before the "
        "upload's: a concurrent upload making the same counter is a clash caught there.",
    ),
    "results/chart_files.py": (
        1,
        "A chart row another worker stored meanwhile is a clash swallowed in its own transaction.",
    ),
    "results/query_summaries.py": (
        1,
        "Summaries another worker stored meanwhile are a clash caught in their own transaction.",
    ),
    "runs/core.py": (
        1,
        "place_run retries an upload that lost the race for its slot: each attempt is a "
        "transaction of its own, rolled back before the next.",
    ),
}


def _ends_transaction(call: ast.Call) -> bool:
    """Return whether a call commits, rolls back or opens a transaction that commits."""
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr in ("commit", "rollback", "transaction")
    return isinstance(func, ast.Name) and func.id == "transaction"


def _sites(tree: ast.AST) -> int:
    """Count the calls in ``tree`` that end a transaction or open one that commits."""
    return sum(isinstance(node, ast.Call) and _ends_transaction(node) for node in ast.walk(tree))


def _found() -> Counter[str]:
    """Return how many such calls each service module makes, by its path under services."""
    found: Counter[str] = Counter()
    for path in sorted(SERVICES.rglob("*.py")):
        sites = _sites(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)))
        if sites:
            found[path.relative_to(SERVICES).as_posix()] = sites
    return found


def test_services_commit_only_where_allowed() -> None:
    allowed = {module: count for module, (count, _reason) in ALLOWED.items()}
    # A new site: have the entry point commit its unit of work instead. One fewer: lower ALLOWED.
    assert dict(_found()) == allowed


def test_a_commit_in_a_service_is_found() -> None:
    tree = ast.parse(
        "def f(s):\n    s.add(1)\n    s.commit()\n    with transaction(s):\n        pass\n"
    )
    assert _sites(tree) == 2
