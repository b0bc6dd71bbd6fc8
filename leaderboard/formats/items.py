"""One value per item (classification labels, regression numbers): gold parser, run validators.

A file has one item per line, ``id<whitespace>value``, with TAB or spaces between the two
fields. ``#`` lines are comments in gold and runs alike (many historical runs start with a
header line); blank lines are ignored in gold. Runs may list items in any order.

Strict run validation (participants) decides as follows:

- errors: a file that is not UTF-8 (per line, with the byte), a line without exactly 2
  fields, an unknown id, an id given twice (naming the first line), a value the value parser
  refuses, gold ids never given (one message: the count and the first few ids; an id whose
  value was refused counts as given, and this message is kept beyond the cap on listed
  errors), a file with no item at all;
- warnings (accepted): CRLF or CR line endings, blank lines, a UTF-8 byte-order mark, since
  each is harmless but usually a sign of an editor or a platform the author did not intend;
- silently accepted: comment lines, any line order, a missing final newline (the last line
  is complete either way), spaces instead of a TAB, spaces at the ends of a line.

The lenient importer (organizers) accepts the same ids and values, also splits on any Unicode
whitespace, and lists everything it tolerated as sentences instead of warnings.

A weighted gold file (``parse_gold(..., weighted=True)``) has a third field on every item line,
the item's weight: a plain decimal from 0 to MAX_WEIGHT (1e12), at least one positive.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from leaderboard.formats.issues import Issue, IssueLog, quoted

#: How many missing ids the "ids are missing" message names before "and N more".
MISSING_IDS_NAMED = 5
#: The largest item weight: sums and squares of the weights of millions of items stay finite.
MAX_WEIGHT = 1e12

_BOM = b"\xef\xbb\xbf"
#: Strict separators: spaces and TABs only; other whitespace (NBSP, form feed) is part of a field.
_STRICT_SPLIT = re.compile(r"[ \t]+")
# A plain decimal: optional sign, digits with an optional point (or a point and digits), and an
# optional exponent; ASCII digits only (float() also takes Arabic-Indic digits and underscores).
_DECIMAL_CHARS = str.maketrans("", "", "0123456789+-.eE")
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


class ValueParser(Protocol):
    """Turns one value field into a number; raises ValueError whose message names the value."""

    #: The numpy dtype of the aligned values array.
    dtype: type

    def __call__(self, text: str) -> float | int:
        """Return the value of ``text`` or raise ValueError explaining why it is refused."""
        ...

    def bulk(self, texts: list[str]) -> np.ndarray | None:
        """Return the values of all ``texts`` at C speed, or None if any is refused.

        It must agree with ``__call__`` on every text; a parser without it (a plain callable
        with a ``dtype``) is read line by line, with the same verdicts, only slower.
        """
        ...


class LabelParser:
    """Parse declared labels (exact match) and aliases into indices in declaration order."""

    dtype: type = np.int64

    def __init__(self, labels: Sequence[str], aliases: Mapping[str, str] | None = None) -> None:
        labels = list(labels)
        if not labels:
            raise ValueError("at least one label must be declared")
        for label in labels:
            if not isinstance(label, str) or not label or _has_space(label):
                raise ValueError(
                    f"label {quoted(label)} must be a non-empty text without whitespace"
                )
        if len(set(labels)) != len(labels):
            twice = sorted({x for x in labels if labels.count(x) > 1})
            raise ValueError(f"labels declared more than once: {', '.join(map(quoted, twice))}")
        self.labels = tuple(labels)
        self.aliases = dict(aliases or {})
        self._index = {label: i for i, label in enumerate(labels)}
        for alias, target in self.aliases.items():
            if target not in self._index:
                raise ValueError(
                    f"label alias {quoted(alias)} maps to {quoted(target)}, which is not a "
                    f"declared label ({self.allowed})"
                )
            if alias in self._index and alias != target:
                raise ValueError(
                    f"label alias {quoted(alias)} is a declared label; it cannot mean {quoted(target)}"
                )
            if not alias or _has_space(alias):
                raise ValueError(f"label alias {quoted(alias)} must be non-empty, without spaces")
        for alias, target in self.aliases.items():
            self._index.setdefault(alias, self._index[target])

    @property
    def allowed(self) -> str:
        """Return the declared labels (and aliases) as a message lists them."""
        text = ", ".join(map(quoted, self.labels))
        if self.aliases:
            text += "; aliases " + ", ".join(map(quoted, self.aliases))
        return text

    def bulk(self, texts: list[str]) -> np.ndarray | None:
        """Return the indices of all ``texts``, or None if one is no label."""
        found = list(map(self._index.get, texts))
        if None in found:
            return None
        return np.array(found, dtype=np.int64)

    def __call__(self, text: str) -> int:
        """Return the index of the label ``text`` names; raise ValueError for any other text."""
        found = self._index.get(text)
        if found is None:
            raise ValueError(f"label {quoted(text)} is not declared (allowed: {self.allowed})")
        return found


class DecimalParser:
    """Parse finite plain decimals: ``-1``, ``+0.5``, ``.5``, ``5.``, ``1e3``, ``2.5E-2``.

    Refused: empty text, ``nan``, ``inf``, hexadecimal, digit underscores (``1_000``), non-ASCII
    digits, and numbers beyond the float range (``1e999``). Exponents are allowed because common
    tools (Python's repr, printf's %g) write small and large numbers that way.
    """

    dtype: type = np.float64

    def bulk(self, texts: list[str]) -> np.ndarray | None:
        """Return the values of all ``texts``, or None if one is not a finite plain decimal."""
        # Restricted to these characters, float() accepts exactly the plain decimals.
        if "".join(texts).translate(_DECIMAL_CHARS):
            return None
        try:
            values = np.array(list(map(float, texts)), dtype=np.float64)
        except ValueError:
            return None
        return values if bool(np.all(np.isfinite(values))) else None

    def __call__(self, text: str) -> float:
        """Return the value of ``text``; raise ValueError unless a finite plain decimal."""
        if not _DECIMAL.fullmatch(text):
            raise ValueError(f"value {quoted(text)} is not a decimal number")
        value = float(text)
        if not math.isfinite(value):
            raise ValueError(f"value {quoted(text)} is beyond the range of a float")
        return value


def parse_weight(text: str) -> float:
    """Return the weight ``text`` gives; raise ValueError unless a finite decimal of 0 or more."""
    if not _DECIMAL.fullmatch(text):
        raise ValueError(f"weight {quoted(text)} is not a decimal number")
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"weight {quoted(text)} is beyond the range of a float")
    if value < 0:
        raise ValueError(f"weight {quoted(text)} is negative; a weight is 0 or more")
    if value > MAX_WEIGHT:
        raise ValueError(f"weight {quoted(text)} is above the largest weight, {MAX_WEIGHT:g}")
    return value


def _has_space(text: str) -> bool:
    """Return whether ``text`` contains any whitespace character."""
    return any(c.isspace() for c in text)


# --------------------------------------------------------------------------------------------
# Reading lines: shared by the gold parser, the strict validator and the lenient importer


@dataclass
class _Scan:
    """The item lines of a file, and what its layout looked like."""

    #: (line number, id, value) of each item line, in file order; the value is None when it
    #: was refused (the id still counts as given, so it is not also reported missing).
    items: list[tuple[int, str, float | int | None]]
    bom: bool = False
    #: "CRLF", "CR" or "" for the line endings found besides LF.
    endings: str = ""
    final_newline: bool = True
    blank: int = 0
    first_blank: int = 0
    comments: int = 0
    #: Lines whose fields are separated by spaces (or several blanks) rather than one TAB.
    spaced: int = 0
    #: Lines split on whitespace other than spaces and TABs (lenient import only).
    unicode_split: int = 0
    #: A file of clean "id<TAB>value" lines read in bulk: first item line, ids, values.
    fast: tuple[int, list[str], np.ndarray] | None = None
    #: Each item's weight (a weighted gold only), None where refused; bulk-read: an array.
    weights: list[float | None] = field(default_factory=list)
    fast_weights: np.ndarray | None = None

    def unfold(self) -> None:
        """Turn bulk-read items into ``items``, for the line-by-line checks."""
        if self.fast is not None:
            first, ids, values = self.fast
            self.items = list(
                zip(range(first, first + len(ids)), ids, values.tolist(), strict=True)
            )
            self.fast = None
        if self.fast_weights is not None:
            self.weights = self.fast_weights.tolist()
            self.fast_weights = None


def _scan(
    data: bytes, parse_value: ValueParser, log: IssueLog, *, lenient: bool, weighted: bool = False
) -> _Scan:
    """Read every line of ``data``, recording errors in ``log``; return the item lines.

    ``weighted``: each item line has a third field, the item's weight.
    """
    scan = _Scan(items=[])
    width = 3 if weighted else 2
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
        scan.bom = True
    if b"\r" in data:
        scan.endings = "CRLF" if b"\r\n" in data else "CR"
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    scan.final_newline = not data or data.endswith(b"\n")
    if data.endswith(b"\n"):
        data = data[:-1]  # the final newline ends the last line; it does not start an empty one
    if not data:
        return scan
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        lines: Sequence[str | bytes] = data.split(b"\n")  # decoded one by one: each bad line named
    else:
        if _bulk(scan, text, parse_value, lenient, width):
            return scan
        lines = text.split("\n")
    items = scan.items
    for number, raw in enumerate(lines, 1):
        line = _decode(log, number, raw) if isinstance(raw, bytes) else raw
        if line is None:
            continue
        fields = line.split("\t")
        # The usual line, "id<TAB>value", skips the slower checks below.
        if len(fields) != width or " " in line or "" in fields:
            stripped = line.strip() if lenient else line.strip(" \t")
            if not stripped:
                scan.blank += 1
                scan.first_blank = scan.first_blank or number
                continue
            if stripped[0] == "#":
                scan.comments += 1
                continue
            fields = _STRICT_SPLIT.split(stripped)
            if len(fields) != width and lenient and len(stripped.split()) == width:
                fields = stripped.split()
                scan.unicode_split += 1
            elif len(fields) == width:
                scan.spaced += 1
        elif line[0] == "#":
            scan.comments += 1
            continue
        if len(fields) != width:
            log.append(_field_count(number, line, fields, width))
            continue
        item, text = fields[0], fields[1]
        if not item:
            log.append(Issue(number, f"Line {number}: the id is empty."))
            continue
        value: float | int | None = None
        try:
            value = parse_value(text)
        except ValueError as exc:
            log.append(Issue(number, f"Line {number}: {exc}."))
        if weighted:
            try:
                scan.weights.append(parse_weight(fields[2]))
            except ValueError as exc:
                log.append(Issue(number, f"Line {number}: {exc}."))
                scan.weights.append(None)
                value = None
        items.append((number, item, value))
    return scan


_OTHER_SPACE = re.compile(r"[^\S\t\n]")
#: Everything but the field separator and the line break, per separator.
_NOT_DELIMITER = {sep: re.compile(f"[^{sep}\n]+") for sep in ("\t", " ")}


def _bulk(scan: _Scan, text: str, parse_value: ValueParser, lenient: bool, width: int = 2) -> bool:
    """Read a file of clean lines in bulk into ``scan.fast``; return False for any other file.

    Clean: leading ``#`` lines, then only "id<TAB>value" lines without spaces, or only
    "id value" lines without TABs; no blank line; every value accepted. The line-by-line reading of such a file finds exactly these items and no
    issue, so the verdicts are identical; any doubt returns False.
    """
    bulk = getattr(parse_value, "bulk", None)
    if bulk is None:
        return False
    comments = 0
    body = text
    while body.startswith("#"):
        cut = body.find("\n")
        if cut < 0:
            return False
        body = body[cut + 1 :]
        comments += 1
    if not body or "\n#" in body or (lenient and _OTHER_SPACE.search(body)):
        return False
    # One TAB per line, or (no TAB at all) one space per line: both common, both clean.
    separator = "\t" if "\t" in body else " "
    if separator == "\t" and " " in body:
        return False
    lines = body.count("\n") + 1
    if body.count(separator) != lines * (width - 1):
        return False
    # Every line has its own width - 1 separators: equal totals could hide a line with two
    # and a line with none (which a split of the whole text would pair across the lines).
    row = separator * (width - 1)
    if _NOT_DELIMITER[separator].sub("", body) != f"{row}\n" * (lines - 1) + row:
        return False
    fields = body.replace("\n", separator).split(separator)
    if "" in fields:
        return False
    ids = fields[0::width]
    values = bulk(fields[1::width])
    if values is None:
        return False
    if width == 3:
        weights = DecimalParser().bulk(fields[2::width])
        if weights is None or bool((weights < 0).any() or (weights > MAX_WEIGHT).any()):
            return False  # read line by line, which names each refused weight
        scan.fast_weights = weights
    scan.comments = comments
    scan.spaced = lines if separator == " " else 0
    scan.fast = (comments + 1, ids, values)
    return True


def _decode(log: IssueLog, number: int, raw: bytes) -> str | None:
    """Return the line as text, or record an error naming the first byte that is not UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        log.append(
            Issue(
                number,
                f"Line {number}: not valid UTF-8 (byte 0x{raw[exc.start]:02X} at column "
                f"{exc.start + 1}).",
            )
        )
        return None


