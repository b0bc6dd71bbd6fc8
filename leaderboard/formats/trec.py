"""TREC run and qrels formats: strict streaming run validator, lenient import, qrels parser.

Everything task-specific (id pattern, per-query cap, tag pattern, topic list, grade range) is a
setting passed in; the defaults are those of TREC CAR 2017 (v1.5 benchmarkY1test).
"""

from __future__ import annotations

import functools
import itertools
import operator
import re
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, cast

import numpy as np
from numpy.typing import NDArray

from leaderboard.formats.issues import MAX_LISTED_ERRORS, Issue, quote
from leaderboard.scoring.ranking import evaluate, pair_hash, query_score_key

#: Longest accepted line, in bytes without the line ending.
MAX_LINE_BYTES = 4096
#: Errors collected before validation stops reading (bounds memory on hostile files).
MAX_COLLECTED_ERRORS = 10_000

_BATCH_LINES = 32_768
_CHUNK_BYTES = 1 << 22
_BOM = b"\xef\xbb\xbf"
_PRINTABLE_TAB = bytes(range(0x20, 0x7F)) + b"\t"
_FAST_BYTES = _PRINTABLE_TAB + b"\r\n"
_NUMBER_BYTES = b"0123456789.eE+-"
#: Widest field the array path reads; a file with a wider one takes the per-field path.
_VECTOR_MAX_FIELD = 256
_POWERS_OF_TEN = 10.0 ** np.arange(16)
_STRICT_NUMBER = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NON_FINITE = re.compile(rb"[+-]?(?:inf(?:inity)?|nan)", re.IGNORECASE)
_INTEGER = re.compile(rb"[+-]?[0-9]+")
# C strtod/atof grammar (C locale): hex float, decimal, inf/infinity, nan; longest prefix wins.
_C_ATOF = re.compile(
    rb"""[+-]?(?:
        (?P<hex>0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)
      | (?P<dec>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
      | (?P<inf>[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)
      | (?P<nan>[nN][aA][nN](?:\([0-9A-Za-z_]*\))?)
    )""",
    re.VERBOSE,
)
_SIMPLE_CLASS = re.compile(r"\[([^\]\\^]+)\]\{(\d+)(?:,(\d+))?\}")
_ARCHIVE_MAGIC = {b"PK\x03\x04": "a zip archive", b"\x1f\x8b": "gzip-compressed"}


class Readable(Protocol):
    """A binary stream read in blocks (a file, a gzip stream, a capped reader)."""

    def read(self, size: int = -1, /) -> bytes: ...


#: Physical lines as bytes, or a binary stream read in large blocks (faster, same result).
RunSource = Iterable[bytes] | Readable


@dataclass(frozen=True)
class TrecSettings:
    """What differs between tasks of the TREC family; defaults are TREC CAR 2017's."""

    docid_pattern: str = r"[0-9a-f]{40}"
    docid_hint: str = "40 lowercase hexadecimal characters"
    doc_noun: str = "paragraph"
    max_per_query: int = 1000
    tag_pattern: str = r"[A-Za-z0-9_.-]{1,20}"
    tag_hint: str = "1–20 characters from A–Z, a–z, 0–9, '_', '.', '-'"
    topic_set: str = "benchmarkY1test"
    topic_hint: str = (
        "Ids with the 'enwiki:' prefix belong to the v2.0 release; this task uses v1.5 ids."
    )
    #: The hint is added only for unknown ids starting with this prefix ("" = always).
    topic_hint_prefix: str = "enwiki:"
    min_grade: int = -2
    max_grade: int = 3


@dataclass(frozen=True, eq=False)
class TrecRun:
    """A run, column-wise: per line a query index into ``queries``, an id and a float32 score."""

    tag: str
    queries: tuple[str, ...]
    query_index: NDArray[np.int32]
    docids: NDArray[np.bytes_]
    scores: NDArray[np.float32]

    def __len__(self) -> int:
        """Return the number of lines."""
        return len(self.query_index)


@dataclass(frozen=True, eq=False)
class Qrels:
    """One qrels variant's judgments, column-wise; ``queries`` are in file order."""

    queries: tuple[str, ...]
    query_index: NDArray[np.int32]
    docids: NDArray[np.bytes_]
    grades: NDArray[np.int32]

    def __len__(self) -> int:
        """Return the number of judgments (lines)."""
        return len(self.query_index)

    def grade_histogram(self) -> dict[int, int]:
        """Return {grade: number of judgments}, by ascending grade."""
        grades, counts = np.unique(self.grades, return_counts=True)
        return {int(g): int(c) for g, c in zip(grades, counts, strict=True)}


class _TooManyErrors(Exception):
    """Raised when a validator has collected MAX_COLLECTED_ERRORS errors."""


@functools.lru_cache(maxsize=64)
def _compiled(pattern: str) -> re.Pattern[bytes]:
    """Return the pattern compiled for bytes."""
    return re.compile(pattern.encode())


@functools.lru_cache(maxsize=64)
def _simple_class(pattern: str) -> tuple[bytes, int, int] | None:
    """Return (allowed bytes, min length, max length) for a ``[class]{n[,m]}`` pattern."""
    match = _SIMPLE_CLASS.fullmatch(pattern)
    if match is None or not pattern.isascii():
        return None
    body, low, high = match.group(1), int(match.group(2)), match.group(3)
    allowed = bytearray()
    i = 0
    while i < len(body):
        if i + 2 < len(body) and body[i + 1] == "-":
            allowed.extend(range(ord(body[i]), ord(body[i + 2]) + 1))
            i += 3
        else:
            allowed.append(ord(body[i]))
            i += 1
    return bytes(allowed), low, int(high) if high is not None else low


def _all_full_match(items: Sequence[bytes], pattern: str) -> bool:
    """Return whether every item fully matches the pattern (a translate() fast path if simple)."""
    simple = _simple_class(pattern)
    if simple is None:
        return all(map(_compiled(pattern).fullmatch, items))
    allowed, low, high = simple
    lengths = list(map(len, items))
    return (
        not b"".join(items).translate(None, allowed)
        and low <= min(lengths)
        and max(lengths) <= high
    )


def _text(raw: bytes) -> str:
    """Decode bytes for a message, escaping what is not UTF-8."""
    return raw.decode("utf-8", "backslashreplace")


def _short_id(docid: bytes) -> str:
    """Return an id cut to 8 characters and an ellipsis, as the duplicate message shows it."""
    text = _text(docid)
    return text if len(text) <= 12 else text[:8] + "…"


