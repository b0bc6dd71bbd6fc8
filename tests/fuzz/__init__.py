"""Shared pieces of the fuzz suite: the Hypothesis profiles, byte mutators and verdict checks.

Every fuzz test draws either arbitrary bytes or a valid run (built from a preset gold file)
with a few mutations applied, feeds it to one parser, and accepts only two outcomes: a verdict
whose issues are well formed, or an accepted run that the family scorer scores to finite values.

Profiles (``settings.get_profile(FUZZ_PROFILE)``):

- ``fuzz-ci`` (CI=true): at least 3,000 examples per test, derandomized, no example database;
- ``fuzz-local``: 200 examples, same settings otherwise;
- in the suite's PostgreSQL pass (LEADERBOARD_TEST_DATABASE_URL set) these pure tests, which
  never touch a database, would replay exactly the same derandomized examples: 100 suffice.

LEADERBOARD_FUZZ_EXAMPLES=N runs N random (not derandomized) examples per test: a long hunt.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from leaderboard.formats.issues import Issue

CI = os.environ.get("CI") == "true"
CI_EXAMPLES = 3000


_COMMON = {
    "deadline": None,
    # Same examples on every run (CI must be reproducible); nothing is written to disk.
    "derandomize": True,
    "database": None,
    "print_blob": True,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}
settings.register_profile("fuzz-ci", max_examples=CI_EXAMPLES, **_COMMON)
settings.register_profile("fuzz-local", max_examples=200, **_COMMON)
settings.register_profile("fuzz-repeat", max_examples=100, **_COMMON)


def _profile() -> str:
    """Return the profile for this run, registering a custom one for an explicit count."""
    override = os.environ.get("LEADERBOARD_FUZZ_EXAMPLES")
    if override:
        # A long hunt wants new examples each time, so this one is not derandomized.
        hunt = {**_COMMON, "derandomize": False}
        settings.register_profile("fuzz-custom", max_examples=int(override), **hunt)
        return "fuzz-custom"
    if os.environ.get("LEADERBOARD_TEST_DATABASE_URL"):
        return "fuzz-repeat"
    return "fuzz-ci" if CI else "fuzz-local"


FUZZ_PROFILE = _profile()
FUZZ = settings.get_profile(FUZZ_PROFILE)

# ---------------------------------------------------------------------------------- strategies

#: Byte sequences that upset parsers: NUL, BOMs, line endings, NBSP, non-UTF-8, non-finite and
#: huge or tiny numbers, separators, an overlong line, archive and gzip magics.
NASTY: tuple[bytes, ...] = (
    b"\x00",
    b"\xef\xbb\xbf",
    b"\xfe\xff",
    b"\r",
    b"\r\n",
    b"\n",
    b"\n\n",
    b"\t",
    b" ",
    b"\xc2\xa0",
    b"\xa0",
    b"\xe2\x80\xae",
    b"\xff",
    b"\xc3",
    b"\xed\xa0\x80",
    b"\x0b",
    b"\x0c",
    b"\x1b[31m",
    b"nan",
    b"NaN",
    b"-nan",
    b"inf",
    b"-Infinity",
    b"1e999",
    b"-1e400",
    b"1e308",
    b"-1.7976931348623157e308",
    b"3.5e38",
    b"1e-320",
    b"4.9e-324",
    b"0x1p3",
    b"1_000",
    b"+.5",
    b"-0",
    b"1e",
    b".",
    b"9" * 400,
    b"-" + b"9" * 330,
    b"x" * 5000,
    b"true",
    b"false",
    b"Q0",
    b"#",
    b"PK\x03\x04",
    b"\x1f\x8b",
    b"ustar",
)

_nasty = st.sampled_from(NASTY)
_junk = st.binary(min_size=1, max_size=12)
# Any float, written as Python and C would: huge, tiny, negative zero, nan, inf.
_number = st.one_of(
    st.floats().map(lambda f: repr(f).encode()),
    st.floats(allow_nan=False).map(lambda f: f"{f:.17e}".encode()),
    st.integers(min_value=-(10**30), max_value=10**30).map(lambda n: str(n).encode()),
)
_token = st.one_of(_nasty, _nasty, _number, _junk)
_where = st.integers(min_value=0, max_value=1 << 20)

#: One mutation: (operation, position, second position, token).
_MUTATION = st.tuples(
    st.sampled_from(
        (
            "flip",
            "insert",
            "replace_field",
            "replace_field",
            "delete",
            "truncate",
            "drop_line",
            "duplicate_line",
            "swap_lines",
            "crlf",
            "bom",
            "append",
        )
    ),
    _where,
    _where,
    _token,
)


def _split_fields(line: bytes) -> list[bytes]:
    """Split a line on TABs if it has any, else on spaces (the run formats' separators)."""
    return line.split(b"\t") if b"\t" in line else line.split(b" ")


def mutate(data: bytes, mutations: Iterable[tuple[str, int, int, bytes]]) -> bytes:
    """Apply mutations to ``data``: byte flips, insertions, field swaps, line edits, cuts."""
    for op, a, b, token in mutations:
        lines = data.split(b"\n")
        if op == "flip" and data:
            i = a % len(data)
            data = data[:i] + bytes([data[i] ^ (b % 255 + 1)]) + data[i + 1 :]
        elif op == "insert":
            i = a % (len(data) + 1)
            data = data[:i] + token + data[i:]
        elif op == "replace_field":
            row = a % len(lines)
            fields = _split_fields(lines[row])
            col = b % len(fields)
            fields[col] = token
            sep = b"\t" if b"\t" in lines[row] else b" "
            lines[row] = sep.join(fields)
            data = b"\n".join(lines)
        elif op == "delete" and data:
            i = a % len(data)
            data = data[:i] + data[i + 1 + b % 64 :]
        elif op == "truncate":
            data = data[: a % (len(data) + 1)]
        elif op == "drop_line" and len(lines) > 1:
            del lines[a % len(lines)]
            data = b"\n".join(lines)
        elif op == "duplicate_line":
            row = a % len(lines)
            lines.insert(b % (len(lines) + 1), lines[row])
            data = b"\n".join(lines)
        elif op == "swap_lines" and len(lines) > 1:
            i, j = a % len(lines), b % len(lines)
            lines[i], lines[j] = lines[j], lines[i]
            data = b"\n".join(lines)
        elif op == "crlf":
            data = data.replace(b"\n", b"\r\n")
        elif op == "bom":
            data = b"\xef\xbb\xbf" + data
        elif op == "append":
            data = data + token
    return data


def mutated(valid: bytes, max_mutations: int = 4) -> st.SearchStrategy[bytes]:
    """Return a strategy of ``valid`` with 0 to ``max_mutations`` mutations applied."""
    return st.lists(_MUTATION, max_size=max_mutations).map(lambda ms: mutate(valid, ms))


def flipped(valid: bytes) -> st.SearchStrategy[bytes]:
    """Return a strategy of ``valid`` with 1 to 3 bytes flipped (compressed data, headers)."""
    flip = st.tuples(st.just("flip"), _where, _where, st.just(b""))
    return st.lists(flip, min_size=1, max_size=3).map(lambda ms: mutate(valid, ms))


def renumbered(valid: bytes) -> st.SearchStrategy[bytes]:
    """Return a strategy of ``valid`` with 1 to 3 fields replaced by numbers or nasty tokens."""
    field = st.tuples(st.just("replace_field"), _where, _where, st.one_of(_number, _nasty))
    return st.lists(field, min_size=1, max_size=3).map(lambda ms: mutate(valid, ms))


def hostile_bytes(max_size: int = 1024) -> st.SearchStrategy[bytes]:
    """Return arbitrary bytes, and bytes glued from nasty tokens and text-like pieces."""
    pieces = st.one_of(_nasty, st.binary(max_size=16), st.sampled_from((b"\t", b"\n", b" ")))
    return st.one_of(
        st.binary(max_size=max_size),
        st.lists(pieces, max_size=60).map(b"".join),
    )


def fuzz_input(valid: bytes) -> st.SearchStrategy[bytes]:
    """Return the fuzz input of a format: mostly mutated valid runs, sometimes arbitrary bytes."""
    return st.one_of(mutated(valid), renumbered(valid), hostile_bytes())


C = TypeVar("C")


def per_case(cases: Sequence[C], inputs: Callable[[C], st.SearchStrategy[Any]]) -> Any:
    """Return a strategy of (case, input) pairs; cheaper than ``sampled_from(...).flatmap``."""
    return st.one_of(*(st.tuples(st.just(c), inputs(c)) for c in cases))


# ------------------------------------------------------------------------------------- oracles


def check_issues(issues: Sequence[Issue]) -> None:
    """Assert every issue is an Issue with a non-empty str message and an int-or-None line."""
    for issue in issues:
        assert isinstance(issue, Issue), issue
        assert isinstance(issue.message, str) and issue.message.strip(), issue
        assert issue.line is None or (type(issue.line) is int and issue.line >= 1), issue
        assert issue.severity in ("error", "warning"), issue
        assert issue.as_dict() == {"line": issue.line, "message": issue.detail}


def check_finite(values: dict[str, float]) -> None:
    """Assert a scorer's measures are all finite floats."""
    assert values, "the scorer returned no measure"
    for key, value in values.items():
        assert isinstance(value, float), (key, value)
        assert math.isfinite(value), (key, value)
