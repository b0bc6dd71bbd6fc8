"""Numpy kernels over byte columns: field extraction, strict number parsing, column storage."""

from __future__ import annotations

import itertools
import operator
import re
from array import array
from typing import Any

import numpy as np
from numpy.typing import NDArray

from leaderboard.formats.trec.records import MAX_LINE_BYTES, PRINTABLE_TAB

_FAST_BYTES = PRINTABLE_TAB + b"\r\n"
_NUMBER_BYTES = b"0123456789.eE+-"
#: Widest field the array path reads; a file with a wider one takes the per-field path.
VECTOR_MAX_FIELD = 256
_POWERS_OF_TEN = 10.0 ** np.arange(16)
STRICT_NUMBER = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
INTEGER = re.compile(rb"[+-]?[0-9]+")


def _raw(values: NDArray[Any], dtype: Any) -> memoryview:
    """Return the array's bytes in ``dtype`` as a flat byte view (copying only to convert)."""
    return np.ascontiguousarray(values, dtype=dtype).data.cast("B")


class Columns:
    """Per-line columns growing by realloc, ending as numpy arrays without a concatenation copy."""

    def __init__(self) -> None:
        self.lines: array[int] = array("i")
        self.queries: array[int] = array("i")
        self.scores: array[float] = array("d")
        self.docids = bytearray()
        self.width = 1

    def extend(
        self, lines: NDArray[Any], queries: NDArray[Any], docids: list[bytes], scores: NDArray[Any]
    ) -> None:
        """Append lines (line numbers, query indices, ids, float64 scores)."""
        if not docids:
            return
        self.lines.frombytes(np.asarray(lines, dtype=np.int32).tobytes())
        self.queries.frombytes(np.asarray(queries, dtype=np.int32).tobytes())
        self.scores.frombytes(np.asarray(scores, dtype=np.float64).tobytes())
        lengths = list(map(len, docids))
        if max(lengths) > self.width:
            self._widen(max(lengths))
        if min(lengths) == self.width:
            self.docids += b"".join(docids)
        else:
            self.docids += np.array(docids, dtype=f"S{self.width}").tobytes()

    def extend_strings(
        self,
        lines: NDArray[Any],
        queries: NDArray[Any],
        docids: NDArray[np.bytes_],
        scores: NDArray[Any],
    ) -> None:
        """Append lines whose ids are an ``S`` array (line numbers, query indices, float64)."""
        if not len(docids):
            return
        self.lines.frombytes(_raw(lines, np.int32))
        self.queries.frombytes(_raw(queries, np.int32))
        self.scores.frombytes(_raw(scores, np.float64))
        width = docids.dtype.itemsize
        if width > self.width:
            self._widen(width)
        elif width < self.width:
            docids = docids.astype(f"S{self.width}")
        self.docids += _raw(docids, docids.dtype)

    def _widen(self, width: int) -> None:
        """Re-pad the stored ids to a larger width."""
        if self.docids:
            wider = np.frombuffer(self.docids, dtype=f"S{self.width}").astype(f"S{width}")
            self.docids = bytearray(wider.tobytes())
        self.width = width

    def arrays(
        self,
    ) -> tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.bytes_], NDArray[np.float64]]:
        """Return (line numbers, query indices, ids, scores) as arrays sharing the buffers."""
        return (
            np.frombuffer(self.lines, dtype=np.int32),
            np.frombuffer(self.queries, dtype=np.int32),
            np.frombuffer(self.docids, dtype=f"S{self.width}"),
            np.frombuffer(self.scores, dtype=np.float64),
        )


def strict_numbers(scores: list[bytes]) -> NDArray[np.float64] | None:
    """Return the scores as doubles if all are strict decimal numbers, else None."""
    if b"".join(scores).translate(None, _NUMBER_BYTES):
        return None
    # Over these bytes float() accepts exactly the strict grammar (sign, digits, point,
    # exponent); anything else raises.
    try:
        return np.fromiter(map(float, scores), dtype=np.float64, count=len(scores))
    except ValueError:
        return None


def six_columns(blob: bytes, lines: list[bytes]) -> list[list[bytes]] | None:
    """Return the 6 field columns of a chunk whose every line is plainly well formed, else None.

    Well formed: printable ASCII with single space/TAB separators (CRLF allowed), at most
    MAX_LINE_BYTES per line, exactly 6 fields on every line.
    """
    if blob.translate(None, _FAST_BYTES):
        return None
    carriage = blob.count(b"\r")
    if carriage and carriage != blob.count(b"\r\n"):
        return None
    if max(map(len, lines)) > MAX_LINE_BYTES:
        return None
    fields = blob.split()
    if len(fields) != 6 * len(lines):
        return None
    # A line's fields number at most its separators + 1; 6n fields in all and 5 separators
    # on every line therefore means exactly 6 fields on every line.
    separators = map(bytes.count, lines, itertools.repeat(b" "))
    if b"\t" in blob:
        tabs = map(bytes.count, lines, itertools.repeat(b"\t"))
        separators = map(operator.add, separators, tabs)
    if set(separators) != {5}:
        return None
    return [fields[k::6] for k in range(6)]