def _field_count(number: int, line: str, fields: list[str], width: int = 2) -> Issue:
    """Return the error of a line without exactly ``width`` fields (2, or 3 with a weight)."""
    found = 1 if fields == [""] else len(fields)
    names = "id and value" if width == 2 else "id, value and weight"
    return Issue(
        number,
        f"Line {number}: expected {width} fields ({names}, separated by a TAB or spaces), "
        f"found {found}: {quoted(line)}.",
    )


def _closed(log: IssueLog) -> list[Issue]:
    """Return the kept errors, plus one line counting those found beyond them."""
    # Ids are matched after every line is read: sort so the errors read in file order.
    kept = sorted(log.kept, key=lambda issue: (issue.line is None, issue.line or 0))
    if not log.dropped:
        return kept
    noun = "error" if log.dropped == 1 else "errors"
    return [*kept, Issue(None, f"… and {log.dropped:,} more {noun} not listed.")]


def _duplicate(number: int, item: str, first: int) -> Issue:
    """Return the error of an id given a second time."""
    return Issue(
        number, f"Line {number}: id {quoted(item)} is given twice (first on line {first})."
    )


# --------------------------------------------------------------------------------------------
# Gold


@dataclass(frozen=True, eq=False)
class ItemGold:
    """A parsed gold file: ids and values in file order, each id's row, and item weights."""

    ids: tuple[str, ...]
    values: np.ndarray
    index: dict[str, int]
    #: Each item's weight (a weighted gold file's third field); None: every item counts 1.
    weights: np.ndarray | None = None

    def __len__(self) -> int:
        """Return the number of items."""
        return len(self.ids)


