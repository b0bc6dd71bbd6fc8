"""Imports run down the layers: `lint-imports` holds the contracts, each module imports alone."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")

MODULES = [
    "leaderboard.targets",
    "leaderboard.services.common.audit",
    "leaderboard.services.tasks.catalog",
    "leaderboard.services.freeze.core",
    "leaderboard.services.gold.core",
    "leaderboard.services.jobs.core",
    "leaderboard.services.signup.core",
    "leaderboard.services.upload.core",
    "leaderboard.web.analysis.context",
    "leaderboard.web.analysis.routes",
    "leaderboard.web.organizer.routes",
    "leaderboard.web.auth.routes",
]


def _lint_imports(*args: str) -> subprocess.CompletedProcess[str]:
    """Run lint-imports from the repository root on this checkout's package."""
    # A wide terminal keeps each reported import on one line of the output.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "300"}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-logo", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def _service_layers() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (services,) = [c for c in contracts if c.get("containers") == ["leaderboard.services"]]
    return list(services["layers"])


def test_the_import_contracts_hold() -> None:
    done = _lint_imports()
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"Contracts: [1-9]\d* kept, 0 broken", done.stdout), done.stdout


def test_a_service_folder_placed_above_its_user_breaks_the_contract(tmp_path: Path) -> None:
    layers = _service_layers()
    results, campaign = layers.index("results"), layers.index("campaign")
    assert results < campaign
    layers[results], layers[campaign] = layers[campaign], layers[results]
    swapped = tmp_path / ".importlinter"
    swapped.write_text(
        "[importlinter]\nroot_package = leaderboard\n\n"
        "[importlinter:contract:swapped]\nname = Campaign above results\ntype = layers\n"
        "containers = leaderboard.services\nlayers =\n"
        + "".join(f"    {layer}\n" for layer in layers),
        encoding="utf-8",
    )
    done = _lint_imports("--no-cache", str(swapped))
    assert done.returncode == 1
    refused = "leaderboard.services.results is not allowed to import leaderboard.services.campaign"
    assert refused in done.stdout
    assert "services.results.anonymity -> leaderboard.services.campaign.phases" in done.stdout


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
