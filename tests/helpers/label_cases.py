"""Seeded gold and label runs for the fidelity checks against scikit-learn."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NAMES = ["positive", "negative", "neutral", "mixed", "other", "none", "x-7"]


KINDS = ("random", "constant", "gold-subset", "never-predicted", "perfect", "ties", "one-item")


@dataclass(frozen=True)
class Case:
    """A generated gold and run, as label names."""

    seed: int
    labels: list[str]
    gold: list[str]
    predicted: list[str]


def make_case(seed: int) -> Case:
    """Return the case of ``seed``: 2 to 7 labels, and a kind cycling through KINDS."""
    rng = np.random.default_rng(seed)
    labels = NAMES[: 2 + seed % 6]
    kind = KINDS[seed % len(KINDS)]
    n = 1 if kind == "one-item" else int(rng.choice([2, 3, 7, 40, 250]))
    gold = list(rng.choice(labels, size=n))
    if kind == "random":
        predicted = list(rng.choice(labels, size=n))
    elif kind == "constant":
        predicted = [labels[int(rng.integers(len(labels)))]] * n
        if seed % 2:
            gold = list(predicted)  # gold and prediction one same label: kappa undefined
    elif kind == "gold-subset":
        gold = (
            list(rng.choice(labels[:1], size=n))
            if len(labels) == 2
            else list(rng.choice(labels[: len(labels) - 2], size=n))
        )
        predicted = list(rng.choice(labels, size=n))
    elif kind == "never-predicted":
        predicted = list(rng.choice(labels[1:], size=n))
    elif kind == "perfect":
        predicted = list(gold)
    elif kind == "ties":
        # Two labels with equal counts in gold, and a prediction swapping half of them.
        half = max(1, n // 2)
        gold = [labels[0]] * half + [labels[1]] * half
        predicted = [labels[(i // 2 + i) % 2] for i in range(len(gold))]
    else:
        predicted = list(rng.choice(labels, size=n))
    return Case(seed, list(labels), [str(g) for g in gold], [str(p) for p in predicted])


def to_bytes(ids: list[str], values: list[str], order: np.ndarray) -> bytes:
    """Return an item file listing ``ids`` in ``order``, TAB-separated, under a header line."""
    return ("# id\tlabel\n" + "".join(f"{ids[i]}\t{values[i]}\n" for i in order)).encode()
