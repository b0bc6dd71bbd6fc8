"""Classification measures over declared labels, with scikit-learn's definitions (pure numpy).

Gold and predicted labels are index arrays into the declared labels (declaration order). Every
measure follows scikit-learn with ``labels`` = the declared labels and ``zero_division=0``, and
takes per-item weights as scikit-learn's ``sample_weight``. Measure keys: ``Acc``, ``MCC``,
``kappa`` and the weighted ``kappa[linear]``, ``kappa[quadratic]`` (``cohen_kappa_score``'s
``weights`` on the declared order; ``kappa[weights=linear]`` is accepted too); precision, recall
and F-beta averaged ``macro``, ``micro`` or ``weighted`` (``macro-P``, ``micro-R``,
``weighted-F1``, ``macro-F0.5``: F then any positive beta), over the declared labels or over a
listed subset (``macro-F1[a,b]``, ``weighted-R[a,b]``), and one label's ``P[a]``, ``R[a]``,
``F1[a]``, ``F2[a]``. A label named in a key is written as declared, without spaces around the
commas; since ``,``, ``[`` and ``]`` delimit the names, a label containing one of them (or
whitespace, which separates fields in files) cannot be declared.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from leaderboard.scoring.measure_keys import refuse_unknown_options, split_bracketed
from leaderboard.scoring.registry import Measure, MeasureRegistry, UnknownMeasure

#: Characters a label may not contain: key delimiters, and whitespace (the file separator).
_FORBIDDEN = re.compile(r"[\s,\[\]]")
_NAME = r"[^\s,\[\]]+"
_NAMES = rf"{_NAME}(?:,{_NAME})*"
#: F-beta's beta as written after the F: a decimal without sign, exponent or leading zeros.
_BETA = r"(?:0|[1-9][0-9]*)(?:\.[0-9]+)?"
_PRF = rf"(?:P|R|F{_BETA})"
_AVERAGED_KEY = re.compile(rf"(macro|micro|weighted)-({_PRF})(?:\[({_NAMES})\])?")
_ONE_KEY = re.compile(rf"({_PRF})\[({_NAME})\]")
_KAPPA_KEY = re.compile(r"kappa\[(?:weights=)?(linear|quadratic)\]")
#: The largest F-beta beta: beta² times the counts stays finite.
MAX_BETA = 1e6
#: What cohen_kappa_score's ``weights`` may be.
KAPPA_WEIGHTS = ("linear", "quadratic")

_FIXED_NOTES = {
    "Acc": "accuracy: correct items / items",
    "macro-P": "precision averaged over the declared labels",
    "macro-R": "recall averaged over the declared labels",
    "macro-F1": "F1 averaged over the declared labels",
    "micro-F1": "F1 of the counts summed over the declared labels",
    "weighted-F1": "F1 averaged over the declared labels, weighted by gold support",
    "MCC": "Matthews correlation coefficient (0 when undefined, as scikit-learn)",
    "kappa": "Cohen's kappa (undefined when gold and prediction are one same label)",
    "micro-P": "precision of the counts summed over the declared labels",
    "micro-R": "recall of the counts summed over the declared labels",
    "weighted-P": "precision averaged over the declared labels, weighted by gold support",
    "weighted-R": "recall averaged over the declared labels, weighted by gold support",
    "kappa[linear]": "Cohen's kappa with linear weights on the declared label order",
    "kappa[quadratic]": "Cohen's kappa with quadratic weights on the declared label order",
}
#: The subset and one-label forms, for messages.
FORMS = (
    "macro-P[a,b,...]",
    "macro-R[a,b,...]",
    "macro-F1[a,b,...]",
    "P[a]",
    "R[a]",
    "F1[a]",
    "macro-, micro- or weighted- P, R, F1 or Fβ with any β > 0 (macro-F0.5, weighted-F2)",
    "each also over listed labels (micro-R[a,b,...], weighted-F2[a,b,...])",
    "Fβ[a]",
    "kappa[weights=linear]",
    "kappa[weights=quadratic]",
)

_METRIC_NOTES = {"P": "precision", "R": "recall"}
_AVERAGE_NOTES = {
    "macro": "averaged over {}",
    "micro": "of the counts summed over {}",
    "weighted": "averaged over {}, weighted by gold support",
}


def _measure(key: str, notes: str) -> Measure:
    """Return a classification entry: a fraction shown and ranked to 4 decimals."""
    return Measure(key, key, "fraction", 4, 4, notes=notes)


def _metric_note(metric: str) -> str:
    """Return the name of ``P``, ``R``, ``F1`` or ``F<beta>`` in a note."""
    return _METRIC_NOTES.get(metric) or ("F1" if metric == "F1" else f"F-beta (beta {metric[1:]})")


def _averaged(m: re.Match[str]) -> Measure:
    """Return the entry of an averaged key (``weighted-R[a,b]``, ``macro-F0.5``)."""
    over = m.group(3) or "the declared labels"
    return _measure(
        m.group(0), f"{_metric_note(m.group(2))} {_AVERAGE_NOTES[m.group(1)].format(over)}"
    )


CLASSIFICATION_REGISTRY = MeasureRegistry(
    "classification",
    [_measure(key, notes) for key, notes in _FIXED_NOTES.items()],
    patterns=[
        (_AVERAGED_KEY, _averaged),
        (_ONE_KEY, lambda m: _measure(m.group(0), f"{_metric_note(m.group(1))} of {m.group(2)}")),
        (
            _KAPPA_KEY,
            lambda m: _measure(m.group(0), _FIXED_NOTES[f"kappa[{m.group(1)}]"]),
        ),
    ],
    forms=FORMS,
)


@dataclass(frozen=True)
class LabelMeasure:
    """A parsed measure key: its kind (``macro-F1``, ``P``, ``kappa``...) and label indices.

    ``metric`` is ``P``, ``R`` or ``F`` (with ``beta``) for the averaged and one-label kinds,
    else the kind; ``average`` is ``macro`` (also for one label), ``micro`` or ``weighted``;
    ``weights`` is kappa's weighting (``""``, ``linear`` or ``quadratic``).
    """

    key: str
    kind: str
    labels: tuple[int, ...] = ()
    metric: str = ""
    average: str = ""
    beta: float = 1.0
    weights: str = ""


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

    UnknownMeasure: the key has none of the accepted forms, or names an option the measure
    does not take (listing the ones it takes). ValueError: the form is right but a label is not
    declared or is listed twice, or beta is not positive.
    """
    try:
        CLASSIFICATION_REGISTRY.get(key)
    except UnknownMeasure:
        _refuse_options(key)
        raise
    if key in ("Acc", "MCC", "kappa"):
        return LabelMeasure(key, key, metric=key)
    kappa = _KAPPA_KEY.fullmatch(key)
    if kappa is not None:
        return LabelMeasure(key, "kappa", metric="kappa", weights=kappa.group(1))
    averaged = _AVERAGED_KEY.fullmatch(key)
    if averaged is not None:
        average, metric, names = averaged.group(1), averaged.group(2), averaged.group(3)
        kind = f"{average}-{metric}"
    else:
        one = _ONE_KEY.fullmatch(key)
        assert one is not None  # the registry matched one of these patterns
        average, metric, names = "macro", one.group(1), one.group(2)
        kind = metric
    beta = 1.0
    if metric.startswith("F"):
        beta = float(metric[1:])
        if not 0 < beta <= MAX_BETA:
            raise ValueError(
                f"measure {key[:80]!r}: beta must be positive and at most {MAX_BETA:g} "
                f"(F0.5, F2...), not {metric[1:][:40]}"
            )
        metric = "F"
    chosen = _label_indices(key, names.split(",") if names else [], labels)
    return LabelMeasure(key, kind, chosen, metric, average, beta)


