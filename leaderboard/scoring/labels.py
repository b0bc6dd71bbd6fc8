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


class Confusion:
    """The counts behind every measure: per-label true positives, gold and predicted totals."""

    def __init__(self, gold: np.ndarray, predicted: np.ndarray, n_labels: int) -> None:
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
        self.n = int(gold.size)
        self.n_labels = n_labels
        flat = gold.astype(np.int64) * n_labels + predicted.astype(np.int64)
        #: matrix[i, j]: items of gold label i predicted as j.
        self.matrix = np.bincount(flat, minlength=n_labels * n_labels).reshape(n_labels, n_labels)
        self.tp = np.diagonal(self.matrix).astype(np.float64)
        self.gold_total = self.matrix.sum(axis=1).astype(np.float64)
        self.predicted_total = self.matrix.sum(axis=0).astype(np.float64)

    def precision(self) -> np.ndarray:
        """Return P per label: TP / predicted, 0 where nothing was predicted."""
        return _divide(self.tp, self.predicted_total)

    def recall(self) -> np.ndarray:
        """Return R per label: TP / gold, 0 where the label is absent from gold."""
        return _divide(self.tp, self.gold_total)

    def f1(self) -> np.ndarray:
        """Return F1 per label: 2·TP / (gold + predicted), 0 where both are 0."""
        return _divide(2.0 * self.tp, self.gold_total + self.predicted_total)

    def accuracy(self) -> float:
        """Return Acc = correct items / items."""
        return float(self.tp.sum()) / self.n

    def micro_f1(self) -> float:
        """Return micro F1 = 2·ΣTP / (Σgold + Σpredicted) over the declared labels."""
        denominator = float(self.gold_total.sum() + self.predicted_total.sum())
        return 2.0 * float(self.tp.sum()) / denominator if denominator else 0.0

    def weighted_f1(self) -> float:
        """Return Σ(gold_l · F1_l) / Σgold_l, scikit-learn's ``average="weighted"``."""
        return float(np.average(self.f1(), weights=self.gold_total))

    def mcc(self) -> float:
        """Return the multi-class MCC: (c·n − t·p) / sqrt((n² − p·p)(n² − t·t)), 0 if undefined.

        c = correct items, n = items, t and p the gold and predicted totals per label. When a
        side is constant the denominator is 0: scikit-learn returns 0 then, and so does this.
        """
        t, p = self.gold_total, self.predicted_total
        n = float(self.n)
        cov_tp = float(self.tp.sum()) * n - float(np.dot(t, p))
        cov_pp = n * n - float(np.dot(p, p))
        cov_tt = n * n - float(np.dot(t, t))
        product = cov_pp * cov_tt
        return 0.0 if product == 0 else cov_tp / float(np.sqrt(product))

    def kappa(self) -> float | None:
        """Return Cohen's kappa = 1 − disagreements / expected disagreements, None if undefined.

        Expected disagreements = Σ_{i≠j} p_i·t_j / n = (n² − p·t) / n; they are 0 only when gold
        and prediction are one same label throughout, where scikit-learn returns nan.
        """
        n = float(self.n)
        expected = (n * n - float(np.dot(self.predicted_total, self.gold_total))) / n
        if expected == 0:
            return None
        return 1.0 - (n - float(self.tp.sum())) / expected


def _divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Return numerator / denominator elementwise, 0 where the denominator is 0."""
    out = np.zeros_like(numerator, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def measure_value(confusion: Confusion, measure: LabelMeasure) -> float | None:
    """Return one measure's value (None when undefined)."""
    kind = measure.kind
    if kind == "Acc":
        return confusion.accuracy()
    if kind == "micro-F1":
        return confusion.micro_f1()
    if kind == "weighted-F1":
        return confusion.weighted_f1()
    if kind == "MCC":
        return confusion.mcc()
    if kind == "kappa":
        return confusion.kappa()
    per_label = {
        "P": confusion.precision,
        "R": confusion.recall,
        "F1": confusion.f1,
    }[kind.removeprefix("macro-")]()
    chosen = list(measure.labels) if measure.labels else slice(None)
    return float(np.mean(per_label[chosen]))


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
    confusion = Confusion(gold, predicted, len(labels))
    return {measure.key: measure_value(confusion, measure) for measure in parsed}


def per_item_correct(gold: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Return 1.0 for each item predicted correctly and 0.0 otherwise (Acc is their mean)."""
    gold = np.asarray(gold)
    predicted = np.asarray(predicted)
    if gold.shape != predicted.shape or gold.ndim != 1:
        raise ValueError("gold and predicted must be 1-D arrays of the same length")
    return (gold == predicted).astype(np.float64)
