"""Binary classification measures for the positive (``true``) class."""

from __future__ import annotations

import numpy as np

#: The measures ``binary_from_counts`` returns, in order.
BINARY_MEASURES = ("P", "R", "F1", "Acc")


def binary_counts(gold: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Return [TP, FP, FN, TN] of ``predicted`` against ``gold`` (bool arrays, same length)."""
    gold = np.asarray(gold, dtype=bool)
    predicted = np.asarray(predicted, dtype=bool)
    if gold.shape != predicted.shape or gold.ndim != 1:
        raise ValueError("gold and predicted must be 1-D arrays of the same length")
    if gold.size == 0:
        raise ValueError("cannot compute classification measures on no lines")
    tp = int(np.count_nonzero(gold & predicted))
    fp = int(np.count_nonzero(~gold & predicted))
    fn = int(np.count_nonzero(gold & ~predicted))
    return np.array([tp, fp, fn, int(gold.size) - tp - fp - fn], dtype=np.int64)


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Return numerator / denominator elementwise, 0 where the denominator is 0."""
    out = np.zeros(np.broadcast(numerator, denominator).shape, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def binary_from_counts(counts: np.ndarray) -> dict[str, np.ndarray]:
    """Return P, R, F1 and Acc of counts [TP, FP, FN, TN] (shape ..., 4), vectorized.

    P = TP / (TP + FP), R = TP / (TP + FN), F1 = 2·P·R / (P + R), Acc = (TP + TN) / N;
    a measure whose denominator is 0 is 0. One formula serves scoring and resampled analysis.
    """
    c = np.asarray(counts, dtype=np.float64)
    tp, fp, fn, tn = (c[..., k] for k in range(4))
    # Same operation order as the 2016 scorer, so the 4-decimal values agree bit for bit.
    p = _ratio(tp, tp + fp)
    r = _ratio(tp, tp + fn)
    f1 = _ratio(2.0 * p * r, p + r)
    acc = _ratio(tp + tn, tp + fp + fn + tn)
    return {"P": p, "R": r, "F1": f1, "Acc": acc}


def binary_measures(gold: np.ndarray, predicted: np.ndarray) -> dict[str, float]:
    """Return P, R, F1 and Acc of ``predicted`` against ``gold`` (bool arrays, same length).

    P = TP / (TP + FP), R = TP / (TP + FN), F1 = 2·P·R / (P + R), Acc = (TP + TN) / N;
    a measure whose denominator is 0 is 0 (see ``binary_from_counts``).
    """
    values = binary_from_counts(binary_counts(gold, predicted))
    return {key: float(value) for key, value in values.items()}