def _plural(count: int, one: str, many: str) -> str:
    """Return "1 thing" or "1,234 things"."""
    return f"{count:,} {one if count == 1 else many}"


def _raw(values: NDArray[Any], dtype: Any) -> memoryview:
    """Return the array's bytes in ``dtype`` as a flat byte view (copying only to convert)."""
    return np.ascontiguousarray(values, dtype=dtype).data.cast("B")


class _Columns:
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


def _unknown_query_message(line: int, query: bytes, settings: TrecSettings) -> str:
    """Return the unknown-query message, with the settings' hint where it applies."""
    text = _text(query)
    message = f"Line {line}: unknown query id '{quote(text)}' (not a {settings.topic_set} topic)."
    if settings.topic_hint and text.startswith(settings.topic_hint_prefix):
        message += " " + settings.topic_hint
    return message


def _char_error(line: int, content: bytes) -> str | None:
    """Return the message for the first byte that is not printable ASCII or TAB, if any."""
    if not content.translate(None, _PRINTABLE_TAB):
        return None
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as exc:
        column = len(content[: exc.start].decode("utf-8")) + 1
        return f"Line {line}: not valid UTF-8 (byte 0x{content[exc.start]:02X} at column {column})."
    for column, char in enumerate(text, 1):
        if char != "\t" and not " " <= char <= "~":
            hint = "; separate fields with spaces or TABs" if char.isspace() else ""
            return f"Line {line}: unexpected character U+{ord(char):04X} at column {column}{hint}."
    return None  # pragma: no cover - translate() found a byte that decoding did not


def _repeated(keys: NDArray[Any]) -> NDArray[np.intp]:
    """Return, ascending, the positions of values that occur more than once in ``keys``."""
    ordered = np.sort(keys)
    same = ordered[1:] == ordered[:-1]
    if not same.any():
        return np.zeros(0, dtype=np.intp)
    values = np.unique(ordered[1:][same])
    del ordered, same
    at = np.searchsorted(values, keys).clip(max=len(values) - 1)
    return np.flatnonzero(values[at] == keys)


def find_duplicates(
    query_index: NDArray[Any], docids: NDArray[Any], *, limit: int | None = None
) -> list[tuple[int, int]]:
    """Return (position, first position) for lines repeating an earlier (query, id) pair.

    With ``limit``, only the first ``limit`` repeats (by position) are returned: a file of
    one line repeated a million times costs no more than one with ``limit`` repeats.
    """
    first: dict[tuple[int, bytes], int] = {}
    repeats: list[tuple[int, int]] = []
    # Equal hashes are candidates only; the dictionary compares the pairs themselves.
    for position in _repeated(pair_hash(query_index, docids)).tolist():
        earlier = first.setdefault((int(query_index[position]), bytes(docids[position])), position)
        if earlier != position:
            repeats.append((position, earlier))
            if limit is not None and len(repeats) >= limit:
                break
    return repeats


def _precision_ties(
    query_index: NDArray[Any], doubles: NDArray[np.float64]
) -> tuple[int, int, int]:
    """Count adjacent distinct doubles of one query that are equal as float32.

    Returns (count, position, position) with the example pair whose first line comes first;
    count 0 when there are none.
    """
    key = query_score_key(query_index, doubles)
    tied = _repeated(key)
    if not len(tied):
        return 0, -1, -1
    tied = tied[np.lexsort((doubles[tied], key[tied]))]
    pair = (key[tied][1:] == key[tied][:-1]) & (doubles[tied][1:] != doubles[tied][:-1])
    count = int(pair.sum())
    if not count:
        return 0, -1, -1
    at = np.flatnonzero(pair)
    left, right = tied[at], tied[at + 1]
    best = int(np.argmin(np.minimum(left, right)))
    a, b = int(left[best]), int(right[best])
    return count, min(a, b), max(a, b)


def _strict_numbers(scores: list[bytes]) -> NDArray[np.float64] | None:
    """Return the scores as doubles if all are strict decimal numbers, else None."""
    if b"".join(scores).translate(None, _NUMBER_BYTES):
        return None
    # Over these bytes float() accepts exactly the strict grammar (sign, digits, point,
    # exponent); anything else raises.
    try:
        return np.fromiter(map(float, scores), dtype=np.float64, count=len(scores))
    except ValueError:
        return None


def _six_columns(blob: bytes, lines: list[bytes]) -> list[list[bytes]] | None:
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