def parse_gold(
    data: bytes, parse_value: ValueParser, *, weighted: bool = False
) -> tuple[ItemGold | None, list[Issue]]:
    """Parse a gold file, returning the gold (None on any error) and every error found.

    CRLF line endings, a byte-order mark, blank and ``#`` lines are accepted silently.
    ``weighted``: every item line has a third field, its weight (see ``parse_weight``), and
    at least one weight must be positive.
    """
    log = IssueLog()
    scan = _scan(data, parse_value, log, lenient=False, weighted=weighted)
    if scan.fast is not None:
        _, fast_ids, fast_values = scan.fast
        index = {item: row for row, item in enumerate(fast_ids)}
        fast_weights = scan.fast_weights
        if len(index) == len(fast_ids) and (fast_weights is None or (fast_weights > 0).any()):
            typed: np.ndarray = fast_values.astype(parse_value.dtype)
            return ItemGold(tuple(fast_ids), typed, index, fast_weights), []
        scan.unfold()
    first_line: dict[str, int] = {}
    ids: list[str] = []
    values_read: list[float | int] = []
    weights: list[float] = []
    for row, (number, item, value) in enumerate(scan.items):
        first = first_line.setdefault(item, number)
        if first != number:
            log.append(_duplicate(number, item, first))
            continue
        ids.append(item)
        if value is not None:  # else the error is already logged: no gold is returned
            values_read.append(value)
            if weighted:
                weights.append(scan.weights[row] or 0.0)
    if not ids and not len(log):
        log.append(Issue(None, "The gold file has no item."))
    if weighted and not len(log) and not any(w > 0 for w in weights):
        log.append(Issue(None, "Every weight is 0: at least one item needs a positive weight."))
    if len(log):
        return None, _closed(log)
    index = {item: row for row, item in enumerate(ids)}
    gold = ItemGold(
        tuple(ids),
        np.array(values_read, dtype=parse_value.dtype),
        index,
        np.array(weights, dtype=np.float64) if weighted else None,
    )
    return gold, []


