"""The Ladder written out for tests, independent of the server's code."""

from __future__ import annotations

import math

import numpy as np


def ladder_on_means(values: list[np.ndarray]) -> list[tuple[bool, float]]:
    """Return each run's (replaced, released) under Blum & Hardt's parameter-free Ladder."""
    out: list[tuple[bool, float]] = []
    released: float | None = None
    best: np.ndarray | None = None
    for v in values:
        n = len(v)
        mean = float(v.mean())
        if released is None or best is None:
            replaced = True
        else:
            replaced = mean > released + float(np.std(v - best, ddof=1)) / math.sqrt(n) + 1e-12
        if replaced:
            released, best = round(mean * n) / n, v
        assert released is not None
        out.append((replaced, released))
    return out
