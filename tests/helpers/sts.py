"""The SemEval-2016 STS English preset's sets, run URL and runs made from its gold."""

from __future__ import annotations

from pathlib import Path

PRESET = (
    Path(__file__).resolve().parents[2] / "leaderboard" / "tasks" / "presets" / "semeval2016-task1"
)


EN_SETS = ("answer-answer", "headlines", "plagiarism", "postediting", "question-question")


API_EN = "/api/v1/tasks/semeval2016-task1/en/runs"


def gold_as_output(slug: str, unscored: str = "0") -> bytes:
    """Write the gold value on scored lines and a constant on unscored ones."""
    lines = (PRESET / "english" / f"STS2016.gs.{slug}.txt").read_text().splitlines()
    return ("\n".join(v if v else unscored for v in lines) + "\n").encode()


def noisy_output(slug: str) -> bytes:
    """Return a run correlated with, but not equal to, the gold."""
    lines = (PRESET / "english" / f"STS2016.gs.{slug}.txt").read_text().splitlines()
    return (
        "\n".join(f"{(float(v) if v else 2.5) + (i % 7) * 0.3:.3f}" for i, v in enumerate(lines))
        + "\n"
    ).encode()
