"""Restrict an STS gold and run to some of the set's scored pairs (a public or private part).

A pair's id is its part and 1-based run line (``headlines:12``, as ``item_id``). The part of a
set keeps, for each of its parts (STS's own evaluation parts, e.g. headlines), the chosen
pairs as a gold file and a run file of only those pairs would hold them; a part with none of
the chosen pairs is left out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from leaderboard.formats.sts import StsGold
from leaderboard.tasks.families.sts.scoring import item_id


def unit_ids(golds: Mapping[str, StsGold]) -> list[str]:
    """Return every scored pair's id, part by part, in gold order."""
    return [
        item_id(slug, index) for slug, gold in golds.items() for index in gold.scored_index.tolist()
    ]


def chosen(gold: StsGold, units: frozenset[str]) -> np.ndarray:
    """Return the positions of a part's gold values whose pairs are among ``units``."""
    return np.flatnonzero(
        np.array([item_id(gold.slug, i) in units for i in gold.scored_index.tolist()], dtype=bool)
    )


def restrict_golds(golds: Mapping[str, StsGold], units: frozenset[str]) -> dict[str, StsGold]:
    """Return the gold of every part with chosen pairs, scored on run lines 0 to k - 1."""
    out: dict[str, StsGold] = {}
    for slug, gold in golds.items():
        positions = chosen(gold, units)
        if positions.size:
            out[slug] = replace(
                gold,
                scored_index=_frozen(np.arange(positions.size, dtype=np.int64)),
                values=_frozen(gold.values[positions]),
            )
    return out


def restrict_values(
    values: Mapping[str, np.ndarray], golds: Mapping[str, StsGold], units: frozenset[str]
) -> dict[str, np.ndarray]:
    """Return the run's values on the chosen pairs of every part that has some, in gold order."""
    out: dict[str, np.ndarray] = {}
    for slug, gold in golds.items():
        positions = chosen(gold, units)
        if positions.size:
            out[slug] = np.asarray(values[slug])[gold.scored_index[positions]]
    return out


def _frozen(array: np.ndarray) -> np.ndarray:
    """Return the array made read-only, as the parsed gold's arrays are."""
    array.setflags(write=False)
    return array