def _label_indices(key: str, names: list[str], labels: Sequence[str]) -> tuple[int, ...]:
    """Return the indices of the labels a key lists; refuse undeclared or repeated ones."""
    index = {label: i for i, label in enumerate(labels)}
    unknown = [name for name in names if name not in index]
    options = {n.partition("=")[0]: n.partition("=")[2] for n in unknown if "=" in n}
    if options:
        # ``name=value`` that is no declared label: an option, which these measures do not take.
        refuse_unknown_options(key, dict(options), ())
    if unknown:
        declared = ", ".join(repr(label) for label in labels)
        raise ValueError(
            f"measure {key[:80]!r} names labels that are not declared: "
            f"{', '.join(repr(n[:80]) for n in unknown)}; declared: {declared}"
        )
    if len(set(names)) != len(names):
        raise ValueError(f"measure {key[:80]!r} lists a label twice")
    return tuple(index[name] for name in names)


def _refuse_options(key: str) -> None:
    """Raise a clear UnknownMeasure for a known measure given options or parameters it lacks."""
    if "[" not in key:
        return
    parsed = split_bracketed(key)  # raises UnknownMeasure for malformed brackets
    if parsed.name == "kappa":
        refuse_unknown_options(key, parsed.named, ("weights",))
        raise UnknownMeasure(
            f"Measure {key[:80]!r}: kappa's weights are {' or '.join(KAPPA_WEIGHTS)} "
            "(kappa[linear], kappa[weights=quadratic]); plain kappa has none."
        )
    if parsed.name in _FIXED_NOTES or _PRF_NAME.fullmatch(parsed.name):
        refuse_unknown_options(key, parsed.named, ())


