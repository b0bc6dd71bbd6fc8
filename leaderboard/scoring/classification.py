"""Binary classification measures for the positive (``true``) class."""

from __future__ import annotations

import numpy as np


def binary_measures(gold: np.ndarray, predicted: np.ndarray) -> dict[str, float]:
    """Return P, R, F1 and Acc of ``predicted`` against ``gold`` (bool arrays, same length).

    P = TP / (TP + FP), R = TP / (TP + FN), F1 = 2·P·R / (P + R), Acc = (TP + TN) / N;
    a measure whose denominator is 0 is 0.
    """
    gold = np.asarray(gold, dtype=bool)
    predicted = np.asarray(predicted, dtype=bool)
    if gold.shape != predicted.shape or gold.ndim != 1:
        raise ValueError("gold and predicted must be 1-D arrays of the same length")
    total = int(gold.size)
    if total == 0:
        raise ValueError("cannot compute classification measures on no lines")
    tp = int(np.count_nonzero(gold & predicted))
    fp = int(np.count_nonzero(~gold & predicted))
    fn = int(np.count_nonzero(gold & ~predicted))
    tn = total - tp - fp - fn
    # Same operation order as the 2016 scorer, so the 4-decimal values agree bit for bit.
    p = tp / (tp + fp) if tp + fp > 0 else 0.0
    r = tp / (tp + fn) if tp + fn > 0 else 0.0
    f1 = 2.0 * p * r / (p + r) if p + r > 0 else 0.0
    acc = (tp + tn) / total
    return {"P": p, "R": r, "F1": f1, "Acc": acc}
