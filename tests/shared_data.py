"""Locate test data: reference files shipped with the presets, and ``../shared/data``.

Gold, qrels and STS inputs ship byte-identical inside the package (``preset_path``), so the
tests that read them run anywhere; only what is not shipped (historical runs, official
``.score`` outputs, format-checker examples, other releases) comes from ``../shared/data``
(``shared_path``), whose tests skip where it is absent and fail under CI=true.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from leaderboard.tasks.definition import PRESETS_DIR

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("LEADERBOARD_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))


def shared_path(*parts: str) -> Path:
    """Return a path under the shared data folder, or skip (fail under CI=true) if it is missing."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        reason = f"shared data not found at {path} (set LEADERBOARD_SHARED_DATA)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason + "; CI=true requires it")
        pytest.skip(reason)
    return path


def preset_path(*parts: str) -> Path:
    """Return a file shipped with the bundled presets (``leaderboard/tasks/presets``)."""
    path = PRESETS_DIR.joinpath(*parts)
    # Shipped with the package: missing is a broken checkout, never a reason to skip.
    assert path.is_file(), f"no shipped preset file {path}"
    return path