def _field_rows(
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


def _digits_only(
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


def _fixed_point_values(
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


def _decimal_values(rows: NDArray[np.uint8]) -> NDArray[np.float64] | None:
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
        exact = _strict_numbers(_as_strings(rows[other]).tolist())
        if exact is None:
            return None
        values[other] = exact
    return values


def _as_strings(rows: NDArray[np.uint8]) -> NDArray[np.bytes_]:
    """Return the rows of a zero-padded byte matrix as an ``S`` array (no copy)."""
    return rows.view(f"S{rows.shape[1]}").reshape(len(rows))


class _StrictValidator:
    """State of one strict validation pass (spec rows 1-22)."""

    def __init__(self, topics: frozenset[str], settings: TrecSettings) -> None:
        self.settings = settings
        self.queries = tuple(sorted(topics))
        self.query_map = {q.encode(): i for i, q in enumerate(self.queries)}
        self.tag_re = _compiled(settings.tag_pattern)
        self.errors: list[Issue] = []
        self.warnings: list[Issue] = []
        self.line_no = 0
        self.started = False
        self.seen_data = False
        self.pending_blank: list[int] = []
        self.crlf = False
        self.cr = False
        self.first_tag: bytes | None = None
        self.first_tag_line = 0
        self.q0_wrong = 0
        self.q0_first: tuple[int, bytes] | None = None
        self.columns = _Columns()
        # Lines per query, counting lines with other errors too (row 13 counts every line).
        self.query_lines = np.zeros(len(self.queries), dtype=np.int64)

    def error(self, line: int | None, message: str) -> None:
        """Record an error; stop the pass once MAX_COLLECTED_ERRORS are collected."""
        self.errors.append(Issue(line, message))
        if len(self.errors) >= MAX_COLLECTED_ERRORS:
            raise _TooManyErrors

    def warn(self, message: str) -> None:
        """Record a file-level warning."""
        self.warnings.append(Issue(None, message, "warning"))

    # -- physical lines ---------------------------------------------------------------------

    def feed(self, blob: bytes) -> None:
        """Check a chunk of whole physical lines (ending with b"\\n" unless it ends the file)."""
        self.feed_padded(np.frombuffer(blob + bytes(_VECTOR_MAX_FIELD), dtype=np.uint8), len(blob))

    def feed_padded(self, padded: NDArray[np.uint8], size: int) -> None:
        """Check a chunk given as its ``size`` bytes followed by _VECTOR_MAX_FIELD spare bytes.

        The spare bytes may hold anything; the array may be a view of a reused buffer.
        """
        if not self.started:
            self.started = True
            if size >= len(_BOM) and padded[: len(_BOM)].tobytes() == _BOM:
                padded, size = padded[len(_BOM) :], size - len(_BOM)
                self.warn("The file started with a byte-order mark; it was removed.")
            head = padded[: min(size, 4)].tobytes()
            for magic, kind in _ARCHIVE_MAGIC.items():
                if head.startswith(magic):
                    self.seen_data = True
                    self.error(None, f"The file is {kind}; upload a plain-text or .gz run file.")
                    raise _TooManyErrors
        if not self._feed_vector(padded, size):
            blob = padded[:size].tobytes()
            lines = blob.split(b"\n")
            if lines[-1] == b"":
                lines.pop()
            if lines and not self._feed_fast(blob, lines):
                self._feed_slow(blob)
        self._check_depth()

    def _check_depth(self) -> None:
        """Stop at once when a query has far more lines than allowed: the file is no run.

        Up to twice the limit, the whole file is read and the exact count reported.
        """
        cap = 2 * self.settings.max_per_query
        over = np.flatnonzero(self.query_lines > cap)
        if len(over):
            self.errors.append(
                Issue(
                    None,
                    f"Query '{quote(self.queries[over[0]])}' has more than {cap:,} lines by line"
                    f" {self.line_no:,}; at most {self.settings.max_per_query:,} are allowed."
                    " Checking stopped there.",
                )
            )
            raise _TooManyErrors

    def _feed_vector(self, padded: NDArray[np.uint8], size: int) -> bool:
        """Accept a chunk of lines without any error using array operations alone.

        Handles the common shape (printable ASCII, single space/TAB separators, LF endings,
        a simple id pattern, digit ranks, plain decimal scores, one run tag) without a Python
        object per field. Returns False, having changed nothing, for any chunk it cannot
        accept whole; the per-field paths then report exactly what is wrong.
        """
        settings = self.settings
        id_class = _simple_class(settings.docid_pattern)
        if id_class is None or self.pending_blank or not size:
            return False
        data = padded[:size]
        if data.max() > 0x7E:
            return False
        ends = np.flatnonzero(data <= 32)
        separator = padded[ends]
        # Bytes up to 0x20 must be TAB, LF or space: these end the fields.
        if not ((separator == 32) | (separator == 9) | (separator == 10)).all():
            return False
        newlines = int(np.count_nonzero(separator == 10))
        if data[-1] != 10:
            ends = np.append(ends, size)
        n = len(ends) // 6
        if n == 0 or len(ends) != 6 * n or newlines not in (n, n - 1):
            return False
        line_ends = ends[5::6]
        # Every LF ends the 6th field of a line: each line has exactly 5 separators.
        if not (padded[line_ends[:newlines]] == 10).all():
            return False
        begins = np.empty_like(ends)
        begins[0] = 0
        begins[1:] = ends[:-1] + 1
        widths = ends - begins
        # An empty field means a blank line or a leading, trailing or doubled separator.
        if widths.min() < 1 or widths.max() > _VECTOR_MAX_FIELD:
            return False
        if (line_ends - begins[0::6]).max() > MAX_LINE_BYTES:
            return False
        starts, lengths = begins.reshape(n, 6), widths.reshape(n, 6)

        qids = _as_strings(_field_rows(padded, starts[:, 0], lengths[:, 0], 0))
        segment = np.flatnonzero(qids[1:] != qids[:-1]) + 1
        segment = np.concatenate(([0], segment))
        known = list(map(self.query_map.get, qids[segment].tolist()))
        if None in known:
            return False
        sizes = np.diff(segment, append=n)
        query_index = np.repeat(np.array(known, dtype=np.int32), sizes)

        allowed, low, high = id_class
        if lengths[:, 2].min() < low or lengths[:, 2].max() > high:
            return False
        ids = _field_rows(padded, starts[:, 2], lengths[:, 2], allowed[0])
        if ids.tobytes().translate(None, allowed):
            return False
        if lengths[:, 2].min() < ids.shape[1]:
            ids[np.arange(ids.shape[1]) >= lengths[:, 2, None]] = 0
        if not _digits_only(padded, starts[:, 3], lengths[:, 3]):
            return False
        values = _fixed_point_values(padded, starts[:, 4], lengths[:, 4])
        if values is None:
            values = _decimal_values(_field_rows(padded, starts[:, 4], lengths[:, 4], 0))
        if values is None:
            return False
        with np.errstate(over="ignore"):
            if not np.isfinite(values.astype(np.float32)).all():
                return False
        tags = _as_strings(_field_rows(padded, starts[:, 5], lengths[:, 5], 0))
        first = self.first_tag if self.first_tag is not None else bytes(tags[0])
        if self.first_tag is None and not self.tag_re.fullmatch(first):
            return False
        if not (tags == first).all():
            return False
        q0 = starts[:, 1]
        is_q0 = (lengths[:, 1] == 2) & (padded[q0] == ord("Q")) & (padded[q0 + 1] == ord("0"))

        start = self.line_no + 1
        self.line_no += n
        self._flush_blank()
        if self.first_tag is None:
            self.first_tag, self.first_tag_line = first, start
        wrong_q0 = n - int(is_q0.sum())
        if wrong_q0:
            if self.q0_first is None:
                i = int(np.argmin(is_q0))
                self.q0_first = (start + i, padded[q0[i] : q0[i] + lengths[i, 1]].tobytes())
            self.q0_wrong += wrong_q0
        self.query_lines += np.bincount(query_index, minlength=len(self.queries))
        lines = np.arange(start, self.line_no + 1, dtype=np.int32)
        self.columns.extend_strings(lines, query_index, _as_strings(ids), values)
        return True

    def _feed_fast(self, blob: bytes, lines: list[bytes]) -> bool:
        """Accept a chunk of well-formed lines in bulk; return False to take the slow path."""
        columns = _six_columns(blob, lines)
        if columns is None:
            return False
        start = self.line_no + 1
        self.line_no += len(lines)
        self.crlf = self.crlf or b"\r" in blob
        self._flush_blank()
        self._accept(range(start, self.line_no + 1), *columns)
        return True

    def _feed_slow(self, blob: bytes) -> None:
        """Check a chunk line by line, with exact messages for every malformed line."""
        linenos: list[int] = []
        columns: list[list[bytes]] = [[] for _ in range(6)]
        for content in self._physical_lines(blob):
            self.line_no += 1
            fields = self._check_line(self.line_no, content)
            if fields is not None:
                linenos.append(self.line_no)
                for column, value in zip(columns, fields, strict=True):
                    column.append(value)
        self._accept(linenos, *columns)

    def _physical_lines(self, raw: bytes) -> Iterator[bytes]:
        """Yield the lines of a chunk without endings, splitting CR-only endings too."""
        pieces = raw.split(b"\n")
        terminated = len(pieces) - 1
        if pieces[-1] == b"":
            pieces.pop()
        for k, piece in enumerate(pieces):
            if k < terminated and piece.endswith(b"\r"):
                piece = piece[:-1]
                self.crlf = True
            if b"\r" in piece:
                self.cr = True
                parts = piece.split(b"\r")
                if parts[-1] == b"":
                    parts.pop()
                yield from parts
            else:
                yield piece

    def _check_line(self, line: int, content: bytes) -> list[bytes] | None:
        """Return the 6 fields of a line, or None after recording why it has none."""
        if len(content) > MAX_LINE_BYTES:
            self._flush_blank()
            self.error(line, f"Line {line} is longer than {MAX_LINE_BYTES} bytes.")
            return None
        if not content.strip(b" \t"):
            self.pending_blank.append(line)
            return None
        self._flush_blank()
        message = _char_error(line, content)
        if message is not None:
            self.error(line, message)
            return None
        fields = content.split()
        if len(fields) != 6:
            noun = self.settings.doc_noun
            self.error(
                line,
                f"Line {line}: expected 6 fields (query id, Q0, {noun} id, rank, score, run tag),"
                f" found {len(fields)}.",
            )
            return None
        return fields

    def _flush_blank(self) -> None:
        """Report the empty lines seen so far as errors: a data line follows them."""
        self.seen_data = True
        pending, self.pending_blank = self.pending_blank, []
        for line in pending:
            self.error(line, f"Line {line} is empty.")

    # -- fields -----------------------------------------------------------------------------

    def _accept(
        self,
        linenos: Sequence[int],
        qids: list[bytes],
        q0s: list[bytes],
        docids: list[bytes],
        ranks: list[bytes],
        scores: list[bytes],
        tags: list[bytes],
    ) -> None:
        """Check the fields of 6-field lines and keep the good ones as arrays."""
        n = len(qids)
        if n == 0:
            return
        settings = self.settings
        bad = np.zeros(n, dtype=bool)
        index = list(map(self.query_map.get, qids))
        if None in index:
            for i, value in enumerate(index):
                if value is None:
                    index[i] = -1
                    bad[i] = True
                    self.error(linenos[i], _unknown_query_message(linenos[i], qids[i], settings))
        if not _all_full_match(docids, settings.docid_pattern):
            docid_re = _compiled(settings.docid_pattern)
            for i, docid in enumerate(docids):
                if not docid_re.fullmatch(docid):
                    bad[i] = True
                    self.error(
                        linenos[i],
                        f"Line {linenos[i]}: {settings.doc_noun} id '{quote(_text(docid))}'"
                        f" must be {settings.docid_hint}.",
                    )
        if not b"".join(ranks).isdigit():
            for i, rank in enumerate(ranks):
                if not _INTEGER.fullmatch(rank):
                    bad[i] = True
                    self.error(
                        linenos[i],
                        f"Line {linenos[i]}: rank '{quote(_text(rank))}' must be an integer.",
                    )
        values = self._scores(linenos, scores, bad)
        self._tags(linenos, tags, bad)
        wrong_q0 = n - q0s.count(b"Q0")
        if wrong_q0:
            if self.q0_first is None:
                i = next(i for i, value in enumerate(q0s) if value != b"Q0")
                self.q0_first = (linenos[i], q0s[i])
            self.q0_wrong += wrong_q0
        if isinstance(linenos, range):
            lines = np.arange(linenos.start, linenos.stop, dtype=np.int32)
        else:
            lines = np.asarray(linenos, dtype=np.int32)
        query_index = np.asarray(index, dtype=np.int32)
        self.query_lines += np.bincount(query_index + 1, minlength=len(self.queries) + 1)[1:]
        if bad.any():
            keep = ~bad
            lines, query_index, values = lines[keep], query_index[keep], values[keep]
            docids = list(itertools.compress(docids, keep.tolist()))
        self.columns.extend(lines, query_index, docids, values)

    def _scores(
        self, linenos: Sequence[int], scores: list[bytes], bad: NDArray[np.bool_]
    ) -> NDArray[np.float64]:
        """Parse scores as doubles, recording rows 10 and 11 and marking bad lines."""
        values = _strict_numbers(scores)
        if values is None:
            values = np.zeros(len(scores))
            for i, text in enumerate(scores):
                if _STRICT_NUMBER.fullmatch(text):
                    values[i] = float(text)
                elif _NON_FINITE.fullmatch(text):
                    values[i] = np.inf
                else:
                    bad[i] = True
                    self.error(
                        linenos[i],
                        f"Line {linenos[i]}: score '{quote(_text(text))}' is not a number.",
                    )
        with np.errstate(over="ignore"):
            infinite = ~np.isfinite(values.astype(np.float32)) & ~bad
        for i in np.flatnonzero(infinite).tolist():
            bad[i] = True
            self.error(
                linenos[i],
                f"Line {linenos[i]}: score '{quote(_text(scores[i]))}' must be a finite number.",
            )
        return values

    def _tags(self, linenos: Sequence[int], tags: list[bytes], bad: NDArray[np.bool_]) -> None:
        """Check run tags against the first line's (rows 14 and 15)."""
        if self.first_tag is None:
            self.first_tag, self.first_tag_line = tags[0], linenos[0]
            if not self.tag_re.fullmatch(tags[0]):
                self.error(
                    linenos[0],
                    f"Line {linenos[0]}: run tag '{quote(_text(tags[0]))}' must be"
                    f" {self.settings.tag_hint}.",
                )
        first = self.first_tag
        if len(set(tags)) == 1 and tags[0] == first:
            return
        for i, tag in enumerate(tags):
            if tag != first:
                bad[i] = True
                self.error(
                    linenos[i],
                    f"Line {linenos[i]}: run tag '{quote(_text(tag))}' differs from"
                    f" '{quote(_text(first))}' on line {self.first_tag_line}.",
                )

    # -- whole file -------------------------------------------------------------------------

    def finish(self, form_run_name: str | None) -> tuple[TrecRun | None, list[Issue], list[Issue]]:
        """Run the whole-file checks and return (run or None, errors, warnings)."""
        if not self.seen_data:
            return None, [Issue(None, "The file is empty.")], self.warnings
        settings = self.settings
        if self.crlf:
            self.warn("Windows (CRLF) line endings were normalised.")
        if self.cr:
            self.warn("Classic Mac (CR) line endings were normalised.")
        if self.pending_blank:
            count = len(self.pending_blank)
            verb = "was" if count == 1 else "were"
            self.warn(
                f"{_plural(count, 'empty line', 'empty lines')} at the end of the file"
                f" {verb} ignored."
            )
        if self.q0_first is not None:
            line, value = self.q0_first
            count = self.q0_wrong
            counted = _plural(count, "line", "lines")
            first = f"line {line}" if count == 1 else f"first: line {line}"
            verb = "has" if count == 1 else "have"
            self.warn(
                f"{counted} ({first}) {verb} '{quote(_text(value))}' instead of 'Q0' in field 2;"
                " the field is ignored."
            )
        lines, query_index, docids, doubles = self.columns.arrays()

        counts = self.query_lines
        for q in np.flatnonzero(counts > settings.max_per_query).tolist():
            self.error(
                None,
                f"Query '{quote(self.queries[q])}' has {counts[q]:,} lines;"
                f" at most {settings.max_per_query:,} are allowed.",
            )
        for position, earlier in find_duplicates(query_index, docids, limit=MAX_COLLECTED_ERRORS):
            line = int(lines[position])
            self.error(
                line,
                f"Line {line}: {settings.doc_noun} {_short_id(bytes(docids[position]))} already"
                f" listed for query '{quote(self.queries[query_index[position]])}'"
                f" on line {lines[earlier]}.",
            )
        if not self.errors:
            self._coverage_warnings(counts, lines, query_index, doubles)
        tag = _text(self.first_tag or b"")
        if form_run_name is not None and tag != form_run_name:
            self.warn(
                f"The run tag '{quote(tag)}' differs from the run name '{quote(form_run_name)}'"
                " entered in the form."
            )
        if self.errors:
            return None, _by_line(self.errors), self.warnings
        with np.errstate(over="ignore"):
            scores = doubles.astype(np.float32)
        run = TrecRun(tag, self.queries, query_index, docids, scores)
        return run, [], self.warnings

    def _coverage_warnings(
        self,
        counts: NDArray[np.int64],
        lines: NDArray[np.int32],
        query_index: NDArray[np.int32],
        doubles: NDArray[np.float64],
    ) -> None:
        """Warn about topics without lines (row 20) and float32-only ties (row 21)."""
        missing = np.flatnonzero(counts == 0)
        if len(missing):
            total = len(self.queries)
            first = quote(self.queries[missing[0]])
            if len(missing) == 1:
                self.warn(
                    f"1 of {total:,} topics has no results ('{first}')."
                    " It counts as 0 on every measure."
                )
            else:
                self.warn(
                    f"{len(missing):,} of {total:,} topics have no results (first: '{first}')."
                    " Each counts as 0 on every measure."
                )
        count, a, b = _precision_ties(query_index, doubles)
        if count:
            example = (
                f"line {lines[a]} '{float(doubles[a])!r}'"
                f" and line {lines[b]} '{float(doubles[b])!r}'"
            )
            noun = self.settings.doc_noun
            if count == 1:
                self.warn(
                    f"1 score pair differs only beyond single precision ({example}); it is"
                    f" treated as a tie and ordered by {noun} id, as trec_eval does."
                )
            else:
                self.warn(
                    f"{count:,} score pairs differ only beyond single precision (e.g. {example});"
                    f" they are treated as ties and ordered by {noun} id, as trec_eval does."
                )

    def stopped(self) -> list[Issue]:
        """Return the errors collected before validation stopped early."""
        errors = _by_line(self.errors)
        if len(errors) >= MAX_COLLECTED_ERRORS:
            errors.append(
                Issue(
                    None,
                    f"Checking stopped after {MAX_COLLECTED_ERRORS:,} errors;"
                    " the rest of the file was not checked.",
                )
            )
        return errors


def _by_line(errors: list[Issue]) -> list[Issue]:
    """Return errors ordered by line (stable), file-level errors last."""
    return sorted(errors, key=lambda e: (e.line is None, e.line or 0))


def _chunks(lines: RunSource) -> Iterator[bytes]:
    """Yield the input as chunks of whole physical lines.

    A binary file-like input (one with ``read``) is read in large blocks, which avoids a Python
    object per line; any other iterable is joined in batches of lines.
    """
    read = getattr(lines, "read", None)
    if callable(read):
        pieces: Iterator[bytes] = iter(functools.partial(read, _CHUNK_BYTES), b"")
    else:
        iterator = iter(cast(Iterable[bytes], lines))
        batches = iter(lambda: list(itertools.islice(iterator, _BATCH_LINES)), [])
        pieces = (b"".join(batch) for batch in batches)
    pending: list[bytes] = []
    for piece in pieces:
        cut = piece.rfind(b"\n") + 1
        if cut == 0:
            pending.append(piece)
            continue
        if pending:
            pending.append(piece)
            piece = b"".join(pending)
            cut = len(piece) - len(pending[-1]) + cut
            pending = []
        if cut < len(piece):
            pending.append(piece[cut:])
            piece = piece[:cut]
        yield piece
    if pending:
        yield b"".join(pending)


def _padded_blocks(source: Readable) -> Iterator[tuple[NDArray[np.uint8], int]]:
    """Yield (array, size): whole lines read from a stream, followed by spare bytes.

    The lines are read into one buffer reused from block to block (a block is only valid
    until the next one is read), so reading a large file touches no fresh memory per block.
    """
    spare = _VECTOR_MAX_FIELD
    buffer = np.zeros(2 * _CHUNK_BYTES + spare, dtype=np.uint8)
    readinto = getattr(source, "readinto", None)
    start = end = 0
    while True:
        if end + _CHUNK_BYTES + spare > len(buffer):
            # Keep the unfinished line, at the front; grow only for a line longer than a block.
            buffer[: end - start] = buffer[start:end]
            end, start = end - start, 0
            if end + _CHUNK_BYTES + spare > len(buffer):
                buffer = np.concatenate((buffer, np.zeros(len(buffer), dtype=np.uint8)))
        if callable(readinto):
            count = int(readinto(buffer.data[end : end + _CHUNK_BYTES]) or 0)
        else:
            piece = source.read(_CHUNK_BYTES)
            count = len(piece)
            buffer[end : end + count] = np.frombuffer(piece, dtype=np.uint8)
        if not count:
            if start < end:
                yield buffer[start : end + spare], end - start
            return
        end += count
        cut = _last_line_end(buffer, end - count, end)
        if cut:
            yield buffer[start : cut + spare], cut - start
            start = cut


def _last_line_end(buffer: NDArray[np.uint8], low: int, high: int) -> int:
    """Return the position after the last LF in ``buffer[low:high]``, or 0 if there is none."""
    step = 4096
    while high > low:
        window = max(low, high - step)
        found = buffer[window:high].tobytes().rfind(b"\n")
        if found >= 0:
            return window + found + 1
        high, step = window, step * 4
    return 0


def validate_run(
    lines: RunSource,
    *,
    topics: frozenset[str],
    settings: TrecSettings,
    form_run_name: str | None = None,
) -> tuple[TrecRun | None, list[Issue], list[Issue]]:
    """Validate a participant run strictly (spec §4 rows 1-22) in one streaming pass.

    ``lines`` are physical lines as bytes (each ending with b"\\n" except possibly the last),
    e.g. a file or gzip stream iterated line by line. Returns (run or None, errors, warnings);
    the run is None whenever there is an error. Errors are ordered by line number.
    """
    validator = _StrictValidator(topics, settings)
    try:
        if callable(getattr(lines, "read", None)):
            for padded, size in _padded_blocks(cast(Readable, lines)):
                validator.feed_padded(padded, size)
        else:
            for chunk in _chunks(lines):
                validator.feed(chunk)
    except _TooManyErrors:
        return None, validator.stopped(), validator.warnings
    try:
        return validator.finish(form_run_name)
    except _TooManyErrors:
        return None, validator.stopped(), validator.warnings


# -- lenient (trec_eval 9.0.8) import -----------------------------------------------------------


def c_atof(text: bytes) -> tuple[float, int]:
    """Read a score as C ``atof`` does: return (value, bytes used); 0 bytes used means 0.0.

    NaN is returned as NaN for the caller to refuse.
    """
    match = _C_ATOF.match(text)
    if match is None:
        return 0.0, 0
    used = match.group()
    negative = used.startswith(b"-")
    if match.group("hex") is not None:
        try:
            value = float.fromhex(used.decode())
        except OverflowError:
            value = -np.inf if negative else np.inf
    elif match.group("dec") is not None:
        value = float(used)
    elif match.group("inf") is not None:
        value = -np.inf if negative else np.inf
    else:
        value = np.nan
    return value, match.end()


def _number_text(value: float) -> str:
    """Format a read score for the report: integers without a decimal point."""
    if np.isfinite(value) and float(value).is_integer():
        return str(int(value))
    return repr(float(value))


class _LenientParser:
    """State of one lenient import pass (spec §5)."""

    def __init__(self) -> None:
        self.errors: list[Issue] = []
        self.query_map: dict[bytes, int] = {}
        self.line_no = 0
        self.any_field = False
        self.bom = False
        self.crlf = 0
        self.extra_fields = 0
        self.first_extra = 0
        self.coercions: list[str] = []
        self.coercion_count = 0
        self.tags: dict[bytes, int] = {}
        self.last_tag = b""
        self.buffer_lines: array[int] = array("i")
        self.buffer_query: array[int] = array("i")
        self.buffer_scores: array[float] = array("d")
        self.buffer_docids: list[bytes] = []
        self.columns = _Columns()

    def error(self, line: int | None, message: str) -> None:
        """Record an error; stop the pass once MAX_COLLECTED_ERRORS are collected."""
        self.errors.append(Issue(line, message))
        if len(self.errors) >= MAX_COLLECTED_ERRORS:
            raise _TooManyErrors

    def feed(self, raw: bytes) -> None:
        """Read a chunk of whole lines."""
        pieces = raw.split(b"\n")
        if pieces[-1] == b"":
            pieces.pop()
        if pieces and self._bulk(raw, pieces):
            return
        for piece in pieces:
            self.line_no += 1
            self._line(self.line_no, piece)
        if len(self.buffer_docids) >= _BATCH_LINES:
            self._flush()

    def _bulk(self, raw: bytes, pieces: list[bytes]) -> bool:
        """Read a chunk of plain 6-field lines with strict decimal scores at once, if it is one."""
        columns = _six_columns(raw, pieces)
        if columns is None:
            return False
        qids, _, docids, _, scores, tags = columns
        values = _strict_numbers(scores)
        if values is None:
            return False
        self._flush()
        start = self.line_no + 1
        self.line_no += len(pieces)
        self.any_field = True
        self.crlf += raw.count(b"\r")
        index = list(map(self.query_map.get, qids))
        if None in index:
            for i, value in enumerate(index):
                if value is None:
                    index[i] = self.query_map.setdefault(qids[i], len(self.query_map))
        if len(set(tags)) != 1 or tags[0] not in self.tags:
            for i, tag in enumerate(tags):
                self.tags.setdefault(tag, start + i)
        self.last_tag = tags[-1]
        lines = np.arange(start, self.line_no + 1, dtype=np.int32)
        self.columns.extend(lines, np.array(index, dtype=np.int32), docids, values)
        return True

    def _line(self, line: int, content: bytes) -> None:
        """Read one line as trec_eval 9.0.8 does, noting what strict mode would not accept."""
        if line == 1 and content.startswith(_BOM):
            self.bom = True
        fields = content.split()
        if fields:
            self.any_field = True
        if len(fields) < 6:
            self.error(
                line,
                f"Line {line}: expected 6 fields (query id, Q0, document id, rank, score, run tag),"
                f' found {len(fields)}; trec_eval refuses the file ("Malformed line").',
            )
            return
        if content.endswith(b"\r"):
            self.crlf += 1
        if len(fields) > 6:
            self.extra_fields += 1
            self.first_extra = self.first_extra or line
        qid, _, docid, _, score, tag = fields[:6]
        value, used = c_atof(score)
        if np.isnan(value):
            self.error(
                line,
                f"Line {line}: score '{quote(_text(score))}' is not a number;"
                " trec_eval's ordering with NaN is undefined.",
            )
            return
        if used != len(score) or not _STRICT_NUMBER.fullmatch(score):
            self.coercion_count += 1
            if len(self.coercions) < MAX_LISTED_ERRORS:
                self.coercions.append(
                    f"Line {line}: score '{quote(_text(score))}' was read as"
                    f" {_number_text(value)}, as C atof reads it."
                )
        if tag not in self.tags:
            self.tags[tag] = line
        self.last_tag = tag
        self.buffer_lines.append(line)
        self.buffer_query.append(self.query_map.setdefault(qid, len(self.query_map)))
        self.buffer_docids.append(docid)
        self.buffer_scores.append(value)

    def _flush(self) -> None:
        """Move the buffered lines into the column store."""
        self.columns.extend(
            np.frombuffer(self.buffer_lines, dtype=np.int32),
            np.frombuffer(self.buffer_query, dtype=np.int32),
            self.buffer_docids,
            np.frombuffer(self.buffer_scores, dtype=np.float64),
        )
        self.buffer_lines = array("i")
        self.buffer_query = array("i")
        self.buffer_scores = array("d")
        self.buffer_docids = []

    def finish(self) -> tuple[TrecRun | None, list[Issue], list[str]]:
        """Check for duplicates and return (run or None, errors, tolerance report)."""
        self._flush()
        if not self.any_field:
            return None, [Issue(None, "The file is empty.")], []
        queries = tuple(_text(q) for q in self.query_map)
        lines, query_index, docids, doubles = self.columns.arrays()
        with np.errstate(over="ignore"):
            scores = doubles.astype(np.float32)
        for position, earlier in find_duplicates(query_index, docids, limit=MAX_COLLECTED_ERRORS):
            line = int(lines[position])
            self.error(
                line,
                f"Line {line}: document {_short_id(bytes(docids[position]))} already listed for"
                f" query '{quote(queries[query_index[position]])}' on line {lines[earlier]};"
                " trec_eval stops on duplicate documents.",
            )
        if self.errors:
            return None, _by_line(self.errors), self.report()
        return (
            TrecRun(_text(self.last_tag), queries, query_index, docids, scores),
            [],
            self.report(),
        )

    def report(self) -> list[str]:
        """Return the tolerance report: what was read differently from strict mode."""
        report = []
        if self.bom:
            report.append(
                "Line 1 starts with a byte-order mark; as in trec_eval it is part of the query id."
            )
        if self.crlf:
            report.append(
                f"{_plural(self.crlf, 'line ends', 'lines end')} with CR LF;"
                " the CR was read as white space."
            )
        if self.extra_fields:
            report.append(
                f"{_plural(self.extra_fields, 'line has', 'lines have')} more than 6 fields"
                f" (first: line {self.first_extra}); the extra fields were ignored."
            )
        report.extend(self.coercions)
        if self.coercion_count > len(self.coercions):
            rest = self.coercion_count - len(self.coercions)
            report.append(f"… and {_plural(rest, 'more score coercion', 'more score coercions')}.")
        if len(self.tags) > 1:
            first_tag, first_line = next(iter(self.tags.items()))
            report.append(
                f"The run has {len(self.tags):,} different run tags"
                f" (first '{quote(_text(first_tag))}' on line {first_line}); the last line's tag"
                f" '{quote(_text(self.last_tag))}' is kept, as trec_eval does."
            )
        return report


def parse_lenient(lines: RunSource) -> tuple[TrecRun | None, list[Issue], list[str]]:
    """Read a historical run with trec_eval 9.0.8's input tolerance (spec §5).

    Fields are split on any white space and fields after the 6th are ignored; fields 2 and 4
    are never read; scores are read as C ``atof`` reads them (longest numeric prefix, hex
    floats, inf; no prefix = 0), each coercion reported; NaN is refused; any id string is
    accepted with no per-query cap; mixed run tags keep the last line's. Refused: lines with
    fewer than 6 fields, a duplicate document within a query, an empty file. Returns (run or
    None, errors, tolerance report lines).
    """
    parser = _LenientParser()
    try:
        for chunk in _chunks(lines):
            parser.feed(chunk)
        return parser.finish()
    except _TooManyErrors:
        errors = _by_line(parser.errors)
        errors.append(
            Issue(
                None,
                f"Reading stopped after {MAX_COLLECTED_ERRORS:,} errors;"
                " the rest of the file was not checked.",
            )
        )
        return None, errors, parser.report()


# -- qrels ------------------------------------------------------------------------------------


def parse_qrels(
    data: bytes, *, topics: frozenset[str] | None, settings: TrecSettings
) -> tuple[Qrels | None, list[Issue]]:
    """Validate an organizer's qrels file (4 fields: query, iteration, id, integer grade).

    Checks every line: field count, query id among ``topics`` (unless None), id pattern,
    integer grade in settings' range, no duplicate (query, id) pair. Returns (qrels or None,
    issues); issues hold errors and warnings (severity "warning"), errors ordered by line.
    """
    issues: list[Issue] = []
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
        issues.append(
            Issue(None, "The file started with a byte-order mark; it was removed.", "warning")
        )
    raw_lines = data.split(b"\n")
    if raw_lines[-1] == b"":
        raw_lines.pop()
    trailing = 0
    while raw_lines and not raw_lines[-1].strip():
        raw_lines.pop()
        trailing += 1
    if not raw_lines:
        return None, [Issue(None, "The file is empty.")]
    if trailing:
        verb = "was" if trailing == 1 else "were"
        issues.append(
            Issue(
                None,
                f"{_plural(trailing, 'empty line', 'empty lines')} at the end of the file {verb}"
                " ignored.",
                "warning",
            )
        )
    if any(line.endswith(b"\r") for line in raw_lines):
        issues.append(Issue(None, "Windows (CRLF) line endings were normalised.", "warning"))
    fast = _qrels_fast(raw_lines, topics, settings)
    if fast is not None:
        return fast, issues
    errors: list[Issue] = []
    docid_re = _compiled(settings.docid_pattern)
    topic_bytes = None if topics is None else {t.encode() for t in topics}
    query_map: dict[bytes, int] = {}
    first_line: dict[tuple[bytes, bytes], int] = {}
    query_index: list[int] = []
    docids: list[bytes] = []
    grades: list[int] = []
    noun = settings.doc_noun
    for line, content in enumerate(raw_lines, 1):
        content = content.rstrip(b"\r")
        if not content.strip():
            errors.append(Issue(line, f"Line {line} is empty."))
            continue
        message = _char_error(line, content)
        if message is not None:
            errors.append(Issue(line, message))
            continue
        fields = content.split()
        if len(fields) != 4:
            errors.append(
                Issue(
                    line,
                    f"Line {line}: expected 4 fields (query id, iteration, {noun} id, grade),"
                    f" found {len(fields)}.",
                )
            )
            continue
        qid, _, docid, grade = fields
        ok = True
        if topic_bytes is not None and qid not in topic_bytes:
            errors.append(Issue(line, _unknown_query_message(line, qid, settings)))
            ok = False
        if not docid_re.fullmatch(docid):
            errors.append(
                Issue(
                    line,
                    f"Line {line}: {noun} id '{quote(_text(docid))}'"
                    f" must be {settings.docid_hint}.",
                )
            )
            ok = False
        if (
            not _INTEGER.fullmatch(grade)
            or not settings.min_grade <= int(grade) <= settings.max_grade
        ):
            errors.append(
                Issue(
                    line,
                    f"Line {line}: grade '{quote(_text(grade))}' must be an integer from"
                    f" {settings.min_grade} to {settings.max_grade}.",
                )
            )
            ok = False
        if not ok:
            continue
        earlier = first_line.setdefault((qid, docid), line)
        if earlier != line:
            errors.append(
                Issue(
                    line,
                    f"Line {line}: {noun} {_short_id(docid)} is judged twice for query"
                    f" '{quote(_text(qid))}' (first on line {earlier}).",
                )
            )
            continue
        query_index.append(query_map.setdefault(qid, len(query_map)))
        docids.append(docid)
        grades.append(int(grade))
    if errors:
        return None, errors + issues
    qrels = Qrels(
        queries=tuple(_text(q) for q in query_map),
        query_index=np.array(query_index, dtype=np.int32),
        docids=np.array(docids),
        grades=np.array(grades, dtype=np.int32),
    )
    return qrels, issues


def _qrels_fast(
    raw_lines: list[bytes], topics: frozenset[str] | None, settings: TrecSettings
) -> Qrels | None:
    """Return the qrels of lines that are all valid, checked column-wise; else None.

    None sends the lines through the line-by-line checks, which report every error.
    """
    if b"".join(raw_lines).translate(None, _PRINTABLE_TAB):
        return None
    rows = [line.split() for line in raw_lines]
    if any(len(row) != 4 for row in rows):
        return None
    qids, _, docids, grades = (list(column) for column in zip(*rows, strict=True))
    if topics is not None and not {t.encode() for t in topics}.issuperset(qids):
        return None
    if not _all_full_match(docids, settings.docid_pattern):
        return None
    if not all(map(_INTEGER.fullmatch, grades)):
        return None
    values = list(map(int, grades))
    if min(values) < settings.min_grade or max(values) > settings.max_grade:
        return None
    if len(set(zip(qids, docids, strict=True))) != len(rows):
        return None
    query_map = {q: i for i, q in enumerate(dict.fromkeys(qids))}
    return Qrels(
        queries=tuple(_text(q) for q in query_map),
        query_index=np.array([query_map[q] for q in qids], dtype=np.int32),
        docids=np.array(docids),
        grades=np.array(values, dtype=np.int32),
    )


def qrels_report(qrels: Qrels, threshold: int) -> dict[str, Any]:
    """Summarise qrels for the organizer at one relevance threshold.

    Keys: ``lines``, ``queries``, ``grade_histogram``, ``threshold``,
    ``queries_without_relevant`` (no grade >= threshold; they score 0) and
    ``queries_all_negative`` (every grade < 0; trec_eval 9.0.8 fails on them, we score 0).
    """
    n = len(qrels.queries)
    relevant = np.bincount(qrels.query_index[qrels.grades >= threshold], minlength=n)
    non_negative = np.bincount(qrels.query_index[qrels.grades >= 0], minlength=n)
    return {
        "lines": len(qrels),
        "queries": n,
        "grade_histogram": qrels.grade_histogram(),
        "threshold": threshold,
        "queries_without_relevant": [qrels.queries[i] for i in np.flatnonzero(relevant == 0)],
        "queries_all_negative": [qrels.queries[i] for i in np.flatnonzero(non_negative == 0)],
    }


# -- scoring ----------------------------------------------------------------------------------


def score_run_detail(run: TrecRun, qrels: Qrels, threshold: int) -> dict[str, Any]:
    """Score a run against qrels at a threshold, with per-query values.

    Returns ``ranking.evaluate``'s result (MAP, R-Prec, MRR over all qrels queries, per_query
    arrays aligned with ``queries``, present_means = trec_eval's default without -c) plus
    ``queries`` (the qrels' query ids) and ``ignored_queries`` (run queries not in the qrels).
    """
    position = {q: i for i, q in enumerate(qrels.queries)}
    mapping = np.array([position.get(q, -1) for q in run.queries], dtype=np.int32)
    run_query = mapping[run.query_index] if len(run) else np.zeros(0, dtype=np.int32)
    result = evaluate(
        run_query,
        run.docids,
        run.scores,
        qrels.query_index,
        qrels.docids,
        qrels.grades,
        len(qrels.queries),
        threshold,
    )
    lines = np.bincount(run.query_index, minlength=len(run.queries))
    result["queries"] = qrels.queries
    result["ignored_queries"] = [
        q for q, m, c in zip(run.queries, mapping, lines, strict=True) if m < 0 and c > 0
    ]
    return result


def score_run(run: TrecRun, qrels: Qrels, threshold: int) -> dict[str, float]:
    """Return {"MAP", "R-Prec", "MRR"}: unrounded means over all queries of the qrels.

    Formulas in ``leaderboard.scoring.ranking.evaluate``; queries absent from the run count 0.
    """
    result = score_run_detail(run, qrels, threshold)
    return {m: result[m] for m in ("MAP", "R-Prec", "MRR")}
