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
    "accounts/core.py": (
        2,
        "A token's note of use is written in a transaction of its own (SQLite's one write lock "
        "must not hold up a request that only read), after rolling back the request's reads.",
    ),
    "common/outbox.py": (
        3,
        "A mail is claimed (committed) before its SMTP conversation and its outcome committed "
        "after: deliver would have to be split into steps its callers commit between.",
    ),
    "common/throttle.py": (
        6,
        "Attempt counters are kept even when the request is refused, and a busy SQLite or a "
        "PostgreSQL deadlock is retried after a rollback.",
    ),
    "jobs/core.py": (
        7,
        "A job is claimed, run and stored in three transactions, and a lost claim rolls its "
        "work back: not yet split into steps the worker task commits between.",
    ),
    "notify/notices.py": (
        5,
        "Each phase's release and mails are one transaction, so one that fails leaves the "
        "others done; a refused run's mail must never fail the refusal.",
    ),
    "signup/notices.py": (
        2,
        "A mail commits with its cause so that the command line can send it at once from the "
        "outbox.",
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
