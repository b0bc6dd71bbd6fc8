"""The TREC CAR 2017 preset's format settings, read from its definition file as the server does."""

from __future__ import annotations

from pathlib import Path

from leaderboard.formats.trec import TrecSettings
from leaderboard.tasks.loading import load_definition_file

PRESET = Path(__file__).resolve().parents[1] / "leaderboard/tasks/presets/trec-car-2017"
CAR_SETTINGS = TrecSettings(**load_definition_file(PRESET / "task.toml").format)
