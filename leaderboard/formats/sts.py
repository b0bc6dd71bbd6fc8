"""STS-style runs: one score file per evaluation set; gold, strict and lenient parsing, writing.

Everything that differs between tasks of this family (set slugs, line counts, input names,
mapping files, weights) is passed in as settings; nothing here names a particular task.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from leaderboard.formats.compression import DecompressionError, maybe_gunzip
from leaderboard.formats.issues import Issue, quote, summarise
from leaderboard.scoring.correlation import is_constant

MAX_LINE_BYTES = 4096
BOM = b"\xef\xbb\xbf"

_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NON_FINITE = re.compile(r"[+-]?(?:nan|inf|infinity)", re.IGNORECASE)
_FORBIDDEN_CHAR = re.compile(r"[^\t\x20-\x7e]")
_BLANKS = re.compile(r"[ \t]+")
# Perl's \s inside split(/\s+/, ...) on a line that lost its LF.
_PERL_BLANKS = re.compile(rb"[ \t\r\f\v]+")
_PERL_NON_FINITE = re.compile(rb"[+-]?(?:nan|inf)", re.IGNORECASE)
# 18 digits at most: no run has more lines, and a longer index would overflow int64.
_MAPPING_INDEX = re.compile(r"[0-9]{1,18}")
_LISTED_FIELDS = 5


@dataclass(frozen=True)
class StsSetSpec:
    """Settings of one evaluation set that a run file is checked against."""

    slug: str
    lines: int
    input_name: str
    ascii_hint: bool = False
    filtered_lines: int | None = None


@dataclass(frozen=True, eq=False)
class StsGold:
    """Gold of one set: which run lines are scored (0-based) and their gold values."""

    slug: str
    scored_index: np.ndarray
    values: np.ndarray


@dataclass(frozen=True, eq=False)
class StsFileVerdict:
    """Strict verdict on one run file: values per run line (None on error) and the issues."""

    values: np.ndarray | None
    errors: list[Issue] = field(default_factory=list)
    warnings: list[Issue] = field(default_factory=list)


def parse_gold(data: bytes, *, slug: str, mapping: bytes | None = None) -> StsGold:
    """Return the gold of a set; raise ValueError with an organizer-facing message if unusable.

    One gold line per position; an empty line is an unscored position and a line starting with
    '#' takes no position (as in the 2016 scorer). With ``mapping`` (multisource), position k
    is scored on run line index_k, the 0-based index on line k of the mapping file, and every
    gold line must hold a value.
    """
    positions: list[tuple[int, float | None]] = []  # (gold line number, value or unscored)
    for number, line in enumerate(_text_lines(data, f"{slug} gold"), start=1):
        if line.startswith("#"):
            continue
        token = line.strip(" \t")
        if not token:
            positions.append((number, None))
        elif _NUMBER.fullmatch(token) and math.isfinite(float(token)):
            positions.append((number, float(token)))
        else:
            raise ValueError(f"{slug} gold line {number}: '{quote(token)}' is not a finite number.")
    if mapping is None:
        scored = [(i, v) for i, (_, v) in enumerate(positions) if v is not None]
    else:
        indices = _parse_mapping(mapping, slug)
        if len(indices) != len(positions):
            raise ValueError(
                f"{slug}: the mapping file has {len(indices):,} lines but the gold has "
                f"{len(positions):,} values; they must correspond line by line."
            )
        scored = []
        for index, (number, value) in zip(indices, positions, strict=True):
            if value is None:
                raise ValueError(
                    f"{slug} gold line {number} is empty; with a mapping every line is scored."
                )
            scored.append((index, value))
    if len(scored) < 2:
        raise ValueError(f"{slug}: the gold has {len(scored)} scored pairs; at least 2 are needed.")
    scored_index = _frozen(np.array([i for i, _ in scored], dtype=np.int64))
    values = _frozen(np.array([v for _, v in scored], dtype=np.float64))
    if is_constant(values):
        raise ValueError(
            f"{slug}: all {len(values):,} gold values are {values[0]:g}; a correlation cannot be "
            "computed against constant gold."
        )
    return StsGold(slug=slug, scored_index=scored_index, values=values)


def validate_file(data: bytes, spec: StsSetSpec) -> StsFileVerdict:
    """Check one participant file strictly without looking at the gold.

    Errors: an empty file, a wrong line count, a line over 4,096 bytes, not valid UTF-8 or not
    printable ASCII, an inner blank line, anything but one finite decimal number on a line,
    and all values equal. Warnings: a BOM, CRLF or CR line endings, blank lines at the
    end, blanks around a value, values outside 0-5.
    """
    slug = spec.slug
    warnings: list[Issue] = []
    try:
        data = maybe_gunzip(data, limit=max_file_bytes(spec))
    except DecompressionError as exc:
        return StsFileVerdict(None, [Issue(None, f"{slug}: {_lower_first(str(exc))}")], warnings)
    if not data:
        return StsFileVerdict(None, [Issue(None, f"{slug}: the file is empty.")], warnings)
    if len(data) > max_file_bytes(spec):
        # Refuse before splitting: no valid file of this set comes near this size.
        too_large = (
            f"{slug}: the file is larger than {max_file_bytes(spec):,} bytes; a run file has one "
            f"short score per line, {spec.lines:,} lines."
        )
        return StsFileVerdict(None, [Issue(None, too_large)], warnings)
    if data.startswith(BOM):
        data = data[len(BOM) :]
        warnings.append(
            Issue(
                None, f"{slug}: the file started with a byte-order mark; it was removed.", "warning"
            )
        )
    if b"\r" in data:
        kind = "Windows (CRLF)" if b"\r\n" in data else "old Mac (CR)"
        warnings.append(Issue(None, f"{slug}: {kind} line endings were normalised.", "warning"))
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the final LF ends the last line; it does not start a new one
    blank_tail = 0
    while lines and not lines[-1].strip(b" \t"):
        lines.pop()
        blank_tail += 1
    if not lines:
        return StsFileVerdict(None, [Issue(None, f"{slug}: the file is empty.")], warnings)
    if blank_tail:
        warnings.append(
            Issue(
                None,
                f"{slug}: {_count(blank_tail, 'empty line')} at the end of the file "
                f"{'was' if blank_tail == 1 else 'were'} ignored.",
                "warning",
            )
        )

    scan = _LineScan(slug, len(lines))
    for number, raw in enumerate(lines, start=1):
        scan.check(number, raw)

    errors = _count_errors(spec, len(lines))
    errors += scan.errors
    if not scan.errors and is_constant(scan.values):
        errors.append(
            Issue(
                None,
                f"{slug}: all {len(lines):,} scores are {scan.first_token}; a correlation cannot "
                "be computed for constant output.",
            )
        )
    warnings += scan.warnings()
    if errors:
        return StsFileVerdict(None, _summarise(errors, slug), warnings)
    return StsFileVerdict(_frozen(scan.values), [], warnings)


def validate_run(
    files: Mapping[str, bytes], specs: Sequence[StsSetSpec]
) -> tuple[dict[str, np.ndarray] | None, list[Issue], list[Issue]]:
    """Check a whole run strictly: one file per set, each valid; any error rejects the run.

    Returns ``(values by set slug or None, errors, warnings)``.
    """
    errors: list[Issue] = []
    warnings: list[Issue] = []
    known = [spec.slug for spec in specs]
    for name in files:
        if name not in known:
            errors.append(
                Issue(
                    None,
                    f"{quote(name)}: no such evaluation set in this subtask "
                    f"(expected {', '.join(known)}).",
                )
            )
    values: dict[str, np.ndarray] = {}
    for spec in specs:
        if spec.slug not in files:
            errors.append(Issue(None, f"{spec.slug}: no output file was given."))
            continue
        verdict = validate_file(files[spec.slug], spec)
        errors += verdict.errors
        warnings += verdict.warnings
        if verdict.values is not None:
            values[spec.slug] = verdict.values
    return (None if errors else values), errors, warnings


def parse_lenient_file(
    data: bytes, spec: StsSetSpec, gold: StsGold
) -> tuple[np.ndarray | None, list[Issue], list[str]]:
    """Read a historical file the way the 2016 Perl scorer did; organizers only.

    Returns ``(values, refusals, report)``: ``values`` has one entry per run line, NaN where
    the line is unscored, and is None when the file is refused; ``refusals`` are the errors
    that refuse it; ``report`` lists every coercion and ignored line. At a scored position the
    value is the Perl number prefix of the first whitespace-separated field (empty -> 0).
    Refused: fewer lines than the gold, a non-finite value or a "#" line at a scored position,
    and the same value at every scored position.
    """
    slug = spec.slug
    _check_gold_fits(gold, spec)
    try:
        data = maybe_gunzip(data, limit=max_file_bytes(spec))
    except DecompressionError as exc:
        return None, [Issue(None, f"{slug}: {_lower_first(str(exc))}")], []
    lines = data.replace(b"\r\n", b"\n").split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    report: list[str] = []
    filtered = _is_filtered(lines, spec, gold)
    if filtered:
        positions = list(range(len(gold.scored_index)))
        report.append(
            f"{slug}: read as an already filtered {len(positions):,}-line file aligned with "
            "the gold."
        )
        expected = len(positions)
    else:
        positions = [int(i) for i in gold.scored_index]
        expected = spec.lines
        if len(lines) < expected:
            refusal = (
                f"{slug}: the file has {len(lines):,} lines, fewer than the {expected:,} the "
                "gold expects; the 2016 scorer gave no Pearson correlation for such a file."
            )
            return None, [Issue(None, refusal)], report
    if len(lines) > expected:
        extra = len(lines) - expected
        report.append(
            f"{slug}: {_count(extra, 'line')} after line {expected:,}, the last gold position, "
            f"{'was' if extra == 1 else 'were'} ignored."
        )

    values = np.full(spec.lines, np.nan)
    refusals: list[Issue] = []
    for k, line_index in enumerate(positions):
        number = line_index + 1
        value, note = _perl_value(lines[line_index])
        if value is None:
            refusals.append(Issue(number, f"{slug} line {number}: {note}"))
            continue
        if note:
            report.append(f"{slug} line {number}: {note}")
        values[gold.scored_index[k] if filtered else line_index] = value
    if not refusals:
        scored = values[gold.scored_index]
        if is_constant(scored):
            refusals.append(
                Issue(
                    None,
                    f"{slug}: all {len(scored):,} scored values are {scored[0]:g}; the 2016 "
                    "scorer died on a division by zero.",
                )
            )
    if refusals:
        return None, refusals, report
    return _frozen(values), [], report


class _LineScan:
    """Per-line strict checks, and the counts behind the blank-padding and 0-5 range warnings.

    A line must be valid UTF-8, printable ASCII or TAB, at most 4,096 bytes, not blank, and
    one finite decimal number (no second field, no "#" comment).
    """

    def __init__(self, slug: str, size: int) -> None:
        self.slug = slug
        self.values = np.zeros(size, dtype=np.float64)
        self.errors: list[Issue] = []
        self.first_token = ""
        self.leading: list[int] = []
        self.leading_chars: set[str] = set()
        self.trailing: list[int] = []
        self.trailing_chars: set[str] = set()
        self.outside: list[tuple[int, str]] = []

    def check(self, number: int, raw: bytes) -> None:
        """Check line ``number`` and record its value or its error."""
        where = f"{self.slug} line {number}"
        if len(raw) > MAX_LINE_BYTES:
            self._error(number, f"{where} is longer than {MAX_LINE_BYTES} bytes.")
            return
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            column = len(raw[: exc.start].decode("utf-8")) + 1
            self._error(
                number,
                f"{where}: not valid UTF-8 (byte 0x{raw[exc.start]:02X} at column {column}).",
            )
            return
        bad = _FORBIDDEN_CHAR.search(text)
        if bad:
            self._error(
                number,
                f"{where}: unexpected character U+{ord(bad.group()):04X} at column "
                f"{bad.start() + 1}.",
            )
            return
        token = text.strip(" \t")
        if not token:
            self._error(number, f"{where} is empty; every pair needs a score.")
            return
        self._note_blanks(number, text, token)
        if token.startswith("#"):  # a comment line, whatever its spaces: not a score
            self._error(number, f"{where}: '{quote(token)}' is not a number.")
            return
        fields = _BLANKS.split(token)
        if len(fields) > 1:
            listed = ", ".join(f"'{quote(f)}'" for f in fields[:_LISTED_FIELDS])
            more = ", …" if len(fields) > _LISTED_FIELDS else ""
            self._error(
                number,
                f"{where}: expected one number, found {len(fields)} fields ({listed}{more}).",
            )
            return
        if _NON_FINITE.fullmatch(token):
            self._error(number, f"{where}: score '{quote(token)}' must be a finite number.")
            return
        if not _NUMBER.fullmatch(token):
            self._error(number, f"{where}: '{quote(token)}' is not a number.")
            return
        value = float(token)
        if not math.isfinite(value):
            self._error(number, f"{where}: score '{quote(token)}' must be a finite number.")
            return
        if not self.first_token:
            self.first_token = token
        if not 0.0 <= value <= 5.0:
            self.outside.append((number, token))
        self.values[number - 1] = value

    def warnings(self) -> list[Issue]:
        """Return the warnings about leading or trailing blanks and about values outside 0-5."""
        found: list[Issue] = []
        if self.leading:
            note = " Note: the 2016 scorer read such lines as 0."
            if len(self.leading) == 1:
                note = " Note: the 2016 scorer read such a line as 0."
            found.append(self._blank_warning(self.leading, self.leading_chars, "leading", note))
        if self.trailing:
            found.append(self._blank_warning(self.trailing, self.trailing_chars, "trailing", ""))
        if len(self.outside) == 1:
            number, token = self.outside[0]
            found.append(
                Issue(
                    None,
                    f"{self.slug}: 1 score (line {number}, '{quote(token)}') is outside 0–5; it "
                    "is accepted (Pearson correlation ignores scale).",
                    "warning",
                )
            )
        elif self.outside:
            number, token = self.outside[0]
            found.append(
                Issue(
                    None,
                    f"{self.slug}: {len(self.outside):,} scores (first: line {number}, "
                    f"'{quote(token)}') are outside 0–5; they are accepted (Pearson correlation "
                    "ignores scale).",
                    "warning",
                )
            )
        return found

    def _note_blanks(self, number: int, text: str, token: str) -> None:
        """Record leading and trailing spaces or TABs of a non-empty line."""
        head = text[: len(text) - len(text.lstrip(" \t"))]
        tail = text[len(text.rstrip(" \t")) :]
        if head:
            self.leading.append(number)
            self.leading_chars.update(head)
        if tail:
            self.trailing.append(number)
            self.trailing_chars.update(tail)

    def _blank_warning(self, numbers: list[int], chars: set[str], side: str, note: str) -> Issue:
        """Return the warning about lines with leading or trailing blanks."""
        what = (
            {" ": "spaces", "\t": "TABs"}[next(iter(chars))]
            if len(chars) == 1
            else ("spaces or TABs")
        )
        if len(numbers) == 1:
            text = f"1 line (line {numbers[0]}) has {side} {what}; it was trimmed."
        else:
            text = (
                f"{len(numbers):,} lines (first: line {numbers[0]}) have {side} {what}; "
                "they were trimmed."
            )
        return Issue(None, f"{self.slug}: {text}{note}", "warning")

    def _error(self, number: int, message: str) -> None:
        self.errors.append(Issue(number, message))


def _count_errors(spec: StsSetSpec, found: int) -> list[Issue]:
    """Return the error for a line count other than one per line of the set's input, if any.

    A file of the filtered (scored-only) length, or with one extra line (the .ascii input's
    empty last line), gets a hint.
    """
    if found == spec.lines:
        return []
    if spec.filtered_lines is not None and found == spec.filtered_lines:
        return [
            Issue(
                None,
                f"{spec.slug}: expected {spec.lines:,} lines (one per line of {spec.input_name}), "
                f"found {found:,}. Submit the unfiltered output; the server selects the evaluated "
                "pairs.",
            )
        ]
    message = (
        f"{spec.slug}: expected {spec.lines:,} lines (one per pair of {spec.input_name}), "
        f"found {found:,}."
    )
    if spec.ascii_hint and found == spec.lines + 1:
        message += (
            " If you scored every line of the .ascii input, remove the last line: it belongs to "
            "the extra empty line at the end of the .ascii file."
        )
    return [Issue(None, message)]


def _summarise(errors: list[Issue], slug: str) -> list[Issue]:
    """Return at most the listed number of errors, the closing count prefixed with ``slug``."""
    listed = summarise(errors)
    if len(listed) < len(errors):
        closing = listed[-1]
        listed[-1] = Issue(closing.line, f"{slug}: {closing.message}", closing.severity)
    return listed


def _perl_value(raw: bytes) -> tuple[float | None, str]:
    """Return the value Perl reads from a scored line and a coercion note ('' if none).

    The value is None when the line must be refused; the note then says why.
    """
    text = quote(raw.decode("utf-8", "replace"))
    if raw.startswith(b"#"):
        return None, (
            f"'{text}' starts with '#' at a scored position; the 2016 scorer skipped such a line "
            "without consuming the position, which shifts every later pair, so the file is "
            "refused as ambiguous."
        )
    fields = _PERL_BLANKS.split(raw)
    first = fields[0]
    rest = [f for f in fields[1:] if f]
    if not first:
        why = "is empty" if not raw.strip(b" \t\r\f\v") else "starts with whitespace"
        return 0.0, f"'{text}' {why}; read as 0."
    if _PERL_NON_FINITE.match(first):
        return None, f"'{text}' is not finite at a scored position; the 2016 scorer gave NaN."
    prefix = _NUMBER.match(first.decode("ascii", "replace"))
    if prefix is None:
        why = " (it starts with a byte-order mark)" if first.startswith(BOM) else ""
        return 0.0, f"'{text}' is not a number{why}; read as 0."
    value = float(prefix.group())
    if not math.isfinite(value):
        return (
            None,
            f"'{text}' overflows to infinity at a scored position; the 2016 scorer gave NaN.",
        )
    notes = []
    if prefix.end() < len(first):
        notes.append(f"only its numeric prefix was used; read as {value:g}")
    if rest:
        notes.append("further fields were ignored")
    return value, (f"'{text}': {'; '.join(notes)}." if notes else "")


def _is_filtered(lines: list[bytes], spec: StsSetSpec, gold: StsGold) -> bool:
    """Tell whether a lenient file is the already filtered form (e.g. 294-line multisource)."""
    if spec.filtered_lines is None or len(lines) >= spec.lines:
        return False
    if spec.filtered_lines != gold.scored_index.size:
        raise ValueError(
            f"{spec.slug}: the set expects {spec.filtered_lines:,} filtered lines but the gold "
            f"scores {gold.scored_index.size:,} pairs."
        )
    head, tail = lines[: spec.filtered_lines], lines[spec.filtered_lines :]
    return len(head) == spec.filtered_lines and not any(t.strip(b" \t\r\f\v") for t in tail)


def _check_gold_fits(gold: StsGold, spec: StsSetSpec) -> None:
    """Raise ValueError when the gold scores lines beyond the set's run file."""
    if gold.slug != spec.slug:
        raise ValueError(f"gold of set {gold.slug} given for set {spec.slug}.")
    if gold.scored_index.size and int(gold.scored_index.max()) >= spec.lines:
        raise ValueError(
            f"{spec.slug}: the gold scores run line {int(gold.scored_index.max()) + 1:,}, past "
            f"the {spec.lines:,} lines of the set."
        )


