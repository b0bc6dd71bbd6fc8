"""The boosting attack of Blum & Hardt 2015 in miniature, against a `best` and a `ladder` board.

A binary task of random labels: every submission's true accuracy is ½. The attacker uploads
random label vectors, then a majority vote of those the board let it see were lucky; the board
displays a public-part score, which is compared with the same run's private accuracy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from leaderboard.scoring.ladder import ladder, mean_step
from leaderboard.scoring.splits import public_units


@dataclass(frozen=True)
class Attack:
    """What each board displays after the attack, and the private accuracy of the run shown."""

    public_units: int
    private_units: int
    best_displayed: float
    best_private: float
    ladder_displayed: float
    ladder_private: float


def majority(votes: NDArray[np.int64]) -> NDArray[np.int64]:
    """Return the per-item majority of the rows of ``votes`` (ties: 1)."""
    return (2 * votes.sum(axis=0) >= len(votes)).astype(np.int64)


def boosting_attack(
    rng: np.random.Generator, items: int = 2_000, runs: int = 200, fraction: float = 0.5
) -> Attack:
    """Run the attack once on fresh labels and a fresh split (seeded by ``rng``)."""
    ids = [f"item{i}" for i in range(items)]
    public = public_units(ids, fraction, int(rng.integers(0, 2**31)))
    mask = np.array([u in public for u in ids])
    labels = rng.integers(0, 2, items)
    guesses = rng.integers(0, 2, (runs, items))
    correct = (guesses == labels).astype(np.float64)

    # `best` shows every public score: vote those above ½, show the best run of all.
    scores = correct[:, mask].mean(axis=1)
    boosted = (majority(guesses[scores > 0.5]) == labels).astype(np.float64)
    shown = np.vstack([correct, boosted])
    top = int(np.argmax(shown[:, mask].mean(axis=1)))
    best_displayed = float(shown[top, mask].mean())
    best_private = float(shown[top, ~mask].mean())

    # `ladder` shows the released value only: vote the runs that raised it (the first if > ½).
    decisions = ladder(list(correct[:, mask]))
    raised = [t for t, d in enumerate(decisions) if d.replaced and (t > 0 or d.released > 0.5)]
    leader = max(t for t, d in enumerate(decisions) if d.replaced)
    voted = (majority(guesses[raised or [leader]]) == labels).astype(np.float64)
    last = mean_step(decisions[-1].released, correct[leader, mask], voted[mask])
    if last.replaced:
        ladder_displayed, ladder_private = last.released, float(voted[~mask].mean())
    else:
        ladder_displayed = decisions[-1].released
        ladder_private = float(correct[leader, ~mask].mean())
    return Attack(
        int(mask.sum()),
        int((~mask).sum()),
        best_displayed,
        best_private,
        ladder_displayed,
        ladder_private,
    )
