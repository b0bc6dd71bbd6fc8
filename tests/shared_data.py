"""Locate ``../shared/data`` for fidelity tests: skip where it is absent, fail under CI=true."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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
