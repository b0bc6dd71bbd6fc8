"""Split an evaluation set's units into a public and a private part.

A unit (query, question, item, pair, segment) is public by one of two definitions:

- ``fraction`` and ``seed``: unit ``u`` is public iff
  ``int.from_bytes(sha256(f"{seed}:{u}".encode()).digest()[:8], "big") / 2**64 < fraction``,
  so anyone holding the seed can check the split once it is published;
- a listed file: one unit id per line, every id a unit of the gold.

A set without a split has the part ``all`` only.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Collection, Iterable, Sequence
from enum import StrEnum

#: One problem of a listed-units file: its 1-based line (None for the whole file) and message.
LineIssue = tuple[int | None, str]
#: How many characters of a unit id a message quotes.
MAX_QUOTED = 80


class Part(StrEnum):
    """A part of an evaluation set's units that scores are stored and shown on."""

    PUBLIC = "public"
    PRIVATE = "private"
    ALL = "all"


def check_fraction(fraction: object) -> float:
    """Return ``fraction`` as a float if it is a number strictly between 0 and 1, else raise."""
    if isinstance(fraction, bool) or not isinstance(fraction, int | float):
        raise ValueError(f"The public fraction must be a number, not {fraction!r}.")
    if not (math.isfinite(fraction) and 0 < fraction < 1):
        raise ValueError(
            f"The public fraction must lie strictly between 0 and 1 (got {fraction!r}): "
            "0 leaves no public part and 1 no private part."
        )
    return float(fraction)


def check_seed(seed: object) -> int:
    """Return ``seed`` if it is an integer (not a boolean), else raise."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"The split seed must be an integer, not {seed!r}.")
    return seed


def is_public(seed: int, unit: str, fraction: float) -> bool:
    """Return whether sha256(f"{seed}:{unit}")'s first 8 bytes, big-endian, / 2**64 < fraction."""
    digest = hashlib.sha256(f"{seed}:{unit}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def public_units(units: Iterable[str], fraction: float, seed: int) -> frozenset[str]:
    """Return the units public by the SHA-256 rule of ``is_public``, after checking the parameters."""
    fraction = check_fraction(fraction)
    seed = check_seed(seed)
    return frozenset(u for u in units if is_public(seed, u, fraction))


def _quoted(unit: str) -> str:
    return repr(unit if len(unit) <= MAX_QUOTED else unit[: MAX_QUOTED - 1] + "…")


def listed_public_units(
    text: str, units: Collection[str]
) -> tuple[frozenset[str], list[LineIssue]]:
    """Return the public units a file lists (one id per line) and every issue found in it.

    Issues name each unknown id and blank or repeated line; none are dropped, since the file
    is the organizer's and short. Surrounding whitespace of a line is ignored. A file listing
    no unit, or every unit (no private part left), is an issue of the whole file.
    """
    known = units if isinstance(units, set | frozenset) else frozenset(units)
    issues: list[LineIssue] = []
    first: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        unit = line.strip()
        if not unit:
            issues.append((number, f"Line {number} is empty; give one unit id per line."))
        elif unit in first:
            issues.append(
                (
                    number,
                    f"Line {number}: unit {_quoted(unit)} is listed twice "
                    f"(first on line {first[unit]}).",
                )
            )
        else:
            first[unit] = number
            if unit not in known:
                issues.append(
                    (number, f"Line {number}: {_quoted(unit)} is not a unit of the gold.")
                )
    public = frozenset(u for u in first if u in known)
    if not first:
        issues.append((None, "The file lists no unit: the public part would be empty."))
    elif known and len(public) == len(known):
        issues.append((None, "The file lists every unit of the gold: no private part is left."))
    return public, issues


def part_units(units: Sequence[str], public: Collection[str] | None, part: Part) -> list[str]:
    """Return the ids of ``units`` in ``part``, in their order; ``public`` None: no split."""
    part = Part(part)
    if part is Part.ALL:
        return list(units)
    if public is None:
        raise ValueError(
            f"The set has no public/private split: part {part.value!r} does not exist."
        )
    wanted = part is Part.PUBLIC
    return [u for u in units if (u in public) == wanted]