# --------------------------------------------------------------------------------------------
# Runs


@dataclass(frozen=True)
class _Matched:
    """A run's items matched against the gold ids."""

    values: np.ndarray | None
    in_order: bool


def _match(
    scan: _Scan, gold: ItemGold | Sequence[str], parse_value: ValueParser, log: IssueLog
) -> _Matched:
    """Place each item of ``scan`` at its gold row, recording unknown, repeated and missing ids."""
    if isinstance(gold, ItemGold):
        ids, index = gold.ids, gold.index
    else:
        ids = tuple(gold)
        index = {item: row for row, item in enumerate(ids)}
    n = len(ids)
    if scan.fast is not None:
        _, fast_ids, fast_values = scan.fast
        found = list(map(index.get, fast_ids))
        if len(found) == n and None not in found:
            rows = np.array(found, dtype=np.int64)
            if np.bincount(rows, minlength=n).max() == 1:  # each gold row exactly once
                aligned: np.ndarray = np.empty(n, dtype=parse_value.dtype)
                aligned[rows] = fast_values
                return _Matched(aligned, bool(np.all(np.diff(rows) > 0)))
        scan.unfold()
    values: np.ndarray = np.zeros(n, dtype=parse_value.dtype)
    seen = np.zeros(n, dtype=np.int64)  # the line giving each gold row, 0 while not given
    in_order = True
    previous = -1
    for number, item, value in scan.items:
        row = index.get(item)
        if row is None:
            log.append(Issue(number, f"Line {number}: id {quoted(item)} is not in the gold data."))
            continue
        if seen[row]:
            log.append(_duplicate(number, item, int(seen[row])))
            continue
        seen[row] = number
        if value is not None:  # else the error is already logged: no values are returned
            values[row] = value
        in_order = in_order and row > previous
        previous = row
    if not scan.items and not len(log):
        log.append(Issue(None, "The file has no item line."))
    missing = np.flatnonzero(seen == 0)
    if missing.size and scan.items:
        named = ", ".join(quoted(ids[row]) for row in missing[:MISSING_IDS_NAMED])
        more = missing.size - min(missing.size, MISSING_IDS_NAMED)
        tail = f" and {more:,} more" if more else ""
        noun = "gold id (of {n:,}) is" if missing.size == 1 else "gold ids (of {n:,}) are"
        # The one summary of the missing ids is kept even beyond the cap on kept errors.
        log.kept.append(
            Issue(
                None,
                f"{missing.size:,} {noun.format(n=n)} missing from the run: {named}{tail}.",
            )
        )
    return _Matched(None if len(log) else values, in_order)


