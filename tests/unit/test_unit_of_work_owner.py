"""Services never commit: the entry point that calls them owns the unit of work.

Walks ``leaderboard/services`` and counts every ``.commit()``, ``.rollback()`` and
``transaction(`` use: there must be none.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import leaderboard.services

SERVICES = Path(leaderboard.services.__file__).parent


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


def test_no_service_ends_a_transaction() -> None:
    # A site found: have the entry point commit its unit of work instead, between steps if the
    # work needs several transactions.
    assert dict(_found()) == {}


def test_a_commit_in_a_service_is_found() -> None:
    tree = ast.parse(
        "def f(s):\n    s.add(1)\n    s.commit()\n    with transaction(s):\n        pass\n"
    )
    assert _sites(tree) == 2