def field_rows(
    padded: NDArray[np.uint8], starts: NDArray[np.intp], lengths: NDArray[np.intp], fill: int
) -> NDArray[np.uint8]:
    """Return an (n, widest) copy of the fields at ``starts``, ``fill`` past each one's end.

    ``padded`` holds the chunk followed by at least the widest field's length in spare bytes.
    """
    width = int(lengths.max())
    rows = np.lib.stride_tricks.sliding_window_view(padded, width)[starts]
    if int(lengths.min()) < width:
        rows[np.arange(width) >= lengths[:, None]] = fill
    return rows


def digits_only(
    padded: NDArray[np.uint8], starts: NDArray[np.intp], lengths: NDArray[np.intp]
) -> bool:
    """Return whether every field at ``starts`` with ``lengths`` holds ASCII digits only."""
    shortest = int(lengths.min())
    for offset in range(int(lengths.max())):
        # uint8 arithmetic wraps: bytes below '0' become large too.
        digit = padded[starts + offset] - np.uint8(ord("0")) <= 9
        if offset >= shortest:
            digit |= lengths <= offset
        if not digit.all():
            return False
    return True


def fixed_point_values(
    padded: NDArray[np.uint8], starts: NDArray[np.intp], lengths: NDArray[np.intp]
) -> NDArray[np.float64] | None:
    """Return the scores as doubles if all have one layout ``[+-]digits.k-digits``, else None.

    The layout of printf's ``%.kf``, with the same number k of decimals on every line and at
    most 15 digits: right-aligned, the point is in one column, so the integer of the digits
    is one matrix product; integer / 10**k is then correctly rounded, as float() is.
    """
    width = int(lengths.max())
    ends = starts + lengths
    if width > 16 or int((ends - width).min()) < 0:
        return None
    rows = np.lib.stride_tricks.sliding_window_view(padded, width)[ends - width]
    columns = np.arange(width)
    if int(lengths.min()) < width:
        # The bytes left of a short field belong to the field before it: read them as zeros.
        rows[columns < (width - lengths)[:, None]] = ord("0")
    point = np.flatnonzero(rows[0] == ord("."))
    if len(point) != 1 or not (rows[:, point[0]] == ord(".")).all():
        return None
    rows[:, point[0]] = ord("0")
    first = padded[starts]
    sign = (first == ord("-")) | (first == ord("+"))
    # Every field needs a digit besides its point and sign.
    if int((lengths - sign).min()) < 2:
        return None
    signed = np.flatnonzero(sign)
    rows[signed, width - lengths[signed]] = ord("0")
    if ((rows - np.uint8(ord("0"))) > 9).any():
        return None
    # Powers of ten by column, skipping the point's column (weight 0).
    weights = 10 ** np.where(columns < point[0], width - 2 - columns, width - 1 - columns)
    weights[point[0]] = 0
    mantissa = (rows - np.uint8(ord("0"))).astype(np.int64) @ weights.astype(np.int64)
    values = mantissa / 10.0 ** (width - 1 - int(point[0]))
    negative = first == ord("-")
    return np.where(negative, -values, values) if negative.any() else values


def decimal_values(rows: NDArray[np.uint8]) -> NDArray[np.float64] | None:
    """Return the zero-padded rows of score bytes as the doubles float() reads, or None.

    None when a row is not a strict decimal number. Rows of the form ``[+-]digits[.digits]``
    with at most 15 digits are computed as integer / 10**k: both operands are exact doubles,
    so the one IEEE division gives the correctly rounded value, which float() returns too.
    Other rows (exponents, more digits) are read by float() itself.
    """
    if rows.tobytes().translate(None, _NUMBER_BYTES + b"\0"):
        return None
    columns = np.ascontiguousarray(rows.T)
    n = rows.shape[0]
    mantissa = np.zeros(n, dtype=np.int64)
    digits = np.zeros(n, dtype=np.int64)
    after_dot = np.zeros(n, dtype=np.int64)
    dots = np.zeros(n, dtype=np.int64)
    for column in columns:
        value = column.astype(np.int64) - ord("0")
        is_digit = (value >= 0) & (value <= 9)
        mantissa = np.where(is_digit, mantissa * 10 + value, mantissa)
        digits += is_digit
        after_dot += is_digit & (dots > 0)
        dots += column == ord(".")
    sign = (columns[0] == ord("-")) | (columns[0] == ord("+"))
    length = np.count_nonzero(columns, axis=0)
    plain = (digits >= 1) & (digits <= 15) & (dots <= 1) & (digits + dots + sign == length)
    with np.errstate(invalid="ignore", over="ignore"):
        values = mantissa / _POWERS_OF_TEN[np.minimum(after_dot, 15)]
    values = np.where(columns[0] == ord("-"), -values, values)
    if not plain.all():
        other = np.flatnonzero(~plain)
        exact = strict_numbers(as_strings(rows[other]).tolist())
        if exact is None:
            return None
        values[other] = exact
    return values


def as_strings(rows: NDArray[np.uint8]) -> NDArray[np.bytes_]:
    """Return the rows of a zero-padded byte matrix as an ``S`` array (no copy)."""
    return rows.view(f"S{rows.shape[1]}").reshape(len(rows))


def grade_value(grade: bytes) -> int:
    """Return an integer grade's value; beyond 10 digits, a value outside any 32-bit range.

    int() refuses very long digit strings, and no grade that long can be stored anyway.
    """
    if len(grade.lstrip(b"+-").lstrip(b"0")) <= 10:
        return int(grade)
    return -(1 << 63) if grade.startswith(b"-") else 1 << 63