_PRF_NAME = re.compile(rf"(?:(?:macro|micro|weighted)-)?{_PRF}")


def confusion_matrix(
    gold: np.ndarray,
    predicted: np.ndarray,
    n_labels: int,
    weights: np.ndarray | None = None,
) -> np.ndarray:
    """Return the counts behind every measure: matrix[i, j] = items of gold i predicted as j.

    With ``weights`` (scikit-learn's ``sample_weight``: finite, none negative, one positive)
    each item counts its weight.
    """
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
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
        if weights.shape != gold.shape:
            raise ValueError("weights must be a 1-D array as long as the labels")
        if not np.all(np.isfinite(weights)) or (weights < 0).any():
            raise ValueError("weights must be finite and not negative")
        if not (weights > 0).any():
            raise ValueError("at least one weight must be positive")
    flat = gold.astype(np.int64) * n_labels + predicted.astype(np.int64)
    counts = np.bincount(flat, weights=weights, minlength=n_labels * n_labels)
    return counts.reshape(n_labels, n_labels)


def _divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Return numerator / denominator elementwise, 0 where the denominator is 0."""
    out = np.zeros(np.broadcast(numerator, denominator).shape, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator != 0)
    return out


def measure_values(matrices: np.ndarray, measure: LabelMeasure) -> np.ndarray:
    """Return the measure of each confusion matrix (shape ..., L, L); nan where undefined.

    With TP_l, gold_l (row sums), predicted_l (column sums), n items (their weights, when
    weighted) and c = ΣTP_l: P_l = TP_l / predicted_l, R_l = TP_l / gold_l,
    F_l = (1 + β²)·TP_l / (β²·gold_l + predicted_l), each 0 when its denominator is 0; over the
    declared (or listed) labels, ``macro-X`` is their mean, ``weighted-X`` their mean weighted
    by gold_l (their plain mean when Σgold_l = 0, as scikit-learn), ``micro-X`` X of the summed
    TP, gold and predicted. Acc = c / n; MCC = (c·n − t·p) / sqrt((n² − p·p)(n² − t·t)), 0 when
    a side is constant (as scikit-learn); kappa = 1 − Σ W·C / Σ W·E with E = p ⊗ t / n and
    W = 1 − I, |i − j| (linear) or (i − j)² (quadratic), undefined when Σ W·E = 0 (unweighted:
    gold and prediction one same label throughout). One formula serves scoring and resampled
    analysis.
    """
    m = np.asarray(matrices, dtype=np.float64)
    tp = np.diagonal(m, axis1=-2, axis2=-1)
    gold = m.sum(axis=-1)
    predicted = m.sum(axis=-2)
    n = gold.sum(axis=-1)
    correct = tp.sum(axis=-1)
    kind = measure.kind
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "Acc":
            return correct / n
        if kind == "MCC":
            # scikit-learn's n is the sum of the predicted totals; with weights the two sums
            # may differ in the last bit, and this one is what it tests for 0.
            n = predicted.sum(axis=-1)
            cov_tp = correct * n - (gold * predicted).sum(axis=-1)
            cov_pp = n * n - (predicted * predicted).sum(axis=-1)
            cov_tt = n * n - (gold * gold).sum(axis=-1)
            product = cov_pp * cov_tt
            return _divide(cov_tp, np.sqrt(product))
        if kind == "kappa":
            if not measure.weights:
                expected = (n * n - (predicted * gold).sum(axis=-1)) / n
                return np.where(expected == 0, np.nan, 1.0 - (n - correct) / expected)
            return _weighted_kappa(m, gold, predicted, n, measure.weights)
    return _averaged_prf(tp, gold, predicted, measure)


def _weighted_kappa(
    m: np.ndarray, gold: np.ndarray, predicted: np.ndarray, n: np.ndarray, weights: str
) -> np.ndarray:
    """Return kappa with linear or quadratic disagreement weights on the label order."""
    order = np.arange(m.shape[-1], dtype=np.float64)
    distance = np.abs(order[:, None] - order[None, :])
    w = distance if weights == "linear" else distance**2
    observed = (w * m).sum(axis=(-2, -1))
    expected = np.einsum("...i,ij,...j->...", predicted, w, gold) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        value = 1.0 - observed / expected
    return np.where((n == 0) | (expected == 0), np.nan, value)


def _averaged_prf(
    tp: np.ndarray, gold: np.ndarray, predicted: np.ndarray, measure: LabelMeasure
) -> np.ndarray:
    """Return precision, recall or F-beta averaged as the measure says over its labels."""
    if measure.labels:
        chosen = list(measure.labels)
        tp, gold, predicted = tp[..., chosen], gold[..., chosen], predicted[..., chosen]
    if measure.average == "micro":
        tp, gold, predicted = (x.sum(axis=-1, keepdims=True) for x in (tp, gold, predicted))
    if measure.metric == "P":
        values = _divide(tp, predicted)
    elif measure.metric == "R":
        values = _divide(tp, gold)
    else:
        beta2 = measure.beta**2
        values = _divide((1 + beta2) * tp, beta2 * gold + predicted)
    if measure.average == "weighted":
        support = gold.sum(axis=-1)
        weighted = _divide((values * gold).sum(axis=-1), support)
        return np.where(support == 0, values.mean(axis=-1), weighted)
    return np.asarray(values.mean(axis=-1))


def classification_measures(
    gold: np.ndarray,
    predicted: np.ndarray,
    labels: Sequence[str],
    keys: Iterable[str] = tuple(_FIXED_NOTES),
    weights: np.ndarray | None = None,
) -> dict[str, float | None]:
    """Return each measure in ``keys`` (default: the fixed ones) of ``predicted`` vs ``gold``.

    ``weights`` are per-item weights (scikit-learn's ``sample_weight``); see measure_values for
    the definitions.
    """
    parsed = [check_measure(key, labels) for key in keys]
    matrix = confusion_matrix(gold, predicted, len(labels), weights)
    values = {measure.key: float(measure_values(matrix, measure)) for measure in parsed}
    return {key: None if np.isnan(value) else value for key, value in values.items()}


def per_item_correct(gold: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """Return 1.0 for each item predicted correctly and 0.0 otherwise (Acc is their mean)."""
    gold = np.asarray(gold)
    predicted = np.asarray(predicted)
    if gold.shape != predicted.shape or gold.ndim != 1:
        raise ValueError("gold and predicted must be 1-D arrays of the same length")
    return (gold == predicted).astype(np.float64)
