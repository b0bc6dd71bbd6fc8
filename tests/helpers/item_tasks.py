"""Read what an item-scored task shows: example files, the API table, the exports."""

from __future__ import annotations

import json
from pathlib import Path

from flask.testing import FlaskClient

from tests.security import compile_latex


def pairs(path: Path) -> dict[str, str]:
    """Return id -> value of an example file (comment lines skipped)."""
    out = {}
    for line in path.read_text().splitlines():
        if line and not line.startswith("#"):
            item, value = line.split("\t")
            out[item] = value
    return out


def table(client: FlaskClient, token: str, task: str, subtask: str) -> dict:  # type: ignore[type-arg]
    """Return the subtask's table from the API, read with ``token``."""
    resp = client.get(
        f"/api/v1/tasks/{task}/{subtask}/table", headers={"Authorization": f"Bearer {token}"}
    )
    assert resp.status_code == 200, resp.get_json()
    body: dict = resp.get_json()  # type: ignore[type-arg]
    return body


def check_exports(client: FlaskClient, task: str, subtask: str, tmp_path: Path) -> None:
    """Every export answers and the LaTeX one compiles."""
    for ext in ("csv", "json", "md", "tex"):
        resp = client.get(f"/tasks/{task}/{subtask}/results.{ext}")
        assert resp.status_code == 200, ext
        if ext == "json":
            assert json.loads(resp.get_data(as_text=True))["rows"]
    latex = client.get(f"/tasks/{task}/{subtask}/results.tex").get_data(as_text=True)
    done = compile_latex(latex, tmp_path, task)
    assert done.returncode == 0, done.stdout[-2000:]