def _text_lines(data: bytes, what: str) -> list[str]:
    """Decode an organizer file into lines (BOM removed, CRLF/CR normalised, final LF dropped)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{what}: not valid UTF-8 ({exc}).") from exc
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def _parse_mapping(data: bytes, slug: str) -> list[int]:
    """Return the 0-based run line indices of a mapping file, one per line, all distinct."""
    indices: list[int] = []
    for number, line in enumerate(_text_lines(data, f"{slug} mapping"), start=1):
        token = line.strip(" \t")
        if not _MAPPING_INDEX.fullmatch(token):
            raise ValueError(
                f"{slug} mapping line {number}: '{quote(token)}' is not a line index (0, 1, ...)."
            )
        indices.append(int(token))
    if len(set(indices)) != len(indices):
        raise ValueError(f"{slug}: the mapping file lists a run line more than once.")
    return indices


def max_file_bytes(spec: StsSetSpec) -> int:
    """Return the size no run file of this set may exceed (gzip-inflated or not): 4 KiB a line."""
    return spec.lines * (MAX_LINE_BYTES + 2) + (1 << 20)


def _lower_first(message: str) -> str:
    """Return ``message`` with a lower-case first letter, to follow a 'slug: ' prefix."""
    return message[:1].lower() + message[1:]


def _count(n: int, noun: str) -> str:
    """Return e.g. '1 empty line' or '3 empty lines'."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def _frozen(array: np.ndarray) -> np.ndarray:
    """Return ``array`` made read-only, so frozen results stay unchanged."""
    array.flags.writeable = False
    return array


def render_scores(values: Sequence[float]) -> bytes:
    """Return a run file: one score per line (shortest exact decimal form), LF, final newline."""
    out: list[str] = []
    for value in values:
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"cannot write the non-finite score {number!r}")
        out.append(f"{number!r}\n")
    return "".join(out).encode("ascii")
