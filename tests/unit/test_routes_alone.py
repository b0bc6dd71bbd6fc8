"""No module takes anything out of a blueprint's routes: the application factory alone imports them."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WEB = ROOT / "leaderboard" / "web"
FACTORY = WEB / "__init__.py"


def _routes_imported_by(path: Path) -> list[str]:
    """Return the routes modules a file imports, however the import is written."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.endswith(".routes")]
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.endswith(".routes"):
                found.append(node.module)
            found += [f"{node.module}.routes" for a in node.names if a.name == "routes"]
    return found


def test_the_finder_sees_every_spelling(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import leaderboard.web.auth.routes\n"
        "from leaderboard.web.public.routes import page_key\n"
        "from leaderboard.web.teams import routes as teams\n",
        encoding="utf-8",
    )
    assert _routes_imported_by(module) == [
        "leaderboard.web.auth.routes",
        "leaderboard.web.public.routes",
        "leaderboard.web.teams.routes",
    ]


def test_only_the_factory_imports_routes() -> None:
    offenders = {
        str(path.relative_to(ROOT)): found
        for path in sorted((ROOT / "leaderboard").rglob("*.py"))
        if path != FACTORY and (found := _routes_imported_by(path))
    }
    assert offenders == {}
