"""The measure registry: one entry per measure (key, label, scale, decimals, direction, notes)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

#: What a stored value is: a fraction (0-1), a percentage, a correlation, a count or a score on
#: the measure's own scale (e.g. sacrebleu's 0-100).
Scale = Literal["fraction", "percent", "correlation", "count", "score"]


class UnknownMeasure(ValueError):
    """A measure key no family registry knows; the message lists the accepted forms."""


@dataclass(frozen=True)
class Measure:
    """One measure as tables, rounding, ranking and exports read it.

    ``factor`` turns a stored value into the shown one (CQA stores MAP as a fraction and shows it
    x100); ``official_decimals`` is the rounding of the stored official string, which ties and
    ranks compare; ``decimals`` is what tables show.
    """

    key: str
    label: str
    scale: Scale
    decimals: int
    official_decimals: int
    factor: float = 1.0
    lower_is_better: bool = False
    notes: str = ""

    def official(self, raw: float) -> str:
        """Return the official string of a raw value: rounded to ``official_decimals``."""
        return format(raw, f".{self.official_decimals}f")

    def displayed(self, raw: float) -> float:
        """Return a stored value in the scale the table shows."""
        return raw * self.factor

    def renamed(self, key: str, label: str | None = None) -> Measure:
        """Return this measure under another key (e.g. prefixed with a qrels variant)."""
        return replace(self, key=key, label=self.label if label is None else label)


#: A parameterised measure: a pattern of keys and the function building the entry of a match.
Pattern = tuple[re.Pattern[str], Callable[[re.Match[str]], Measure]]


class MeasureRegistry:
    """The measures one family knows: fixed entries, then parameterised patterns (e.g. P@k)."""

    def __init__(
        self,
        family: str,
        measures: Iterable[Measure],
        patterns: Sequence[Pattern] = (),
        forms: Sequence[str] = (),
    ) -> None:
        self.family = family
        self._fixed = {m.key: m for m in measures}
        self._patterns = tuple(patterns)
        #: Human descriptions of the parameterised keys, for messages (e.g. "P@k").
        self.forms = tuple(forms)

    @property
    def keys(self) -> tuple[str, ...]:
        """Return the fixed keys in registration order."""
        return tuple(self._fixed)

    def __contains__(self, key: object) -> bool:
        """Return whether ``key`` names a measure of this family."""
        try:
            self.get(str(key))
        except UnknownMeasure:
            return False
        return True

    def get(self, key: str) -> Measure:
        """Return the entry of ``key``; raise UnknownMeasure naming the accepted keys."""
        found = self._fixed.get(key)
        if found is not None:
            return found
        for pattern, build in self._patterns:
            match = pattern.fullmatch(key)
            if match is not None:
                return build(match)
        known = ", ".join([*self._fixed, *self.forms])
        raise UnknownMeasure(
            f"unknown measure {key[:80]!r} for family {self.family}; known: {known}"
        )