def validate_run(
    data: bytes, gold: ItemGold | Sequence[str], parse_value: ValueParser
) -> tuple[np.ndarray | None, list[Issue], list[Issue]]:
    """Validate a run strictly: return its values in gold order (None on errors), errors, warnings.

    ``gold`` is the parsed gold or its ids in gold order. Every error is reported at once (the
    first 1,000 listed, the rest counted); warnings do not reject the file.
    """
    log = IssueLog()
    scan = _scan(data, parse_value, log, lenient=False)
    matched = _match(scan, gold, parse_value, log)
    warnings: list[Issue] = []
    if scan.bom:
        warnings.append(
            Issue(None, "The file starts with a byte-order mark; it was ignored.", "warning")
        )
    if scan.endings:
        warnings.append(
            Issue(
                None,
                f"The file has {scan.endings} line endings; they were read as Unix (LF) ones.",
                "warning",
            )
        )
    if scan.blank:
        noun = "blank line was" if scan.blank == 1 else "blank lines were"
        warnings.append(
            Issue(
                scan.first_blank,
                f"{scan.blank:,} {noun} ignored (the first is line {scan.first_blank}).",
                "warning",
            )
        )
    if len(log):
        return None, _closed(log), warnings
    return matched.values, [], warnings


@dataclass(frozen=True, eq=False)
class LenientImport:
    """The outcome of a lenient import: values in gold order, errors, and what was tolerated."""

    values: np.ndarray | None
    errors: list[Issue]
    tolerated: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """Return whether the file was imported."""
        return self.values is not None


