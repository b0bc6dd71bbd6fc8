"""Classification measures over declared labels, with scikit-learn's definitions (pure numpy).

Gold and predicted labels are index arrays into the declared labels (declaration order). Every
measure follows scikit-learn with ``labels`` = the declared labels and ``zero_division=0``.
Measure keys: ``Acc``, ``macro-P``, ``macro-R``, ``macro-F1``, ``micro-F1``, ``weighted-F1``,
``MCC``, ``kappa``; the subset averages ``macro-P[a,b]``, ``macro-R[a,b]``, ``macro-F1[a,b]``
and the one-label ``P[a]``, ``R[a]``, ``F1[a]``. A label named in a key is written as declared,
without spaces around the commas; since ``,``, ``[`` and ``]`` delimit the names, a label
containing one of them (or whitespace, which separates fields in files) cannot be declared.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from leaderboard.scoring.registry import Measure, MeasureRegistry

#: Characters a label may not contain: key delimiters, and whitespace (the file separator).
_FORBIDDEN = re.compile(r"[\s,\[\]]")
_NAME = r"[^\s,\[\]]+"
_SUBSET_KEY = re.compile(rf"(macro-P|macro-R|macro-F1)\[({_NAME}(?:,{_NAME})*)\]")
_ONE_KEY = re.compile(rf"(P|R|F1)\[({_NAME})\]")

_FIXED_NOTES = {
    "Acc": "accuracy: correct items / items",
    "macro-P": "precision averaged over the declared labels",
    "macro-R": "recall averaged over the declared labels",
    "macro-F1": "F1 averaged over the declared labels",
    "micro-F1": "F1 of the counts summed over the declared labels",
    "weighted-F1": "F1 averaged over the declared labels, weighted by gold support",
    "MCC": "Matthews correlation coefficient (0 when undefined, as scikit-learn)",
    "kappa": "Cohen's kappa (undefined when gold and prediction are one same label)",
}
#: The subset and one-label forms, for messages.
FORMS = ("macro-P[a,b,...]", "macro-R[a,b,...]", "macro-F1[a,b,...]", "P[a]", "R[a]", "F1[a]")

_SUBSET_NOTES = {"macro-P": "precision", "macro-R": "recall", "macro-F1": "F1"}
_ONE_NOTES = {"P": "precision", "R": "recall", "F1": "F1"}


def _measure(key: str, notes: str) -> Measure:
    """Return a classification entry: a fraction shown and ranked to 4 decimals."""
    return Measure(key, key, "fraction", 4, 4, notes=notes)


CLASSIFICATION_REGISTRY = MeasureRegistry(
    "classification",
    [_measure(key, notes) for key, notes in _FIXED_NOTES.items()],
    patterns=[
        (
            _SUBSET_KEY,
            lambda m: _measure(
                m.group(0), f"{_SUBSET_NOTES[m.group(1)]} averaged over {m.group(2)}"
            ),
        ),
        (_ONE_KEY, lambda m: _measure(m.group(0), f"{_ONE_NOTES[m.group(1)]} of {m.group(2)}")),
    ],
    forms=FORMS,
)


@dataclass(frozen=True)
class LabelMeasure:
    """A parsed measure key: its kind (``macro-F1``, ``P``, ``kappa``...) and label indices."""

    key: str
    kind: str
    labels: tuple[int, ...] = ()


def check_labels(labels: Sequence[str]) -> None:
    """Raise ValueError unless the labels are distinct, non-empty and nameable in keys."""
    if not labels:
        raise ValueError("at least one label must be declared")
    for label in labels:
        if not label or _FORBIDDEN.search(label):
            raise ValueError(
                f"label {label[:80]!r} must be non-empty, without whitespace, ',', '[' or ']'"
            )
    if len(set(labels)) != len(labels):
        raise ValueError("a label is declared more than once")


def check_measure(key: str, labels: Sequence[str]) -> LabelMeasure:
    """Parse ``key`` against the declared labels; raise UnknownMeasure or ValueError if wrong.

    UnknownMeasure: the key has none of the accepted forms. ValueError: the form is right but a
    label is not declared, or is listed twice.
    """
    CLASSIFICATION_REGISTRY.get(key)  # raises UnknownMeasure listing the forms
    if key in _FIXED_NOTES:
        return LabelMeasure(key, key)
    match = _SUBSET_KEY.fullmatch(key) or _ONE_KEY.fullmatch(key)
    assert match is not None  # the registry matched one of these patterns
    index = {label: i for i, label in enumerate(labels)}
    names = match.group(2).split(",")
    unknown = [name for name in names if name not in index]
    if unknown:
        declared = ", ".join(repr(label) for label in labels)
        raise ValueError(
            f"measure {key[:80]!r} names labels that are not declared: "
            f"{', '.join(repr(n[:80]) for n in unknown)}; declared: {declared}"
        )
    if len(set(names)) != len(names):
        raise ValueError(f"measure {key[:80]!r} lists a label twice")
    return LabelMeasure(key, match.group(1), tuple(index[name] for name in names))


def confusion_matrix(gold: np.ndarray, predicted: np.ndarray, n_labels: int) -> np.ndarray:
    """Return the counts behind every measure: matrix[i, j] = items of gold i predicted as j."""
    gold = np.asarray(gold)
    predicted = np.asarray(predicted)
    if gold.shape != predicted.shape or gold.ndim != 1:
        raise ValueError("gold and predicted must be 1-D arrays of the same length")
    if gold.size == 0:
        raise ValueError("cannot compute classification measures on no items")
    if n_labels < 1:
        raise ValueError("at least one label is needed")
    for name, values in (("gold", gold), ("predicted", predicted)):
        if not np.issubdtype(values.dtype, np.integer):
            raise ValueError(f"{name} labels must be integer indices")
        if values.min() < 0 or values.max() >= n_labels:
            raise ValueError(f"{name} labels must be indices in 0..{n_labels - 1}")
    flat = gold.astype(np.int64) * n_labels + predicted.astype(np.int64)
    return np.bincount(flat, minlength=n_labels * n_labels).reshape(n_labels, n_labels)


def _divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Return numerator / denominator elementwise, 0 where the denominator is 0."""
    out = np.zeros(np.broadcast(numerator, denominator).shape, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def measure_values(matrices: np.ndarray, measure: LabelMeasure) -> np.ndarray:
    """Return the measure of each confusion matrix (shape ..., L, L); nan where undefined.

    With TP_l, gold_l (row sums), predicted_l (column sums), n items and c = ΣTP_l:
    P_l = TP_l / predicted_l, R_l = TP_l / gold_l, F1_l = 2·TP_l / (gold_l + predicted_l), each
    0 when its denominator is 0, ``macro-X`` their mean over the declared (or listed) labels;
    Acc = c / n; micro-F1 = 2c / (Σgold + Σpredicted); weighted-F1 = Σ gold_l·F1_l / Σ gold_l;
    MCC = (c·n − t·p) / sqrt((n² − p·p)(n² − t·t)), 0 when a side is constant (as scikit-learn);
    kappa = 1 − (n − c) / ((n² − p·t) / n), undefined when gold and prediction are one same
    label throughout. One formula serves scoring and resampled analysis.
    """
    m = np.asarray(matrices, dtype=np.float64)
    tp = np.diagonal(m, axis1=-2, axis2=-1)
    gold = m.sum(axis=-1)
    predicted = m.sum(axis=-2)
    n = gold.sum(axis=-1)
    correct = tp.sum(axis=-1)
    kind = measure.kind
    if kind == "Acc":
        return correct / n
    if kind == "micro-F1":
        return _divide(2.0 * correct, gold.sum(axis=-1) + predicted.sum(axis=-1))
    if kind == "weighted-F1":
        f1 = _divide(2.0 * tp, gold + predicted)
        return (f1 * gold).sum(axis=-1) / gold.sum(axis=-1)
    if kind == "MCC":
        cov_tp = correct * n - (gold * predicted).sum(axis=-1)
        cov_pp = n * n - (predicted * predicted).sum(axis=-1)
        cov_tt = n * n - (gold * gold).sum(axis=-1)
        product = cov_pp * cov_tt
        return _divide(cov_tp, np.sqrt(product))
    if kind == "kappa":
        expected = (n * n - (predicted * gold).sum(axis=-1)) / n
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(expected == 0, np.nan, 1.0 - (n - correct) / expected)
    denominator = {"P": predicted, "R": gold, "F1": gold + predicted}[kind.removeprefix("macro-")]
    per_label = _divide(tp * (2.0 if kind.endswith("F1") else 1.0), denominator)
    chosen = list(measure.labels) if measure.labels else slice(None)
    return np.asarray(per_label[..., chosen].mean(axis=-1))


def classification_measures(
    gold: np.ndarray,
    predicted: np.ndarray,
    labels: Sequence[str],
    keys: Iterable[str] = tuple(_FIXED_NOTES),
) -> dict[str, float | None]:
    """Return each measure in ``keys`` (default: the fixed ones) of ``predicted`` vs ``gold``.

    Per label l: P_l = TP_l / predicted_l, R_l = TP_l / gold_l, F1_l = 2·TP_l / (gold_l +
    predicted_l), each 0 when its denominator is 0; ``macro-X`` is the mean of X_l over the
    declared labels (or over the labels listed in brackets); see Confusion for the others.
    """
    parsed = [check_measure(key, labels) for key in keys]
    matrix = confusion_matrix(gold, predicted, len(labels))
    values = {measure.key: float(measure_values(matrix, measure)) for measure in parsed}
    return {key: None if np.isnan(value) else value for key, value in values.items()}


def per_item_correct(gold: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Return 1.0 for each item predicted correctly and 0.0 otherwise (Acc is their mean)."""
    gold = np.asarray(gold)
    predicted = np.asarray(predicted)
    if gold.shape != predicted.shape or gold.ndim != 1:
        raise ValueError("gold and predicted must be 1-D arrays of the same length")
    return (gold == predicted).astype(np.float64)
