"""Read a measure key with parameters in brackets: ``name[p1,p2,key=value,...]``."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field

from leaderboard.scoring.registry import UnknownMeasure

#: A bare word value: what a TOML scalar cannot be read as stays this text.
_BARE = re.compile(r"[A-Za-z0-9_.+\-@:/]+")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

Scalar = str | int | float | bool


@dataclass(frozen=True)
class Bracketed:
    """A measure key split into its name and its bracketed parameters."""

    name: str
    positional: tuple[Scalar, ...] = ()
    named: dict[str, Scalar] = field(default_factory=dict)

    @property
    def has_parameters(self) -> bool:
        """Return whether the key carried brackets with anything in them."""
        return bool(self.positional or self.named)


def scalar(text: str) -> Scalar:
    """Return a parameter value: a TOML scalar (``true``, ``3``, ``0.5``, ``"x"``) or a bare word."""
    text = text.strip()
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        if not _BARE.fullmatch(text):
            raise ValueError(f"{text!r} is not a value (a number, true/false or a word)") from None
        return text
    if not isinstance(value, str | int | float | bool):
        raise ValueError(f"{text!r} is not a single value")
    return value


def split_bracketed(key: str) -> Bracketed:
    """Return ``key`` split as ``name[positional..., option=value...]``; a key without brackets is its name.

    Positional parameters come before named ones; a name may be given once. Raises
    UnknownMeasure saying what is wrong.
    """
    name, bracket, rest = key.partition("[")
    if not bracket:
        if "]" in key:
            raise UnknownMeasure(f"Measure {key!r} has a ']' without '['.")
        return Bracketed(key)
    if not rest.endswith("]") or "[" in rest or "]" in rest[:-1]:
        raise UnknownMeasure(f"Measure {key!r} must end with one bracketed list: name[...].")
    inside = rest[:-1].strip()
    if not name or not inside:
        raise UnknownMeasure(f"Measure {key!r} needs a name and parameters inside the brackets.")
    positional: list[Scalar] = []
    named: dict[str, Scalar] = {}
    for part in inside.split(","):
        option, equals, value = part.partition("=")
        try:
            if equals:
                option = option.strip()
                if not _NAME.fullmatch(option):
                    raise ValueError(f"{option!r} is not an option name")
                if option in named:
                    raise ValueError(f"option {option!r} is given twice")
                named[option] = scalar(value)
            elif named:
                raise ValueError("positional parameters come before options (name=value)")
            else:
                positional.append(scalar(part))
        except ValueError as exc:
            raise UnknownMeasure(f"Measure {key!r}: {exc}.") from None
    return Bracketed(name, tuple(positional), named)


def refuse_unknown_options(key: str, given: dict[str, Scalar], known: tuple[str, ...]) -> None:
    """Refuse options a measure does not take, naming the ones it takes."""
    unknown = sorted(set(given) - set(known))
    if unknown:
        takes = ", ".join(known) if known else "no options"
        raise UnknownMeasure(
            f"Measure {key!r} does not take {', '.join(unknown)}; it takes: {takes}."
        )