def import_lenient(
    data: bytes, gold: ItemGold | Sequence[str], parse_value: ValueParser
) -> LenientImport:
    """Import a run leniently: accept any layout of valid items and say what was tolerated.

    Tolerated, each said in a sentence: a byte-order mark, CRLF or CR endings, a missing final
    newline, header and comment lines, blank lines, spaces or other whitespace between fields,
    lines in another order than the gold. Ids and values are checked as strictly as ever: an
    unscorable run (unknown, repeated or missing ids, bad values) is refused with its errors.
    """
    log = IssueLog()
    scan = _scan(data, parse_value, log, lenient=True)
    matched = _match(scan, gold, parse_value, log)
    notes: list[str] = []
    if scan.bom:
        notes.append("A byte-order mark at the start of the file was ignored.")
    if scan.endings:
        notes.append(f"{scan.endings} line endings were read as Unix (LF) ones.")
    if not scan.final_newline:
        notes.append("The last line had no final newline.")
    if scan.comments:
        notes.append(
            f"{_count(scan.comments, 'header or comment line')} ignored (starting with '#')."
        )
    if scan.blank:
        notes.append(f"{_count(scan.blank, 'blank line')} ignored.")
    if scan.spaced:
        notes.append(f"{_count(scan.spaced)} separated by spaces, or had spaces around the fields.")
    if scan.unicode_split:
        notes.append(
            f"{_count(scan.unicode_split)} separated by whitespace other than spaces and TABs."
        )
    if not matched.in_order:
        notes.append("The lines were not in gold order; they were matched by id.")
    if len(log):
        return LenientImport(None, _closed(log), tuple(notes))
    return LenientImport(matched.values, [], tuple(notes))


def _count(count: int, noun: str = "line") -> str:
    """Return "1 line was" or "N lines were" (for another noun too)."""
    return f"1 {noun} was" if count == 1 else f"{count:,} {noun}s were"


__all__ = [
    "MAX_WEIGHT",
    "MISSING_IDS_NAMED",
    "DecimalParser",
    "ItemGold",
    "LabelParser",
    "LenientImport",
    "ValueParser",
    "import_lenient",
    "parse_gold",
    "parse_weight",
    "validate_run",
]
