"""The test suite's layout: shared helpers live in tests/helpers, and every refusal is matched."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def modules() -> list[Path]:
    """Return every Python file under tests/."""
    return sorted(TESTS.rglob("*.py"))


def parsed(path: Path) -> ast.Module:
    """Return the syntax tree of ``path``."""
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def imported_test_modules(tree: ast.Module) -> list[str]:
    """Return the test modules (``test_*``) that ``tree`` imports, or imports from."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
            # ``from tests.web import test_teams`` names the module in its aliases.
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return [n for n in names if n.startswith("tests.") and n.rsplit(".", 1)[-1].startswith("test_")]


def unmatched_raises(tree: ast.Module) -> list[int]:
    """Return the lines of ``pytest.raises(...)`` calls without a ``match=``."""
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "raises"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "pytest"
        and not any(keyword.arg == "match" for keyword in node.keywords)
    ]


def test_the_checks_see_what_they_look_for() -> None:
    # Without this, a walk that finds nothing would pass whatever the suite holds.
    tree = ast.parse(
        "import pytest\n"
        "from tests.web.test_teams import post\n"
        "from tests.web import test_queue\n"
        "import tests.unit.test_tables_mocks\n"
        "from tests.helpers.teams import post\n"
        "with pytest.raises(ValueError):\n    pass\n"
        "with pytest.raises(ValueError, match='no'):\n    pass\n"
    )
    assert imported_test_modules(tree) == [
        "tests.web.test_teams",
        "tests.web.test_queue",
        "tests.unit.test_tables_mocks",
    ]
    assert unmatched_raises(tree) == [6]


def test_the_walk_covers_the_whole_suite() -> None:
    found = {path.relative_to(TESTS).as_posix() for path in modules()}
    assert {"unit/test_test_layout.py", "web/conftest.py", "helpers/teams.py"} <= found


def test_no_test_module_imports_another() -> None:
    # Shared helpers go to tests/helpers, shared fixtures to a conftest.py.
    offenders = [
        f"{path.relative_to(TESTS)} imports {name}"
        for path in modules()
        for name in imported_test_modules(parsed(path))
    ]
    assert offenders == []


def test_every_pytest_raises_matches_a_message() -> None:
    # A check of the type alone let a mutated row-count guard pass unnoticed.
    offenders = [
        f"{path.relative_to(TESTS)}:{line}"
        for path in modules()
        for line in unmatched_raises(parsed(path))
    ]
    assert offenders == []
